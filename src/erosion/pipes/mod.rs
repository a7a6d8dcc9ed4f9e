//! The paper's other strategy, grid-centric: the virtual-pipe shallow-water erosion of
//! Mei, Decaudin and Hu (2007), over float32 fields and with no atomics. `params.rs`
//! holds the model's parameters and rules, `variant.rs` the kernels' axes, `kernel.rs`
//! and `runner.rs` are its passes (glsl/pipes_*.comp) and its fields on the device,
//! which `erosion/grid/` runs; `cpu.rs` is its sequential reference; this file is the
//! model that the grid's [`Strategy`](crate::erosion::Strategy) is built from.

mod cpu;
mod kernel;
mod params;
mod runner;
mod settings;
mod variant;

pub use crate::erosion::workgroup::WorkgroupShape;
pub use cpu::run_pipes_on_cpu;
pub use kernel::PipesKernel;
pub use params::{Advection, Boundary, Drained, PipesParams, PipesState, Totals};
pub use runner::{BalanceCheck, PipesFields, PipesRunner};
pub use settings::PipesSettings;
pub use variant::{Fusion, Packing, PipesVariant, Tiles};

use std::sync::Arc;
use std::time::Instant;

use runner::PipesBuffers;

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

/// The sediment cap of a comparison of strategies whose table sets none, in volumes per
/// volume of water: water carrying more than its own volume is a landslide, not a flow
/// (uncapped, comparison runs carried 33 volumes per volume off the map).
pub const COMPARISON_SEDIMENT_CAP: f32 = 1.0;

/// The virtual-pipe strategy: its [`Strategy`](crate::erosion::Strategy) is the grid's,
/// from its [`GridModel`].
pub struct Pipes;

/// Water beyond this share of what fell and stood can only come from a bug in the flux:
/// float rounding over a run stays orders below it.
const WATER_TOLERANCE: f64 = 1e-3;

impl GridModel for Pipes {
    const ALGORITHM: Algorithm = Algorithm::Pipes;
    const KERNELS: &'static str = "the grid kernels";
    const SMOKE_ARGS: &'static [&'static str] = &["--algorithm", "pipes", "--pipes-steps", "8"];
    const STEPS_KEY: &'static str = "pipes_steps";
    const UNITS: &'static [(&'static str, &'static str)] = PipesSettings::UNITS;
    const GPU_ONLY: &'static [&'static str] = PipesSettings::GPU_ONLY;
    const COMPARISON_KEYS: &'static [&'static str] = &["pipes_boundary", "pipes_base_level"];
    const REPORT_FIELDS: &'static [(&'static str, &'static str, &'static str)] = REPORT_FIELDS;

    type Settings = PipesSettings;
    type Variant = PipesVariant;
    type Params = PipesParams;
    type Fields = PipesBuffers;

    fn settings(run: &RunSettings) -> &PipesSettings {
        &run.pipes
    }

    fn settings_mut(run: &mut RunSettings) -> &mut PipesSettings {
        &mut run.pipes
    }

    fn steps(settings: &PipesSettings) -> u32 {
        settings.pipes_steps
    }

    fn steps_mut(settings: &mut PipesSettings) -> &mut u32 {
        &mut settings.pipes_steps
    }

    fn check_every(settings: &PipesSettings) -> u32 {
        settings.pipes_check_every
    }

    fn variant(settings: &PipesSettings) -> PipesVariant {
        settings.variant()
    }

    fn params(settings: &PipesSettings) -> PipesParams {
        settings.params()
    }

    fn check(
        settings: &PipesSettings,
        map: Option<MapInfo>,
        device: Option<&DeviceInfo>,
    ) -> Result<(), SettingError> {
        settings.check(map, device)
    }

    fn check_variant(
        variant: PipesVariant,
        params: &PipesParams,
        device: Option<&DeviceInfo>,
    ) -> Result<(), SettingError> {
        variant.check(params.advection, device)
    }

    fn bytes_per_cell_step(variant: PipesVariant, params: &PipesParams) -> u64 {
        variant.bytes_per_cell_step(params.advection)
    }

    fn pipelines(
        ctx: &Arc<Context>,
        variant: PipesVariant,
        params: &PipesParams,
    ) -> Result<GridPipelines, ErosionError> {
        kernel::pipelines(ctx, variant, params)
    }

    fn prepare(
        kernel: PipesKernel,
        width: usize,
        height: usize,
        terrain: &[f32],
    ) -> Result<PipesRunner, ErosionError> {
        kernel.prepare(width, height, terrain, None)
    }

    /// The counted build, its balance checked every `pipes_check_every` steps and at the
    /// end (water the flux lost or made is an error); for 0, a timed run, unchecked.
    fn run_counted(
        runner: &mut PipesRunner,
        steps: u32,
        check_every: u32,
    ) -> Result<CountedRun, ErosionError> {
        let start = runner.start();
        let checks = match check_every {
            // No counted run: the figures are a timed run's, unchecked.
            0 => {
                runner.run(steps)?;
                Vec::new()
            }
            every => {
                let checks = runner.run_checked(steps, every)?;
                check_water(&checks, start.water)?;
                checks
            }
        };
        let fields = runner.read()?;
        let kernel = runner.kernel();
        let cells = fields.width * fields.height;
        let settings = PipesSettings {
            pipes_steps: steps,
            pipes_check_every: check_every,
            ..settings_of(kernel.variant(), kernel.params())
        };
        let left = checks.last().map(|c| Drained {
            evaporated: c.evaporated,
            outflow: c.outflow,
            sediment_outflow: c.sediment_outflow,
        });
        let figures = PipesFigures::new(&settings, start, fields.totals(), left, checks, cells);
        Ok(CountedRun {
            cells: float_state(fields.width, fields.height, fields.terrain)?,
            work: cell_steps(cells, steps),
            figures: Box::new(figures),
        })
    }

    fn run_on_cpu(
        engine: CpuEngine,
        p: &PipesSettings,
        initial: &Cells,
    ) -> Result<CpuRun, ErosionError> {
        if engine != CpuEngine::Sequential {
            return Err(ErosionError::Variant(
                "the virtual-pipe model's CPU reference runs on one core: use --engine cpu-sequential".into(),
            ));
        }
        let params = p.params();
        let (w, h) = (initial.width(), initial.height());
        let mut state = PipesState::dry(w, h, float_cells(initial, Self::KERNELS)?.to_vec());
        let start = state.totals();
        let started = Instant::now();
        run_pipes_on_cpu(&mut state, &params, p.pipes_steps);
        let wall_time = started.elapsed();
        let after = state.totals();
        let figures = PipesFigures::new(p, start, after, Some(state.left), Vec::new(), w * h);
        Ok(CpuRun {
            cells: float_state(w, h, state.terrain)?,
            work: cell_steps(w * h, p.pipes_steps),
            wall_time,
            threads: 1,
            figures: Box::new(figures),
        })
    }

    /// A step rains pipes_rain x dt on every cell.
    fn water_per_step(p: &PipesSettings) -> Option<f64> {
        Some(f64::from(p.pipes_rain) * f64::from(p.pipes_dt))
    }

    fn raining_within(
        settings: &RunSettings,
        water_per_cell: f64,
        duration: f64,
    ) -> Option<RunSettings> {
        let mut s = settings.clone();
        let p = &mut s.pipes;
        let steps = (duration / f64::from(p.pipes_dt)).round().max(1.0);
        p.pipes_steps = steps as u32;
        p.pipes_rain = (water_per_cell / (steps * f64::from(p.pipes_dt))) as f32;
        Some(s)
    }

    fn in_comparison(settings: &RunSettings, sea: f32) -> RunSettings {
        let mut s = settings.clone();
        let p = &mut s.pipes;
        p.pipes_boundary = Boundary::Open;
        p.pipes_base_level = sea;
        p.pipes_sediment_cap = p.pipes_sediment_cap.or(Some(COMPARISON_SEDIMENT_CAP));
        s
    }

    fn plan(p: &PipesSettings) -> String {
        format!(
            "{} steps of the grid ({}), fields reached by address",
            p.pipes_steps,
            p.variant()
        )
    }

    fn figures_columns() -> Vec<Column> {
        PipesColumns::columns()
    }
}

/// The settings that built `variant` with `params`.
fn settings_of(variant: PipesVariant, params: &PipesParams) -> PipesSettings {
    PipesSettings {
        pipes_dt: params.dt,
        pipes_rain: params.rain,
        pipes_evaporation: params.evaporation,
        pipes_area: params.pipe_area,
        pipes_capacity: params.capacity,
        pipes_dissolving: params.dissolving,
        pipes_deposition: params.deposition,
        pipes_advection: params.advection,
        pipes_friction: params.friction,
        pipes_boundary: params.boundary,
        pipes_base_level: params.base_level,
        pipes_sediment_cap: params.sediment_cap,
        pipes_min_tilt: params.min_tilt,
        pipes_fusion: variant.fusion,
        pipes_packing: variant.packing,
        pipes_tiles: variant.tiles,
        pipes_workgroup: variant.workgroup,
        ..PipesSettings::DEFAULT
    }
}

/// The checked balance's worst water error, refused past [`WATER_TOLERANCE`].
pub fn check_water(checks: &[BalanceCheck], start_water: f64) -> Result<(), ErosionError> {
    for c in checks {
        let scale = start_water + c.rain;
        if c.water_error.abs() > WATER_TOLERANCE * scale.max(f64::MIN_POSITIVE) {
            return Err(ErosionError::Balance(format!(
                "after {} steps the water is {:.6e}, not initial + rain - evaporation - outflow ({:.6e}): the flux lost or made water",
                c.step,
                c.totals.water,
                c.totals.water - c.water_error
            )));
        }
    }
    Ok(())
}

/// Where the model's mass went, in height units summed over cells (volumes of one
/// cell's area).
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct PipesBalance {
    pub terrain_before: f64,
    pub terrain_after: f64,
    /// Still suspended at the end.
    pub sediment_after: f64,
    pub water_after: f64,
    /// Rain added over the run: water_before + rain_added = water_after + evaporated +
    /// outflow, to float rounding.
    pub rain_added: f64,
    /// Evaporated over the run (None where no counted run summed it).
    pub evaporated: Option<f64>,
    /// Water that left past the open edges, and the sediment it carried (0 with closed
    /// edges; None where no counted run summed them).
    pub outflow: Option<f64>,
    pub sediment_outflow: Option<f64>,
    /// (terrain + sediment + sediment outflow) after minus terrain before: the
    /// semi-Lagrangian advection's drift, the only term that breaks the balance of
    /// terrain and sediment; None past open edges where no counted run summed what
    /// left.
    pub advection_drift: Option<f64>,
}

/// What a grid run says beyond the common figures: run.json's `params`, `variant`,
/// `time_steps`, `balance` and `balance_checks`.
#[derive(Clone, Debug, Serialize)]
pub struct PipesFigures {
    pub params: PipesParams,
    pub variant: PipesVariant,
    /// Time steps of the run.
    pub time_steps: u32,
    pub balance: PipesBalance,
    /// The counted run's checks, every `pipes_check_every` steps and at the end.
    pub balance_checks: Vec<BalanceCheck>,
}

impl PipesFigures {
    fn new(
        settings: &PipesSettings,
        before: Totals,
        after: Totals,
        left: Option<Drained>,
        balance_checks: Vec<BalanceCheck>,
        cells: usize,
    ) -> Self {
        let params = settings.params();
        let rain_added = f64::from(params.rain)
            * f64::from(params.dt)
            * cell_steps(cells, settings.pipes_steps) as f64;
        Self {
            params,
            variant: settings.variant(),
            time_steps: settings.pipes_steps,
            balance: PipesBalance {
                terrain_before: before.terrain,
                terrain_after: after.terrain,
                sediment_after: after.sediment,
                water_after: after.water,
                rain_added,
                evaporated: left.map(|l| l.evaporated),
                outflow: left.map(|l| l.outflow),
                sediment_outflow: left.map(|l| l.sediment_outflow),
                // Past open edges without a counted run, what left is unknown, and
                // the drift would count it.
                advection_drift: match (left, params.boundary) {
                    (None, Boundary::Open) => None,
                    _ => Some(
                        after.terrain + after.sediment + left.map_or(0.0, |l| l.sediment_outflow)
                            - before.terrain
                            - before.sediment,
                    ),
                },
            },
            balance_checks,
        }
    }
}

/// A grid point's own columns of points.csv.
#[derive(Clone, Debug, Default, Serialize)]
struct PipesColumns {
    water_error: Option<f64>,
    advection_drift: Option<f64>,
    sediment_suspended: Option<f64>,
    water_outflow: Option<f64>,
}

impl Section for PipesColumns {
    const COLUMNS: &'static [(&'static str, &'static str, &'static str)] = &[
        (
            "water_error",
            "height units x cells",
            "the counted run's last check: water - (initial + rain - evaporation - outflow); only float rounding and the clamp of depths at zero may make it",
        ),
        (
            "advection_drift",
            "height units x cells",
            "(terrain + sediment + sediment carried off the map) at the end minus at the start: what the sediment transport made or lost (the semi-Lagrangian advection does not conserve)",
        ),
        (
            "sediment_suspended",
            "height units x cells",
            "sediment still suspended in the water at the end of the counted run",
        ),
        (
            "water_outflow",
            "height units x cells",
            "water that left past the open edges over the counted run (0 with closed ones; empty without a counted run)",
        ),
    ];
}

impl Figures for PipesFigures {
    fn report(&self) -> serde_json::Map<String, serde_json::Value> {
        report_of(self)
    }

    fn values(&self, _seconds: f64) -> Vec<String> {
        let last = self.balance_checks.last();
        values_of(&PipesColumns {
            water_error: last.map(|c| c.water_error),
            advection_drift: self.balance.advection_drift,
            sediment_suspended: Some(self.balance.sediment_after),
            water_outflow: self.balance.outflow,
        })
    }

    fn rates(&self, seconds: f64) -> Vec<(&'static str, f64)> {
        ms_per_step(seconds, self.time_steps)
    }

    fn summary(&self, unit: &HeightUnit) -> Vec<String> {
        let b = &self.balance;
        let mut lines = vec![
            format!(
                "{} time steps of dt {} ({})",
                self.time_steps, self.params.dt, self.variant
            ),
            format!(
                "summed over cells: terrain {} -> {}, sediment suspended {}, water {} (rain added {}), advection drift {}",
                unit.show_sum(b.terrain_before, 1),
                unit.show_sum(b.terrain_after, 1),
                unit.show_sum(b.sediment_after, 1),
                unit.show_sum(b.water_after, 1),
                unit.show_sum(b.rain_added, 1),
                b.advection_drift
                    .map_or("unknown (open edges, no counted run)".into(), |d| unit.show_sum(d, 1))
            ),
        ];
        if let (Some(outflow), Some(carried)) = (b.outflow, b.sediment_outflow) {
            if self.params.boundary == Boundary::Open {
                lines.push(format!(
                    "past the open edges: water {}, sediment {}",
                    unit.show_sum(outflow, 1),
                    unit.show_sum(carried, 1)
                ));
            }
        }
        lines
    }

    fn sediment_left(&self) -> f64 {
        self.balance.sediment_after
    }
}

/// Its fields of run.json (beside the common ones): path, unit, meaning.
const REPORT_FIELDS: &[(&str, &str, &str)] = &[
    ("figures.ms_per_step", "ms", "GPU time of one time step"),
    ("params.dt", "time units", "the time step"),
    (
        "params.rain",
        "kernel height units per time unit",
        "water rained on every cell",
    ),
    (
        "params.pipe_area",
        "cell areas",
        "cross-section of the virtual pipes",
    ),
    ("params.gravity", "cells per time unit squared", "g"),
    ("params.cell_length", "cells", "pipe length and cell side"),
    ("params.capacity", "per unit of tilt and speed", "Kc"),
    ("params.dissolving", "per time unit", "Ks"),
    ("params.deposition", "per time unit", "Kd"),
    ("params.evaporation", "share per time unit", "Ke"),
    ("params.min_tilt", "sine", "lower bound of sin(tilt)"),
    (
        "params.friction",
        "per time unit",
        "linear drag on the flux: a step keeps 1 - friction dt of it",
    ),
    ("params.boundary", "text", "closed or open edges"),
    (
        "params.base_level",
        "kernel height units",
        "the sea's surface past open edges",
    ),
    (
        "params.sediment_cap",
        "sediment volume per water volume",
        "suspended sediment per volume of water at most (null: no cap)",
    ),
    (
        "params.max_erosion_depth",
        "kernel height units",
        "water depth from which the capacity is whole",
    ),
    (
        "params.advection",
        "text",
        "semi-lagrangian or upwind sediment transport",
    ),
    (
        "variant.fusion",
        "text",
        "none (five passes) or fused (two)",
    ),
    ("variant.packing", "text", "f32 or half flux and velocity"),
    ("variant.tiles", "text", "none or shared-memory tiles"),
    (
        "variant.workgroup",
        "invocations x invocations",
        "the workgroup shape",
    ),
    ("time_steps", "time steps", "time steps of the run"),
    (
        "balance.terrain_before",
        "height units x cells",
        "terrain summed over cells before",
    ),
    (
        "balance.terrain_after",
        "height units x cells",
        "terrain summed over cells after",
    ),
    (
        "balance.sediment_after",
        "height units x cells",
        "sediment still suspended at the end",
    ),
    (
        "balance.water_after",
        "height units x cells",
        "water standing at the end",
    ),
    (
        "balance.rain_added",
        "height units x cells",
        "rain added over the run",
    ),
    (
        "balance.evaporated",
        "height units x cells",
        "evaporated over the run (null without a counted run)",
    ),
    (
        "balance.outflow",
        "height units x cells",
        "water out past the open edges (null without a counted run)",
    ),
    (
        "balance.sediment_outflow",
        "height units x cells",
        "sediment the outflow carried off the map (null without a counted run)",
    ),
    (
        "balance.advection_drift",
        "height units x cells",
        "(terrain + sediment + sediment outflow) after minus terrain before",
    ),
    (
        "balance_checks[].step",
        "time steps",
        "the step of the check (every pipes_check_every and at the end)",
    ),
    (
        "balance_checks[].totals.terrain",
        "height units x cells",
        "terrain then",
    ),
    (
        "balance_checks[].totals.sediment",
        "height units x cells",
        "suspended sediment then",
    ),
    (
        "balance_checks[].totals.water",
        "height units x cells",
        "water then",
    ),
    (
        "balance_checks[].rain",
        "height units x cells",
        "rain added so far",
    ),
    (
        "balance_checks[].evaporated",
        "height units x cells",
        "evaporation so far",
    ),
    (
        "balance_checks[].outflow",
        "height units x cells",
        "water out past the open edges so far",
    ),
    (
        "balance_checks[].sediment_outflow",
        "height units x cells",
        "sediment carried off the map so far",
    ),
    (
        "balance_checks[].water_error",
        "height units x cells",
        "water - (initial + rain - evaporation - outflow)",
    ),
    (
        "balance_checks[].advection_drift",
        "height units x cells",
        "(terrain + sediment + sediment outflow) - initial",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grid_columns_are_documented() {
        assert_eq!(crate::table::undocumented::<PipesColumns>(), None);
    }
}
