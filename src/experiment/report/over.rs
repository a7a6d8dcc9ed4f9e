//! `report --over KEY`: a set's points gathered over one setting, the droplets' seeds
//! as a rule. Each group (the points that differ in KEY alone) has its rate's median
//! and range over KEY's values and its net change's mean with Student's 95% interval;
//! a group is settled when that whole interval lies within a margin of its CPU
//! reference's, and the headline is the fastest settled group whose points all reached
//! their noise target: the speed-accuracy frontier's answer.

use std::collections::BTreeMap;
use std::path::Path;

use thiserror::Error;

use super::points::{labels, point_keys, read_set, PointTimes, ONE_POINT};
use crate::experiment::results::{ResultsError, StopReason};
use crate::stats::moments::Moments;
use crate::stats::order::median;

/// The headline's margin: a net change within 2% of the sequential reference's.
pub const FRONTIER_MARGIN: f64 = 0.02;
/// Fewer values than this give a group no verdict: two seeds' interval says little.
pub const MIN_OVER_VALUES: usize = 3;
/// The level of a group's net-change interval.
const LEVEL: f64 = 0.95;

#[derive(Debug, Error)]
pub enum OverError {
    #[error("--over {key}: not a setting of a point; the settings are {}", keys.join(", "))]
    UnknownKey { key: String, keys: Vec<String> },
    #[error(transparent)]
    Results(#[from] ResultsError),
}

/// Whether a group's net change is settled within the margin.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Settled {
    /// Its whole interval lies within the margin.
    Within,
    /// Its whole interval lies beyond it.
    Beyond,
    /// Its interval reaches across the margin's edge: more values would tell.
    Unsettled,
    /// Fewer than three values with a net change (`MIN_OVER_VALUES`).
    TooFewValues,
    /// No point of it has a net change (a strategy without one, or `measure.judge` off).
    Unchecked,
}

impl Settled {
    fn of(interval: Option<(f64, f64)>, values: usize, margin: f64) -> Self {
        let inside = |r: f64| (r - 1.0).abs() <= margin;
        match interval {
            _ if values == 0 => Settled::Unchecked,
            _ if values < MIN_OVER_VALUES => Settled::TooFewValues,
            None => Settled::TooFewValues,
            Some((low, high)) if inside(low) && inside(high) => Settled::Within,
            Some((low, high)) if high < 1.0 - margin || low > 1.0 + margin => Settled::Beyond,
            Some(_) => Settled::Unsettled,
        }
    }

    fn shown(self) -> &'static str {
        match self {
            Settled::Within => "within",
            Settled::Beyond => "**beyond**",
            Settled::Unsettled => "unsettled",
            Settled::TooFewValues => "too few values",
            Settled::Unchecked => "-",
        }
    }
}

/// One group of points that differ in the `over` key alone.
#[derive(Clone, Debug, serde::Serialize, schemars::JsonSchema)]
pub struct OverGroup {
    /// The settings that set it apart from the other groups, as "key=value".
    pub label: String,
    pub device: String,
    /// The `over` key's distinct values among its points, in the file's order (rows of
    /// one value, as `--replicate` writes, are averaged into one figure).
    pub values: Vec<String>,
    /// Its rate's unit (droplet-steps/s or cell-steps/s), where its points have one.
    pub rate_unit: Option<String>,
    /// The median over the values of their rates (each a point's median), per second.
    pub rate_median: Option<f64>,
    /// The lowest of those rates, per second.
    pub rate_min: Option<f64>,
    /// The highest of those rates, per second.
    pub rate_max: Option<f64>,
    /// How many values have a finite net change, which the interval is over.
    pub net_change_values: usize,
    /// The mean over the values of the net change over the CPU reference's (a ratio).
    pub net_change_mean: Option<f64>,
    /// Student's 95% interval of that mean: low, high.
    pub net_change_interval: Option<(f64, f64)>,
    pub settled: Settled,
    /// Whether every one of its points stopped at its noise target.
    pub at_noise_target: bool,
}

/// What `report --over KEY --json` prints.
#[derive(Clone, Debug, serde::Serialize, schemars::JsonSchema)]
pub struct OverReport {
    /// The key the points were gathered over.
    pub over: String,
    /// The margin around 1 of a settled net change (0.02 for 2%).
    pub margin: f64,
    pub groups: Vec<OverGroup>,
    /// The index in `groups` of the fastest settled group at its noise target.
    pub fastest_settled: Option<usize>,
}

/// A group's device and settings, the `over` key's value left empty.
type GroupKey = (String, Vec<(String, String)>);

/// The set at `results` gathered over the settings key `over`.
pub fn over_report(results: &Path, over: &str, margin: f64) -> Result<OverReport, OverError> {
    let keys = point_keys();
    let Some(k) = keys.iter().position(|key| key == over) else {
        return Err(OverError::UnknownKey {
            key: over.to_string(),
            keys,
        });
    };
    let (points, _) = read_set(results)?;
    let mut groups: BTreeMap<GroupKey, Vec<&PointTimes>> = BTreeMap::new();
    let mut order = Vec::new();
    for p in &points {
        let mut settings = p.settings.clone();
        settings[k].1.clear();
        let key = (p.device.clone(), settings);
        if !groups.contains_key(&key) {
            order.push(key.clone());
        }
        groups.entry(key).or_default().push(p);
    }
    // Each group labelled as report labels points: by the settings that vary among
    // groups, the `over` key left out.
    let representatives: Vec<PointTimes> = order
        .iter()
        .map(|key| {
            let mut p = groups[key][0].clone();
            p.settings[k].1.clear();
            p
        })
        .collect();
    let mut names = labels(&representatives.iter().collect::<Vec<_>>());
    // Several devices: each group says which ran it.
    if order.iter().any(|(device, _)| *device != order[0].0) {
        for (name, (device, _)) in names.iter_mut().zip(&order) {
            *name = format!("{name} on {device}");
        }
    }
    let groups: Vec<OverGroup> = order
        .iter()
        .zip(names)
        .map(|(key, label)| group(&groups[key], k, label, margin))
        .collect();
    let fastest_settled = groups
        .iter()
        .enumerate()
        .filter(|(_, g)| g.settled == Settled::Within && g.at_noise_target)
        .filter_map(|(i, g)| Some((i, g.rate_median?)))
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(i, _)| i);
    Ok(OverReport {
        over: over.to_string(),
        margin,
        groups,
        fastest_settled,
    })
}

fn group(points: &[&PointTimes], k: usize, label: String, margin: f64) -> OverGroup {
    // One figure per value of the key: a value measured twice (--replicate) is one
    // draw, its rows averaged, not two.
    let mut values: Vec<String> = Vec::new();
    let mut by_value: BTreeMap<&str, Vec<&PointTimes>> = BTreeMap::new();
    for p in points {
        let value = p.settings[k].1.as_str();
        if !by_value.contains_key(value) {
            values.push(value.to_string());
        }
        by_value.entry(value).or_default().push(p);
    }
    let per_value = |figure: fn(&PointTimes) -> Option<f64>| -> Vec<f64> {
        (values.iter())
            .filter_map(|v| {
                let of: Vec<f64> = (by_value[v.as_str()].iter())
                    .filter_map(|p| figure(p))
                    .filter(|x| x.is_finite())
                    .collect();
                (!of.is_empty()).then(|| Moments::of(&of).mean)
            })
            .collect()
    };
    let rates = per_value(|p| Some(p.rate?.0));
    let ratios = per_value(|p| p.net_change_vs_sequential);
    let moments = Moments::of(&ratios);
    let interval = moments.mean_interval(LEVEL);
    let extreme = |pick: fn(f64, f64) -> f64| rates.iter().copied().reduce(pick);
    OverGroup {
        label: if label == ONE_POINT {
            "(one group)".into()
        } else {
            label
        },
        device: points[0].device.clone(),
        values,
        rate_unit: points
            .iter()
            .find_map(|p| p.rate.map(|(_, unit)| unit.to_string())),
        rate_median: median(&rates),
        rate_min: extreme(f64::min),
        rate_max: extreme(f64::max),
        net_change_values: ratios.len(),
        net_change_mean: (!ratios.is_empty()).then_some(moments.mean),
        net_change_interval: interval,
        settled: Settled::of(interval, ratios.len(), margin),
        at_noise_target: points
            .iter()
            .all(|p| p.stop_reason.as_deref() == Some(StopReason::NoiseTarget.as_str())),
    }
}

/// The report as a markdown table, with the headline under it.
pub fn over_table(report: &OverReport) -> String {
    let percent = 100.0 * report.margin;
    let mut out = format!(
        "| group | {over} values | throughput, median over them (G per s) | range (G per s) | net change vs reference, mean (ratio) | 95% interval | within {percent}% | all at noise target |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n",
        over = report.over
    );
    let giga = |v: Option<f64>| v.map_or("-".into(), |v| format!("{:.3}", v / 1e9));
    let ratio = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.4}"));
    for g in &report.groups {
        out += &format!(
            "| {} | {} | {}{} | {} to {} | {} | {} | {} | {} |\n",
            g.label,
            g.values.len(),
            giga(g.rate_median),
            g.rate_unit
                .as_ref()
                .map_or(String::new(), |u| format!(" G {u}/s")),
            giga(g.rate_min),
            giga(g.rate_max),
            ratio(g.net_change_mean),
            g.net_change_interval.map_or("-".into(), |(low, high)| {
                format!("{} to {}", ratio(Some(low)), ratio(Some(high)))
            }),
            g.settled.shown(),
            if g.at_noise_target { "yes" } else { "no" },
        );
    }
    out += &format!(
        "\nSettled: the whole 95% interval of the mean net change over {} values (at least {MIN_OVER_VALUES}) lies within {percent}% of the CPU reference's.\n",
        report.over
    );
    out += &match report.fastest_settled.map(|i| &report.groups[i]) {
        Some(g) => format!(
            "Fastest settled group at its noise target: {}{}, {} G {}/s (net change {} over {} values).\n",
            g.label,
            match g.label.ends_with(&g.device) {
                true => String::new(),
                false => format!(" on {}", g.device),
            },
            giga(g.rate_median),
            g.rate_unit.as_deref().unwrap_or_default(),
            ratio(g.net_change_mean),
            g.net_change_values
        ),
        None => "No group is settled within the margin with every point at its noise target.\n".into(),
    };
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_group_is_settled_only_when_its_whole_interval_lies_inside_the_margin() {
        let m = FRONTIER_MARGIN;
        assert_eq!(Settled::of(Some((0.99, 1.01)), 3, m), Settled::Within);
        assert_eq!(Settled::of(Some((1.01, 1.03)), 3, m), Settled::Unsettled);
        assert_eq!(Settled::of(Some((1.03, 1.05)), 3, m), Settled::Beyond);
        assert_eq!(Settled::of(Some((0.90, 0.97)), 5, m), Settled::Beyond);
        assert_eq!(Settled::of(Some((0.99, 1.01)), 2, m), Settled::TooFewValues);
        assert_eq!(Settled::of(None, 0, m), Settled::Unchecked);
    }
}
