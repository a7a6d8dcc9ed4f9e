//! Thermal erosion (Musgrave, Kolb and Mace 1989; Olsen 2004), grid-centric: material
//! slides to the neighbours past a talus angle, over float32 heights and with no
//! atomics. `params.rs` holds the model's parameters and rules, `variant.rs` the
//! kernels' axes, `kernel.rs` and `runner.rs` are its passes (glsl/thermal_*.comp) and its
//! heights on the device, which `erosion/grid/` runs; `cpu.rs` is its reference on one
//! core or on all; this file is the model that the grid's
//! [`Strategy`](crate::erosion::Strategy) is built from.

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

use runner::ThermalBuffers;

use serde::Serialize;

use crate::erosion::grid::{ms_per_step, GridModel, GridPipelines};
use crate::erosion::steps::{cell_steps, float_cells, float_state};
use crate::erosion::{
    report_of, Algorithm, CountedRun, CpuEngine, CpuRun, ErosionError, Figures, RunSettings,
    SettingError,
};
use crate::gpu::{Context, DeviceInfo};
use crate::table::{values_of, Column, Section};
use crate::terrain::units::HeightUnit;
use crate::terrain::{Cells, MapInfo};

/// The thermal strategy: its [`Strategy`](crate::erosion::Strategy) is the grid's, from
/// its [`GridModel`].
pub struct Thermal;

impl GridModel for Thermal {
    const ALGORITHM: Algorithm = Algorithm::Thermal;
    const KERNELS: &'static str = "the thermal kernels";
    const SMOKE_ARGS: &'static [&'static str] = &["--algorithm", "thermal", "--thermal-steps", "8"];
    const STEPS_KEY: &'static str = "thermal_steps";
    const UNITS: &'static [(&'static str, &'static str)] = ThermalSettings::UNITS;
    const GPU_ONLY: &'static [&'static str] = ThermalSettings::GPU_ONLY;
    const REPORT_FIELDS: &'static [(&'static str, &'static str, &'static str)] = REPORT_FIELDS;

    type Settings = ThermalSettings;
    type Variant = ThermalVariant;
    type Params = ThermalParams;
    type Fields = ThermalBuffers;

    fn settings(run: &RunSettings) -> &ThermalSettings {
        &run.thermal
    }

    fn settings_mut(run: &mut RunSettings) -> &mut ThermalSettings {
        &mut run.thermal
    }

    fn steps(settings: &ThermalSettings) -> u32 {
        settings.thermal_steps
    }

    fn steps_mut(settings: &mut ThermalSettings) -> &mut u32 {
        &mut settings.thermal_steps
    }

    fn check_every(settings: &ThermalSettings) -> u32 {
        settings.thermal_check_every
    }

    fn variant(settings: &ThermalSettings) -> ThermalVariant {
        settings.variant()
    }

    fn params(settings: &ThermalSettings) -> ThermalParams {
        settings.params()
    }

    fn check(
        settings: &ThermalSettings,
        _map: Option<MapInfo>,
        device: Option<&DeviceInfo>,
    ) -> Result<(), SettingError> {
        settings.check(device)
    }

    fn check_variant(
        variant: ThermalVariant,
        _params: &ThermalParams,
        device: Option<&DeviceInfo>,
    ) -> Result<(), SettingError> {
        variant.check(device)
    }

    fn bytes_per_cell_step(variant: ThermalVariant, params: &ThermalParams) -> u64 {
        variant.bytes_per_cell_step(params.neighbours)
    }

    fn pipelines(
        ctx: &Arc<Context>,
        variant: ThermalVariant,
        params: &ThermalParams,
    ) -> Result<GridPipelines, ErosionError> {
        kernel::pipelines(ctx, variant, params)
    }

    fn prepare(
        kernel: ThermalKernel,
        width: usize,
        height: usize,
        heights: &[f32],
    ) -> Result<ThermalRunner, ErosionError> {
        kernel.prepare(width, height, heights)
    }

    /// The counted build, its mass checked every `thermal_check_every` steps (once, at
    /// the end, for 0); a drift past float rounding's bound is an error.
    fn run_counted(
        runner: &mut ThermalRunner,
        steps: u32,
        check_every: u32,
    ) -> Result<CountedRun, ErosionError> {
        let every = if check_every == 0 { steps } else { check_every };
        let checks = runner.run_checked(steps, every)?;
        check_mass(&checks)?;
        let heights = runner.read_heights()?;
        let sent = runner.read_sent()?;
        let (w, h) = (runner.width(), runner.height());
        let kernel = runner.kernel();
        let params = *kernel.params();
        let before = runner.start_mass();
        let balance = match checks.last() {
            Some(c) => MassBalance::new(before, c.mass, c.bound),
            None => MassBalance::new(before, before, 0.0),
        };
        let figures = ThermalFigures {
            mass: balance,
            material_moved: total(&sent),
            steepness: steepness(&heights, w, h, &params),
            mass_checks: checks,
            ..ThermalFigures::new(params, kernel.variant(), steps)
        };
        Ok(CountedRun {
            cells: float_state(w, h, heights)?,
            work: cell_steps(w * h, steps),
            figures: Box::new(figures),
        })
    }

    fn run_on_cpu(
        engine: CpuEngine,
        t: &ThermalSettings,
        initial: &Cells,
    ) -> Result<CpuRun, ErosionError> {
        let params = t.params();
        params.check()?;
        let (w, h) = (initial.width(), initial.height());
        let mut heights = float_cells(initial, Self::KERNELS)?.to_vec();
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

    fn plan(t: &ThermalSettings) -> String {
        format!(
            "{} steps of thermal erosion (talus {} degrees, rate {}, {} neighbours, {}), heights reached by address",
            t.thermal_steps,
            t.thermal_talus,
            t.thermal_rate,
            t.thermal_neighbours,
            t.variant()
        )
    }

    fn figures_columns() -> Vec<Column> {
        ThermalColumns::columns()
    }
}

fn total(values: &[f32]) -> f64 {
    values.iter().map(|&v| f64::from(v)).sum()
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
        ms_per_step(seconds, self.time_steps)
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
