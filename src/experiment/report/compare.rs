//! `vkerode compare BASE NEW`: two sweeps' points matched by their settings, with the
//! ratio of their median GPU times and a verdict that weighs both points' noise; and
//! `vkerode report DIR`: one sweep's points as a table. Files are read by column name,
//! so results from older vkerode versions (quartiles, no intervals) compare too.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::erosion::{RunSettings, WorkUnit};
use crate::experiment::results::{read_points, ResultsError, POINTS_CSV};

/// One point of a points.csv, as read by name.
#[derive(Clone, Debug)]
struct PointTimes {
    /// (settings column, canonical value) for every settings key.
    settings: Vec<(String, String)>,
    median_ms: f64,
    /// The median's confidence interval where the file has one, else the quartiles.
    spread_ms: (f64, f64),
    /// Its rate in its strategy's unit, with the unit's name.
    rate: Option<(f64, &'static str)>,
    outliers: Option<String>,
    stop_reason: Option<String>,
    slowed: Option<String>,
    /// Why `compare` cannot weigh this point's times (one is not a finite time above
    /// 0), naming the point, its line and the column; none where they are sound.
    fault: Option<String>,
}

/// How a point changed from the base to the new set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Faster,
    Slower,
    /// Within both points' noise.
    Same,
}

impl Verdict {
    fn as_str(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::Same => "same",
        }
    }
}

/// One matched point.
#[derive(Clone, Debug)]
pub struct Comparison {
    /// The settings that tell the matched points apart ("workgroup=64 variant=fast").
    pub label: String,
    pub base_ms: f64,
    pub new_ms: f64,
    /// New time over base time: above 1 is slower.
    pub time_ratio: f64,
    pub verdict: Verdict,
}

/// The comparison of two sets, and what did not match.
pub struct CompareReport {
    pub points: Vec<Comparison>,
    pub only_in_base: usize,
    pub only_in_new: usize,
}

impl CompareReport {
    /// The points slower than the base by more than `percent`.
    pub fn slower_than(&self, percent: f64) -> Vec<&Comparison> {
        self.points
            .iter()
            .filter(|c| c.verdict == Verdict::Slower && c.time_ratio > 1.0 + percent / 100.0)
            .collect()
    }

    pub fn markdown(&self, base: &Path, new: &Path) -> String {
        let mut out = format!(
            "Base: `{}`\nNew: `{}`\n\n| point | base ms | new ms | new / base | verdict |\n| --- | --- | --- | --- | --- |\n",
            base.display(),
            new.display()
        );
        for c in &self.points {
            out += &format!(
                "| {} | {:.4} | {:.4} | {:.3} | {} |\n",
                c.label,
                c.base_ms,
                c.new_ms,
                c.time_ratio,
                c.verdict.as_str()
            );
        }
        out += &format!(
            "\n{} points matched; {} only in the base, {} only in the new set.\n",
            self.points.len(),
            self.only_in_base,
            self.only_in_new
        );
        out
    }
}

/// A results folder's points.csv, or the file itself.
fn points_csv(path: &Path) -> PathBuf {
    if path.is_dir() {
        path.join(POINTS_CSV)
    } else {
        path.to_path_buf()
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
    let path = points_csv(path);
    let table = read_points(&path)?;
    let medians = table.numbers("gpu_ms_median", &path)?;
    // In alphabetical order, as labels name them.
    let mut keys = RunSettings::keys();
    keys.sort();
    let optional = |r: usize, name: &str| table.get(r, name).map(str::to_string);
    Ok(medians
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
            // A NaN lies outside no interval (every verdict "same"), and a time of 0 or
            // below makes a ratio of nothing: such a point cannot be compared.
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
            PointTimes {
                settings: keys
                    .iter()
                    .map(|k| (k.clone(), canonical(table.get(r, k).unwrap_or_default())))
                    .collect(),
                median_ms,
                spread_ms: (low.0, high.0),
                rate,
                outliers: optional(r, "outliers"),
                stop_reason: optional(r, "stop_reason"),
                slowed: optional(r, "slowed"),
                fault,
            }
        })
        .collect())
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

/// Matches the points of two sets by the settings both record (each base point with
/// the first new one not yet matched), and judges each pair: slower or faster only where the two spreads (the medians' intervals, or
/// the quartiles for older files) do not overlap. Refused where a point's median or
/// spread is not a finite time above 0.
pub fn compare(base: &Path, new: &Path) -> Result<CompareReport, ResultsError> {
    let base_points = read_times(base)?;
    let new_points = read_times(new)?;
    for (path, points) in [(base, &base_points), (new, &new_points)] {
        if let Some(reason) = points.iter().find_map(|p| p.fault.clone()) {
            return Err(ResultsError::Mismatch {
                path: points_csv(path),
                reason,
            });
        }
    }
    let mut taken = vec![false; new_points.len()];
    let mut matched: Vec<(&PointTimes, &PointTimes)> = Vec::new();
    for b in &base_points {
        let found = (0..new_points.len()).find(|&i| !taken[i] && same_settings(b, &new_points[i]));
        if let Some(i) = found {
            taken[i] = true;
            matched.push((b, &new_points[i]));
        }
    }
    let names = labels(&matched.iter().map(|(b, _)| *b).collect::<Vec<_>>());
    let points = matched
        .iter()
        .zip(names)
        .map(|((b, n), label)| {
            let verdict = if n.spread_ms.0 > b.spread_ms.1 {
                Verdict::Slower
            } else if n.spread_ms.1 < b.spread_ms.0 {
                Verdict::Faster
            } else {
                Verdict::Same
            };
            Comparison {
                label,
                base_ms: b.median_ms,
                new_ms: n.median_ms,
                time_ratio: n.median_ms / b.median_ms,
                verdict,
            }
        })
        .collect();
    Ok(CompareReport {
        points,
        only_in_base: base_points.len() - matched.len(),
        only_in_new: new_points.len() - matched.len(),
    })
}

/// One sweep's points as a markdown table: the settings that vary, the median GPU time
/// with its spread, throughput, outliers, why the repetitions stopped, and whether the
/// GPU was slowed (where NVML said).
pub fn report(results: &Path) -> Result<String, ResultsError> {
    let points = read_times(results)?;
    let refs: Vec<&PointTimes> = points.iter().collect();
    let mut out = String::from(
        "| point | GPU ms (median) | spread | G steps/s (unit) | outliers | stopped by | slowed |\n| --- | --- | --- | --- | --- | --- | --- |\n",
    );
    for (p, label) in points.iter().zip(labels(&refs)) {
        let dash = |v: &Option<String>| match v.as_deref() {
            None | Some("") => "-".to_string(),
            Some(text) => text.to_string(),
        };
        out += &format!(
            "| {label} | {:.4} | {:.4} to {:.4} | {} | {} | {} | {} |\n",
            p.median_ms,
            p.spread_ms.0,
            p.spread_ms.1,
            p.rate
                .map_or("-".into(), |(v, unit)| format!("{:.3} ({unit})", v / 1e9)),
            dash(&p.outliers),
            dash(&p.stop_reason),
            dash(&p.slowed),
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
            median_ms: 1.0,
            spread_ms: (1.0, 1.0),
            rate: None,
            outliers: None,
            stop_reason: None,
            slowed: None,
            fault: None,
        }
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
