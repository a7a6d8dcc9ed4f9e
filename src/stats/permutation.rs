//! Whether two groups of maps (one map a run) come from one distribution: the mean over
//! cells of the squared difference of the groups' mean maps, against its distribution
//! over random relabellings of the runs; paired where the groups share their seeds
//! (each pair's labels swapped, or not, at random).

use crate::hash::pcg_hash;

/// A permutation test's outcome.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct PermutationTest {
    /// The observed statistic.
    pub statistic: f64,
    /// (1 + permutations at least as extreme) / (1 + permutations).
    pub p: f64,
    pub permutations: usize,
    /// Whether the labels were swapped within pairs rather than shuffled.
    pub paired: bool,
}

/// Indices below a bound from the PCG hash, reproducible from `seed`.
struct Draws(u32);

impl Draws {
    fn below(&mut self, bound: usize) -> usize {
        self.0 = pcg_hash(self.0);
        ((u64::from(self.0) * bound as u64) >> 32) as usize
    }
}

/// Whether all maps are of one non-zero length.
fn one_shape(maps: &[&[f32]]) -> bool {
    maps.iter()
        .all(|m| !m.is_empty() && m.len() == maps[0].len())
}

/// (1 + extreme) / (1 + permutations), ties counting as extreme: the observed
/// labelling's own value counts too.
fn outcome(statistic: f64, extreme: usize, permutations: usize, paired: bool) -> PermutationTest {
    PermutationTest {
        statistic,
        p: (1 + extreme) as f64 / (1 + permutations) as f64,
        permutations,
        paired,
    }
}

/// The statistic of the unpaired test for one labelling of the runs.
fn mean_map_distance(maps: &[&[f32]], in_a: &[bool]) -> f64 {
    let cells = maps[0].len();
    let count_a = in_a.iter().filter(|&&a| a).count() as f64;
    let count_b = maps.len() as f64 - count_a;
    let mut sum_a = vec![0.0f64; cells];
    let mut sum_b = vec![0.0f64; cells];
    for (map, &a) in maps.iter().zip(in_a) {
        let sums = if a { &mut sum_a } else { &mut sum_b };
        for (s, &v) in sums.iter_mut().zip(map.iter()) {
            *s += f64::from(v);
        }
    }
    sum_a
        .iter()
        .zip(&sum_b)
        .map(|(a, b)| (a / count_a - b / count_b).powi(2))
        .sum::<f64>()
        / cells as f64
}

/// The unpaired test over `permutations` shuffles of the runs' labels (Fisher–Yates,
/// from `seed`). `None` where a group is empty or the maps differ in length.
pub fn permutation_test(
    a: &[&[f32]],
    b: &[&[f32]],
    permutations: usize,
    seed: u32,
) -> Option<PermutationTest> {
    let maps: Vec<&[f32]> = a.iter().chain(b).copied().collect();
    if a.is_empty() || b.is_empty() || !one_shape(&maps) {
        return None;
    }
    let mut labels: Vec<bool> = (0..maps.len()).map(|i| i < a.len()).collect();
    let observed = mean_map_distance(&maps, &labels);
    let mut draws = Draws(seed);
    let mut extreme = 0usize;
    for _ in 0..permutations {
        for i in (1..labels.len()).rev() {
            labels.swap(i, draws.below(i + 1));
        }
        if mean_map_distance(&maps, &labels) >= observed * (1.0 - 1e-12) {
            extreme += 1;
        }
    }
    Some(outcome(observed, extreme, permutations, false))
}

/// The paired test: `a[i]` and `b[i]` ran the same seed; each permutation swaps each
/// pair's labels with probability 1/2, which flips the sign of that pair's difference
/// map. `None` for no pairs, groups of other lengths, or maps of other lengths.
pub fn paired_permutation_test(
    a: &[&[f32]],
    b: &[&[f32]],
    permutations: usize,
    seed: u32,
) -> Option<PermutationTest> {
    let maps: Vec<&[f32]> = a.iter().chain(b).copied().collect();
    if a.is_empty() || a.len() != b.len() || !one_shape(&maps) {
        return None;
    }
    let differences: Vec<Vec<f64>> = a
        .iter()
        .zip(b)
        .map(|(x, y)| {
            x.iter()
                .zip(y.iter())
                .map(|(u, v)| f64::from(*u) - f64::from(*v))
                .collect()
        })
        .collect();
    let statistic = |signs: &[f64]| {
        let (pairs, cells) = (differences.len() as f64, differences[0].len());
        (0..cells)
            .map(|c| {
                let mean: f64 = differences
                    .iter()
                    .zip(signs)
                    .map(|(d, s)| s * d[c])
                    .sum::<f64>()
                    / pairs;
                mean * mean
            })
            .sum::<f64>()
            / cells as f64
    };
    let mut signs = vec![1.0; differences.len()];
    let observed = statistic(&signs);
    let mut draws = Draws(seed);
    let mut extreme = 0usize;
    for _ in 0..permutations {
        for s in signs.iter_mut() {
            *s = if draws.below(2) == 0 { 1.0 } else { -1.0 };
        }
        if statistic(&signs) >= observed * (1.0 - 1e-12) {
            extreme += 1;
        }
    }
    Some(outcome(observed, extreme, permutations, true))
}

/// The smallest p [`paired_permutation_test`] can give on `pairs` pairs, however many
/// permutations it draws: flipping every sign leaves the statistic as it is, so the
/// observed signs and their flip are 2 of the 2^pairs labellings at least as extreme
/// (1 for no pairs). Below about 6 pairs it exceeds 0.05: the test cannot reject.
pub fn paired_permutation_floor(pairs: usize) -> f64 {
    match pairs {
        0 => 1.0,
        n => 0.5f64.powi(n as i32 - 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refs(group: &[Vec<f32>]) -> Vec<&[f32]> {
        group.iter().map(Vec::as_slice).collect()
    }

    #[test]
    fn a_shifted_group_of_maps_is_told_apart_and_one_group_is_not() {
        let noise = |i: usize, c: usize| ((i * 31 + c * 17) % 11) as f32 * 0.01;
        let group = |shift: f32, seed_offset: usize| -> Vec<Vec<f32>> {
            (0..6)
                .map(|i| (0..16).map(|c| noise(i + seed_offset, c) + shift).collect())
                .collect()
        };
        let (a, b) = (group(0.0, 0), group(0.5, 0));
        for test in [permutation_test, paired_permutation_test] {
            let apart = test(&refs(&a), &refs(&b), 999, 7).unwrap();
            assert!(apart.p < 0.05, "{apart:?}");
            let same = test(&refs(&a), &refs(&a), 999, 7).unwrap();
            assert!(same.p > 0.5, "{same:?}");
        }
        assert!(paired_permutation_test(&refs(&a), &refs(&b[..5]), 9, 7).is_none());
    }

    #[test]
    fn pairing_sees_a_small_shift_that_the_seeds_spread_hides() {
        // Each seed moves the whole map a lot; the second group is the first, 0.05 up.
        let seed_level = |i: usize| (i as f32 * 1.7).sin() * 2.0;
        let a: Vec<Vec<f32>> = (0..10).map(|i| vec![seed_level(i); 9]).collect();
        let b: Vec<Vec<f32>> = a
            .iter()
            .map(|m| m.iter().map(|v| v + 0.05).collect())
            .collect();
        let paired = paired_permutation_test(&refs(&a), &refs(&b), 999, 3).unwrap();
        let unpaired = permutation_test(&refs(&a), &refs(&b), 999, 3).unwrap();
        assert!(
            paired.p < 0.01 && unpaired.p > 0.5,
            "{paired:?} {unpaired:?}"
        );
    }

    #[test]
    fn the_paired_test_cannot_go_below_its_floor() {
        // Every pair's difference map far from zero: the most extreme data there is.
        let a: Vec<Vec<f32>> = (0..6).map(|i| vec![10.0 + i as f32; 4]).collect();
        let b: Vec<Vec<f32>> = (0..6).map(|i| vec![i as f32; 4]).collect();
        for pairs in [5, 6] {
            let floor = paired_permutation_floor(pairs);
            let test =
                paired_permutation_test(&refs(&a[..pairs]), &refs(&b[..pairs]), 4999, 11).unwrap();
            // The draws' share of the two extreme labellings, within a few draws' noise.
            assert!(
                (test.p - floor).abs() < 0.01,
                "{pairs}: {test:?} floor {floor}"
            );
        }
        assert_eq!(paired_permutation_floor(5), 0.0625);
        assert_eq!(paired_permutation_floor(6), 0.03125);
        assert_eq!(paired_permutation_floor(0), 1.0);
    }
}
