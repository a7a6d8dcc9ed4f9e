//! Thermal erosion (Musgrave, Kolb and Mace 1989; Olsen 2004), grid-centric: material
//! slides to the neighbours past a talus angle, over float32 heights and with no
//! atomics. `params.rs` holds the model's parameters and rules, `variant.rs` the
//! kernels' axes, `kernel.rs` and `runner.rs` drive its passes (glsl/thermal_*.comp),
//! `cpu.rs` is its reference on one core or on all; this file is its [`Strategy`].

mod cpu;
mod kernel;
mod params;
mod runner;
mod settings;
mod variant;

pub use crate::erosion::workgroup::WorkgroupShape;
pub use cpu::{run_thermal_on_cpu, steepness, Steepness};
pub use kernel::ThermalKernel;
pub use params::{rounding_bound, ThermalParams, OFFSETS, OPPOSITE, STEEP_SLACK};
pub use runner::{mass_of, MassCheck, ThermalRunner};
pub use settings::ThermalSettings;
pub use variant::{Fusion, ThermalVariant};

use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;

use crate::erosion::steps::{cell_steps, float_cells, float_state};
use crate::erosion::{
    report_of, Algorithm, Ceiling, CountedRun, CpuEngine, CpuRun, ErosionError, Figures, Prepared,
    RunSettings, SettingError, Strategy, TimedRun, WorkUnit,
};
use crate::gpu::{CompilerStatistic, Context, DeviceInfo};
use crate::table::{values_of, Column, Section};
use crate::terrain::units::HeightUnit;
use crate::terrain::{Cells, Heightmap, MapInfo};

/// The thermal strategy.
pub struct Thermal;

/// Its kernels, as errors name them.
const KERNELS: &str = "the thermal kernels";

impl Strategy for Thermal {
    fn algorithm(&self) -> Algorithm {
        Algorithm::Thermal
    }

    fn smoke_args(&self) -> &'static [&'static str] {
        &["--algorithm", "thermal", "--thermal-steps", "8"]
    }

    fn unit(&self) -> WorkUnit {
        WorkUnit::CellSteps
    }

    fn settings_units(&self) -> &'static [(&'static str, &'static str)] {
        ThermalSettings::UNITS
    }

    fn gpu_only_keys(&self) -> &'static [&'static str] {
        ThermalSettings::GPU_ONLY
    }

    fn dose_key(&self) -> &'static str {
        "thermal_steps"
    }

    fn dose(&self, settings: &RunSettings) -> u64 {
        u64::from(settings.thermal.thermal_steps)
    }

    fn with_dose(&self, settings: &RunSettings, dose: u64) -> RunSettings {
        let mut s = settings.clone();
        s.thermal.thermal_steps = u32::try_from(dose).unwrap_or(u32::MAX);
        s
    }

    fn work_bound(&self, settings: &RunSettings, map: MapInfo) -> u64 {
        map.cells()
            .saturating_mul(u64::from(settings.thermal.thermal_steps))
    }

    fn water_per_dose(&self, _settings: &RunSettings, _map: MapInfo) -> Option<f64> {
        None
    }

    fn check(
        &self,
        settings: &RunSettings,
        _map: Option<MapInfo>,
        device: Option<&DeviceInfo>,
    ) -> Result<(), SettingError> {
        settings.thermal.check(device)
    }

    fn missing_feature(
        &self,
        settings: &RunSettings,
        _map: MapInfo,
        device: &DeviceInfo,
    ) -> Option<String> {
        settings
            .thermal
            .variant()
            .check(Some(device))
            .err()
            .map(|e| e.reason)
    }

    fn initial(&self, _settings: &RunSettings, terrain: &Heightmap) -> Result<Cells, ErosionError> {
        Ok(Cells::float_from(terrain))
    }

    fn prepare<'a>(
        &self,
        ctx: &Arc<Context>,
        settings: &RunSettings,
        initial: &'a Cells,
    ) -> Result<Box<dyn Prepared + 'a>, ErosionError> {
        let t = &settings.thermal;
        let heights = float_cells(initial, KERNELS)?;
        let kernel = ThermalKernel::new(ctx, t.variant(), &t.params())?;
        let runner = kernel.prepare(initial.width(), initial.height(), heights)?;
        Ok(Box::new(ThermalPrepared {
            runner,
            steps: t.thermal_steps,
            check_every: t.thermal_check_every,
        }))
    }

    fn run_on_cpu(
        &self,
        engine: CpuEngine,
        settings: &RunSettings,
        initial: &Cells,
    ) -> Result<CpuRun, ErosionError> {
        let t = &settings.thermal;
        let params = t.params();
        params.check()?;
        let (w, h) = (initial.width(), initial.height());
        let mut heights = float_cells(initial, KERNELS)?.to_vec();
        let before = mass_of(&heights);
        let started = Instant::now();
        let sent = run_thermal_on_cpu(&mut heights, w, h, &params, t.thermal_steps, engine);
        let wall_time = started.elapsed();
        let after = mass_of(&heights);
        let bound = rounding_bound(
            u64::from(t.thermal_steps),
            (w * h) as u64,
            2.0 * before.1.max(after.1),
        );
        let figures = ThermalFigures {
            mass: MassBalance::new(before.0, after.0, bound),
            material_moved: total(&sent),
            steepness: steepness(&heights, w, h, &params),
            ..ThermalFigures::new(params, t.variant(), t.thermal_steps)
        };
        let threads = match engine {
            CpuEngine::Sequential => 1,
            CpuEngine::Parallel => rayon::current_num_threads(),
        };
        Ok(CpuRun {
            cells: float_state(w, h, heights)?,
            work: cell_steps(w * h, t.thermal_steps),
            wall_time,
            threads,
            figures: Box::new(figures),
        })
    }

    fn ceiling(&self, settings: &RunSettings, _map: MapInfo) -> Ceiling {
        let t = &settings.thermal;
        Ceiling::Bandwidth {
            bytes_per_step: t.variant().bytes_per_cell_step(t.thermal_neighbours),
        }
    }

    fn plan(&self, settings: &RunSettings, _map: MapInfo, _device: &DeviceInfo) -> String {
        let t = &settings.thermal;
        format!(
            "{} steps of thermal erosion (talus {} degrees, rate {}, {} neighbours, {}), heights reached by address",
            t.thermal_steps,
            t.thermal_talus,
            t.thermal_rate,
            t.thermal_neighbours,
            t.variant()
        )
    }

    fn settings_columns(&self) -> Vec<Column> {
        crate::erosion::keys::columns_of::<ThermalSettings>(ThermalSettings::UNITS)
    }

    fn settings_values(&self, settings: &RunSettings, _map: MapInfo) -> Vec<String> {
        values_of(&settings.thermal)
    }

    fn figures_columns(&self) -> Vec<Column> {
        ThermalColumns::columns()
    }

    fn report_fields(&self) -> &'static [(&'static str, &'static str, &'static str)] {
        REPORT_FIELDS
    }
}

fn total(values: &[f32]) -> f64 {
    values.iter().map(|&v| f64::from(v)).sum()
}

/// The thermal kernels with one map's heights.
struct ThermalPrepared {
    runner: ThermalRunner,
    steps: u32,
    check_every: u32,
}

impl Prepared for ThermalPrepared {
    fn kernel(&self) -> String {
        self.runner.kernel().module_name()
    }

    fn statistics(&self) -> &[CompilerStatistic] {
        self.runner.kernel().statistics()
    }

    fn dispatches(&self) -> usize {
        self.runner.kernel().variant().dispatches(self.steps)
    }

    fn run_timed(&mut self, read_back: bool) -> Result<TimedRun, ErosionError> {
        let (gpu_time, wall_time) = self.runner.run(self.steps)?;
        let cells = if read_back {
            let (w, h) = (self.runner.width(), self.runner.height());
            Some(float_state(w, h, self.runner.read_heights()?)?)
        } else {
            None
        };
        Ok(TimedRun {
            gpu_time,
            wall_time,
            submissions: self.runner.submissions(),
            cells,
        })
    }

    /// The counted build, its mass checked every `thermal_check_every` steps (once, at
    /// the end, for 0); a drift past float rounding's bound is an error.
    fn run_counted(&mut self) -> Result<CountedRun, ErosionError> {
        let every = if self.check_every == 0 {
            self.steps
        } else {
            self.check_every
        };
        let checks = self.runner.run_checked(self.steps, every)?;
        check_mass(&checks)?;
        let heights = self.runner.read_heights()?;
        let sent = self.runner.read_sent()?;
        let (w, h) = (self.runner.width(), self.runner.height());
        let kernel = self.runner.kernel();
        let params = *kernel.params();
        let before = self.runner.start_mass();
        let balance = match checks.last() {
            Some(c) => MassBalance::new(before, c.mass, c.bound),
            None => MassBalance::new(before, before, 0.0),
        };
        let figures = ThermalFigures {
            mass: balance,
            material_moved: total(&sent),
            steepness: steepness(&heights, w, h, &params),
            mass_checks: checks,
            ..ThermalFigures::new(params, kernel.variant(), self.steps)
        };
        Ok(CountedRun {
            cells: float_state(w, h, heights)?,
            work: cell_steps(w * h, self.steps),
            figures: Box::new(figures),
        })
    }
}

/// Refuses a checked mass that drifted past what float rounding can make: only a flow
/// lost between its sender and its receiver could.
pub fn check_mass(checks: &[MassCheck]) -> Result<(), ErosionError> {
    for c in checks {
        if c.drift.is_nan() || c.drift.abs() > c.bound {
            return Err(ErosionError::Balance(format!(
                "after {} steps the heights sum to {:.6e}, {:.3e} from the start's, past float rounding's {:.3e}: the kernels lost or made material",
                c.step, c.mass, c.drift, c.bound
            )));
        }
    }
    Ok(())
}

/// The heights' sum before and after, in height units x cells.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct MassBalance {
    pub before: f64,
    pub after: f64,
    /// after - before: float rounding alone.
    pub drift: f64,
    /// The most float rounding could have drifted by.
    pub rounding_bound: f64,
}

impl MassBalance {
    fn new(before: f64, after: f64, rounding_bound: f64) -> Self {
        Self {
            before,
            after,
            drift: after - before,
            rounding_bound,
        }
    }
}

/// What a thermal run says beyond the common figures: run.json's `params`, `variant`,
/// `time_steps`, `material_moved`, `mass`, `steepness`, `steep_slack` and
/// `mass_checks`.
#[derive(Clone, Debug, Serialize)]
pub struct ThermalFigures {
    pub params: ThermalParams,
    pub variant: ThermalVariant,
    pub time_steps: u32,
    /// What every cell sent over the run, summed: height units x cells.
    pub material_moved: f64,
    pub mass: MassBalance,
    /// How far the end state is from rest.
    pub steepness: Steepness,
    /// The excess over the talus past which a cell counts as steep (height units).
    pub steep_slack: f32,
    /// The counted run's checks, every `thermal_check_every` steps and at the end.
    pub mass_checks: Vec<MassCheck>,
}

impl ThermalFigures {
    fn new(params: ThermalParams, variant: ThermalVariant, time_steps: u32) -> Self {
        Self {
            params,
            variant,
            time_steps,
            material_moved: 0.0,
            mass: MassBalance::default(),
            steepness: Steepness::default(),
            steep_slack: STEEP_SLACK,
            mass_checks: Vec::new(),
        }
    }
}

/// A thermal point's own columns of points.csv.
#[derive(Clone, Debug, Default, Serialize)]
struct ThermalColumns {
    thermal_moved: Option<f64>,
    thermal_mass_drift: Option<f64>,
    thermal_steep_cells: Option<u64>,
    thermal_steepest_excess: Option<f32>,
}

impl Section for ThermalColumns {
    const COLUMNS: &'static [(&'static str, &'static str, &'static str)] = &[
        (
            "thermal_moved",
            "height units x cells",
            "material the counted run moved: what every cell sent to its neighbours, summed over cells and steps",
        ),
        (
            "thermal_mass_drift",
            "height units x cells",
            "the heights' sum at the end minus at the start; material only moves between cells, so only float rounding may make it",
        ),
        (
            "thermal_steep_cells",
            "cells",
            "cells still steeper than the talus toward some neighbour at the end (by more than 0.001 height units)",
        ),
        (
            "thermal_steepest_excess",
            "height units",
            "the largest drop to a neighbour past the talus's at the end; 0 where every slope is at rest",
        ),
    ];
}

impl Figures for ThermalFigures {
    fn report(&self) -> serde_json::Map<String, serde_json::Value> {
        report_of(self)
    }

    fn values(&self, _seconds: f64) -> Vec<String> {
        values_of(&ThermalColumns {
            thermal_moved: Some(self.material_moved),
            thermal_mass_drift: Some(self.mass.drift),
            thermal_steep_cells: Some(self.steepness.steep_cells),
            thermal_steepest_excess: Some(self.steepness.steepest_excess),
        })
    }

    fn rates(&self, seconds: f64) -> Vec<(&'static str, f64)> {
        vec![(
            "ms_per_step",
            seconds * 1e3 / f64::from(self.time_steps.max(1)),
        )]
    }

    fn summary(&self, unit: &HeightUnit) -> Vec<String> {
        let p = &self.params;
        let m = &self.mass;
        vec![
            format!(
                "{} time steps, talus {} degrees, rate {}, {} neighbours ({})",
                self.time_steps, p.talus_degrees, p.rate, p.neighbours, self.variant
            ),
            format!(
                "moved {}; heights summed {} -> {} (drift {:.3e}, float rounding's bound {:.1e}, in {}); {} cells still past the talus (largest excess {:.3e} {})",
                unit.show_sum(self.material_moved, 1),
                unit.show_sum(m.before, 3),
                unit.show_sum(m.after, 3),
                unit.of(m.drift),
                unit.of(m.rounding_bound),
                unit.sum_label(),
                self.steepness.steep_cells,
                unit.of(f64::from(self.steepness.steepest_excess)),
                unit.height_label()
            ),
        ]
    }

    fn sediment_left(&self) -> f64 {
        0.0
    }
}

/// Its fields of run.json (beside the common ones): path, unit, meaning.
const REPORT_FIELDS: &[(&str, &str, &str)] = &[
    ("figures.ms_per_step", "ms", "GPU time of one time step"),
    ("variant.fusion", "text", "none (two passes) or fused (one)"),
    (
        "variant.workgroup",
        "invocations x invocations",
        "the workgroup shape",
    ),
    ("time_steps", "time steps", "time steps of the run"),
    ("params.talus_degrees", "degrees", "the talus angle"),
    (
        "params.rate",
        "share per time step",
        "share of a cell's largest excess over the talus it sends per step",
    ),
    ("params.neighbours", "neighbours", "4 or 8"),
    (
        "material_moved",
        "height units x cells",
        "what every cell sent, summed over cells and steps (points.csv: thermal_moved)",
    ),
    (
        "mass.before",
        "height units x cells",
        "the heights summed before",
    ),
    (
        "mass.after",
        "height units x cells",
        "the heights summed after",
    ),
    (
        "mass.drift",
        "height units x cells",
        "after - before, float rounding alone (points.csv: thermal_mass_drift)",
    ),
    (
        "mass.rounding_bound",
        "height units x cells",
        "the most float rounding could drift by",
    ),
    (
        "steepness.steep_cells",
        "cells",
        "cells still past the talus by more than steep_slack at the end",
    ),
    (
        "steepness.steepest_excess",
        "height units",
        "the largest drop past the talus's at the end",
    ),
    (
        "steep_slack",
        "kernel height units",
        "the excess past which a cell counts as steep",
    ),
    (
        "mass_checks[].step",
        "time steps",
        "the step of the check (every thermal_check_every and at the end) (GPU runs)",
    ),
    (
        "mass_checks[].mass",
        "height units x cells",
        "the heights summed then (GPU runs)",
    ),
    (
        "mass_checks[].drift",
        "height units x cells",
        "mass - the start's (GPU runs)",
    ),
    (
        "mass_checks[].bound",
        "height units x cells",
        "the most float rounding could have drifted by then (GPU runs)",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_thermal_columns_are_documented() {
        assert_eq!(crate::table::undocumented::<ThermalColumns>(), None);
    }
}
