//! The thermal model's parameters and their rules, the neighbourhood's geometry that
//! the kernels and the CPU reference share, and the bound float rounding puts on the
//! mass a run may drift by.

use serde::Serialize;

use crate::erosion::keys::SettingError;

/// The model's parameters. Heights are in kernel units (one unit is one cell's width),
/// so a slope is a height difference over a distance in cells.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ThermalParams {
    /// The talus angle in degrees: material slides where a slope is steeper.
    pub talus_degrees: f32,
    /// Share of a cell's largest excess over the talus that it sends per step.
    pub rate: f32,
    /// 4 (left, right, top, bottom) or 8 (and the diagonals).
    pub neighbours: u32,
}

/// The neighbours in the order every sum runs over them: the four axial ones, then the
/// four diagonal ones (the 4-neighbourhood is the first four).
pub const OFFSETS: [(i32, i32); 8] = [
    (-1, 0),
    (1, 0),
    (0, -1),
    (0, 1),
    (-1, -1),
    (1, -1),
    (-1, 1),
    (1, 1),
];

/// The direction back: a cell's neighbour `k` sends toward the cell along
/// `OPPOSITE[k]`.
pub const OPPOSITE: [usize; 8] = [1, 0, 3, 2, 7, 6, 5, 4];

/// Cells steeper than the talus by more than this excess (height units, that is cell
/// widths) count as still steep at the end of a run: the relaxation approaches the
/// talus geometrically and never quite reaches it.
pub const STEEP_SLACK: f32 = 1e-3;

impl ThermalParams {
    pub const DEFAULT: ThermalParams = ThermalParams {
        talus_degrees: crate::terrain::metrics::REPOSE_DEGREES,
        rate: 0.1,
        neighbours: 8,
    };

    /// The height a slope at the talus drops over an axial and over a diagonal
    /// neighbour's distance (1 and sqrt(2) cells), rounded to f32 once: the kernels
    /// take these as specialization constants, so both engines compare with the same
    /// numbers.
    pub fn talus_drops(&self) -> [f32; 2] {
        let slope = f64::from(self.talus_degrees).to_radians().tan();
        [slope as f32, (slope * std::f64::consts::SQRT_2) as f32]
    }

    /// The drop at the talus toward neighbour `k` of [`OFFSETS`].
    pub fn drop_toward(drops: [f32; 2], k: usize) -> f32 {
        if k < 4 {
            drops[0]
        } else {
            drops[1]
        }
    }

    /// The model's rules. Errors name the setting.
    pub fn check(&self) -> Result<(), SettingError> {
        let talus = self.talus_degrees;
        if !(talus > 0.0 && talus < 90.0) {
            return Err(SettingError::new(
                "thermal_talus",
                format!("the talus angle must lie strictly between 0 and 90 degrees, got {talus}"),
            ));
        }
        if self.neighbours != 4 && self.neighbours != 8 {
            return Err(SettingError::new(
                "thermal_neighbours",
                format!("must be 4 or 8, got {}", self.neighbours),
            ));
        }
        let (rate, largest) = (self.rate, self.largest_rate());
        if !(rate > 0.0 && rate <= largest) {
            return Err(SettingError::new(
                "thermal_rate",
                format!(
                    "the share of the largest excess moved per step must lie in (0, 1/(neighbours + 1)] = (0, {largest}] for {} neighbours (past it, a cell that several neighbours fill at once overshoots them), got {rate}",
                    self.neighbours
                ),
            ));
        }
        Ok(())
    }

    /// The largest rate at which no step raises a cell above its highest neighbour or
    /// lowers it below its lowest (a discrete maximum principle): a cell receives at most
    /// `rate` times its drop from each of its N neighbours, and sends at most `rate`
    /// times its largest drop, so with `rate <= 1 / (N + 1)` it stays within their range.
    pub fn largest_rate(&self) -> f32 {
        1.0 / (self.neighbours as f32 + 1.0)
    }
}

/// The largest |sum after - sum before| float32 rounding can make over `steps` steps
/// of a map of `cells` cells whose heights stay within `highest` in magnitude. Every
/// flow is added to its receiver exactly as it is taken from its sender (the same f32
/// value), so only the two roundings of each new height, `(h - sent) + received`,
/// break the balance, each by at most half an ulp (2^-24) of its result: at most
/// 2 `highest` for `h - sent` (a cell sends at most a fifth of its largest drop), `highest`
/// for the new height. This is the worst case, every rounding the same way; rounding
/// to nearest mostly cancels, and runs drift orders of magnitude less.
pub fn rounding_bound(steps: u64, cells: u64, highest: f64) -> f64 {
    let half_ulp = f64::from(f32::EPSILON) / 2.0;
    steps as f64 * cells as f64 * 3.0 * half_ulp * highest
}
