//! Whether a run blew up, judged against a baseline measured the same way: the CPU
//! reference of the same job on the same terrain, with (almost) no droplets racing.
//! A run is unstable when its largest cell change or the spread of its cell changes
//! exceeds the baseline's by more than [`UNSTABLE_FACTOR`], or a cell reached the
//! int32 limits.

use crate::erosion::cpu::{erode_parallel, erode_sequential};
use crate::erosion::DropletJob;

/// How far past the baseline a run may go before it is unstable. Racing droplets that
/// do not feed on each other stay within 1.5x of it (results/stability/).
pub const UNSTABLE_FACTOR: f64 = 4.0;

/// Droplet-steps up to which the baseline is the sequential reference; past them, the
/// reference on every CPU core, whose handful of droplets in flight on a map that size
/// race no more than one at a time would.
pub const SEQUENTIAL_STEPS: u64 = 50_000_000;

/// Cells this close to the int32 limits count as having hit them.
const LIMIT_MARGIN: i64 = 1 << 24;

/// How much a run changed the cells, in fixed-point units.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChangeSpread {
    /// The largest |after - before| of any cell.
    pub max: f64,
    /// The sum of after - before over all cells.
    pub total: f64,
    /// The standard deviation of after - before over all cells.
    pub std: f64,
    /// Some cell came within 2^24 of the int32 limits.
    pub at_limit: bool,
}

impl ChangeSpread {
    pub fn between(before: &[i32], after: &[i32]) -> Self {
        let n = before.len().max(1) as f64;
        let (mut max, mut sum, mut sum_sq, mut at_limit) = (0i64, 0.0f64, 0.0f64, false);
        for (&b, &a) in before.iter().zip(after) {
            let d = i64::from(a) - i64::from(b);
            max = max.max(d.abs());
            sum += d as f64;
            sum_sq += (d as f64) * (d as f64);
            at_limit |= i64::from(a).abs() >= i64::from(i32::MAX) - LIMIT_MARGIN;
        }
        let mean = sum / n;
        Self {
            max: max as f64,
            total: sum,
            std: (sum_sq / n - mean * mean).max(0.0).sqrt(),
            at_limit,
        }
    }
}

/// The baseline's change of `job` on `cells` (a `width` x `height` fixed-point map).
pub fn baseline(cells: &[i32], width: usize, height: usize, job: &DropletJob) -> ChangeSpread {
    let mut after = cells.to_vec();
    let steps = u64::from(job.droplets) * u64::from(job.params.lifetime);
    if steps <= SEQUENTIAL_STEPS {
        erode_sequential(&mut after, width, height, job);
    } else {
        erode_parallel(&mut after, width, height, job);
    }
    ChangeSpread::between(cells, &after)
}

/// A point's runs' changes against the baseline's, the worst of them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Judgement {
    pub max_ratio: f64,
    pub spread_ratio: f64,
    pub unstable: bool,
}

/// Each ratio is the largest over `runs`, and the point is unstable if any run is.
pub fn judge(runs: &[ChangeSpread], baseline: &ChangeSpread) -> Judgement {
    let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { f64::INFINITY };
    let worst = |of: fn(&ChangeSpread) -> f64| {
        runs.iter()
            .map(|run| ratio(of(run), of(baseline)))
            .fold(0.0, f64::max)
    };
    let (max_ratio, spread_ratio) = (worst(|c| c.max), worst(|c| c.std));
    Judgement {
        max_ratio,
        spread_ratio,
        unstable: runs.iter().any(|run| run.at_limit)
            || max_ratio > UNSTABLE_FACTOR
            || spread_ratio > UNSTABLE_FACTOR,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_is_judged_by_its_largest_change_and_spread_against_the_baseline() {
        let before = [0, 0, 0, 0];
        let base = ChangeSpread::between(&before, &[10, -10, 5, 0]);
        assert_eq!(base.max, 10.0);
        let calm = ChangeSpread::between(&before, &[12, -9, 4, 1]);
        assert!(!judge(&[calm], &base).unstable);
        // The stability sweep's deterministic run: 730 units against 12.
        let runaway = ChangeSpread::between(&before, &[730, -10, 5, 0]);
        let j = judge(&[calm, runaway], &base);
        assert!(j.unstable && j.max_ratio == 73.0, "{j:?}");
        // One run goes furthest (3.9 x), another spreads widest (over 4 x): each ratio is
        // its worst run's, and the spread makes the point unstable.
        let far = ChangeSpread::between(&before, &[39, 0, 0, 0]);
        let wide = ChangeSpread::between(&before, &[30, -30, 30, -30]);
        let j = judge(&[far, wide], &base);
        assert_eq!(j.max_ratio, 3.9);
        assert_eq!(j.spread_ratio, judge(&[wide], &base).spread_ratio);
        assert!(j.spread_ratio > UNSTABLE_FACTOR && j.unstable, "{j:?}");
        let limit = ChangeSpread::between(&before, &[i32::MIN + 5, 0, 0, 0]);
        assert!(limit.at_limit && judge(&[calm, limit], &base).unstable);
    }
}
