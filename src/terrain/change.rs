//! What erosion did to a map, between two of its states: the one change computation
//! that erode, sweeps, the stability judge and the strategies comparison all use.
//! Fixed-point states are summed as integers and scaled once, so their figures are
//! exact; float states are summed in f64.

use rayon::prelude::*;
use serde::Serialize;

use super::cells::{Cells, Values};

/// Cells per piece of a parallel pass over fixed-point differences: integer sums are
/// exact in any order, so the pieces add up to the sequential pass's figures bit for
/// bit (float differences are summed in one pass, in order).
const PIECE: usize = 1 << 20;

/// The change from one state of a map to another, in height units, summed or taken
/// over its cells.
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

/// A number the sums are kept in: i128 for fixed-point differences (exact), f64 for
/// float ones.
trait Sum:
    Copy + Default + PartialOrd + std::ops::Add<Output = Self> + std::ops::Neg<Output = Self>
{
    fn square(self) -> Self;
    fn to_f64(self) -> f64;
}

impl Sum for i128 {
    fn square(self) -> Self {
        self * self
    }
    fn to_f64(self) -> f64 {
        self as f64
    }
}

impl Sum for f64 {
    fn square(self) -> Self {
        self * self
    }
    fn to_f64(self) -> f64 {
        self
    }
}

/// The running sums of one group of cells.
#[derive(Clone, Copy, Default)]
struct Sums<T> {
    cells: usize,
    total: T,
    squares: T,
    lowered: T,
    raised: T,
    deepest: T,
    highest: T,
    changed: usize,
}

impl<T: Sum> Sums<T> {
    fn add(&mut self, d: T) {
        let zero = T::default();
        self.cells += 1;
        self.total = self.total + d;
        self.squares = self.squares + d.square();
        if d < zero {
            self.lowered = self.lowered + -d;
            if d < self.deepest {
                self.deepest = d;
            }
        } else {
            self.raised = self.raised + d;
            if d > self.highest {
                self.highest = d;
            }
        }
        self.changed += usize::from(d != zero);
    }

    /// The sums of two groups of cells.
    fn merged(self, other: Self) -> Self {
        Self {
            cells: self.cells + other.cells,
            total: self.total + other.total,
            squares: self.squares + other.squares,
            lowered: self.lowered + other.lowered,
            raised: self.raised + other.raised,
            deepest: if other.deepest < self.deepest {
                other.deepest
            } else {
                self.deepest
            },
            highest: if other.highest > self.highest {
                other.highest
            } else {
                self.highest
            },
            changed: self.changed + other.changed,
        }
    }

    /// The change, with each sum over `scale` (difference units per height unit).
    fn change(&self, scale: f64) -> Change {
        let n = self.cells.max(1) as f64;
        let (total, squares) = (self.total.to_f64(), self.squares.to_f64());
        let mean = total / n;
        let abs = self.lowered.to_f64() + self.raised.to_f64();
        Change {
            cells: self.cells,
            total: total / scale,
            eroded: self.lowered.to_f64() / scale,
            deposited: self.raised.to_f64() / scale,
            deepest: self.deepest.to_f64() / scale,
            highest: self.highest.to_f64() / scale,
            mean_abs: abs / n / scale,
            std: (squares / n - mean * mean).max(0.0).sqrt() / scale,
            changed: self.changed,
        }
    }
}

/// The sums over the cells outside `mask`, inside it, and over all, of `differences`.
fn grouped<T: Sum>(
    differences: impl Iterator<Item = T>,
    mask: Option<&[bool]>,
    left_out: &[bool],
) -> [Sums<T>; 3] {
    let mut sums = [Sums::<T>::default(); 3];
    for (i, d) in differences.enumerate() {
        if left_out.get(i) == Some(&true) {
            continue;
        }
        if let Some(mask) = mask {
            sums[usize::from(mask[i])].add(d);
        }
        sums[2].add(d);
    }
    sums
}

impl Change {
    /// The change from `before` to `after`; `None` where they are not the same map in
    /// the same arithmetic.
    pub fn between(before: &Cells, after: &Cells) -> Option<Self> {
        Some(Self::grouped(before, after, None, &[])?[2])
    }

    /// The change over the cells outside `mask`, inside it, and over all of them, in one
    /// pass; the cells `left_out` says (a DEM's missing ones; empty: none) in none. An
    /// empty `mask` splits nothing: the first two are of no cells.
    pub fn split(
        before: &Cells,
        after: &Cells,
        mask: &[bool],
        left_out: &[bool],
    ) -> Option<[Self; 3]> {
        let fits = |cells: &[bool]| cells.is_empty() || cells.len() == before.len();
        if !(fits(mask) && fits(left_out)) {
            return None;
        }
        Self::grouped(before, after, (!mask.is_empty()).then_some(mask), left_out)
    }

    fn grouped(
        before: &Cells,
        after: &Cells,
        mask: Option<&[bool]>,
        left_out: &[bool],
    ) -> Option<[Self; 3]> {
        if (before.width(), before.height()) != (after.width(), after.height()) {
            return None;
        }
        match (before.values(), after.values()) {
            (Values::Fixed { cells: b, scale }, Values::Fixed { cells: a, scale: s })
                if scale == s =>
            {
                let piece = |k: usize, (b, a): (&[i32], &[i32])| {
                    let cells = k * PIECE..k * PIECE + b.len();
                    let differences = b
                        .iter()
                        .zip(a)
                        .map(|(&b, &a)| i128::from(a) - i128::from(b));
                    let left_out = left_out.get(cells.clone()).unwrap_or(&[]);
                    grouped(differences, mask.map(|m| &m[cells]), left_out)
                };
                let sums = (b.par_chunks(PIECE).zip(a.par_chunks(PIECE)))
                    .enumerate()
                    .map(|(k, pieces)| piece(k, pieces))
                    .reduce(
                        || [Sums::default(); 3],
                        |x, y| [0, 1, 2].map(|g| x[g].merged(y[g])),
                    );
                let scale = f64::from(*scale);
                Some(sums.map(|s| s.change(scale)))
            }
            (Values::Float(b), Values::Float(a)) => {
                let differences = b.iter().zip(a).map(|(&b, &a)| f64::from(a) - f64::from(b));
                Some(grouped(differences, mask, left_out).map(|s| s.change(1.0)))
            }
            _ => None,
        }
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
        let [outside, inside, all] =
            Change::split(&before, &after, &[true, false, true, false], &[]).unwrap();
        assert_eq!((inside.total, outside.total), (0.5, 0.25));
        assert_eq!((inside.mean(), outside.mean()), (0.25, 0.125));
        assert_eq!(all, c);
    }

    #[test]
    fn fixed_point_sums_are_exact() {
        // Summed as heights, 0.001 + 0.002 + ... is not a thousandth multiple in f64;
        // summed as integers and scaled once, it is the nearest double to the sum.
        let n = 10_000;
        let before = Cells::new(
            n,
            1,
            Values::Fixed {
                cells: vec![0; n],
                scale: 1000.0,
            },
        )
        .unwrap();
        let cells: Vec<i32> = (1..=n as i32).map(|i| -(i % 7)).collect();
        let units: i64 = cells.iter().map(|&c| i64::from(c)).sum();
        let after = Cells::new(
            n,
            1,
            Values::Fixed {
                cells,
                scale: 1000.0,
            },
        )
        .unwrap();
        let c = Change::between(&before, &after).unwrap();
        assert_eq!(c.total, units as f64 / 1000.0);
        assert_eq!(c.eroded, -units as f64 / 1000.0);
    }
}
