//! Whether a run blew up, judged against a baseline measured the same way: the CPU
//! reference of the same job on the same terrain, with (almost) no droplets racing.
//! A run is unstable when its largest cell change or the spread of its cell changes
//! exceeds the baseline's by more than [`UNSTABLE_FACTOR`], or a cell reached the
//! int32 limits.

use std::sync::Mutex;

use super::cpu::{erode_parallel, erode_sequential};
use super::params::DropletJob;
use crate::hash::fnv1a64;
use crate::terrain::{Cells, Change, Values};

/// How far past the baseline a run may go before it is unstable. Racing droplets that
/// do not feed on each other stay within 1.5x of it (docs/findings/determinism-and-stability.md).
pub const UNSTABLE_FACTOR: f64 = 4.0;

/// Droplet-steps up to which the baseline is the sequential reference; past them, the
/// reference on every CPU core, whose handful of droplets in flight on a map that size
/// race no more than one at a time would.
pub const SEQUENTIAL_STEPS: u64 = 50_000_000;

/// Cells this close to the int32 limits count as having hit them.
const LIMIT_MARGIN: i64 = 1 << 24;

/// How much a run changed the cells, in height units.
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
    /// The spread of the change from `before` to `after`, one map in fixed point.
    pub fn of(before: &Cells, after: &Cells) -> Option<Self> {
        let change = Change::between(before, after)?;
        let (cells, _) = after.fixed()?;
        Some(Self {
            max: change.max_abs(),
            total: change.total,
            std: change.std,
            at_limit: cells
                .iter()
                .any(|&a| i64::from(a).abs() >= i64::from(i32::MAX) - LIMIT_MARGIN),
        })
    }
}

/// The baseline's change of `job` on `initial` (fixed point).
pub fn baseline(initial: &Cells, job: &DropletJob) -> Option<ChangeSpread> {
    let (cells, scale) = initial.fixed()?;
    let (width, height) = (initial.width(), initial.height());
    let mut after = cells.to_vec();
    let steps = u64::from(job.droplets) * u64::from(job.params.lifetime);
    if steps <= SEQUENTIAL_STEPS {
        erode_sequential(&mut after, width, height, job);
    } else {
        erode_parallel(&mut after, width, height, job);
    }
    let after = Cells::new(
        width,
        height,
        Values::Fixed {
            cells: after,
            scale,
        },
    )
    .ok()?;
    ChangeSpread::of(initial, &after)
}

/// The baseline of `job` on `initial`, computed once for the points that share them
/// (a sweep's workgroup axis, say): the CPU reference is its most costly part. Workers
/// of several devices share the cache and never wait on each other's reference.
pub fn cached_baseline(initial: &Cells, job: &DropletJob) -> Option<ChangeSpread> {
    /// Baselines kept: a sweep's points share few jobs at a time.
    const KEPT: usize = 8;
    static CACHE: Mutex<Vec<(u64, ChangeSpread)>> = Mutex::new(Vec::new());
    let job_text = serde_json::to_string(job).unwrap_or_default();
    let key = initial.checksum() ^ fnv1a64(job_text.as_bytes());
    let cache = || CACHE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(&(_, spread)) = cache().iter().find(|(k, _)| *k == key) {
        return Some(spread);
    }
    let spread = baseline(initial, job)?;
    let mut kept = cache();
    if !kept.iter().any(|(k, _)| *k == key) {
        if kept.len() == KEPT {
            kept.remove(0);
        }
        kept.push((key, spread));
    }
    Some(spread)
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

    /// The spread between two fixed-point maps of one row, in fixed-point units.
    fn spread(before: &[i32], after: &[i32]) -> ChangeSpread {
        let cells = |c: &[i32]| {
            let values = Values::Fixed {
                cells: c.to_vec(),
                scale: 1.0,
            };
            Cells::new(c.len(), 1, values).expect("one row of the cells")
        };
        ChangeSpread::of(&cells(before), &cells(after)).expect("one map in fixed point")
    }

    #[test]
    fn a_run_is_judged_by_its_largest_change_and_spread_against_the_baseline() {
        let before = [0, 0, 0, 0];
        let base = spread(&before, &[10, -10, 5, 0]);
        assert_eq!(base.max, 10.0);
        let calm = spread(&before, &[12, -9, 4, 1]);
        assert!(!judge(&[calm], &base).unstable);
        // The stability sweep's deterministic run: 730 units against 12.
        let runaway = spread(&before, &[730, -10, 5, 0]);
        let j = judge(&[calm, runaway], &base);
        assert!(j.unstable && j.max_ratio == 73.0, "{j:?}");
        // One run goes furthest (3.9 x), another spreads widest (over 4 x): each ratio is
        // its worst run's, and the spread makes the point unstable.
        let far = spread(&before, &[39, 0, 0, 0]);
        let wide = spread(&before, &[30, -30, 30, -30]);
        let j = judge(&[far, wide], &base);
        assert_eq!(j.max_ratio, 3.9);
        assert_eq!(j.spread_ratio, judge(&[wide], &base).spread_ratio);
        assert!(j.spread_ratio > UNSTABLE_FACTOR && j.unstable, "{j:?}");
        let limit = spread(&before, &[i32::MIN + 5, 0, 0, 0]);
        assert!(limit.at_limit && judge(&[calm, limit], &base).unstable);
    }
}
