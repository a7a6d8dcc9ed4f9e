//! The verdict of one variant against one reference, fixed before any run: each
//! figure's margin of equivalence (a share of the reference's mean), TOST and Welch's
//! two-sided test on each figure, Holm's correction across the pair's family, and the
//! permutation test on the smoothed change maps.

use serde::Serialize;

use crate::stats::{holm, permutation_test, MeanDifference, Moments, PermutationTest, Verdict};

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
        "channel length over area, which shifts where a pit or a flat reroutes a channel",
    ),
    (
        "concavity",
        0.05,
        "a fitted exponent whose spread across seeds is several percent",
    ),
    (
        "channel_incision",
        0.02,
        "a mean over the top 5% of cells by area",
    ),
];

/// The relative margin of a figure [`MARGINS`] does not list (landform figures added
/// later).
pub const DEFAULT_MARGIN: f64 = 0.05;

/// The level of every test, after Holm's correction.
pub const ALPHA: f64 = 0.05;

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
    pub variant: Moments,
    pub reference: Moments,
    /// variant mean - reference mean.
    pub difference: f64,
    /// difference / |reference mean|.
    pub relative_difference: f64,
    pub margin_relative: f64,
    /// margin_relative x |reference mean|, in the figure's unit.
    pub margin: f64,
    /// Welch's degrees of freedom (null where a sample has fewer than two runs).
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

/// One sample of each group for each figure, and each run's smoothed map.
pub struct Groups<'a> {
    /// (figure, the variant's values, the reference's values), runs without the figure
    /// left out.
    pub figures: Vec<(String, Vec<f64>, Vec<f64>)>,
    pub variant_maps: Vec<&'a [f32]>,
    pub reference_maps: Vec<&'a [f32]>,
    pub map_shape: (usize, usize, usize),
}

/// The verdict of a pair from its samples, `permutations` relabellings seeded by
/// `seed`.
pub fn judge(groups: &Groups, permutations: usize, seed: u32) -> PairVerdict {
    struct Raw {
        figure: String,
        variant: Moments,
        reference: Moments,
        welch: Option<MeanDifference>,
        margin_relative: f64,
        margin: f64,
        p_equivalent: f64,
        p_different: f64,
    }
    let raw: Vec<Raw> = groups
        .figures
        .iter()
        .map(|(figure, v, r)| {
            let (variant, reference) = (Moments::of(v), Moments::of(r));
            let (margin_relative, _) = margin_of(figure);
            let margin = margin_relative * reference.mean.abs();
            let welch = MeanDifference::welch(&variant, &reference);
            Raw {
                figure: figure.clone(),
                variant,
                reference,
                welch,
                margin_relative,
                margin,
                p_equivalent: welch.map_or(f64::NAN, |w| w.p_equivalent(margin)),
                p_different: welch.map_or(f64::NAN, |w| w.p_different()),
            }
        })
        .collect();
    let map = permutation_test(
        &groups.variant_maps,
        &groups.reference_maps,
        permutations,
        seed,
    );
    let tost = holm(&raw.iter().map(|r| r.p_equivalent).collect::<Vec<_>>());
    // The difference family: each figure's Welch test, then the map test.
    let mut differences: Vec<f64> = raw.iter().map(|r| r.p_different).collect();
    differences.push(map.map_or(f64::NAN, |m| m.p));
    let differences = holm(&differences);
    let rejects = |p: f64| p <= ALPHA;
    let figures: Vec<FigureTest> = raw
        .into_iter()
        .enumerate()
        .map(|(i, r)| {
            let difference = r.variant.mean - r.reference.mean;
            let verdict = match (rejects(tost[i]), rejects(differences[i])) {
                (true, _) => Verdict::Same,
                (false, true) if difference < 0.0 => Verdict::Lower,
                (false, true) => Verdict::Higher,
                (false, false) => Verdict::Unclear,
            };
            FigureTest {
                figure: r.figure,
                variant: r.variant,
                reference: r.reference,
                difference,
                relative_difference: difference / r.reference.mean.abs(),
                margin_relative: r.margin_relative,
                margin: r.margin,
                df: r.welch.map(|w| w.df).filter(|df| df.is_finite()),
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
