//! The percentile bootstrap: the interval of a ratio of two samples' medians (new over
//! base), after criterion.rs's comparison of two benchmarks, and resamples of seeds
//! that tell how often a verdict would flip. Each draw comes from one fixed seed, so an
//! interval is the same on every run and depends on its samples alone.

use super::order::quantile;

/// Resamples of each ratio: with 10,000, each end of a 95% interval is off by about 1%
/// of its width from where endless resampling would put it (for a normal spread).
pub const RESAMPLES: usize = 10_000;

/// The interval's level: 95%, the level of the medians' intervals in points.csv.
pub const LEVEL: f64 = 0.95;

/// The seed of every ratio's resampling.
pub const SEED: u64 = 0x5eed_0026;

/// The fewest repetitions a side needs for a verdict on its ratio of medians. With
/// fewer, a resample's median takes only a handful of values (one of the n values, for
/// an odd n), so the interval's ends are a few ratios of raw times and a rerun can move
/// them past the threshold on one slow repetition. nvbench's default minimum of
/// samples is 10 too.
pub const MIN_SAMPLES: usize = 10;

/// SplitMix64 (Steele, Lea and Flood 2014), rand_xoshiro's: the algorithm is fixed, and
/// a test below pins its stream from [`SEED`], so every committed interval redraws alike.
pub struct SplitMix64(rand_xoshiro::SplitMix64);

impl SplitMix64 {
    /// The stream from `seed` (its state starts at `seed`).
    pub fn new(seed: u64) -> Self {
        use rand_xoshiro::rand_core::SeedableRng as _;
        Self(rand_xoshiro::SplitMix64::seed_from_u64(seed))
    }

    pub fn next_u64(&mut self) -> u64 {
        rand_xoshiro::rand_core::Rng::next_u64(&mut self.0)
    }

    /// An index below `n` (multiply-shift: the bias is below n / 2^64).
    pub fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
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

/// The [`LEVEL`] interval of median(new) / median(base), from `resamples` pairs of
/// resampled medians ([`RESAMPLES`] for a verdict), or `None` where a side has no
/// samples. Each side is resampled on its own, so the interval carries both sides'
/// noise.
pub fn ratio_of_medians(base: &[f64], new: &[f64], resamples: usize) -> Option<(f64, f64)> {
    if base.is_empty() || new.is_empty() || resamples == 0 {
        return None;
    }
    // One stream for both sides: with two streams from one seed, sides of equal length
    // would draw the same positions and their noise would cancel.
    let mut rng = SplitMix64::new(SEED);
    let (mut b, mut n) = (vec![0.0; base.len()], vec![0.0; new.len()]);
    let mut ratios: Vec<f64> = (0..resamples)
        .map(|_| {
            let base_median = resampled_median(base, &mut b, &mut rng);
            resampled_median(new, &mut n, &mut rng) / base_median
        })
        .collect();
    ratios.sort_by(f64::total_cmp);
    let tail = (1.0 - LEVEL) / 2.0;
    Some((quantile(&ratios, tail), quantile(&ratios, 1.0 - tail)))
}

/// How often a verdict would come out otherwise on other draws of its units (seeds):
/// of `resamples` draws of `units` indices, with replacement, the share whose `judge`
/// differs from `observed`, among the draws it judges (`None`: a draw it cannot weigh,
/// left out). `None` where it judges none.
pub fn flip_share<T: PartialEq>(
    units: usize,
    resamples: usize,
    observed: &T,
    mut judge: impl FnMut(&[usize]) -> Option<T>,
) -> Option<f64> {
    let mut rng = SplitMix64::new(SEED);
    let mut draw = vec![0; units];
    let (mut judged, mut flipped) = (0usize, 0usize);
    for _ in 0..resamples {
        for slot in draw.iter_mut() {
            *slot = rng.below(units);
        }
        if let Some(verdict) = judge(&draw) {
            judged += 1;
            flipped += usize::from(verdict != *observed);
        }
    }
    (judged > 0).then(|| flipped as f64 / judged as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stream_is_splitmix64_bit_for_bit() {
        // From the reference algorithm (Vigna's splitmix64.c), evaluated with Python's
        // integers masked to 64 bits: seed 0 starts with its published first value.
        assert_eq!(SplitMix64::new(0).next_u64(), 0xe220_a839_7b1d_cdaf);
        let mut rng = SplitMix64::new(SEED);
        let first: Vec<u64> = (0..3).map(|_| rng.next_u64()).collect();
        assert_eq!(
            first,
            [
                0x069c_0c5a_e19c_3504,
                0x3295_6254_967b_33a0,
                0x417f_91de_95bc_3c9a
            ]
        );
        let millionth = (3..1_000_000).map(|_| rng.next_u64()).last();
        assert_eq!(millionth, Some(0x90a1_b8cc_d925_5103));
    }

    #[test]
    fn the_median_of_a_resample_is_the_quartiles_median() {
        for values in [
            vec![3.0, 1.0, 2.0],
            vec![4.0, 1.0, 3.0, 2.0],
            vec![5.0],
            vec![2.0, 2.0, 1.0, 9.0, 7.0, 7.0],
        ] {
            let expected = super::super::median(&values).unwrap();
            assert_eq!(median_of(&mut values.clone()), expected, "{values:?}");
        }
    }

    #[test]
    fn below_the_minimum_a_resampled_median_takes_only_a_handful_of_values() {
        // Values whose pairs' midpoints are all distinct (powers of two).
        let distinct_medians = |n: usize| {
            let values: Vec<f64> = (0..n).map(|i| 2f64.powi(i as i32)).collect();
            let mut rng = SplitMix64::new(SEED);
            let mut out = vec![0.0; n];
            let mut medians: Vec<f64> = (0..RESAMPLES)
                .map(|_| resampled_median(&values, &mut out, &mut rng))
                .collect();
            medians.sort_by(f64::total_cmp);
            medians.dedup();
            medians.len()
        };
        assert_eq!(distinct_medians(3), 3);
        assert_eq!(distinct_medians(5), 5);
        // At the minimum (even), a median is a midpoint of two of the ten values: far
        // more of them are drawn.
        let at_minimum = distinct_medians(MIN_SAMPLES);
        assert!(at_minimum > 4 * MIN_SAMPLES, "{at_minimum}");
    }

    #[test]
    fn the_interval_is_reproducible_and_holds_the_ratio_of_the_medians() {
        let base: Vec<f64> = (0..40).map(|i| 10.0 + f64::from(i % 7) * 0.01).collect();
        let new: Vec<f64> = base.iter().map(|v| v * 1.2).collect();
        let first = ratio_of_medians(&base, &new, RESAMPLES).unwrap();
        assert_eq!(ratio_of_medians(&base, &new, RESAMPLES), Some(first));
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
        let (low, high) = ratio_of_medians(&samples, &samples, RESAMPLES).unwrap();
        assert!(low < 0.99 && high > 1.01, "{low} {high}");
        // One repetition on each side has no spread at all.
        assert_eq!(
            ratio_of_medians(&[2.0], &[3.0], RESAMPLES),
            Some((1.5, 1.5))
        );
        assert_eq!(ratio_of_medians(&[], &[3.0], RESAMPLES), None);
    }

    #[test]
    fn a_verdict_that_rests_on_one_unit_flips_often_and_a_unanimous_one_never() {
        // "Every value is above 0": three of three units are, so a draw never flips it.
        let all = [1.0, 2.0, 3.0];
        let above = |draw: &[usize]| Some(draw.iter().all(|&i| all[i] > 0.0));
        assert_eq!(flip_share(3, 1000, &true, above), Some(0.0));
        // "The mean is above 1.5", where one unit carries it: a draw without that unit
        // flips it; (2/3)^3 of draws leave it out, about 30%.
        let carried = [0.0, 0.0, 5.0];
        let mean_above = |draw: &[usize]| {
            Some(draw.iter().map(|&i| carried[i]).sum::<f64>() / draw.len() as f64 > 1.5)
        };
        let share = flip_share(3, 4000, &true, mean_above).unwrap();
        assert!((share - 8.0 / 27.0).abs() < 0.03, "{share}");
        // Draws the judge cannot weigh are left out of the share, and none judged is none.
        let only_mixed = |draw: &[usize]| (draw[0] != draw[1]).then_some(true);
        assert_eq!(flip_share(2, 100, &true, only_mixed), Some(0.0));
        assert_eq!(flip_share(2, 100, &true, |_: &[usize]| None::<bool>), None);
    }
}
