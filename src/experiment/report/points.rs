//! A set's points as `compare` and `report` read them: each row of points.csv by
//! column name (whatever version wrote it) with its repetitions from samples.csv, and
//! the settings that vary among points, which label them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::erosion::droplets::NET_CHANGE_VS_REFERENCE;
use crate::erosion::{RunSettings, WorkUnit};
use crate::experiment::results::{
    input_columns, is_time, point_column, read_points, read_samples, set_file, ResultsError,
    POINTS_CSV, SAMPLES_CSV,
};
#[cfg(test)]
use crate::stats::bootstrap::MIN_SAMPLES;

/// The names of a point's settings keys, by index; none without a point.
pub(super) fn key_names(point: Option<&PointTimes>) -> Vec<String> {
    point.map_or_else(Vec::new, |p| {
        p.settings.iter().map(|(key, _)| key.clone()).collect()
    })
}

/// What sets a point apart, as compare matches and labels it: every settings key and
/// the heightmap it eroded (by name and content, and the cell size and vertical scale
/// that made its kernel units), in alphabetical order.
pub(super) fn point_keys() -> Vec<String> {
    let mut keys = RunSettings::keys();
    keys.extend(input_columns().map(String::from));
    keys.sort();
    keys
}

/// One point of a points.csv, as read by name.
#[derive(Clone, Debug)]
pub(super) struct PointTimes {
    /// (settings column, canonical value) for every settings key, in alphabetical order.
    pub(super) settings: Vec<(String, String)>,
    /// The device that measured it.
    pub(super) device: String,
    /// Its row's `point` and `worker`, which key its samples, and its line in the file.
    pub(super) point: usize,
    pub(super) worker: usize,
    pub(super) line: usize,
    /// Timed repetitions, where the file says.
    pub(super) reps: Option<usize>,
    pub(super) median_ms: f64,
    /// The median's confidence interval where the file has one, else the quartiles.
    pub(super) spread_ms: (f64, f64),
    /// The median's confidence interval alone.
    pub(super) median_ci_ms: Option<(f64, f64)>,
    pub(super) rel_iqr: Option<f64>,
    /// Its rate in its strategy's unit, with the unit's name.
    pub(super) rate: Option<(f64, &'static str)>,
    pub(super) outliers: Option<String>,
    pub(super) stop_reason: Option<String>,
    pub(super) slowed: Option<String>,
    /// Its net change over its CPU reference's, where its strategy checked it.
    pub(super) net_change_vs_sequential: Option<f64>,
    /// Why `compare` cannot weigh this point's times (one is not a finite time above
    /// 0), naming the point, its line and the column; none where they are sound.
    pub(super) fault: Option<String>,
    /// Its repetitions' GPU times from samples.csv; empty where the set has none.
    pub(super) samples: Vec<f64>,
}

impl PointTimes {
    /// Its timed repetitions: its samples where the set has them, else its `reps`.
    pub(super) fn repetitions(&self) -> Option<usize> {
        match self.samples.len() {
            0 => self.reps,
            count => Some(count),
        }
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
pub(super) fn read_times(path: &Path) -> Result<Vec<PointTimes>, ResultsError> {
    let path = set_file(path, POINTS_CSV);
    let table = read_points(&path)?;
    let medians = table.numbers(point_column::GPU_MS_MEDIAN, &path)?;
    let keys = point_keys();
    let index = |text: Option<&str>, name: &str, line: usize| -> Result<usize, ResultsError> {
        let text = text.unwrap_or_default();
        text.parse().map_err(|_| ResultsError::Mismatch {
            path: path.clone(),
            reason: format!("line {line}: {name} is {text:?}, not an index"),
        })
    };
    medians
        .into_iter()
        .zip(table.point_rows())
        .map(|(median_ms, row)| {
            // With the column it came from, for the fault below.
            let bound = |ci: (Option<f64>, &'static str), quartile: (Option<f64>, &'static str)| {
                [ci, quartile]
                    .into_iter()
                    .find_map(|(ms, column)| Some((ms?, column)))
                    // One repetition has no interval: its spread is the median alone.
                    .unwrap_or((median_ms, point_column::GPU_MS_MEDIAN))
            };
            let (low, high) = (
                bound(
                    (row.gpu_ms_ci_low(), point_column::GPU_MS_CI_LOW),
                    (row.gpu_ms_q1(), point_column::GPU_MS_Q1),
                ),
                bound(
                    (row.gpu_ms_ci_high(), point_column::GPU_MS_CI_HIGH),
                    (row.gpu_ms_q3(), point_column::GPU_MS_Q3),
                ),
            );
            // A point whose times are not times ([`is_time`]) cannot be compared.
            let fault = [(median_ms, point_column::GPU_MS_MEDIAN), low, high]
                .into_iter()
                .find(|&(ms, _)| !is_time(ms))
                .map(|(ms, column)| {
                    format!(
                        "point {} (line {}): {column} is {ms}; compare needs finite times above 0",
                        row.point_text().unwrap_or_default(),
                        row.line()
                    )
                });
            let rate = WorkUnit::ALL
                .iter()
                .find_map(|&unit| Some((row.per_s(unit)?, unit.name())));
            let median_ci_ms = row.gpu_ms_ci_low().zip(row.gpu_ms_ci_high());
            Ok(PointTimes {
                settings: keys
                    .iter()
                    .map(|k| (k.clone(), canonical(row.setting(k).unwrap_or_default())))
                    .collect(),
                device: row.device().unwrap_or_default().to_string(),
                point: index(row.point_text(), point_column::POINT, row.line())?,
                worker: index(row.worker_text(), point_column::WORKER, row.line())?,
                line: row.line(),
                reps: row.reps().map(|n| n as usize),
                median_ms,
                spread_ms: (low.0, high.0),
                median_ci_ms,
                rel_iqr: row.gpu_ms_rel_iqr(),
                rate,
                outliers: row.outliers().map(str::to_string),
                stop_reason: row.stop_reason().map(str::to_string),
                slowed: row.slowed().map(str::to_string),
                net_change_vs_sequential: row.setting_number(NET_CHANGE_VS_REFERENCE.0),
                fault,
                samples: Vec::new(),
            })
        })
        .collect()
}

/// A set's points, refused where a time is not finite and above 0, with their samples
/// where samples.csv is there; whether it is.
pub(super) fn read_set(path: &Path) -> Result<(Vec<PointTimes>, bool), ResultsError> {
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
        if !is_time(row.gpu_ms) {
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
        // The verdict is drawn from the samples, the table from points.csv: a median
        // that is not theirs means one file was edited.
        let samples_median = crate::stats::order::median(&p.samples).unwrap_or(f64::NAN);
        if (samples_median / p.median_ms - 1.0).abs() > 1e-6 {
            return Err(mismatch(format!(
                "point {} (worker {}): its samples' median is {} ms, but line {} of {POINTS_CSV} says {} ms; one of the two files was changed",
                p.point,
                p.worker,
                crate::readable_number(samples_median),
                p.line,
                crate::readable_number(p.median_ms)
            )));
        }
    }
    Ok((points, true))
}

/// Refuses a set that `compare` would refuse (its times, its samples), reading it
/// whole.
pub fn check_set(path: &Path) -> Result<(), ResultsError> {
    read_set(path).map(|_| ())
}

/// The values `points` take for key `k`, numbers in numeric order; empty (another
/// strategy's key, or one an older file did not record) is no value.
pub(super) fn values(points: &[&PointTimes], k: usize) -> Vec<String> {
    let distinct: BTreeSet<&str> = points
        .iter()
        .map(|p| p.settings[k].1.as_str())
        .filter(|v| !v.is_empty())
        .collect();
    let mut values: Vec<String> = distinct.into_iter().map(str::to_string).collect();
    values.sort_by(|a, b| match (a.parse::<f64>(), b.parse::<f64>()) {
        (Ok(x), Ok(y)) => x.total_cmp(&y),
        _ => a.cmp(b),
    });
    values
}

/// The keys that take two values or more among `points`.
fn varying(points: &[&PointTimes]) -> Vec<usize> {
    match points.first() {
        Some(first) => (0..first.settings.len())
            .filter(|&k| values(points, k).len() > 1)
            .collect(),
        None => Vec::new(),
    }
}

/// The keys that take two values or more within either set.
pub(super) fn varying_in_either(base: &[&PointTimes], new: &[&PointTimes]) -> BTreeSet<usize> {
    varying(base).into_iter().chain(varying(new)).collect()
}

/// The label of a point when no setting varies.
pub(super) const ONE_POINT: &str = "(the one point)";

/// The settings that vary among `points`, as "key=value" labels of each point.
pub(super) fn labels(points: &[&PointTimes]) -> Vec<String> {
    let mut varying = varying(points);
    // A heightmap's name says which it is; its hash only where the name does not.
    let named = |key: &str| varying.iter().any(|&k| points[0].settings[k].0 == key);
    if named("input") {
        varying.retain(|&k| points[0].settings[k].0 != "input_hash");
    }
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
                ONE_POINT.into()
            } else {
                label.join(" ")
            }
        })
        .collect()
}

/// A point with these settings, at its noise target after [`MIN_SAMPLES`] repetitions:
/// for the tests of `compare` and `pairing`.
#[cfg(test)]
pub(super) fn point(settings: &[(&str, &str)]) -> PointTimes {
    PointTimes {
        settings: settings
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        device: String::new(),
        point: 0,
        worker: 0,
        line: 2,
        reps: Some(MIN_SAMPLES),
        median_ms: 1.0,
        spread_ms: (1.0, 1.0),
        median_ci_ms: None,
        rel_iqr: None,
        rate: None,
        outliers: None,
        stop_reason: Some("noise-target".into()),
        slowed: None,
        net_change_vs_sequential: None,
        fault: None,
        samples: Vec::new(),
    }
}
