//! The verdict of one variant against one reference, fixed before any run: each
//! figure's margin of equivalence (a share of the reference's mean), TOST and the
//! two-sided test on each figure, Holm's correction across the pair's family, and the
//! permutation test on the smoothed change maps. The tests pair the runs by droplet
//! seed wherever both sides ran the seed ([`pair_by_seed`], docs/equivalence.md): a
//! seed moves every figure of both sides together, and the unpaired tests count that
//! shared spread against the difference.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::stats::{
    holm, paired_permutation_floor, paired_permutation_test, permutation_test, MeanDifference,
    Moments, PermutationTest, Verdict,
};

/// The margin of equivalence of each figure, as a share of the reference's mean:
/// (figure, relative margin, why). Written once, before any run; docs/results.md shows
/// it. A figure not listed takes [`DEFAULT_MARGIN`].
pub const MARGINS: &[(&str, f64, &str)] = &[
    (
        "total_change",
        0.01,
        "a mass budget: the issue's 1% (results/README.md's ratios differ by 2 to 11%)",
    ),
    ("eroded", 0.01, "a mass budget, as the net change"),
    ("deposited", 0.01, "a mass budget, as the net change"),
    (
        "deepest_erosion",
        0.05,
        "one cell's extreme, noisier across seeds than a sum",
    ),
    (
        "hypsometric_integral",
        0.01,
        "a ratio of the whole map's heights",
    ),
    ("mean_slope", 0.01, "a mean over every interior cell"),
    (
        "drainage_density",
        0.02,
        "channel length over the dry area, which shifts where a pit or a flat reroutes a channel; the flat method (Barnes's gradients or Priority-Flood+epsilon) moves it under 0.2% on eroded noise and the eroded test DEM, a tenth of this margin (tests/landform.rs); counting a filled lake's paths, which it leaves out, the method moved it 15 to 27% on noise",
    ),
    (
        "concavity",
        0.05,
        "a fitted exponent whose spread across seeds is several percent",
    ),
    (
        "channel_incision",
        0.02,
        "a mean over the dry cells of the top 5% by area; the flat method moves it under 0.9% on noise and the test DEM, eroded or not (tests/landform.rs), where with a filled lake's cells among them it moved 3 to 21%",
    ),
];

/// The relative margin of a figure [`MARGINS`] does not list (landform figures added
/// later).
pub const DEFAULT_MARGIN: f64 = 0.05;

/// The level of every test, after Holm's correction.
pub const ALPHA: f64 = 0.05;

/// The level of a difference's interval shown beside its verdict: TOST's at [`ALPHA`]
/// (before Holm's correction), within ±margin exactly where TOST's p is at most ALPHA.
pub const INTERVAL_LEVEL: f64 = 1.0 - 2.0 * ALPHA;

/// The name of the map test's row in a pair's family.
pub const MAP_TEST: &str = "change_map";

/// A figure's relative margin, and whether [`MARGINS`] lists it.
pub fn margin_of(figure: &str) -> (f64, bool) {
    MARGINS
        .iter()
        .find(|(name, _, _)| *name == figure)
        .map_or((DEFAULT_MARGIN, false), |&(_, m, _)| (m, true))
}

/// A verdict in this command's words: the same is "equivalent" (TOST rejects a
/// difference of the margin or more, after Holm), lower, higher or different is
/// "different" (the two-sided test rejects equal means after Holm, and TOST does not
/// show equivalence), unclear is "inconclusive".
pub fn verdict_word(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Same => "equivalent",
        Verdict::Lower | Verdict::Higher | Verdict::Different => "different",
        Verdict::Unclear => "inconclusive",
    }
}

/// One figure of a variant against a reference.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct FigureTest {
    pub figure: String,
    /// Every run of the side with the figure, paired or not.
    pub variant: Moments,
    pub reference: Moments,
    /// Whether the tests paired the runs by droplet seed (else Welch's).
    pub paired: bool,
    /// The seeds at which both sides have the figure: the paired tests' n; below 2 the
    /// tests are Welch's.
    pub pairs: usize,
    /// The difference tested: the mean over the seed pairs of variant - reference where
    /// paired, else variant mean - reference mean.
    pub difference: f64,
    /// difference / |reference mean|; null where that mean is 0 (a count none of the
    /// reference's runs has, such as flat cells on noise), which has no share.
    pub relative_difference: Option<f64>,
    /// The difference's interval at [`INTERVAL_LEVEL`] (null where no test ran).
    pub interval_low: Option<f64>,
    pub interval_high: Option<f64>,
    pub margin_relative: f64,
    /// margin_relative x |reference mean|, in the figure's unit.
    pub margin: f64,
    /// The tests' degrees of freedom: pairs - 1 where paired, else Welch–Satterthwaite's
    /// (null where no test ran, or the differences have no spread).
    pub df: Option<f64>,
    pub p_equivalent: f64,
    pub p_equivalent_holm: f64,
    pub p_different: f64,
    pub p_different_holm: f64,
    pub verdict: Verdict,
}

/// The map test of a pair.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct MapTest {
    /// Blocks a side of the smoothed change map, and cells a block side.
    pub width: usize,
    pub height: usize,
    pub block: usize,
    /// The seeds at which both sides have a map; the test is paired on them where the
    /// paired test can reach [`ALPHA`] ([`paired_permutation_floor`]), else unpaired on
    /// every map.
    pub pairs: usize,
    pub test: Option<PermutationTest>,
    pub p_different_holm: f64,
    /// Whether it rejects one distribution of maps (after Holm).
    pub different: bool,
}

/// One variant against one reference: every figure and the map, and the verdict.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct PairVerdict {
    pub figures: Vec<FigureTest>,
    pub map: MapTest,
    /// Different where a figure is different or the map test rejects; equivalent where
    /// every figure is equivalent and the map test does not reject; else inconclusive.
    pub verdict: Verdict,
    pub equivalent_figures: usize,
    pub different_figures: usize,
}

/// Each of one side's runs as (its droplet seed, what it gives).
pub type BySeed<T> = Vec<(u32, T)>;

/// One figure's values on each side, each with its run's droplet seed.
pub struct FigureSamples {
    pub figure: String,
    /// The variant's runs with a finite value of the figure.
    pub variant: BySeed<f64>,
    pub reference: BySeed<f64>,
}

/// One sample of each group for each figure, and each run's smoothed map, by seed.
pub struct Groups<'a> {
    pub figures: Vec<FigureSamples>,
    pub variant_maps: BySeed<&'a [f32]>,
    pub reference_maps: BySeed<&'a [f32]>,
    pub map_shape: (usize, usize, usize),
}

/// The pairs of a seed-paired test: the values of each seed that both sides ran, side by
/// side, in the order of the seeds. A seed a side ran more than once pairs with nothing
/// (which of its runs would be its pair is not defined).
pub fn pair_by_seed<T: Copy>(a: &[(u32, T)], b: &[(u32, T)]) -> (Vec<T>, Vec<T>) {
    fn once<T: Copy>(side: &[(u32, T)]) -> BTreeMap<u32, Option<T>> {
        let mut by_seed = BTreeMap::new();
        for &(seed, value) in side {
            by_seed
                .entry(seed)
                .and_modify(|slot| *slot = None)
                .or_insert(Some(value));
        }
        by_seed
    }
    let b = once(b);
    once(a)
        .into_iter()
        .filter_map(|(seed, x)| Some((x?, (*b.get(&seed)?)?)))
        .unzip()
}

fn values<T: Copy>(side: &[(u32, T)]) -> Vec<T> {
    side.iter().map(|&(_, v)| v).collect()
}

/// A figure's test: paired on the seeds both sides have it at (at least two pairs),
/// else Welch's on every run of each side; `None` where neither can run. Returns the
/// test and the pairs.
fn figure_difference(
    f: &FigureSamples,
    variant: &Moments,
    reference: &Moments,
) -> (Option<MeanDifference>, usize) {
    let (v, r) = pair_by_seed(&f.variant, &f.reference);
    let paired = MeanDifference::paired(&v, &r);
    (
        paired.or_else(|| MeanDifference::welch(variant, reference)),
        v.len(),
    )
}

/// The map test: paired on the seeds both sides have a map where that test can reach
/// ALPHA at all (six pairs or more: below, its every p exceeds ALPHA whatever the maps),
/// else unpaired on every map. Returns the test and the pairs.
fn map_test(groups: &Groups, permutations: usize, seed: u32) -> (Option<PermutationTest>, usize) {
    let (v, r) = pair_by_seed(&groups.variant_maps, &groups.reference_maps);
    let test = match paired_permutation_floor(v.len()) <= ALPHA {
        true => paired_permutation_test(&v, &r, permutations, seed),
        false => permutation_test(
            &values(&groups.variant_maps),
            &values(&groups.reference_maps),
            permutations,
            seed,
        ),
    };
    (test, v.len())
}

/// The verdict of a pair from its samples, `permutations` relabellings seeded by
/// `seed`.
pub fn judge(groups: &Groups, permutations: usize, seed: u32) -> PairVerdict {
    struct Raw<'g> {
        samples: &'g FigureSamples,
        variant: Moments,
        reference: Moments,
        test: Option<MeanDifference>,
        pairs: usize,
        margin_relative: f64,
        margin: f64,
        p_equivalent: f64,
        p_different: f64,
    }
    let raw: Vec<Raw> = groups
        .figures
        .iter()
        .map(|f| {
            let variant = Moments::of(&values(&f.variant));
            let reference = Moments::of(&values(&f.reference));
            let (margin_relative, _) = margin_of(&f.figure);
            let margin = margin_relative * reference.mean.abs();
            let (test, pairs) = figure_difference(f, &variant, &reference);
            Raw {
                samples: f,
                variant,
                reference,
                test,
                pairs,
                margin_relative,
                margin,
                p_equivalent: test.map_or(f64::NAN, |t| t.p_equivalent(margin)),
                p_different: test.map_or(f64::NAN, |t| t.p_different()),
            }
        })
        .collect();
    let (map, map_pairs) = map_test(groups, permutations, seed);
    let tost = holm(&raw.iter().map(|r| r.p_equivalent).collect::<Vec<_>>());
    // The difference family: each figure's two-sided test, then the map test.
    let mut differences: Vec<f64> = raw.iter().map(|r| r.p_different).collect();
    differences.push(map.map_or(f64::NAN, |m| m.p));
    let differences = holm(&differences);
    let rejects = |p: f64| p <= ALPHA;
    let figures: Vec<FigureTest> = raw
        .into_iter()
        .enumerate()
        .map(|(i, r)| {
            let difference = r
                .test
                .map_or(r.variant.mean - r.reference.mean, |t| t.difference);
            let verdict = match (rejects(tost[i]), rejects(differences[i])) {
                (true, _) => Verdict::Same,
                (false, true) if difference < 0.0 => Verdict::Lower,
                (false, true) => Verdict::Higher,
                (false, false) => Verdict::Unclear,
            };
            let interval = r.test.map(|t| t.interval(INTERVAL_LEVEL));
            FigureTest {
                figure: r.samples.figure.clone(),
                variant: r.variant,
                reference: r.reference,
                paired: r.test.is_some_and(|t| t.paired),
                pairs: r.pairs,
                difference,
                relative_difference: Some(difference / r.reference.mean.abs())
                    .filter(|share| share.is_finite()),
                interval_low: interval.map(|i| i.0),
                interval_high: interval.map(|i| i.1),
                margin_relative: r.margin_relative,
                margin: r.margin,
                df: r.test.map(|t| t.df).filter(|df| df.is_finite()),
                p_equivalent: r.p_equivalent,
                p_equivalent_holm: tost[i],
                p_different: r.p_different,
                p_different_holm: differences[i],
                verdict,
            }
        })
        .collect();
    let map_holm = differences[differences.len() - 1];
    let (width, height, block) = groups.map_shape;
    let map = MapTest {
        width,
        height,
        block,
        pairs: map_pairs,
        test: map,
        p_different_holm: map_holm,
        different: rejects(map_holm),
    };
    let equivalent = figures
        .iter()
        .filter(|f| f.verdict == Verdict::Same)
        .count();
    let different = figures.iter().filter(|f| f.verdict.differs()).count();
    let verdict = if different > 0 || map.different {
        Verdict::Different
    } else if equivalent == figures.len() && !figures.is_empty() {
        Verdict::Same
    } else {
        Verdict::Unclear
    };
    PairVerdict {
        figures,
        map,
        verdict,
        equivalent_figures: equivalent,
        different_figures: different,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_pair_in_order_and_a_seed_run_twice_pairs_with_nothing() {
        let variant = [(3, 30.0), (1, 10.0), (2, 20.0), (2, 21.0), (7, 70.0)];
        let reference = [(1, 1.0), (2, 2.0), (3, 3.0), (5, 5.0)];
        assert_eq!(
            pair_by_seed(&variant, &reference),
            (vec![10.0, 30.0], vec![1.0, 3.0])
        );
        assert_eq!(pair_by_seed::<f64>(&[], &reference), (vec![], vec![]));
    }

    #[test]
    fn the_map_test_pairs_from_six_seeds_as_the_docs_say() {
        // The columns' and fields' meanings name 6 pairs at alpha 0.05.
        let fewest = (0..64).find(|&n| paired_permutation_floor(n) <= ALPHA);
        assert_eq!((fewest, ALPHA, INTERVAL_LEVEL), (Some(6), 0.05, 0.9));
    }
}
