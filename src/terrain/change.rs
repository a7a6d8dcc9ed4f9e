//! What erosion did to a map, between two of its states: the one change computation
//! that erode, sweeps, the stability judge and the strategies comparison all use.

use serde::Serialize;

use super::cells::Cells;

/// The change from one state of a map to another, in height units, summed or taken
/// over its cells; exact in the arithmetic the cells were kept in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Change {
    /// Cells compared.
    pub cells: usize,
    /// Sum of (after - before): the net change, negative for net erosion.
    pub total: f64,
    /// Sum of the lowering of the cells that went down.
    pub eroded: f64,
    /// Sum of the raising of the cells that went up.
    pub deposited: f64,
    /// The most negative change of one cell (0 where none went down).
    pub deepest: f64,
    /// The most positive change of one cell (0 where none went up).
    pub highest: f64,
    /// Mean of |after - before|.
    pub mean_abs: f64,
    /// Standard deviation of (after - before) over the cells.
    pub std: f64,
    /// Cells whose height changed at all.
    pub changed: usize,
}

impl Change {
    /// The change of per-cell differences (after - before).
    pub fn of(differences: impl Iterator<Item = f64>) -> Self {
        let mut c = Change::default();
        let mut sum_sq = 0.0f64;
        for d in differences {
            c.cells += 1;
            c.total += d;
            sum_sq += d * d;
            c.mean_abs += d.abs();
            if d < 0.0 {
                c.eroded -= d;
            } else {
                c.deposited += d;
            }
            c.deepest = c.deepest.min(d);
            c.highest = c.highest.max(d);
            c.changed += usize::from(d != 0.0);
        }
        if c.cells > 0 {
            let n = c.cells as f64;
            c.mean_abs /= n;
            let mean = c.total / n;
            c.std = (sum_sq / n - mean * mean).max(0.0).sqrt();
        }
        c
    }

    /// The change from `before` to `after`; `None` where they are not the same map in
    /// the same arithmetic.
    pub fn between(before: &Cells, after: &Cells) -> Option<Self> {
        Some(Self::of(before.differences(after)?))
    }

    /// The change over the cells outside `mask` and over those inside it.
    pub fn split(before: &Cells, after: &Cells, mask: &[bool]) -> Option<[Self; 2]> {
        let differences: Vec<f64> = before.differences(after)?.collect();
        let group = |inside: bool| {
            Self::of(
                differences
                    .iter()
                    .zip(mask)
                    .filter(move |(_, &m)| m == inside)
                    .map(|(&d, _)| d),
            )
        };
        Some([group(false), group(true)])
    }

    /// The largest |after - before| of one cell.
    pub fn max_abs(&self) -> f64 {
        self.highest.max(-self.deepest)
    }

    /// Mean of (after - before); 0 over no cells.
    pub fn mean(&self) -> f64 {
        if self.cells == 0 {
            0.0
        } else {
            self.total / self.cells as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terrain::cells::Values;

    #[test]
    fn erosion_and_deposition_add_up_to_the_net_change() {
        let before = Cells::new(2, 2, Values::Float(vec![1.0, 2.0, 3.0, 4.0])).unwrap();
        let after = Cells::new(2, 2, Values::Float(vec![0.5, 2.0, 4.0, 4.25])).unwrap();
        let c = Change::between(&before, &after).unwrap();
        assert_eq!(c.eroded, 0.5);
        assert_eq!(c.deposited, 1.25);
        assert_eq!(c.total, 0.75);
        assert_eq!((c.deepest, c.highest, c.max_abs()), (-0.5, 1.0, 1.0));
        assert_eq!(c.changed, 3);
        assert_eq!(c.mean_abs, 1.75 / 4.0);
        // Differences -0.5, 0, 1, 0.25: mean 0.1875, mean of squares 1.3125 / 4.
        let std = (1.3125f64 / 4.0 - 0.1875 * 0.1875).sqrt();
        assert!((c.std - std).abs() < 1e-15);
        let [outside, inside] =
            Change::split(&before, &after, &[true, false, true, false]).unwrap();
        assert_eq!((inside.total, outside.total), (0.5, 0.25));
        assert_eq!((inside.mean(), outside.mean()), (0.25, 0.125));
    }
}
