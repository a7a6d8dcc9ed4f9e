//! `vkerode compare BASE NEW`: two sweeps' points paired by their settings (every key,
//! or as [`Pairing`] narrows the match, so that sets which fix a setting differently
//! compare across it; `pairing.rs`), each pair judged by an interval of the ratio of
//! its median GPU times (bootstrapped from both points' repetitions in samples.csv)
//! against a noise threshold (the spread measured between reruns on the device,
//! `noise.rs`); a pair with a side whose answer is wrong (its net change beyond
//! [`WRONG_ANSWER_MARGIN`] from its CPU reference's), that missed its noise target or has
//! fewer than [`MIN_SAMPLES`] repetitions gets no verdict. And `vkerode report DIR`: one sweep's
//! points as a table. Files are read by column name (`points.rs`), so results from
//! older vkerode versions (quartiles, no intervals) compare too.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::noise::Threshold;
use super::pairing::{changes, no_match, pairs, Pairing, PairingError, SettingChange, Side};
use super::points::{key_names, labels, read_set, read_times, PointTimes, ONE_POINT};
use crate::experiment::results::{set_file, ResultsError, StopReason, POINTS_CSV};
use crate::experiment::sweep::SweepSummary;
use crate::stats::bootstrap::{self, ratio_of_medians, MIN_SAMPLES};
use crate::stats::{median_interval, ratio_bounds, Band, Verdict};

/// Why two sets cannot be compared.
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    #[error(transparent)]
    Results(#[from] ResultsError),
    #[error(transparent)]
    Pairing(#[from] PairingError),
    #[error("{}: no points to compare", path.display())]
    NoPoints { path: PathBuf },
}

/// Why a matched pair has no verdict.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum NoVerdictReason {
    /// A side's net change lies more than [`WRONG_ANSWER_MARGIN`] from its CPU
    /// reference's: its speed is not a result.
    WrongAnswer,
    /// A side stopped before its noise target (the time budget or max_reps), or records
    /// no stop reason.
    MissedNoiseTarget,
    /// A side has one repetition: no spread to weigh.
    OneRepetition,
    /// A side has fewer than `min_samples` repetitions, or records no count.
    TooFewRepetitions,
    /// Neither samples.csv nor points.csv gives the pair an interval.
    NoInterval,
}

impl NoVerdictReason {
    pub const ALL: [NoVerdictReason; 5] = [
        NoVerdictReason::WrongAnswer,
        NoVerdictReason::MissedNoiseTarget,
        NoVerdictReason::OneRepetition,
        NoVerdictReason::TooFewRepetitions,
        NoVerdictReason::NoInterval,
    ];

    /// As the summary counts it: "2 too few repetitions".
    fn counted(self) -> &'static str {
        match self {
            NoVerdictReason::WrongAnswer => "with a wrong answer",
            NoVerdictReason::MissedNoiseTarget => "missed the noise target",
            NoVerdictReason::OneRepetition => "one repetition",
            NoVerdictReason::TooFewRepetitions => "too few repetitions",
            NoVerdictReason::NoInterval => "no interval",
        }
    }
}

/// A matched pair's verdict, or why it has none.
#[derive(Clone, Debug, PartialEq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Judgement {
    /// Of new / base GPU time against 1 ± the threshold: lower is faster.
    Verdict(Verdict),
    /// No verdict: why, as a kind and as a sentence ("new has 3 repetitions, fewer than
    /// the 10 a verdict needs").
    NoVerdict {
        reason: NoVerdictReason,
        why: String,
    },
}

impl Judgement {
    pub fn verdict(&self) -> Option<Verdict> {
        match self {
            Judgement::Verdict(v) => Some(*v),
            Judgement::NoVerdict { .. } => None,
        }
    }

    pub fn text(&self) -> String {
        match self {
            Judgement::Verdict(v) => v.as_time().into(),
            Judgement::NoVerdict { why, .. } => format!("no verdict: {why}"),
        }
    }
}

/// One matched point.
#[derive(Clone, Debug, serde::Serialize, schemars::JsonSchema)]
pub struct Comparison {
    /// The settings that tell the matched points apart, then what differs across the
    /// pair ("workgroup=64 (variant paper → fast)").
    pub label: String,
    /// The settings that differ across the pair, in the order of their keys.
    pub changes: Vec<SettingChange>,
    /// The base point's median GPU time, in ms.
    pub base_ms: f64,
    /// The new point's median GPU time, in ms.
    pub new_ms: f64,
    /// New time over base time (a ratio): above 1 is slower.
    pub time_ratio: f64,
    /// The [`bootstrap::LEVEL`] (95%) interval of the ratio, as (low, high); none where
    /// a side has no spread.
    pub interval: Option<(f64, f64)>,
    /// Its verdict, or why it has none.
    pub judgement: Judgement,
    /// Each side's answer against its CPU reference.
    pub base_answer: Answer,
    pub new_answer: Answer,
}

/// How the intervals of a comparison were made.
#[derive(Clone, Debug, PartialEq, serde::Serialize, schemars::JsonSchema)]
#[serde(tag = "method", rename_all = "snake_case")]
pub enum Intervals {
    /// A percentile bootstrap of the ratio of medians from both sets' samples.csv.
    Bootstrap {
        /// The intervals' confidence level, a fraction (0.95).
        level: f64,
        /// Resamples drawn, a count.
        resamples: usize,
        /// The seed of the resampling's random stream.
        seed: u64,
    },
    /// These sets' points.csv has no samples.csv beside it: each ratio's interval is
    /// made of the two medians' intervals (at `level`, a fraction).
    MedianIntervals {
        level: f64,
        without_samples: Vec<PathBuf>,
    },
}

/// Pairs by verdict, and those without one by why.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct Counts {
    /// "slower": the whole interval above 1 + the threshold.
    pub slower: usize,
    /// "faster": the whole interval below 1 - the threshold.
    pub faster: usize,
    /// "same": the whole interval within 1 ± the threshold.
    pub same: usize,
    /// "unclear": the interval reaches both within and beyond.
    pub unclear: usize,
    /// The pairs without a verdict, by why.
    pub no_verdict: NoVerdictCounts,
}

/// Pairs without a verdict, by [`NoVerdictReason`] (each pair counted once, under the
/// first reason of that list that holds).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct NoVerdictCounts {
    /// A side's answer is wrong.
    pub wrong_answer: usize,
    /// A side stopped before its noise target.
    pub missed_noise_target: usize,
    /// A side has one repetition.
    pub one_repetition: usize,
    /// A side has fewer than `min_samples` repetitions.
    pub too_few_repetitions: usize,
    /// The pair has no interval.
    pub no_interval: usize,
}

impl NoVerdictCounts {
    fn of(&self, reason: NoVerdictReason) -> usize {
        match reason {
            NoVerdictReason::WrongAnswer => self.wrong_answer,
            NoVerdictReason::MissedNoiseTarget => self.missed_noise_target,
            NoVerdictReason::OneRepetition => self.one_repetition,
            NoVerdictReason::TooFewRepetitions => self.too_few_repetitions,
            NoVerdictReason::NoInterval => self.no_interval,
        }
    }

    pub fn total(&self) -> usize {
        NoVerdictReason::ALL.iter().map(|&r| self.of(r)).sum()
    }
}

impl Counts {
    fn of(points: &[Comparison]) -> Self {
        let verdicts = |v: Verdict| {
            points
                .iter()
                .filter(|c| c.judgement.verdict() == Some(v))
                .count()
        };
        let without = |reason: NoVerdictReason| {
            points
                .iter()
                .filter(|c| matches!(&c.judgement, Judgement::NoVerdict { reason: r, .. } if *r == reason))
                .count()
        };
        Self {
            slower: verdicts(Verdict::Higher),
            faster: verdicts(Verdict::Lower),
            same: verdicts(Verdict::Same),
            // A ratio's interval is never "different" (`Verdict::of`).
            unclear: verdicts(Verdict::Unclear),
            no_verdict: NoVerdictCounts {
                wrong_answer: without(NoVerdictReason::WrongAnswer),
                missed_noise_target: without(NoVerdictReason::MissedNoiseTarget),
                one_repetition: without(NoVerdictReason::OneRepetition),
                too_few_repetitions: without(NoVerdictReason::TooFewRepetitions),
                no_interval: without(NoVerdictReason::NoInterval),
            },
        }
    }
}

/// How a set's matched points stopped repeating, a count per stop reason.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct StopCounts {
    /// At their noise target: the only points a verdict may take.
    pub noise_target: usize,
    /// At max_reps, their noise still above its target.
    pub max_reps: usize,
    /// At the time budget (time_budget_s), their noise still above its target.
    pub time_budget: usize,
    /// With no stop reason recorded, or one this vkerode does not know.
    pub unrecorded: usize,
}

impl StopCounts {
    fn of<'a>(points: impl Iterator<Item = &'a PointTimes>) -> Self {
        Self::of_reasons(points.map(|p| p.stop_reason.as_deref()))
    }

    /// The counts of points whose stop reasons, as their files write them, are these.
    fn of_reasons<'a>(reasons: impl Iterator<Item = Option<&'a str>>) -> Self {
        let mut counts = Self::default();
        for reason in reasons {
            let slot = match reason {
                Some(r) if r == StopReason::NoiseTarget.as_str() => &mut counts.noise_target,
                Some(r) if r == StopReason::MaxReps.as_str() => &mut counts.max_reps,
                Some(r) if r == StopReason::TimeBudget.as_str() => &mut counts.time_budget,
                _ => &mut counts.unrecorded,
            };
            *slot += 1;
        }
        counts
    }

    /// The points that stopped before their noise target, by how: ("at the time
    /// budget", count), where there are any.
    fn missed(&self) -> Vec<(&'static str, usize)> {
        [
            ("at the time budget", self.time_budget),
            ("at max_reps", self.max_reps),
            ("with no stop reason recorded", self.unrecorded),
        ]
        .into_iter()
        .filter(|(_, n)| *n > 0)
        .collect()
    }

    /// A sentence on `set`'s points that missed their noise target; none where none did.
    fn describe(&self, set: &str) -> Option<String> {
        let missed = self.missed();
        let total = self.noise_target + missed.iter().map(|(_, n)| n).sum::<usize>();
        match missed.as_slice() {
            [] => None,
            [(how, _)] if self.noise_target == 0 => Some(format!(
                "Every point of {set} stopped {how}, before its noise target."
            )),
            _ => Some(format!(
                "{} of {total} points of {set} stopped before their noise target ({}).",
                total - self.noise_target,
                missed
                    .iter()
                    .map(|(how, n)| format!("{n} {how}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }
}

/// How each set's matched points stopped.
#[derive(Clone, Debug, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct Stopped {
    /// The base's matched points.
    pub base: StopCounts,
    /// The new set's matched points.
    pub new: StopCounts,
}

impl Stopped {
    /// Sentences on the points that missed their noise target, both sets in one where
    /// they stopped alike.
    fn describe(&self) -> Vec<String> {
        match self.base == self.new {
            true => self.base.describe("each set").into_iter().collect(),
            false => [
                self.base.describe(Side::Base.set()),
                self.new.describe(Side::New.set()),
            ]
            .into_iter()
            .flatten()
            .collect(),
        }
    }
}

/// The comparison of two sets, and what did not match.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub struct CompareReport {
    /// The matched points, in the base's order.
    pub points: Vec<Comparison>,
    /// Points of the base no point of the new set matches, a count.
    pub only_in_base: usize,
    /// Points of the new set no point of the base matches, a count.
    pub only_in_new: usize,
    /// How the points were paired: `--pair-by` and `--ignore` as given.
    pub pairing: Pairing,
    /// The settings keys the points were matched on.
    pub matched_on: Vec<String>,
    /// The settings keys left out of the match on which some pair differs.
    pub compared_across: Vec<String>,
    /// The fewest repetitions on each side a verdict needs
    /// (`stats::bootstrap::MIN_SAMPLES`).
    pub min_samples: usize,
    /// The pairs by verdict, and those without one by why.
    pub counts: Counts,
    /// How each set's matched points stopped repeating.
    pub stopped: Stopped,
    /// The noise threshold the verdicts are taken against.
    pub threshold: Threshold,
    /// How the intervals were made.
    pub intervals: Intervals,
}

impl CompareReport {
    /// The points whose verdict is "slower" and whose whole interval also lies more than
    /// `percent` above 1: at or below the threshold, every "slower" point.
    pub fn slower_than(&self, percent: f64) -> Vec<&Comparison> {
        self.points
            .iter()
            .filter(|c| c.judgement == Judgement::Verdict(Verdict::Higher))
            .filter(|c| {
                c.interval
                    .is_some_and(|(low, _)| low > 1.0 + percent / 100.0)
            })
            .collect()
    }

    /// The points whose answer the new set got wrong where the base got it right (or
    /// did not check it): a regression whatever their speed.
    pub fn turned_wrong(&self) -> Vec<&Comparison> {
        self.points
            .iter()
            .filter(|c| c.new_answer == Answer::WrongAnswer && c.base_answer != Answer::WrongAnswer)
            .collect()
    }

    /// How the intervals were made, as a sentence.
    pub fn intervals_line(&self) -> String {
        let percent = |level: f64| crate::readable_number(level * 100.0);
        match &self.intervals {
            Intervals::Bootstrap {
                level,
                resamples,
                seed,
            } => format!(
                "Intervals: {}% of new / base, a percentile bootstrap of the ratio of medians from both sets' samples.csv ({resamples} resamples, seed {seed:#x}).",
                percent(*level)
            ),
            Intervals::MedianIntervals {
                level,
                without_samples,
            } => format!(
                "Intervals: no samples.csv beside {}, so no bootstrap: each ratio's interval runs from new's low / base's high to new's high / base's low of the medians' {}% intervals (from samples.csv where a set has one, else points.csv), wider than a bootstrap's.",
                without_samples
                    .iter()
                    .map(|p| format!("`{}`", p.display()))
                    .collect::<Vec<_>>()
                    .join(" and "),
                percent(*level)
            ),
        }
    }

    /// The threshold and the rules of a verdict, as sentences.
    pub fn rules_line(&self) -> String {
        format!(
            "Threshold: {}. \"faster\" and \"slower\" need the whole interval beyond 1 ± the threshold, \"same\" needs it within; \"unclear\" is neither. No verdict where a side has fewer than {} repetitions (a bootstrap of fewer draws from a handful of values) or stopped before its noise target.",
            self.threshold.describe(),
            self.min_samples
        )
    }

    /// How the points were matched, where `--pair-by` or `--ignore` narrowed the match.
    pub fn matching_line(&self) -> Option<String> {
        let matched = match (self.pairing.by.is_empty(), self.pairing.ignore.is_empty()) {
            (true, true) => return None,
            (false, _) => format!(
                "Matched on {} (--pair-by {}, and every setting that varies within a set)",
                self.matched_on.join(", "),
                self.pairing.by.join(",")
            ),
            (true, false) => format!(
                "Matched on every setting but {} (--ignore)",
                self.pairing.ignore.join(", ")
            ),
        };
        Some(match self.compared_across.as_slice() {
            [] => format!("{matched}; the pairs differ in no other setting."),
            across => format!("{matched}; compared across {}.", across.join(", ")),
        })
    }

    /// The counts of the comparison, and how the points that missed their noise target
    /// stopped.
    pub fn summary(&self) -> String {
        let counts = &self.counts;
        let without = counts.no_verdict.total();
        let why: Vec<String> = NoVerdictReason::ALL
            .iter()
            .map(|&r| (r, counts.no_verdict.of(r)))
            .filter(|(_, n)| *n > 0)
            .map(|(r, n)| format!("{n} {}", r.counted()))
            .collect();
        let why = match why.is_empty() {
            true => String::new(),
            false => format!(" ({})", why.join(", ")),
        };
        let mut out = format!(
            "{} points matched; {} only in the base, {} only in the new set. {} slower, {} faster, {} same, {} unclear, {without} without a verdict{why}.",
            self.points.len(),
            self.only_in_base,
            self.only_in_new,
            counts.slower,
            counts.faster,
            counts.same,
            counts.unclear,
        );
        for line in self.stopped.describe() {
            out += &format!(" {line}");
        }
        out
    }

    pub fn markdown(&self, base: &Path, new: &Path) -> String {
        let level = crate::readable_number(bootstrap::LEVEL * 100.0);
        let mut out = format!(
            "Base: `{}`\nNew: `{}`\n\n| point | base ms | new ms | new / base | {level}% interval | verdict |\n| --- | --- | --- | --- | --- | --- |\n",
            base.display(),
            new.display()
        );
        for c in &self.points {
            let interval = c
                .interval
                .map_or("-".into(), |(low, high)| format!("{low:.4} to {high:.4}"));
            out += &format!(
                "| {} | {:.4} | {:.4} | {:.3} | {interval} | {} |\n",
                c.label,
                c.base_ms,
                c.new_ms,
                c.time_ratio,
                c.judgement.text()
            );
        }
        out += &format!("\n{}\n{}\n", self.rules_line(), self.intervals_line());
        if let Some(matching) = self.matching_line() {
            out += &format!("{matching}\n");
        }
        out += &format!("\n{}\n", self.summary());
        out
    }
}

/// Why a point may not be judged: it stopped before its noise target (its own
/// stop_reason, or none recorded).
fn missed_target(p: &PointTimes) -> Option<String> {
    let target = StopReason::NoiseTarget.as_str();
    match p.stop_reason.as_deref() {
        Some(reason) if reason == target => None,
        None | Some("") => Some("no stop_reason recorded".into()),
        Some(reason) => Some(match p.rel_iqr {
            Some(iqr) => format!("{reason}, relative IQR {}", crate::readable_number(iqr)),
            None => reason.into(),
        }),
    }
}

/// Why a pair may not be judged, whatever its interval: the first of
/// [`NoVerdictReason`]'s order that holds on either side.
fn unjudged(b: &PointTimes, n: &PointTimes) -> Option<(NoVerdictReason, String)> {
    let sides = [(Side::Base, b), (Side::New, n)];
    let wrong = sides.iter().find_map(|(side, p)| {
        let ratio = p.net_change_vs_sequential?;
        (Answer::of(Some(ratio)) == Answer::WrongAnswer).then(|| {
            format!(
                "{}'s net change is {ratio:.3} times its CPU reference's, a wrong answer (beyond {:.0}%)",
                side.as_str(),
                100.0 * WRONG_ANSWER_MARGIN
            )
        })
    });
    let missed = sides.iter().find_map(|(side, p)| {
        let why = missed_target(p)?;
        Some(format!("{} missed its noise target ({why})", side.as_str()))
    });
    let one = sides.iter().find_map(|(side, p)| {
        (p.repetitions() == Some(1))
            .then(|| format!("{} has one repetition, no spread to weigh", side.as_str()))
    });
    let few = sides.iter().find_map(|(side, p)| match p.repetitions() {
        Some(count) if count < MIN_SAMPLES => Some(format!(
            "{} has {count} repetitions, fewer than the {MIN_SAMPLES} a verdict needs",
            side.as_str()
        )),
        None => Some(format!(
            "{} records no count of repetitions; a verdict needs {MIN_SAMPLES}",
            side.as_str()
        )),
        Some(_) => None,
    });
    [
        (NoVerdictReason::WrongAnswer, wrong),
        (NoVerdictReason::MissedNoiseTarget, missed),
        (NoVerdictReason::OneRepetition, one),
        (NoVerdictReason::TooFewRepetitions, few),
    ]
    .into_iter()
    .find_map(|(reason, why)| Some((reason, why?)))
}

/// The interval of new / base for one pair: bootstrapped from both sides' samples, or
/// where a set has none, made of the medians' intervals; `Err` says why there is none.
fn interval_of(b: &PointTimes, n: &PointTimes, bootstrap: bool) -> Result<(f64, f64), NoInterval> {
    if [b, n].iter().any(|p| p.repetitions() == Some(1)) {
        return Err(NoInterval::OneRepetition);
    }
    if bootstrap {
        return ratio_of_medians(&b.samples, &n.samples, bootstrap::RESAMPLES)
            .ok_or(NoInterval::NoSamples);
    }
    let median_interval_of = |p: &PointTimes| match p.samples.is_empty() {
        true => p.median_ci_ms,
        false => median_interval(&p.samples),
    };
    match (median_interval_of(b), median_interval_of(n)) {
        (Some(base), Some(new)) => Ok(ratio_bounds(base, new)),
        _ => Err(NoInterval::NoMedianInterval),
    }
}

/// Why a pair has no interval of its ratio.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
enum NoInterval {
    #[error("one repetition, no spread to weigh")]
    OneRepetition,
    /// The bootstrap's: a side without samples.
    #[error("no samples")]
    NoSamples,
    #[error("no samples.csv and no interval of the median in points.csv")]
    NoMedianInterval,
}

/// A pair's label: what tells it from the other pairs, then what differs across it.
fn pair_label(varying: String, changes: &[SettingChange]) -> String {
    if changes.is_empty() {
        return varying;
    }
    let across: Vec<String> = changes
        .iter()
        .map(|c| format!("{} {} → {}", c.key, c.base, c.new))
        .collect();
    match varying.as_str() {
        ONE_POINT => across.join(", "),
        _ => format!("{varying} ({})", across.join(", ")),
    }
}

/// One matched pair: its ratio, interval and verdict against `threshold`.
fn judge(
    b: &PointTimes,
    n: &PointTimes,
    varying_label: String,
    threshold: f64,
    bootstrap: bool,
) -> Comparison {
    let interval = interval_of(b, n, bootstrap);
    let judgement = match (unjudged(b, n), &interval) {
        (Some((reason, why)), _) => Judgement::NoVerdict { reason, why },
        (None, Err(why)) => Judgement::NoVerdict {
            reason: NoVerdictReason::NoInterval,
            why: why.to_string(),
        },
        (None, Ok(interval)) => {
            Judgement::Verdict(Verdict::of(*interval, Band::around_one(threshold)))
        }
    };
    let changes = changes(b, n);
    Comparison {
        label: pair_label(varying_label, &changes),
        changes,
        base_ms: b.median_ms,
        new_ms: n.median_ms,
        time_ratio: n.median_ms / b.median_ms,
        interval: interval.ok(),
        judgement,
        base_answer: Answer::of(b.net_change_vs_sequential),
        new_answer: Answer::of(n.net_change_vs_sequential),
    }
}

/// Matches the points of two sets as `pairing` says (every settings key both record,
/// by default) and judges each pair by the interval of its ratio of medians against the
/// noise threshold: `threshold` (relative) where given, else the rerun spread recorded
/// for the devices that measured the sets (`noise.rs`). A pair gets no verdict where a
/// side's answer is wrong, missed its noise target or has fewer than [`MIN_SAMPLES`]
/// repetitions. Refused
/// where a point's median, interval or a sample is not a finite time above 0, where
/// samples.csv does not hold a point's repetitions, where no point matches (naming the
/// settings that differ), and where a point has two different matches.
pub fn compare(
    base: &Path,
    new: &Path,
    threshold: Option<f64>,
    pairing: &Pairing,
) -> Result<CompareReport, CompareError> {
    pairing.check()?;
    let (base_points, base_samples) = read_set(base)?;
    let (new_points, new_samples) = read_set(new)?;
    for (path, points) in [(base, &base_points), (new, &new_points)] {
        if points.is_empty() {
            return Err(CompareError::NoPoints {
                path: set_file(path, POINTS_CSV),
            });
        }
    }
    let base_refs: Vec<&PointTimes> = base_points.iter().collect();
    let new_refs: Vec<&PointTimes> = new_points.iter().collect();
    let keys = pairing.keys_of(&base_refs, &new_refs);
    let pairs = pairs(&base_points, &new_points, &keys, pairing)?;
    if pairs.is_empty() {
        return Err(no_match((base, new), &base_refs, &new_refs, &keys, pairing).into());
    }
    let threshold = match threshold {
        Some(relative) => Threshold::given(relative),
        None => {
            // Every point's device, matched or not: the threshold is the sets'.
            let devices: BTreeSet<String> = base_points
                .iter()
                .chain(&new_points)
                .map(|p| p.device.clone())
                .filter(|d| !d.is_empty())
                .collect();
            Threshold::for_devices(&devices.into_iter().collect::<Vec<_>>())
        }
    };
    let bootstrap = base_samples && new_samples;
    let intervals = match bootstrap {
        true => Intervals::Bootstrap {
            level: bootstrap::LEVEL,
            resamples: bootstrap::RESAMPLES,
            seed: bootstrap::SEED,
        },
        false => Intervals::MedianIntervals {
            level: bootstrap::LEVEL,
            without_samples: [(base, base_samples), (new, new_samples)]
                .into_iter()
                .filter(|(_, has)| !has)
                .map(|(path, _)| set_file(path, POINTS_CSV))
                .collect(),
        },
    };
    let names = labels(&pairs.iter().map(|(b, _)| *b).collect::<Vec<_>>());
    let points: Vec<Comparison> = pairs
        .iter()
        .zip(names)
        .map(|((b, n), label)| judge(b, n, label, threshold.relative, bootstrap))
        .collect();
    let names = key_names(base_points.first());
    let compared_across: BTreeSet<String> = points
        .iter()
        .flat_map(|c| c.changes.iter().map(|change| change.key.clone()))
        .collect();
    Ok(CompareReport {
        counts: Counts::of(&points),
        stopped: Stopped {
            base: StopCounts::of(pairs.iter().map(|(b, _)| *b)),
            new: StopCounts::of(pairs.iter().map(|(_, n)| *n)),
        },
        only_in_base: base_points.len() - pairs.len(),
        only_in_new: new_points.len() - pairs.len(),
        pairing: pairing.clone(),
        matched_on: keys.iter().map(|&k| names[k].clone()).collect(),
        compared_across: compared_across.into_iter().collect(),
        min_samples: MIN_SAMPLES,
        points,
        threshold,
        intervals,
    })
}

/// The largest spread between reruns, and where: for results/rerun-noise.toml.
#[derive(Clone, Debug)]
pub struct RerunSpread {
    /// max(r, 1/r) - 1 of the pair's medians, r = new / base.
    pub spread: f64,
    pub label: String,
    pub base: PathBuf,
    pub new: PathBuf,
}

/// The largest spread between any two of `sets` (reruns of one experiment), matched as
/// [`compare`] matches them by default; points that missed their noise target are left
/// out. `None` where no two points match.
pub fn rerun_spread(sets: &[PathBuf]) -> Result<Option<RerunSpread>, CompareError> {
    let read: Vec<Vec<PointTimes>> = sets
        .iter()
        .map(|s| read_set(s).map(|(points, _)| points))
        .collect::<Result<_, _>>()?;
    let every_key: Vec<usize> = (0..key_names(read.iter().flatten().next()).len()).collect();
    let mut largest: Option<RerunSpread> = None;
    for i in 0..sets.len() {
        for j in i + 1..sets.len() {
            let pairs = pairs(&read[i], &read[j], &every_key, &Pairing::default())?;
            let names = labels(&pairs.iter().map(|(b, _)| *b).collect::<Vec<_>>());
            for ((b, n), label) in pairs.into_iter().zip(names) {
                if missed_target(b).is_some() || missed_target(n).is_some() {
                    continue;
                }
                let r = n.median_ms / b.median_ms;
                let spread = r.max(1.0 / r) - 1.0;
                if largest.as_ref().is_none_or(|l| spread > l.spread) {
                    largest = Some(RerunSpread {
                        spread,
                        label,
                        base: sets[i].clone(),
                        new: sets[j].clone(),
                    });
                }
            }
        }
    }
    Ok(largest)
}

/// One row of a sweep's report: a point as `report` shows it.
#[derive(Clone, Debug, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct ReportRow {
    /// The settings that vary ("workgroup=64 variant=fast").
    pub label: String,
    /// The median GPU time of its repetitions, in ms.
    pub median_ms: f64,
    /// The median's confidence interval, else the quartiles (older files), as (low,
    /// high) in ms.
    pub spread_ms: (f64, f64),
    /// The rate in the point's strategy's unit per second (`rate_unit`).
    pub rate: Option<f64>,
    /// The rate's unit: droplet-steps/s or cell-steps/s.
    pub rate_unit: Option<String>,
    /// The repetitions beyond 1.5 IQR of the quartiles (kept), a count.
    pub outliers: Option<u64>,
    /// Stop reason and slowed as the file says; none where empty.
    pub stop_reason: Option<String>,
    pub slowed: Option<String>,
    /// Its net change over its CPU reference's (a ratio), where its strategy checked it.
    pub net_change_vs_sequential: Option<f64>,
    /// Whether that answer lies within [`WRONG_ANSWER_MARGIN`] of the reference's.
    pub answer: Answer,
}

/// How far a point's net change may lie from its CPU reference's (as a share of the
/// reference's) before its speed is marked a wrong answer. Past every stable committed
/// row but the image lever's: the races of concurrent droplets moved the paper's kernel
/// up to 1.195 (1024², workgroup 64, H200), and float atomics, which do not truncate as
/// the int reference does, to 0.742 (4096²); what it marks is a kernel computing
/// something else (the image lever's 12.43 at workgroup 8 on an H100, issue 56).
pub const WRONG_ANSWER_MARGIN: f64 = 0.5;

/// A point's answer against its CPU reference.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Answer {
    /// Its net change within [`WRONG_ANSWER_MARGIN`] of the reference's.
    Checked,
    /// Beyond it (or not a number): its speed is not a result.
    WrongAnswer,
    /// No ratio: a strategy that writes none (the grid's), a map past the reference's
    /// size, a reference that changed nothing, or `measure.judge` off.
    Unchecked,
}

impl Answer {
    pub fn of(net_change_vs_sequential: Option<f64>) -> Self {
        match net_change_vs_sequential {
            None => Answer::Unchecked,
            Some(ratio) if (ratio - 1.0).abs() <= WRONG_ANSWER_MARGIN => Answer::Checked,
            Some(_) => Answer::WrongAnswer,
        }
    }

    /// The ratio as a table shows it, the wrong answers marked.
    pub fn shown(self, ratio: Option<f64>) -> String {
        match (self, ratio) {
            (Answer::WrongAnswer, Some(r)) => format!("**{r:.3}: wrong answer**"),
            (_, Some(r)) => format!("{r:.3}"),
            (_, None) => "-".into(),
        }
    }
}

/// What `sweep --json` prints: the sweep's summary, and its points as `report` shows
/// them.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub struct SweepReport<'a> {
    #[serde(flatten)]
    pub summary: &'a SweepSummary,
    pub points: Vec<ReportRow>,
}

/// What a set's rows say of a weak measurement, where they do: how many points stopped
/// short of their noise target, how (the time budget, max_reps), and what to raise.
pub fn budget_warning(rows: &[ReportRow]) -> Option<String> {
    let counts = StopCounts::of_reasons(rows.iter().map(|r| r.stop_reason.as_deref()));
    let limits = [
        (counts.time_budget, "measure.time_budget_s"),
        (counts.max_reps, "measure.max_reps"),
    ];
    let raise: Vec<&str> = limits
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(_, key)| *key)
        .collect();
    let first = raise.first()?;
    // Counted as compare counts them: a point with no stop reason missed its target too.
    let missed = counts.missed();
    let how: Vec<String> = missed.iter().map(|(how, n)| format!("{n} {how}")).collect();
    Some(format!(
        "{} of {} points stopped before their noise target (measure.target_rel_iqr): {}, so their intervals are wider than asked; raise {} (--set {first}=...) to measure them to the target",
        missed.iter().map(|(_, n)| n).sum::<usize>(),
        rows.len(),
        how.join(", "),
        raise.join(" or ")
    ))
}

/// One sweep's points, as [`report`] tabulates them.
pub fn report_rows(results: &Path) -> Result<Vec<ReportRow>, ResultsError> {
    let points = read_times(results)?;
    let refs: Vec<&PointTimes> = points.iter().collect();
    let filled = |v: &Option<String>| v.clone().filter(|text| !text.is_empty());
    Ok(points
        .iter()
        .zip(labels(&refs))
        .map(|(p, label)| ReportRow {
            label,
            median_ms: p.median_ms,
            spread_ms: p.spread_ms,
            rate: p.rate.map(|(per_s, _)| per_s),
            rate_unit: p.rate.map(|(_, unit)| format!("{unit}/s")),
            outliers: filled(&p.outliers).and_then(|count| count.parse().ok()),
            stop_reason: filled(&p.stop_reason),
            slowed: filled(&p.slowed),
            net_change_vs_sequential: p.net_change_vs_sequential,
            answer: Answer::of(p.net_change_vs_sequential),
        })
        .collect())
}

/// One sweep's points as a markdown table: the settings that vary, the median GPU time
/// with its spread, throughput, its answer against its CPU reference (wrong answers
/// marked), outliers, why the repetitions stopped, and whether the GPU was slowed
/// (where NVML said).
pub fn report(results: &Path) -> Result<String, ResultsError> {
    let mut out = String::from(
        "| point | GPU ms (median) | interval (ms) | throughput (G per s) | net change vs reference (ratio) | outliers (count) | stopped by | slowed |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n",
    );
    let rows = report_rows(results)?;
    let wrong = rows.iter().any(|r| r.answer == Answer::WrongAnswer);
    for row in rows {
        let dash = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
        out += &format!(
            "| {} | {:.4} | {:.4} to {:.4} | {} | {} | {} | {} | {} |\n",
            row.label,
            row.median_ms,
            row.spread_ms.0,
            row.spread_ms.1,
            row.rate
                .zip(row.rate_unit.as_ref())
                .map_or("-".into(), |(v, unit)| {
                    format!("{:.3} G {unit}", v / 1e9)
                }),
            row.answer.shown(row.net_change_vs_sequential),
            row.outliers.map_or("-".into(), |count| count.to_string()),
            dash(&row.stop_reason),
            dash(&row.slowed),
        );
    }
    if wrong {
        out += &format!(
            "\n**wrong answer**: a net change more than {:.0}% from its CPU reference's; its speed is not a result.\n",
            100.0 * WRONG_ANSWER_MARGIN
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::super::points::point;
    use super::*;

    #[test]
    fn an_answer_past_its_margin_is_wrong_and_none_is_unchecked() {
        assert_eq!(Answer::of(None), Answer::Unchecked);
        assert_eq!(Answer::of(Some(1.0)), Answer::Checked);
        assert_eq!(Answer::of(Some(1.0 + WRONG_ANSWER_MARGIN)), Answer::Checked);
        assert_eq!(Answer::of(Some(1.0 - WRONG_ANSWER_MARGIN)), Answer::Checked);
        assert_eq!(Answer::of(Some(1.195)), Answer::Checked);
        assert_eq!(Answer::of(Some(0.742)), Answer::Checked);
        assert_eq!(Answer::of(Some(1.8)), Answer::WrongAnswer);
        assert_eq!(Answer::of(Some(12.43)), Answer::WrongAnswer);
        assert_eq!(Answer::of(Some(0.4)), Answer::WrongAnswer);
        assert_eq!(Answer::of(Some(f64::NAN)), Answer::WrongAnswer);
        assert_eq!(
            Answer::WrongAnswer.shown(Some(12.43)),
            "**12.430: wrong answer**"
        );
        assert_eq!(Answer::Checked.shown(Some(1.0214)), "1.021");
        assert_eq!(Answer::Unchecked.shown(None), "-");
    }

    #[test]
    fn a_sweep_warns_of_every_point_short_of_its_noise_target_and_what_to_raise() {
        let row = |reason: StopReason| ReportRow {
            label: String::new(),
            median_ms: 1.0,
            spread_ms: (1.0, 1.0),
            rate: None,
            rate_unit: None,
            outliers: None,
            stop_reason: Some(reason.as_str().into()),
            slowed: None,
            net_change_vs_sequential: None,
            answer: Answer::Unchecked,
        };
        let met = row(StopReason::NoiseTarget);
        assert_eq!(budget_warning(&[met.clone(), met.clone()]), None);
        let mixed = [
            row(StopReason::TimeBudget),
            row(StopReason::TimeBudget),
            row(StopReason::MaxReps),
            met.clone(),
        ];
        let warning = budget_warning(&mixed).expect("a warning");
        assert!(
            warning.starts_with("3 of 4 points stopped before their noise target"),
            "{warning}"
        );
        assert!(
            warning.contains("2 at the time budget, 1 at max_reps"),
            "{warning}"
        );
        assert!(
            warning.contains(
                "raise measure.time_budget_s or measure.max_reps (--set measure.time_budget_s=...)"
            ),
            "{warning}"
        );
        let unrecorded = ReportRow {
            stop_reason: None,
            ..met.clone()
        };
        let older = budget_warning(&[row(StopReason::TimeBudget), unrecorded]).expect("a warning");
        assert!(
            older.starts_with("2 of 2 points stopped before their noise target (measure.target_rel_iqr): 1 at the time budget, 1 with no stop reason recorded"),
            "the count is of every point listed: {older}"
        );
        let at_max = budget_warning(&[row(StopReason::MaxReps), met]).expect("a warning");
        assert!(
            at_max.contains("raise measure.max_reps (--set measure.max_reps=...)"),
            "{at_max}"
        );
    }

    #[test]
    fn a_point_that_missed_its_noise_target_is_not_judged() {
        let met = point(&[("workgroup", "64")]);
        let mut missed = met.clone();
        missed.stop_reason = Some("max-reps".into());
        missed.rel_iqr = Some(0.74);
        for (b, n) in [(&met, &missed), (&missed, &met)] {
            let c = judge(b, n, "p".into(), 0.02, false);
            assert!(
                matches!(&c.judgement, Judgement::NoVerdict { reason: NoVerdictReason::MissedNoiseTarget, why } if why.contains("missed its noise target (max-reps, relative IQR 0.74)")),
                "{:?}",
                c.judgement
            );
        }
        let mut unknown = met.clone();
        unknown.stop_reason = None;
        assert!(missed_target(&unknown).is_some());
        assert_eq!(missed_target(&met), None);
    }

    #[test]
    fn a_side_below_the_minimum_of_repetitions_is_not_judged_and_one_is_its_own_reason() {
        let mut enough = point(&[("workgroup", "64")]);
        enough.median_ci_ms = Some((0.99, 1.01));
        let judged = judge(&enough, &enough, "p".into(), 0.05, false);
        assert_eq!(judged.judgement, Judgement::Verdict(Verdict::Same));
        for (reps, reason) in [
            (MIN_SAMPLES - 1, NoVerdictReason::TooFewRepetitions),
            (1, NoVerdictReason::OneRepetition),
        ] {
            let mut few = enough.clone();
            few.reps = Some(reps);
            let c = judge(&enough, &few, "p".into(), 0.05, false);
            assert!(
                matches!(&c.judgement, Judgement::NoVerdict { reason: r, why } if *r == reason && why.starts_with("new has")),
                "{reps}: {:?}",
                c.judgement
            );
        }
        // Missing the target comes first.
        let mut both = enough.clone();
        both.reps = Some(3);
        both.stop_reason = Some("time-budget".into());
        let c = judge(&both, &enough, "p".into(), 0.05, false);
        assert!(matches!(
            c.judgement,
            Judgement::NoVerdict {
                reason: NoVerdictReason::MissedNoiseTarget,
                ..
            }
        ));
    }

    #[test]
    fn a_pair_label_says_what_differs_across_the_pair() {
        let variant = [SettingChange {
            key: "variant".into(),
            base: "paper".into(),
            new: "fast".into(),
        }];
        assert_eq!(
            pair_label("workgroup=64".into(), &variant),
            "workgroup=64 (variant paper → fast)"
        );
        assert_eq!(
            pair_label(ONE_POINT.into(), &variant),
            "variant paper → fast"
        );
        assert_eq!(pair_label("workgroup=64".into(), &[]), "workgroup=64");
    }
}
