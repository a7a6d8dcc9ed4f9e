//! The interval `compare` judges by: a percentile bootstrap of the ratio of two points'
//! median GPU times (new over base), from each point's own repetitions, after
//! criterion.rs's comparison of two benchmarks. Each side is resampled with replacement
//! on its own, so the interval carries both points' noise; the generator starts from
//! one fixed seed for every point, so a verdict is the same on every run and depends on
//! that point's samples alone. Its ends are quantiles as points.csv's quartiles are
//! (`results::quantile`).

use crate::experiment::results::quantile;

/// Resamples of each point pair: with 10,000, each end of a 95% interval is off by
/// about 1% of its width from where endless resampling would put it (for a normal
/// spread).
pub const RESAMPLES: usize = 10_000;

/// The interval's level: 95%, the level of the medians' intervals in points.csv.
pub const LEVEL: f64 = 0.95;

/// The seed of every point pair's resampling (SplitMix64).
pub const SEED: u64 = 0x5eed_0026;

/// SplitMix64 (Steele, Lea and Flood 2014): a period of 2^64, enough for any sweep's
/// draws, in a few lines that need no crate.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// An index below `n` (multiply-shift: the bias is below n / 2^64).
    fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next()) * n as u128) >> 64) as usize
    }
}

/// The median of `values`, reordering them (a selection, not a sort).
fn median_of(values: &mut [f64]) -> f64 {
    let n = values.len();
    let (below, &mut upper, _) = values.select_nth_unstable_by(n / 2, f64::total_cmp);
    if n % 2 == 1 {
        return upper;
    }
    // The lower middle is the largest of the values below the upper one.
    let lower = below.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (lower + upper) / 2.0
}

/// One side's resample: `out` refilled with draws from `values`, and its median.
fn resampled_median(values: &[f64], out: &mut [f64], rng: &mut SplitMix64) -> f64 {
    for slot in out.iter_mut() {
        *slot = values[rng.below(values.len())];
    }
    median_of(out)
}

/// The [`LEVEL`] interval of median(new) / median(base), from [`RESAMPLES`] pairs of
/// resampled medians, or `None` where a side has no samples.
pub fn ratio_interval(base: &[f64], new: &[f64]) -> Option<(f64, f64)> {
    if base.is_empty() || new.is_empty() {
        return None;
    }
    // One stream for both sides: with two streams from one seed, sides of equal length
    // would draw the same positions and their noise would cancel.
    let mut rng = SplitMix64(SEED);
    let (mut b, mut n) = (vec![0.0; base.len()], vec![0.0; new.len()]);
    let mut ratios: Vec<f64> = (0..RESAMPLES)
        .map(|_| {
            let base_median = resampled_median(base, &mut b, &mut rng);
            resampled_median(new, &mut n, &mut rng) / base_median
        })
        .collect();
    ratios.sort_by(f64::total_cmp);
    let tail = (1.0 - LEVEL) / 2.0;
    Some((quantile(&ratios, tail), quantile(&ratios, 1.0 - tail)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_of_a_resample_is_the_quartiles_median() {
        for values in [
            vec![3.0, 1.0, 2.0],
            vec![4.0, 1.0, 3.0, 2.0],
            vec![5.0],
            vec![2.0, 2.0, 1.0, 9.0, 7.0, 7.0],
        ] {
            let expected = crate::experiment::results::Summary::of(&values).median;
            assert_eq!(median_of(&mut values.clone()), expected, "{values:?}");
        }
    }

    #[test]
    fn the_interval_is_reproducible_and_holds_the_ratio_of_the_medians() {
        let base: Vec<f64> = (0..40).map(|i| 10.0 + f64::from(i % 7) * 0.01).collect();
        let new: Vec<f64> = base.iter().map(|v| v * 1.2).collect();
        let first = ratio_interval(&base, &new).unwrap();
        assert_eq!(ratio_interval(&base, &new), Some(first), "the same seed");
        let (low, high) = first;
        assert!(low < 1.2 && 1.2 < high, "{first:?}");
        assert!(
            high - low < 0.01,
            "tight samples, a tight interval: {first:?}"
        );
    }

    #[test]
    fn identical_sides_are_resampled_apart_so_their_noise_shows() {
        let samples: Vec<f64> = (0..20).map(|i| 1.0 + f64::from(i) * 0.01).collect();
        let (low, high) = ratio_interval(&samples, &samples).unwrap();
        assert!(low < 0.99 && high > 1.01, "{low} {high}");
        // One repetition on each side has no spread at all.
        assert_eq!(ratio_interval(&[2.0], &[3.0]), Some((1.5, 1.5)));
        assert_eq!(ratio_interval(&[], &[3.0]), None);
    }
}
