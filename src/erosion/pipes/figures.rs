//! What a virtual-pipe run says beyond the common figures: where its water and
//! sediment went, its columns of points.csv and its fields of run.json.

use serde::Serialize;

use super::params::{Boundary, Drained, PipesParams, Totals};
use super::runner::BalanceCheck;
use super::settings::PipesSettings;
use super::variant::PipesVariant;
use crate::erosion::grid::{ms_per_step, GridSettings};
use crate::erosion::steps::cell_steps;
use crate::erosion::{report_of, ErosionError, Figures};
use crate::table::{values_of, Section};
use crate::terrain::units::HeightUnit;

/// Water beyond this share of what fell and stood can only come from a bug in the flux:
/// float rounding over a run stays orders below it.
const WATER_TOLERANCE: f64 = 1e-3;

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
    pub(super) fn new(
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
pub(super) struct PipesColumns {
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
pub(super) const REPORT_FIELDS: &[(&str, &str, &str)] = &[
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
