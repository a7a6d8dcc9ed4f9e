//! `vkerode compare BASE NEW`: two sweeps' points matched by their settings, each pair
//! judged by an interval of the ratio of its median GPU times (bootstrapped from both
//! points' repetitions in samples.csv) against a noise threshold (the spread measured
//! between reruns on the device, `noise.rs`); and `vkerode report DIR`: one sweep's
//! points as a table. Files are read by column name, so results from older vkerode
//! versions (quartiles, no intervals) compare too.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::noise::Threshold;
use crate::erosion::{RunSettings, WorkUnit};
use crate::experiment::results::{
    read_points, read_samples, set_file, ResultsError, StopReason, POINTS_CSV, SAMPLES_CSV,
};
use crate::experiment::sweep::SweepSummary;
use crate::stats::bootstrap::{self, ratio_of_medians};
use crate::stats::{median_interval, Band, Verdict};

/// One point of a points.csv, as read by name.
#[derive(Clone, Debug)]
struct PointTimes {
    /// (settings column, canonical value) for every settings key.
    settings: Vec<(String, String)>,
    /// The device that measured it.
    device: String,
    /// Its row's `point` and `worker`, which key its samples, and its line in the file.
    point: usize,
    worker: usize,
    line: usize,
    /// Timed repetitions, where the file says.
    reps: Option<usize>,
    median_ms: f64,
    /// The median's confidence interval where the file has one, else the quartiles.
    spread_ms: (f64, f64),
    /// The median's confidence interval alone.
    median_ci_ms: Option<(f64, f64)>,
    rel_iqr: Option<f64>,
    /// Its rate in its strategy's unit, with the unit's name.
    rate: Option<(f64, &'static str)>,
    outliers: Option<String>,
    stop_reason: Option<String>,
    slowed: Option<String>,
    /// Why `compare` cannot weigh this point's times (one is not a finite time above
    /// 0), naming the point, its line and the column; none where they are sound.
    fault: Option<String>,
    /// Its repetitions' GPU times from samples.csv; empty where the set has none.
    samples: Vec<f64>,
}

/// A matched pair's verdict, or why it has none.
#[derive(Clone, Debug, PartialEq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Judgement {
    /// Of new / base GPU time against 1 ± the threshold: lower is faster.
    Verdict(Verdict),
    /// "new missed its noise target (max-reps, relative IQR 0.74)", say.
    NoVerdict(String),
}

impl Judgement {
    pub fn verdict(&self) -> Option<Verdict> {
        match self {
            Judgement::Verdict(v) => Some(*v),
            Judgement::NoVerdict(_) => None,
        }
    }

    pub fn text(&self) -> String {
        match self {
            Judgement::Verdict(v) => v.as_time().into(),
            Judgement::NoVerdict(why) => format!("no verdict: {why}"),
        }
    }
}

/// One matched point.
#[derive(Clone, Debug, serde::Serialize, schemars::JsonSchema)]
pub struct Comparison {
    /// The settings that tell the matched points apart ("workgroup=64 variant=fast").
    pub label: String,
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
}

/// How the intervals of a comparison were made.
#[derive(Clone, Debug, PartialEq, serde::Serialize, schemars::JsonSchema)]
#[serde(tag = "method", rename_all = "snake_case")]
pub enum Intervals {
    /// Bootstrapped from both sets' samples.csv.
    Bootstrap,
    /// These sets' points.csv has no samples.csv beside it: each ratio's interval is
    /// made of the two medians' intervals.
    MedianIntervals { without_samples: Vec<PathBuf> },
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

    /// How the intervals were made, as a sentence.
    pub fn intervals_line(&self) -> String {
        let level = crate::readable_number(bootstrap::LEVEL * 100.0);
        match &self.intervals {
            Intervals::Bootstrap => format!(
                "Intervals: {level}% of new / base, a percentile bootstrap of the ratio of medians from both sets' samples.csv ({} resamples, seed {:#x}).",
                bootstrap::RESAMPLES,
                bootstrap::SEED
            ),
            Intervals::MedianIntervals { without_samples } => format!(
                "Intervals: no samples.csv beside {}, so no bootstrap: each ratio's interval runs from new's low / base's high to new's high / base's low of the medians' {level}% intervals (from samples.csv where a set has one, else points.csv), wider than a bootstrap's.",
                without_samples
                    .iter()
                    .map(|p| format!("`{}`", p.display()))
                    .collect::<Vec<_>>()
                    .join(" and ")
            ),
        }
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
        let count = |v: Verdict| {
            self.points
                .iter()
                .filter(|c| c.judgement.verdict() == Some(v))
                .count()
        };
        let none = self
            .points
            .iter()
            .filter(|c| c.judgement.verdict().is_none())
            .count();
        out += &format!(
            "\nThreshold: {}. \"faster\" and \"slower\" need the whole interval beyond 1 ± the threshold, \"same\" needs it within; \"unclear\" is neither.\n{}\n\n{} points matched; {} only in the base, {} only in the new set. {} slower, {} faster, {} same, {} unclear, {none} without a verdict.\n",
            self.threshold.describe(),
            self.intervals_line(),
            self.points.len(),
            self.only_in_base,
            self.only_in_new,
            count(Verdict::Higher),
            count(Verdict::Lower),
            count(Verdict::Same),
            count(Verdict::Unclear),
        );
        out
    }
}

/// Numbers in one spelling ("1000" and "1000.0" are one value), text as it is.
fn canonical(text: &str) -> String {
    match text.parse::<f64>() {
        Ok(v) => v.to_string(),
        Err(_) => text.to_string(),
    }
}

/// Every point of a set, on the current columns whatever version wrote it: the
/// settings are every settings key (a strategy's own keys empty in other strategies'
/// rows).
fn read_times(path: &Path) -> Result<Vec<PointTimes>, ResultsError> {
    let path = set_file(path, POINTS_CSV);
    let table = read_points(&path)?;
    let medians = table.numbers("gpu_ms_median", &path)?;
    // In alphabetical order, as labels name them.
    let mut keys = RunSettings::keys();
    keys.sort();
    let optional = |r: usize, name: &str| table.get(r, name).map(str::to_string);
    let index = |r: usize, name: &str| -> Result<usize, ResultsError> {
        let text = table.get(r, name).unwrap_or_default();
        text.parse().map_err(|_| ResultsError::Mismatch {
            path: path.clone(),
            reason: format!("line {}: {name} is {text:?}, not an index", r + 2),
        })
    };
    medians
        .into_iter()
        .enumerate()
        .map(|(r, median_ms)| {
            // With the column it came from, for the fault below.
            let bound = |ci: &'static str, quartile: &'static str| {
                [ci, quartile]
                    .into_iter()
                    .find_map(|column| Some((table.number(r, column)?, column)))
                    // One repetition has no interval: its spread is the median alone.
                    .unwrap_or((median_ms, "gpu_ms_median"))
            };
            let (low, high) = (
                bound("gpu_ms_ci_low", "gpu_ms_q1"),
                bound("gpu_ms_ci_high", "gpu_ms_q3"),
            );
            // A NaN lies outside no interval, and a time of 0 or below makes a ratio of
            // nothing: such a point cannot be compared.
            let fault = [(median_ms, "gpu_ms_median"), low, high]
                .into_iter()
                .find(|(ms, _)| !(ms.is_finite() && *ms > 0.0))
                .map(|(ms, column)| {
                    format!(
                        "point {} (line {}): {column} is {ms}; compare needs finite times above 0",
                        table.get(r, "point").unwrap_or_default(),
                        r + 2
                    )
                });
            let rate = WorkUnit::ALL.iter().find_map(|unit| {
                let per_s = table.number(r, &format!("{}_per_s", unit.column()))?;
                Some((per_s, unit.name()))
            });
            let median_ci_ms = table
                .number(r, "gpu_ms_ci_low")
                .zip(table.number(r, "gpu_ms_ci_high"));
            Ok(PointTimes {
                settings: keys
                    .iter()
                    .map(|k| (k.clone(), canonical(table.get(r, k).unwrap_or_default())))
                    .collect(),
                device: table.get(r, "device").unwrap_or_default().to_string(),
                point: index(r, "point")?,
                worker: index(r, "worker")?,
                line: r + 2,
                reps: table.number(r, "reps").map(|n| n as usize),
                median_ms,
                spread_ms: (low.0, high.0),
                median_ci_ms,
                rel_iqr: table.number(r, "gpu_ms_rel_iqr"),
                rate,
                outliers: optional(r, "outliers"),
                stop_reason: optional(r, "stop_reason"),
                slowed: optional(r, "slowed"),
                fault,
                samples: Vec::new(),
            })
        })
        .collect()
}

/// A set's points, refused where a time is not finite and above 0, with their samples
/// where samples.csv is there; whether it is.
fn read_set(path: &Path) -> Result<(Vec<PointTimes>, bool), ResultsError> {
    let mut points = read_times(path)?;
    if let Some(reason) = points.iter().find_map(|p| p.fault.clone()) {
        return Err(ResultsError::Mismatch {
            path: set_file(path, POINTS_CSV),
            reason,
        });
    }
    let samples_path = set_file(path, SAMPLES_CSV);
    if !samples_path.exists() {
        return Ok((points, false));
    }
    let mismatch = |reason: String| ResultsError::Mismatch {
        path: samples_path.clone(),
        reason,
    };
    let mut by_point: BTreeMap<(usize, usize), Vec<f64>> = BTreeMap::new();
    for (i, row) in read_samples(&samples_path)?.into_iter().enumerate() {
        if !(row.gpu_ms.is_finite() && row.gpu_ms > 0.0) {
            return Err(mismatch(format!(
                "line {}: gpu_ms is {}; compare needs finite times above 0",
                i + 2,
                row.gpu_ms
            )));
        }
        by_point
            .entry((row.point, row.worker))
            .or_default()
            .push(row.gpu_ms);
    }
    for p in &mut points {
        p.samples = by_point.remove(&(p.point, p.worker)).unwrap_or_default();
        let count = p.samples.len();
        if count == 0 || p.reps.is_some_and(|reps| reps != count) {
            return Err(mismatch(format!(
                "point {} (worker {}) has {count} samples, but line {} of {POINTS_CSV} says {} repetitions",
                p.point,
                p.worker,
                p.line,
                p.reps.map_or("other".into(), |r| r.to_string())
            )));
        }
    }
    Ok((points, true))
}

/// Refuses a set that [`compare`] would refuse (its times, its samples), reading it
/// whole.
pub fn check_set(path: &Path) -> Result<(), ResultsError> {
    read_set(path).map(|_| ())
}

/// The settings that vary among `points`, as "key=value" labels of each point.
fn labels(points: &[&PointTimes]) -> Vec<String> {
    // A key varies where it takes two values; empty is another strategy's key, or one
    // an older file did not record.
    let varying: Vec<usize> = match points.first() {
        Some(first) => (0..first.settings.len())
            .filter(|&k| {
                let values: BTreeSet<&str> = points
                    .iter()
                    .map(|p| p.settings[k].1.as_str())
                    .filter(|v| !v.is_empty())
                    .collect();
                values.len() > 1
            })
            .collect(),
        None => Vec::new(),
    };
    points
        .iter()
        .map(|p| {
            let label: Vec<String> = varying
                .iter()
                .map(|&k| &p.settings[k])
                .filter(|(_, v)| !v.is_empty())
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            if label.is_empty() {
                "(the one point)".into()
            } else {
                label.join(" ")
            }
        })
        .collect()
}

/// Whether two points have the same settings wherever both record one (a key empty on
/// one side is another strategy's, or one an older file did not record).
fn same_settings(a: &PointTimes, b: &PointTimes) -> bool {
    a.settings
        .iter()
        .zip(&b.settings)
        .all(|((_, x), (_, y))| x.is_empty() || y.is_empty() || x == y)
}

/// The pairs of two sets' points, matched by the settings both record: each base point
/// with the first new one not yet matched.
fn matched<'a>(
    base: &'a [PointTimes],
    new: &'a [PointTimes],
) -> Vec<(&'a PointTimes, &'a PointTimes)> {
    let mut taken = vec![false; new.len()];
    let mut pairs = Vec::new();
    for b in base {
        let found = (0..new.len()).find(|&i| !taken[i] && same_settings(b, &new[i]));
        if let Some(i) = found {
            taken[i] = true;
            pairs.push((b, &new[i]));
        }
    }
    pairs
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

/// The interval of new / base for one pair: bootstrapped from both sides' samples, or
/// where a set has none, made of the medians' intervals; `Err` says why there is none.
fn interval_of(b: &PointTimes, n: &PointTimes, bootstrap: bool) -> Result<(f64, f64), String> {
    for (side, p) in [("base", b), ("new", n)] {
        if p.samples.len() == 1 || p.reps == Some(1) {
            return Err(format!("{side} has one repetition, no spread to weigh"));
        }
    }
    if bootstrap {
        return ratio_of_medians(&b.samples, &n.samples, bootstrap::RESAMPLES)
            .ok_or_else(|| "no samples".into());
    }
    let median_interval_of = |p: &PointTimes| match p.samples.is_empty() {
        true => p.median_ci_ms,
        false => median_interval(&p.samples),
    };
    match (median_interval_of(b), median_interval_of(n)) {
        (Some((b_low, b_high)), Some((n_low, n_high))) => Ok((n_low / b_high, n_high / b_low)),
        _ => Err("no samples.csv and no interval of the median in points.csv".into()),
    }
}

/// One matched pair: its ratio, interval and verdict against `threshold`.
fn judge(
    b: &PointTimes,
    n: &PointTimes,
    label: String,
    threshold: f64,
    bootstrap: bool,
) -> Comparison {
    let interval = interval_of(b, n, bootstrap);
    let missed = [("base", b), ("new", n)].into_iter().find_map(|(side, p)| {
        Some(format!(
            "{side} missed its noise target ({})",
            missed_target(p)?
        ))
    });
    let judgement = match (&interval, missed) {
        (_, Some(why)) => Judgement::NoVerdict(why),
        (Err(why), None) => Judgement::NoVerdict(why.clone()),
        (Ok(interval), None) => {
            Judgement::Verdict(Verdict::of(*interval, Band::around_one(threshold)))
        }
    };
    Comparison {
        label,
        base_ms: b.median_ms,
        new_ms: n.median_ms,
        time_ratio: n.median_ms / b.median_ms,
        interval: interval.ok(),
        judgement,
    }
}

/// Matches the points of two sets by the settings both record and judges each pair by
/// the interval of its ratio of medians against the noise threshold: `threshold`
/// (relative) where given, else the rerun spread recorded for the devices that measured
/// them (`noise.rs`). Points that missed their noise target get no verdict. Refused
/// where a point's median, interval or a sample is not a finite time above 0, or where
/// samples.csv does not hold a point's repetitions.
pub fn compare(
    base: &Path,
    new: &Path,
    threshold: Option<f64>,
) -> Result<CompareReport, ResultsError> {
    let (base_points, base_samples) = read_set(base)?;
    let (new_points, new_samples) = read_set(new)?;
    let pairs = matched(&base_points, &new_points);
    let threshold = match threshold {
        Some(relative) => Threshold::given(relative),
        None => {
            let devices: BTreeSet<String> = pairs
                .iter()
                .flat_map(|(b, n)| [b.device.clone(), n.device.clone()])
                .filter(|d| !d.is_empty())
                .collect();
            Threshold::for_devices(&devices.into_iter().collect::<Vec<_>>())
        }
    };
    let bootstrap = base_samples && new_samples;
    let intervals = match bootstrap {
        true => Intervals::Bootstrap,
        false => Intervals::MedianIntervals {
            without_samples: [(base, base_samples), (new, new_samples)]
                .into_iter()
                .filter(|(_, has)| !has)
                .map(|(path, _)| set_file(path, POINTS_CSV))
                .collect(),
        },
    };
    let names = labels(&pairs.iter().map(|(b, _)| *b).collect::<Vec<_>>());
    let points = pairs
        .iter()
        .zip(names)
        .map(|((b, n), label)| judge(b, n, label, threshold.relative, bootstrap))
        .collect();
    Ok(CompareReport {
        points,
        only_in_base: base_points.len() - pairs.len(),
        only_in_new: new_points.len() - pairs.len(),
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
/// [`compare`] matches them; points that missed their noise target are left out. `None`
/// where no two points match.
pub fn rerun_spread(sets: &[PathBuf]) -> Result<Option<RerunSpread>, ResultsError> {
    let read: Vec<Vec<PointTimes>> = sets
        .iter()
        .map(|s| read_set(s).map(|(points, _)| points))
        .collect::<Result<_, _>>()?;
    let mut largest: Option<RerunSpread> = None;
    for i in 0..sets.len() {
        for j in i + 1..sets.len() {
            let pairs = matched(&read[i], &read[j]);
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
    /// The rate in the point's strategy's unit per second, with the unit's name
    /// (droplet-steps or cell-steps), as (rate, unit).
    pub rate: Option<(f64, &'static str)>,
    /// Outliers, stop reason and slowed as the file says; none where empty.
    pub outliers: Option<String>,
    pub stop_reason: Option<String>,
    pub slowed: Option<String>,
}

/// What `sweep --json` prints: the sweep's summary, and its points as `report` shows
/// them.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub struct SweepReport<'a> {
    #[serde(flatten)]
    pub summary: &'a SweepSummary,
    pub points: Vec<ReportRow>,
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
            rate: p.rate,
            outliers: filled(&p.outliers),
            stop_reason: filled(&p.stop_reason),
            slowed: filled(&p.slowed),
        })
        .collect())
}

/// One sweep's points as a markdown table: the settings that vary, the median GPU time
/// with its spread, throughput, outliers, why the repetitions stopped, and whether the
/// GPU was slowed (where NVML said).
pub fn report(results: &Path) -> Result<String, ResultsError> {
    let mut out = String::from(
        "| point | GPU ms (median) | spread | G steps/s (unit) | outliers | stopped by | slowed |\n| --- | --- | --- | --- | --- | --- | --- |\n",
    );
    for row in report_rows(results)? {
        let dash = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
        out += &format!(
            "| {} | {:.4} | {:.4} to {:.4} | {} | {} | {} | {} |\n",
            row.label,
            row.median_ms,
            row.spread_ms.0,
            row.spread_ms.1,
            row.rate
                .map_or("-".into(), |(v, unit)| format!("{:.3} ({unit})", v / 1e9)),
            dash(&row.outliers),
            dash(&row.stop_reason),
            dash(&row.slowed),
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(settings: &[(&str, &str)]) -> PointTimes {
        PointTimes {
            settings: settings
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            device: String::new(),
            point: 0,
            worker: 0,
            line: 2,
            reps: None,
            median_ms: 1.0,
            spread_ms: (1.0, 1.0),
            median_ci_ms: None,
            rel_iqr: None,
            rate: None,
            outliers: None,
            stop_reason: Some("noise-target".into()),
            slowed: None,
            fault: None,
            samples: Vec::new(),
        }
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
                matches!(&c.judgement, Judgement::NoVerdict(why) if why.contains("missed its noise target (max-reps, relative IQR 0.74)")),
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
    fn a_key_another_strategy_leaves_empty_neither_varies_nor_parts_a_match() {
        let droplets = point(&[
            ("algorithm", "droplets"),
            ("pipes_steps", ""),
            ("workgroup", "64"),
        ]);
        let pipes = point(&[
            ("algorithm", "pipes"),
            ("pipes_steps", "50"),
            ("workgroup", ""),
        ]);
        let labels = labels(&[&droplets, &pipes]);
        assert_eq!(labels, ["algorithm=droplets", "algorithm=pipes"]);
        // An older file that did not record a key matches on the others.
        let older = point(&[
            ("algorithm", "pipes"),
            ("pipes_steps", ""),
            ("workgroup", ""),
        ]);
        assert!(same_settings(&older, &pipes));
        assert!(!same_settings(&older, &droplets));
    }
}
