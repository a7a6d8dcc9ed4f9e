//! What a thermal run says beyond the common figures: where its material went, how
//! far from rest it ended, its columns of points.csv and its fields of run.json.

use serde::Serialize;

use super::cpu::Steepness;
use super::params::{ThermalParams, STEEP_SLACK};
use super::runner::MassCheck;
use super::variant::ThermalVariant;
use crate::erosion::grid::ms_per_step;
use crate::erosion::{report_of, ErosionError, Figures};
use crate::table::{values_of, Section};
use crate::terrain::units::HeightUnit;

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
    pub(super) fn new(before: f64, after: f64, rounding_bound: f64) -> Self {
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
    pub(super) fn new(params: ThermalParams, variant: ThermalVariant, time_steps: u32) -> Self {
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
pub(super) struct ThermalColumns {
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
pub(super) const REPORT_FIELDS: &[(&str, &str, &str)] = &[
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
