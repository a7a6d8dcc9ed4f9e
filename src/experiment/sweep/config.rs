//! Experiment configs (`experiments/*.toml`): fixed settings, axes whose cartesian
//! product is the sweep, and how to measure each point. Every point is built and
//! checked before any GPU work.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::super::results::config_hash_of;
use super::super::ConfigError;
use super::input::{check_input_keys, without_input, InputLoader, KeyRefusal, PointInput};
use crate::erosion::{RunSettings, TableError};
use crate::gpu::DeviceInfo;
use crate::terrain::MapInfo;

/// The dose axis of a comparison of strategies by dose (studies/strategy_comparison/):
/// the key that marks such a config, not a sweep.
pub const DOSE_AXIS_KEY: &str = "water_per_cell";

/// One experiment, as written in its TOML file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExperimentConfig {
    pub name: String,
    pub description: String,
    /// Settings every point shares, unless an axis overrides them.
    #[serde(default)]
    pub fixed: toml::Table,
    /// Lists of values; their cartesian product is the sweep, first axis outermost.
    #[serde(default)]
    pub axes: toml::Table,
    #[serde(default)]
    pub measure: MeasureSettings,
    /// The content hash of every `input` of the points, by the path the config wrote:
    /// found at load, never written in a config, so that the config hash changes with
    /// the files.
    #[serde(
        default,
        skip_deserializing,
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub input_hashes: BTreeMap<String, String>,
}

/// How to measure a point, after nvbench: warm-up, then repetitions until the relative
/// interquartile range of the GPU times falls below the target, or the maximum number
/// of repetitions or the time budget is reached.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MeasureSettings {
    #[serde(default = "measure_defaults::warmup")]
    pub warmup: u32,
    #[serde(default = "measure_defaults::min_reps")]
    pub min_reps: u32,
    #[serde(default = "measure_defaults::max_reps")]
    pub max_reps: u32,
    /// Stop once (q3 - q1) / median of the GPU times is at or below this.
    #[serde(default = "measure_defaults::target_rel_iqr")]
    pub target_rel_iqr: f64,
    /// Seconds of repetitions per point at most (warm-up and counting excluded).
    #[serde(default = "measure_defaults::time_budget_s")]
    pub time_budget_s: f64,
    /// Record each point's addresses and time their replays (the time split), where
    /// its strategy has a replay.
    #[serde(default, with = "crate::erosion::keys::switch")]
    pub replay: bool,
    /// The CPU's judgement of each point: its landform, and the strategy's own (for
    /// droplets, the stability verdict and concurrency error against the CPU reference).
    #[serde(
        default = "measure_defaults::judge",
        with = "crate::erosion::keys::switch"
    )]
    pub judge: bool,
    /// With `judge`, each point's landform figures too (the costliest part of the CPU's
    /// share on a large map). Recorded only when off, so that the configs (and hashes)
    /// of sets made before it existed stay as they were.
    #[serde(
        default = "measure_defaults::judge",
        with = "crate::erosion::keys::switch",
        skip_serializing_if = "measure_defaults::is_on"
    )]
    pub landform: bool,
}

mod measure_defaults {
    pub fn warmup() -> u32 {
        2
    }
    pub fn min_reps() -> u32 {
        5
    }
    pub fn max_reps() -> u32 {
        50
    }
    pub fn target_rel_iqr() -> f64 {
        0.02
    }
    pub fn time_budget_s() -> f64 {
        10.0
    }
    pub fn judge() -> bool {
        true
    }
    pub fn is_on(switch: &bool) -> bool {
        *switch
    }
}

impl Default for MeasureSettings {
    fn default() -> Self {
        toml::from_str("").expect("defaults deserialize")
    }
}

impl crate::table::Section for MeasureSettings {
    const COLUMNS: &'static [(&'static str, &'static str, &'static str)] = &[
        ("warmup", "runs", "untimed runs first (more while the clocks still rise, and at least 0.3 s of GPU time)"),
        ("min_reps", "repetitions", "timed repetitions at least, whatever the noise and the budget"),
        ("max_reps", "repetitions", "timed repetitions at most"),
        ("target_rel_iqr", "ratio", "stop once (q3 - q1) / median of the GPU times is at or below this"),
        ("time_budget_s", "s", "seconds of repetitions per point at most (warm-up and counting excluded), once min_reps ran"),
        ("replay", "switch", "record each point's addresses and measure its replays as its repetitions are (docs/results.md, the time split); off by default: a recording holds 16 bytes per droplet-step"),
        ("judge", "switch", "judge each point on the CPU: its landform (depressions filled) and the strategy's own verdicts (droplets: stability and concurrency error against the CPU reference of the same job); off leaves those columns empty, for throughput sweeps whose maps would make the CPU's share dominate; on by default"),
        ("landform", "switch", "with judge, the landform figures of each point too, on maps up to 4096² (the costliest part of the CPU's share: 5 of a 4096² point's 8 s on the H200; on a GPU it runs on other cores while the GPU measures the next points); off leaves them empty but keeps the strategy's own verdicts; on by default"),
    ];
}

/// One point of the sweep: its position in the product, its axis values and settings.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    pub index: usize,
    /// Why this device cannot run the point (float atomics it lacks); such points are
    /// skipped with a note.
    pub unsupported: Option<String>,
    /// (axis, value as written), in the config's axis order.
    pub axes: Vec<(String, String)>,
    pub settings: RunSettings,
    /// The heightmap it erodes instead of the settings' noise, if any.
    pub input: Option<Arc<PointInput>>,
}

impl Point {
    /// Its axis values, `key=value` joined by spaces.
    pub fn label(&self) -> String {
        let pairs: Vec<String> = self.axes.iter().map(|(k, v)| format!("{k}={v}")).collect();
        pairs.join(" ")
    }

    /// The map it erodes: its input's, or its settings' noise.
    pub fn map(&self) -> MapInfo {
        self.input
            .as_ref()
            .map_or_else(|| self.settings.noise_map(), |input| input.map)
    }
}

/// A loaded config and its points, all checked.
#[derive(Clone, Debug)]
pub struct Experiment {
    pub file: PathBuf,
    pub config: ExperimentConfig,
    pub points: Vec<Point>,
}

/// The most points a sweep may have unless `--max-points` lifts the cap: a point takes
/// seconds at least, so more is weeks of GPU time, and a typo more often than a plan.
pub const DEFAULT_MAX_POINTS: usize = 10_000;

/// The most points any sweep may have, whatever `--max-points` says: the points are
/// built in memory before the first runs (each a full set of settings), and a million
/// of them is already years of GPU time at a second a point.
pub const POINTS_CEILING: usize = 1_000_000;

/// What a command changes in a config as it loads it.
#[derive(Clone, Debug)]
pub struct LoadOptions {
    /// "section.key=value", the value in TOML (`--set`).
    pub overrides: Vec<String>,
    /// The most points the axes may make (`--max-points`).
    pub max_points: usize,
    /// Points past [`crate::erosion::MAX_RUN_WORK`] are allowed
    /// (`--allow-long-runs`).
    pub allow_long: bool,
}

impl Default for LoadOptions {
    fn default() -> Self {
        Self {
            overrides: Vec::new(),
            max_points: DEFAULT_MAX_POINTS,
            allow_long: false,
        }
    }
}

impl Experiment {
    /// Reads and checks `file`, with `options` applied; with a device, also against
    /// its limits.
    pub fn load(
        file: &Path,
        options: &LoadOptions,
        device: Option<&DeviceInfo>,
    ) -> Result<Self, ConfigError> {
        let text = crate::read_input_text(file).map_err(|e| ConfigError {
            file: file.to_path_buf(),
            key: "(file)".into(),
            reason: format!("cannot read: {e}"),
        })?;
        Self::parse_with(file, &text, options, device)
    }

    pub fn parse(
        file: &Path,
        text: &str,
        device: Option<&DeviceInfo>,
    ) -> Result<Self, ConfigError> {
        Self::parse_with(file, text, &LoadOptions::default(), device)
    }

    fn parse_with(
        file: &Path,
        text: &str,
        options: &LoadOptions,
        device: Option<&DeviceInfo>,
    ) -> Result<Self, ConfigError> {
        let overrides = &options.overrides;
        let error = |key: &str, reason: String| ConfigError {
            file: file.to_path_buf(),
            key: key.to_string(),
            reason,
        };
        let toml_error = |e: toml::de::Error| {
            let reason = shorten_lines(e.to_string().trim()).replace('\n', " ");
            error(
                &key_named_in(&reason).unwrap_or_else(|| "(syntax)".into()),
                reason,
            )
        };
        let mut table: toml::Table = toml::from_str(text).map_err(toml_error)?;
        if table.contains_key(DOSE_AXIS_KEY) {
            return Err(error(
                DOSE_AXIS_KEY,
                "this is a strategies config: run it with `vkerode strategies`".into(),
            ));
        }
        for assignment in overrides {
            apply_override(&mut table, assignment, &SWEEP_SECTIONS, &[])
                .map_err(|e| error(&format!("--set {assignment}"), e.to_string()))?;
        }
        let mut config =
            ExperimentConfig::deserialize(toml::Value::Table(table)).map_err(toml_error)?;
        let refused = |(key, reason): Refusal| error(&key, reason);
        config.check_header().map_err(refused)?;
        let axes = config.checked_axes(options.max_points).map_err(refused)?;
        // Inputs are relative to the config's folder, as a strategies config's are.
        let config_dir = file.parent().unwrap_or(Path::new("."));
        let points = config
            .points(&axes, config_dir, device, options.allow_long)
            .map_err(refused)?;
        config.input_hashes = points
            .iter()
            .filter_map(|p| p.input.as_ref())
            .map(|input| (input.written.clone(), input.hash.clone()))
            .collect();
        Ok(Self {
            file: file.to_path_buf(),
            config,
            points,
        })
    }

    pub fn axis_names(&self) -> Vec<String> {
        self.config.axes.keys().cloned().collect()
    }

    /// FNV-1a of the config as vkerode understood it, description aside: equal for
    /// equal experiments, whatever the file's layout, comments or prose.
    pub fn config_hash(&self) -> String {
        config_hash_of(&serde_json::to_value(&self.config).expect("config serializes"))
    }
}

/// The message with every overlong line (a quoted line of the file, say) cut short.
fn shorten_lines(message: &str) -> String {
    const KEEP: usize = 100;
    message
        .lines()
        .map(|line| match line.char_indices().nth(KEEP) {
            Some((cut, _)) => format!(
                "{}... ({} more characters)",
                &line[..cut],
                line[cut..].chars().count()
            ),
            None => line.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A config key and why it is refused.
type Refusal = (String, String);

/// An axis: its key and its values, in the config's order.
type Axis = (String, Vec<toml::Value>);

impl ExperimentConfig {
    /// The name and the measurement settings.
    fn check_header(&self) -> Result<(), Refusal> {
        let refuse = |key: &str, reason: String| Err((key.to_string(), reason));
        let name_ok = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
        if self.name.is_empty() || !self.name.chars().all(name_ok) {
            return refuse(
                "name",
                format!("{:?} must be letters, digits, '-' or '_'", self.name),
            );
        }
        let m = &self.measure;
        if m.min_reps == 0 || m.max_reps < m.min_reps {
            return refuse(
                "measure.max_reps",
                format!(
                    "need 1 <= min_reps <= max_reps, got {} and {}",
                    m.min_reps, m.max_reps
                ),
            );
        }
        if !(m.target_rel_iqr.is_finite() && m.target_rel_iqr >= 0.0) {
            return refuse(
                "measure.target_rel_iqr",
                "must be a finite number >= 0".into(),
            );
        }
        if !(m.time_budget_s.is_finite() && m.time_budget_s > 0.0) {
            return refuse(
                "measure.time_budget_s",
                "must be a positive number of seconds".into(),
            );
        }
        Ok(())
    }

    /// The axes, once the fixed settings on their own and each axis value with them
    /// are valid settings, no axis repeats a value and their product is at most
    /// `max_points` points.
    fn checked_axes(&self, max_points: usize) -> Result<Vec<Axis>, Refusal> {
        if let Some((name, value)) = self
            .fixed
            .iter()
            .find(|(name, _)| self.axes.contains_key(*name))
        {
            return Err((
                format!("axes.{name}"),
                format!(
                    "is also fixed (fixed.{name} = {value}); a key is fixed or an axis, not both"
                ),
            ));
        }
        check_input_keys(&self.fixed).map_err(|(key, reason)| (format!("fixed.{key}"), reason))?;
        settings_from(&self.fixed).map_err(|e| {
            let reason = e.to_string();
            let key = key_named_in(&reason).map_or("fixed".into(), |k| format!("fixed.{k}"));
            (key, reason)
        })?;
        let mut axes = Vec::new();
        for (name, values) in &self.axes {
            let key = format!("axes.{name}");
            let toml::Value::Array(values) = values else {
                return Err((key, "must be a list of values".into()));
            };
            if values.is_empty() {
                return Err((key, "is empty; an axis needs at least one value".into()));
            }
            for (i, value) in values.iter().enumerate() {
                if let Some(first) = values[..i].iter().position(|v| v == value) {
                    return Err((
                        format!("{key}[{i}]"),
                        format!("repeats {key}[{first}] = {value}: each value is its own point, so list it once"),
                    ));
                }
                let mut table = self.fixed.clone();
                table.insert(name.clone(), value.clone());
                let at = || format!("{key}[{i}]");
                check_input_keys(&table).map_err(|(_, reason)| (at(), reason))?;
                settings_from(&table).map_err(|e| (at(), e.to_string()))?;
            }
            axes.push((name.clone(), values.clone()));
        }
        let count = axes
            .iter()
            .try_fold(1usize, |n, (_, values)| n.checked_mul(values.len()));
        if count.is_none_or(|n| n > max_points.min(POINTS_CEILING)) {
            let sizes: Vec<String> = axes
                .iter()
                .map(|(name, values)| format!("{name} ({})", values.len()))
                .collect();
            let count = count.map_or("more than 2^64".into(), |n| n.to_string());
            let remedy = match max_points < POINTS_CEILING {
                true => format!("above the cap of {max_points}; shrink an axis, or lift the cap with --max-points"),
                false => format!("above the {POINTS_CEILING} any sweep may have, whatever --max-points; shrink an axis"),
            };
            return Err((
                "axes".into(),
                format!("{} make {count} points, {remedy}", sizes.join(" x ")),
            ));
        }
        Ok(axes)
    }

    /// Every point of the product, checked (with a device, against its limits), each
    /// input read from `config_dir` once.
    fn points(
        &self,
        axes: &[Axis],
        config_dir: &Path,
        device: Option<&DeviceInfo>,
        allow_long: bool,
    ) -> Result<Vec<Point>, Refusal> {
        let mut points = Vec::new();
        let mut inputs = InputLoader::default();
        for (index, combination) in product(axes).into_iter().enumerate() {
            let mut table = self.fixed.clone();
            let mut labels = Vec::new();
            for (&value_index, (name, values)) in combination.iter().zip(axes) {
                let value = &values[value_index];
                table.insert(name.clone(), value.clone());
                labels.push((name.clone(), value_label(value)));
            }
            // Where the point's `key` is set: its axis value, else the fixed table.
            let config_key = |key: &str| match labels.iter().find(|(name, _)| name == key) {
                Some((name, value)) => format!("axes.{name} = {value}"),
                None => format!("fixed.{key}"),
            };
            let settings = settings_from(&table).map_err(|e| ("axes".into(), e.to_string()))?;
            let input = inputs
                .point_input(&table, config_dir)
                .map_err(|(key, reason): KeyRefusal| (config_key(key), reason))?;
            let mut point = Point {
                index,
                unsupported: None,
                axes: labels.clone(),
                settings,
                input,
            };
            let (s, map) = (&point.settings, point.map());
            let keys: Vec<&String> = table.keys().collect();
            let checked = s
                .check_given(&keys, false)
                .and_then(|()| match &point.input {
                    None => s.check(device),
                    // A file's map rules, as `erode --input` checks them.
                    Some(_) => s.check_job(device).and_then(|()| s.check_map(map, device)),
                })
                .and_then(|()| s.check_run_length(map, allow_long));
            checked.map_err(|e| {
                let reason = match &point.input {
                    Some(input) => format!(
                        "{} (on input {:?}, a {}x{} map)",
                        e.reason, input.written, map.width, map.height
                    ),
                    None => e.reason,
                };
                (config_key(e.key), reason)
            })?;
            point.unsupported = device.and_then(|d| s.missing_feature(map, d));
            points.push(point);
        }
        Ok(points)
    }
}

/// The sections a sweep config's `--set` may write.
pub const SWEEP_SECTIONS: [&str; 3] = ["fixed", "axes", "measure"];

/// `--set`, for every command that loads a config: sets `section.key` (e.g.
/// `fixed.size`, `axes.workgroup`, `measure.max_reps`), one of `sections`, or a
/// top-level key of `top_keys` given alone, to a TOML value.
pub fn apply_override(
    table: &mut toml::Table,
    assignment: &str,
    sections: &[&str],
    top_keys: &[&str],
) -> Result<(), OverrideError> {
    let (path, value) = assignment
        .split_once('=')
        .ok_or(OverrideError::NoAssignment)?;
    let path = path.trim();
    let parsed: toml::Table =
        toml::from_str(&format!("v = {}", value.trim())).map_err(|e| OverrideError::NotToml {
            value: value.to_string(),
            why: e.message().to_string(),
        })?;
    let value = parsed.get("v").cloned().ok_or(OverrideError::NoValue)?;
    if top_keys.contains(&path) {
        table.insert(path.to_string(), value);
        return Ok(());
    }
    let mut allowed: Vec<String> = sections.iter().map(|s| format!("{s}.KEY")).collect();
    allowed.extend(top_keys.iter().map(|k| k.to_string()));
    let allowed = allowed.join(", ");
    let (section, key) = path
        .split_once('.')
        .ok_or_else(|| OverrideError::NoSection {
            allowed: allowed.clone(),
        })?;
    if !sections.contains(&section) {
        return Err(OverrideError::UnknownSection {
            section: section.to_string(),
            allowed,
        });
    }
    let section = table
        .entry(section)
        .or_insert_with(|| toml::Value::Table(toml::Table::new()));
    match section {
        toml::Value::Table(t) => {
            t.insert(key.to_string(), value);
            Ok(())
        }
        _ => Err(OverrideError::NotInTable {
            path: path.to_string(),
        }),
    }
}

/// Why a `--set` assignment sets nothing; `allowed` lists the keys it may name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OverrideError {
    #[error("expected section.key=value")]
    NoAssignment,
    #[error("{value:?} is not a TOML value: {why}")]
    NotToml { value: String, why: String },
    #[error("no value")]
    NoValue,
    #[error("the key must name its section: {allowed}")]
    NoSection { allowed: String },
    #[error("unknown section {section:?}; use {allowed}")]
    UnknownSection { section: String, allowed: String },
    #[error("{path} is not inside a table")]
    NotInTable { path: String },
}

/// The key a serde error names: "... in `measure.max_reps`" or "unknown field `x`".
fn key_named_in(reason: &str) -> Option<String> {
    let quoted = |after: &str| {
        let start = reason.rfind(after)? + after.len();
        let end = reason[start..].find('`')?;
        Some(reason[start..start + end].to_string())
    };
    quoted(" in `").or_else(|| quoted("unknown field `"))
}

/// The settings of a point's table, its input keys aside.
fn settings_from(table: &toml::Table) -> Result<RunSettings, TableError> {
    RunSettings::from_table(&without_input(table))
}

fn value_label(value: &toml::Value) -> String {
    match value {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Every combination of indices into the axes, first axis outermost.
fn product(axes: &[Axis]) -> Vec<Vec<usize>> {
    axes.iter().fold(vec![Vec::new()], |acc, (_, values)| {
        acc.into_iter()
            .flat_map(|prefix| {
                (0..values.len()).map(move |i| {
                    let mut next = prefix.clone();
                    next.push(i);
                    next
                })
            })
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::erosion::droplets::{AtomicMode, Passes};

    #[test]
    fn a_deeply_nested_value_is_refused_in_a_short_message() {
        let text = format!(
            "name = \"x\"\ndescription = \"d\"\n[fixed]\nsize = {}{}\n",
            "[".repeat(5000),
            "]".repeat(5000)
        );
        let Err(error) = parse(&text) else {
            panic!("accepted");
        };
        let message = error.to_string();
        assert!(
            message.len() < 600,
            "{} characters: {message}",
            message.len()
        );
        assert!(message.contains("line 4"), "{message}");
    }

    fn overriding(sets: &[String]) -> LoadOptions {
        LoadOptions {
            overrides: sets.to_vec(),
            ..LoadOptions::default()
        }
    }

    #[test]
    fn a_repeated_axis_value_and_a_product_past_the_cap_are_refused_naming_the_axes() {
        let text = "name = \"x\"\ndescription = \"d\"\n[axes]\nworkgroup = [32, 64, 32]\n";
        let error = parse(text).unwrap_err().to_string();
        assert!(
            error.contains("axes.workgroup[2]: repeats axes.workgroup[0] = 32"),
            "{error}"
        );

        let many = |n: u32| {
            (1..=n)
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let text = format!(
            "name = \"x\"\ndescription = \"d\"\n[axes]\nseed = [{}]\ndroplet_seed = [{}]\nlifetime = [{}]\nbatch = [{}]\n",
            many(300),
            many(300),
            many(300),
            many(300)
        );
        let error = parse(&text).unwrap_err().to_string();
        assert!(
            error.contains("seed (300) x droplet_seed (300) x lifetime (300) x batch (300) make 8100000000 points, above the cap of 10000")
                && error.contains("--max-points"),
            "{error}"
        );
        let lifted = LoadOptions {
            max_points: 90_000,
            ..LoadOptions::default()
        };
        let unbounded = LoadOptions {
            max_points: usize::MAX,
            ..LoadOptions::default()
        };
        // 8.1e9 points under a cap of 2^64 once aborted on allocation.
        let error = Experiment::parse_with(Path::new("x.toml"), &text, &unbounded, None)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("make 8100000000 points, above the 1000000 any sweep may have"),
            "{error}"
        );
        let text = text
            .replace("lifetime = [", "lifetime = [1]\n#")
            .replace("batch = [", "batch = [1]\n#");
        let fine = Experiment::parse_with(Path::new("x.toml"), &text, &lifted, None).unwrap();
        assert_eq!(fine.points.len(), 90_000);
    }

    fn parse(text: &str) -> Result<Experiment, ConfigError> {
        Experiment::parse(Path::new("experiments/test.toml"), text, None)
    }

    #[test]
    fn the_product_has_every_point_in_a_stable_order() {
        let e = parse(
            r#"
            name = "t"
            description = "d"
            [fixed]
            size = 64
            [axes]
            workgroup = [32, 64, 128]
            droplets = [1000, 2000]
            "#,
        )
        .unwrap();
        let labels: Vec<String> = e
            .points
            .iter()
            .map(|p| {
                p.axes
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join(",")
            })
            .collect();
        assert_eq!(
            labels,
            [
                "workgroup=32,droplets=1000",
                "workgroup=32,droplets=2000",
                "workgroup=64,droplets=1000",
                "workgroup=64,droplets=2000",
                "workgroup=128,droplets=1000",
                "workgroup=128,droplets=2000",
            ]
        );
        assert_eq!(e.points[3].settings.droplets.workgroup, 64);
        assert_eq!(e.points[3].settings.droplets.droplets, 2000);
        assert_eq!(e.points[3].settings.noise.size, 64);
        assert_eq!(
            e.points.iter().map(|p| p.index).collect::<Vec<_>>(),
            (0..6).collect::<Vec<_>>()
        );
    }

    #[test]
    fn overrides_replace_fixed_settings_and_axes() {
        let text =
            "name = \"o\"\ndescription = \"\"\n[fixed]\nsize = 64\n[axes]\nworkgroup = [32, 64]\n";
        let sets = [
            "fixed.size=128".to_string(),
            "axes.workgroup=[16, 32, 64]".to_string(),
        ];
        let e =
            Experiment::parse_with(Path::new("x.toml"), text, &overriding(&sets), None).unwrap();
        assert_eq!(e.points.len(), 3);
        assert!(e.points.iter().all(|p| p.settings.noise.size == 128));
        let bad = Experiment::parse_with(
            Path::new("x.toml"),
            text,
            &overriding(&["size=1".to_string()]),
            None,
        );
        assert!(bad.unwrap_err().to_string().contains("--set size=1"));
    }

    #[test]
    fn variant_keys_that_cannot_go_together_are_refused_by_name() {
        let refused = |fixed: &str| {
            let text = format!("name = \"v\"\ndescription = \"\"\n[fixed]\n{fixed}\n");
            parse(&text).unwrap_err().key
        };
        assert_eq!(
            refused("deterministic = \"on\"\natomics = \"racy\""),
            "fixed.deterministic"
        );
        assert_eq!(refused("batch = 100\nbatches = 4"), "fixed.batches");
        assert_eq!(refused("passes = 31"), "fixed.passes");
        assert_eq!(refused("variant = \"fast\"\npasses = 3"), "fixed.variant");
        assert_eq!(
            refused("variant = \"fast\"\natomics = \"float\""),
            "fixed.variant"
        );
        assert_eq!(refused("stagger = \"sometimes\""), "fixed.stagger");
    }

    #[test]
    fn another_strategys_key_is_refused_by_name() {
        let text = "name = \"v\"\ndescription = \"\"\n[fixed]\nalgorithm = \"pipes\"\nvariant = \"fast\"\n";
        let error = parse(text).unwrap_err();
        assert_eq!(error.key, "fixed.variant");
        assert!(error.reason.contains("droplets"), "{error}");
        let text = "name = \"v\"\ndescription = \"\"\n[fixed]\nalgorithm = \"thermal\"\n[axes]\npipes_steps = [1, 2]\n";
        assert_eq!(parse(text).unwrap_err().key, "axes.pipes_steps = 1");
    }

    #[test]
    fn switches_and_batches_set_the_job() {
        let e = parse(
            "name = \"s\"\ndescription = \"\"\n[fixed]\ndroplets = 1000\nbatches = 3\npasses = 5\nstagger = \"on\"\ndeterministic = true\n",
        )
        .unwrap();
        let s = &e.points[0].settings.droplets;
        assert_eq!(s.droplets_per_dispatch(1 << 20), 334);
        assert_eq!(s.atomic_mode(), AtomicMode::Deterministic);
        assert_eq!(
            s.job(0).passes,
            Passes {
                count: 5,
                stagger: true
            }
        );
        assert_eq!(
            s.kernel_variant().module_name(),
            "droplet_passes_deterministic"
        );
    }

    #[test]
    fn a_key_both_fixed_and_an_axis_is_refused_naming_both() {
        let text = "name = \"c\"\ndescription = \"\"\n[axes]\nworkgroup = [32, 64]\n";
        let sets = ["fixed.workgroup=4096".to_string()];
        let e = Experiment::parse_with(Path::new("c.toml"), text, &overriding(&sets), None)
            .unwrap_err();
        assert_eq!(e.key, "axes.workgroup");
        assert!(e.reason.contains("fixed.workgroup = 4096"), "{}", e.reason);
    }

    #[test]
    fn the_description_does_not_change_the_config_hash() {
        let one = parse("name = \"h\"\ndescription = \"first\"\n").unwrap();
        let two = parse("name = \"h\"\ndescription = \"second\"\n").unwrap();
        let other = parse("name = \"h\"\ndescription = \"\"\n[fixed]\nsize = 64\n").unwrap();
        assert_eq!(one.config_hash(), two.config_hash());
        assert_ne!(one.config_hash(), other.config_hash());
    }

    #[test]
    fn no_axes_is_one_point() {
        let e = parse("name = \"one\"\ndescription = \"\"\n").unwrap();
        assert_eq!(e.points.len(), 1);
        assert!(e.points[0].axes.is_empty());
    }

    /// A config in tests/, beside tests/data's Jacksboro DEM (403 x 344, untagged).
    fn on_the_dem(text: &str) -> Result<Experiment, ConfigError> {
        let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/dem.toml");
        let text = format!("name = \"dem\"\ndescription = \"\"\n{text}");
        Experiment::parse(&file, &text, None)
    }

    const DEM: &str = "input = \"data/jacksboro_fault_dem.tif\"\ncell_size = [74.5, 92.6]\n";

    #[test]
    fn points_on_an_input_share_one_read_of_it_and_take_its_map() {
        let e = on_the_dem(&format!("[fixed]\n{DEM}[axes]\nworkgroup = [32, 64]\n")).unwrap();
        let inputs: Vec<&Arc<PointInput>> =
            e.points.iter().map(|p| p.input.as_ref().unwrap()).collect();
        assert!(Arc::ptr_eq(inputs[0], inputs[1]), "read once");
        let map = e.points[0].map();
        assert_eq!((map.width, map.height), (403, 344));
        assert_eq!(inputs[0].written, "data/jacksboro_fault_dem.tif");
        assert_eq!(
            e.config.input_hashes,
            BTreeMap::from([(inputs[0].written.clone(), inputs[0].hash.clone())])
        );
        // Kernel heights: metres over the x cell size.
        let scaled = on_the_dem(&format!("[fixed]\n{DEM}vertical_scale = 2\n")).unwrap();
        let (one, two) = (inputs[0].map, scaled.points[0].map());
        assert!(
            (two.highest / one.highest - 2.0).abs() < 1e-5,
            "{one:?} {two:?}"
        );
    }

    #[test]
    fn the_config_hash_follows_the_input_keys_and_the_files_content() {
        let hash = |text: &str| on_the_dem(text).unwrap().config_hash();
        let base = hash(&format!("[fixed]\n{DEM}"));
        assert_ne!(base, hash(&format!("[fixed]\n{DEM}vertical_scale = 2\n")));
        assert_ne!(
            base,
            hash("[fixed]\ninput = \"data/jacksboro_fault_dem.tif\"\nassume_cell_size = 74.5\n")
        );
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let dem = dir.join("dem.tif");
        let original =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/jacksboro_fault_dem.tif");
        let mut bytes = std::fs::read(original).unwrap();
        let hash_of_copy = |bytes: &[u8]| {
            std::fs::write(&dem, bytes).unwrap();
            let text = "name = \"dem\"\ndescription = \"\"\n[fixed]\ninput = \"dem.tif\"\ncell_size = [74.5, 92.6]\n";
            Experiment::parse(&dir.join("dem.toml"), text, None).unwrap()
        };
        let copy = hash_of_copy(&bytes);
        assert_eq!(
            copy.config.input_hashes["dem.tif"],
            on_the_dem(&format!("[fixed]\n{DEM}"))
                .unwrap()
                .config
                .input_hashes["data/jacksboro_fault_dem.tif"],
            "the same content hashes the same wherever it lies"
        );
        // The first elevation (uncompressed float32 from byte 272), one metre higher.
        let first = f32::from_le_bytes(bytes[272..276].try_into().unwrap());
        bytes[272..276].copy_from_slice(&(first + 1.0).to_le_bytes());
        let edited = hash_of_copy(&bytes);
        assert_ne!(copy.config_hash(), edited.config_hash());
    }

    #[test]
    fn input_keys_are_refused_by_key_and_file_before_any_gpu_work() {
        let refused = |text: &str| {
            let e = on_the_dem(text).unwrap_err();
            (e.key, e.reason)
        };
        let (key, reason) = refused("[fixed]\ninput = \"data/nope.tif\"\n");
        assert_eq!(key, "fixed.input");
        assert!(
            reason.contains("nope.tif") && reason.contains("cannot read"),
            "{reason}"
        );
        let (key, reason) = refused("[fixed]\ninput = \"data/jacksboro_fault_dem.tif\"\n");
        assert_eq!(key, "fixed.input");
        for needle in [
            "jacksboro_fault_dem.tif",
            "states no cell size",
            "cell_size = [x, y]",
            "assume_cell_size",
        ] {
            assert!(reason.contains(needle), "{needle}: {reason}");
        }
        let (key, reason) = refused(&format!("[fixed]\n{DEM}[axes]\nsize = [64, 128]\n"));
        assert_eq!(key, "axes.size = 64");
        assert!(reason.contains("data/jacksboro_fault_dem.tif"), "{reason}");
        let (key, reason) = refused(&format!("[fixed]\n{DEM}seed = 3\n"));
        assert_eq!(key, "fixed.seed");
        assert!(reason.contains("droplet_seed"), "{reason}");
        assert_eq!(
            refused("[fixed]\ncell_size = [5, 5]\n").0,
            "fixed.cell_size"
        );
        assert_eq!(
            refused("[axes]\nvertical_scale = [1, 2]\n").0,
            "axes.vertical_scale = 1"
        );
        assert_eq!(
            refused(&format!("[fixed]\n{DEM}vertical_scale = 0\n")).0,
            "fixed.vertical_scale"
        );
        assert_eq!(
            refused(&format!("[fixed]\n{DEM}assume_cell_size = 30\n")).0,
            "fixed.assume_cell_size"
        );
        assert_eq!(refused("[fixed]\ninput = 3\n").0, "fixed.input");
        let (key, reason) = refused(
            "[fixed]\ncell_size = [74.5, 92.6]\n[axes]\ninput = [\"data/jacksboro_fault_dem.tif\", \"data/nope.tif\"]\n",
        );
        assert_eq!(key, "axes.input = data/nope.tif");
        assert!(reason.contains("nope.tif"), "{reason}");
        // 4 colours of 512-cell tiles need 1024 x 1024 cells; the file has 403 x 344.
        let (key, reason) = refused(&format!(
            "[fixed]\n{DEM}spawn = \"tiled\"\ntile = 512\nphases = 4\n"
        ));
        assert_eq!(key, "fixed.tile");
        assert!(
            reason.contains("on input \"data/jacksboro_fault_dem.tif\", a 403x344 map"),
            "{reason}"
        );
        // The hashes are found, never written.
        let unknown = refused("input_hashes = 1\n");
        assert!(
            unknown.1.contains("unknown field `input_hashes`"),
            "{unknown:?}"
        );
    }

    #[test]
    fn every_shipped_experiment_parses_and_checks() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments");
        let mut count = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "toml") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            // An equivalence config: its layer sits above this one, and docs/experiments.md
            // (tests/docs.rs) loads it.
            if toml::from_str::<toml::Table>(&text).is_ok_and(|t| t.contains_key("equivalence")) {
                continue;
            }
            // A comparison by dose: its study sits above this layer and checks its own.
            if text.contains(DOSE_AXIS_KEY) {
                continue;
            }
            let e = Experiment::load(&path, &LoadOptions::default(), None)
                .unwrap_or_else(|e| panic!("{e}"));
            assert!(!e.points.is_empty(), "{}", path.display());
            count += 1;
        }
        assert!(count >= 17, "found {count} configs");
    }
}
