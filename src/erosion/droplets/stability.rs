//! Whether a run blew up, judged against a baseline measured the same way: the CPU
//! reference of the same job on the same terrain, with (almost) no droplets racing.
//! A run is unstable when its largest cell change or the spread of its cell changes
//! exceeds the baseline's by more than [`UNSTABLE_FACTOR`], or a cell reached the
//! int32 limits. The same reference's heights give the point's concurrency error: how
//! far its net change, eroded volume and change map lie from the reference's.

use std::sync::{Arc, Mutex};

use super::cpu::{erode_parallel, erode_sequential};
use super::params::DropletJob;
use crate::erosion::CpuEngine;
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

/// Which CPU reference `job` is judged against: the sequential one up to
/// [`SEQUENTIAL_STEPS`] droplet-steps, the one on every core past them.
pub fn reference_engine(job: &DropletJob) -> CpuEngine {
    let steps = u64::from(job.droplets) * u64::from(job.params.lifetime);
    if steps <= SEQUENTIAL_STEPS {
        CpuEngine::Sequential
    } else {
        CpuEngine::Parallel
    }
}

/// The CPU reference of one job on one terrain: its heights after, its change and the
/// baseline's spread the stability judge holds runs against.
#[derive(Clone, Debug)]
pub struct Reference {
    pub engine: CpuEngine,
    pub after: Cells,
    pub change: Change,
    pub spread: ChangeSpread,
}

/// The CPU reference of `job` on `initial` (fixed point), on the engine
/// [`reference_engine`] picks.
pub fn reference(initial: &Cells, job: &DropletJob) -> Option<Reference> {
    let (cells, scale) = initial.fixed()?;
    let (width, height) = (initial.width(), initial.height());
    let mut after = cells.to_vec();
    let engine = reference_engine(job);
    match engine {
        CpuEngine::Sequential => erode_sequential(&mut after, width, height, job),
        CpuEngine::Parallel => erode_parallel(&mut after, width, height, job),
    };
    let after = Cells::new(
        width,
        height,
        Values::Fixed {
            cells: after,
            scale,
        },
    )
    .ok()?;
    Some(Reference {
        engine,
        change: Change::between(initial, &after)?,
        spread: ChangeSpread::of(initial, &after)?,
        after,
    })
}

/// The most cells of a map a sweep point judges against the CPU reference: 2^28
/// (16384^2). Past it the reference's copies of the map (16 GiB at 65536^2) join the
/// five maps a point already holds on the host.
pub const REFERENCE_MAX_CELLS: u64 = 1 << 28;

/// The reference of `job` on `initial`, computed once for the points that share them
/// (a sweep's workgroup, batch or variant axis, say): it is the most costly part of a
/// point's CPU share. Workers of several devices share the cache and never wait on each
/// other's reference.
pub fn cached_reference(initial: &Cells, job: &DropletJob) -> Option<Arc<Reference>> {
    /// References kept: a sweep's points share few jobs at a time.
    const KEPT: usize = 8;
    /// The heights they may hold together; the newest is kept whatever its size.
    const KEPT_BYTES: usize = 1 << 30;
    type Kept = Vec<(u64, Arc<Reference>)>;
    static CACHE: Mutex<Kept> = Mutex::new(Vec::new());
    let job_text = serde_json::to_string(job).unwrap_or_default();
    let key = initial.checksum() ^ fnv1a64(job_text.as_bytes());
    let cache = || CACHE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, kept)) = cache().iter().find(|(k, _)| *k == key) {
        return Some(Arc::clone(kept));
    }
    let computed = Arc::new(reference(initial, job)?);
    let mut kept = cache();
    if let Some((_, earlier)) = kept.iter().find(|(k, _)| *k == key) {
        // Another worker finished the same reference first: one copy is kept.
        return Some(Arc::clone(earlier));
    }
    kept.push((key, Arc::clone(&computed)));
    let bytes = |kept: &Kept| kept.iter().map(|(_, r)| r.after.len() * 4).sum::<usize>();
    while kept.len() > 1 && (kept.len() > KEPT || bytes(&kept) > KEPT_BYTES) {
        kept.remove(0);
    }
    Some(computed)
}

/// How far a point's runs lie from the CPU reference of the same job: its
/// concurrency error, each figure the mean over the runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ConcurrencyError {
    /// Which reference the runs are held against.
    pub reference: CpuEngine,
    /// Net change (sum of after - before) over the reference's; `None` where the
    /// reference's is zero.
    pub net_change_ratio: Option<f64>,
    /// Eroded volume (the summed lowering of the cells that went down) over the
    /// reference's; `None` where the reference eroded nothing.
    pub eroded_ratio: Option<f64>,
    /// The root mean square over the cells (and the runs) of the run's change minus the
    /// reference's, in height units.
    pub change_map_rmse: f64,
    /// That over the root mean square of the reference's change; `None` where the
    /// reference changed nothing.
    pub change_map_relative_rmse: Option<f64>,
}

/// The runs' changes from `initial` against `reference`'s; `None` where a run is not
/// the reference's map in its fixed point, or there are no runs.
pub fn concurrency_error(
    initial: &Cells,
    reference: &Reference,
    runs: &[&Cells],
) -> Option<ConcurrencyError> {
    let (before, scale) = initial.fixed()?;
    let (expected, expected_scale) = reference.after.fixed()?;
    if runs.is_empty() || expected_scale != scale || expected.len() != before.len() {
        return None;
    }
    let squares = |a: &[i32], b: &[i32]| -> f64 {
        let sum: i128 = a
            .iter()
            .zip(b)
            .map(|(&a, &b)| {
                let d = i128::from(a) - i128::from(b);
                d * d
            })
            .sum();
        sum as f64
    };
    let (mut net, mut eroded, mut squared) = (0.0, 0.0, 0.0);
    for run in runs {
        let (after, run_scale) = run.fixed()?;
        if run_scale != scale || after.len() != before.len() {
            return None;
        }
        let change = Change::between(initial, run)?;
        net += change.total;
        eroded += change.eroded;
        squared += squares(after, expected);
    }
    let n = runs.len() as f64;
    let cells = before.len().max(1) as f64;
    let rms = |sum: f64| (sum / cells).sqrt() / f64::from(scale);
    let ratio = |a: f64, b: f64| (b != 0.0).then(|| a / b);
    let change_map_rmse = rms(squared / n);
    let reference_rms = rms(squares(expected, before));
    Some(ConcurrencyError {
        reference: reference.engine,
        net_change_ratio: ratio(net / n, reference.change.total),
        eroded_ratio: ratio(eroded / n, reference.change.eroded),
        change_map_rmse,
        change_map_relative_rmse: ratio(change_map_rmse, reference_rms),
    })
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

    fn map(width: usize, cells: Vec<i32>, scale: f32) -> Cells {
        let height = cells.len() / width;
        Cells::new(width, height, Values::Fixed { cells, scale }).expect("a fixed-point map")
    }

    fn job(droplets: u32) -> DropletJob {
        DropletJob {
            droplets,
            seed: 7,
            params: super::super::KernelParams::default(),
            spawn: super::super::Spawn::default(),
            passes: super::super::Passes::default(),
        }
    }

    #[test]
    fn the_reference_is_sequential_up_to_the_step_limit_and_parallel_past_it() {
        let lifetime = u64::from(job(1).params.lifetime);
        let at_limit = (SEQUENTIAL_STEPS / lifetime) as u32;
        assert_eq!(reference_engine(&job(at_limit)), CpuEngine::Sequential);
        assert_eq!(reference_engine(&job(at_limit + 1)), CpuEngine::Parallel);
        assert_eq!(CpuEngine::Sequential.name(), "cpu-sequential");
    }

    #[test]
    fn the_concurrency_error_compares_net_change_erosion_and_the_change_map() {
        let before = map(4, vec![100; 4], 10.0);
        let expected = map(4, vec![80, 100, 110, 100], 10.0);
        let reference = Reference {
            engine: CpuEngine::Sequential,
            change: Change::between(&before, &expected).unwrap(),
            spread: ChangeSpread::of(&before, &expected).unwrap(),
            after: expected.clone(),
        };
        let same = concurrency_error(&before, &reference, &[&expected]).unwrap();
        assert_eq!(same.net_change_ratio, Some(1.0));
        assert_eq!(same.eroded_ratio, Some(1.0));
        assert_eq!(same.change_map_rmse, 0.0);
        assert_eq!(same.change_map_relative_rmse, Some(0.0));
        // Twice the erosion (-40 units where the reference took -20), the same
        // deposit: net -3 against -1, eroded 4 against 2 (in height units). The change
        // maps differ by 20 fixed-point units in one cell of four: RMS 1 height unit,
        // against the reference's sqrt((400 + 100) / 4) / 10.
        let deeper = map(4, vec![60, 100, 110, 100], 10.0);
        let e = concurrency_error(&before, &reference, &[&deeper]).unwrap();
        assert_eq!(e.net_change_ratio, Some(3.0));
        assert_eq!(e.eroded_ratio, Some(2.0));
        assert_eq!(e.change_map_rmse, 1.0);
        let reference_rms = (500.0f64 / 4.0).sqrt() / 10.0;
        assert!((e.change_map_relative_rmse.unwrap() - 1.0 / reference_rms).abs() < 1e-12);
        // Over two runs: the mean ratios, the root of the mean square.
        let both = concurrency_error(&before, &reference, &[&expected, &deeper]).unwrap();
        assert_eq!(both.net_change_ratio, Some(2.0));
        assert_eq!(both.eroded_ratio, Some(1.5));
        assert!((both.change_map_rmse - 0.5f64.sqrt()).abs() < 1e-12);
        // No change in the reference: no ratio, never an invented one.
        let still = Reference {
            engine: CpuEngine::Sequential,
            change: Change::between(&before, &before).unwrap(),
            spread: ChangeSpread::of(&before, &before).unwrap(),
            after: before.clone(),
        };
        let e = concurrency_error(&before, &still, &[&deeper]).unwrap();
        assert_eq!((e.net_change_ratio, e.eroded_ratio), (None, None));
        assert_eq!(e.change_map_relative_rmse, None);
        assert!((e.change_map_rmse - 425.0f64.sqrt() / 10.0).abs() < 1e-12);
        // Another scale or shape is not the same map.
        assert_eq!(
            concurrency_error(&before, &reference, &[&map(4, vec![100; 4], 5.0)]),
            None
        );
        assert_eq!(
            concurrency_error(&before, &reference, &[&map(2, vec![100; 2], 10.0)]),
            None
        );
        assert_eq!(concurrency_error(&before, &reference, &[]), None);
    }

    #[test]
    fn points_that_share_a_job_and_terrain_share_one_reference() {
        let side = 32;
        let cells: Vec<i32> = (0..side * side)
            .map(|i| {
                let (x, y) = ((i % side) as i32, (i / side) as i32);
                (x * 37 + y * 11) * 1000
            })
            .collect();
        let initial = map(side, cells, 1000.0);
        let first = cached_reference(&initial, &job(40)).unwrap();
        let again = cached_reference(&initial, &job(40)).unwrap();
        assert!(Arc::ptr_eq(&first, &again), "computed once");
        let other = cached_reference(&initial, &job(41)).unwrap();
        assert!(
            !Arc::ptr_eq(&first, &other),
            "another job, another reference"
        );
        assert_eq!(first.engine, CpuEngine::Sequential);
        assert_ne!(first.after, initial, "the droplets eroded");
        let e = concurrency_error(&initial, &first, &[&first.after]).unwrap();
        assert_eq!(e.net_change_ratio, Some(1.0));
        assert_eq!(e.change_map_rmse, 0.0);
    }
}
