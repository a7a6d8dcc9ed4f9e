//! What an equivalence run is made of, checked before any device is opened: its
//! options (seeds, variants, permutations), the speed variants as settings over a
//! configuration, and the configurations themselves: one from `erode`'s flags, or the
//! product of a config's axes (`experiments/equivalence*.toml`).

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::erosion::{RunSettings, TableError};
use crate::experiment::results::config_hash_of;
use crate::experiment::sweep::config::apply_override;
use crate::experiment::ConfigError;

/// The table that marks an equivalence config (`[equivalence]`), not a sweep.
pub const EQUIVALENCE_TABLE: &str = "equivalence";

/// The settings a speed variant may set: how the kernel runs, never what the
/// configuration is (workgroup, batching, spawning) nor the job.
pub const SPEED_KEYS: &[&str] = &["variant", "lever", "spirv", "atomics", "shared_kib"];

/// The settings a bare name in a variant may be a value of, tried in this order:
/// `fast` is a kernel, `image` a lever.
pub const NAMED_KEYS: &[&str] = &["variant", "lever"];

/// The setting each run's droplet seed goes into.
pub const SEED_KEY: &str = "droplet_seed";

/// The label of the paper's kernel, reference (a).
pub const PAPER: &str = "paper";

/// The variants run by default: the headline table's kernels.
pub const DEFAULT_VARIANTS: &[&str] = &["paper", "paper+image", "fast", "fast+image"];

fn default_variants() -> Vec<String> {
    DEFAULT_VARIANTS.iter().map(|v| v.to_string()).collect()
}

/// How an equivalence run samples and tests: `equivalence` flags and the keys of an
/// equivalence config's `[equivalence]` table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, clap::Args, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct EquivalenceOptions {
    /// Speed variants, comma-separated; each is names joined by `+`, a kernel (`fast`),
    /// a lever (`image`) or KEY=VALUE of a speed setting (`spirv=optimised`): `paper`,
    /// `fast+image`, `fast+spirv=optimised`. Each runs on its own, `paper` too (its
    /// verdict against reference (a) is the reruns' own spread).
    #[arg(long, value_delimiter = ',', default_values_t = default_variants())]
    pub variants: Vec<String>,
    /// Droplet seeds each variant and the paper's kernel (reference a) run.
    #[arg(long, default_value_t = Self::DEFAULT.seeds)]
    pub seeds: u32,
    /// Droplet seeds of the sequential CPU reference (reference b), the first of the
    /// same seeds: it is slow, and cached per job in the output folder.
    #[arg(long, default_value_t = Self::DEFAULT.reference_seeds)]
    pub reference_seeds: u32,
    /// The first droplet seed; runs take seeds first_seed, first_seed + 1, ...
    #[arg(long, default_value_t = Self::DEFAULT.first_seed)]
    pub first_seed: u32,
    /// Random relabellings of the runs in the permutation test on the smoothed change
    /// maps (at least 19, for a p of 0.05 to be reachable).
    #[arg(long, default_value_t = Self::DEFAULT.permutations)]
    pub permutations: u32,
}

/// The most droplet seeds a variant runs: each is a whole run, so more is a typo.
pub const MAX_SEEDS: u32 = 100_000;

impl Default for EquivalenceOptions {
    fn default() -> Self {
        Self {
            variants: default_variants(),
            ..Self::DEFAULT
        }
    }
}

impl EquivalenceOptions {
    /// The defaults, but for the variants ([`DEFAULT_VARIANTS`]).
    pub const DEFAULT: EquivalenceOptions = EquivalenceOptions {
        variants: Vec::new(),
        seeds: 20,
        reference_seeds: 5,
        first_seed: 1,
        permutations: 500,
    };

    /// The unit of each key, for the config reference.
    pub const UNITS: &'static [(&'static str, &'static str)] = &[
        ("variants", "list"),
        ("seeds", "seeds"),
        ("reference_seeds", "seeds"),
        ("first_seed", "seed"),
        ("permutations", "count"),
    ];

    /// Every rule on the options, naming the key.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        if self.variants.is_empty() {
            return Err(("variants", "name at least one speed variant".into()));
        }
        if self.seeds < 2 {
            return Err((
                "seeds",
                format!("{} is too few: the tests need at least 2", self.seeds),
            ));
        }
        if self.seeds > MAX_SEEDS {
            return Err((
                "seeds",
                format!(
                    "{} is more than the {MAX_SEEDS} runs a variant may take",
                    self.seeds
                ),
            ));
        }
        if self.reference_seeds < 2 || self.reference_seeds > self.seeds {
            return Err((
                "reference_seeds",
                format!(
                    "{} must be at least 2 (the tests need 2 pairs) and at most seeds ({})",
                    self.reference_seeds, self.seeds
                ),
            ));
        }
        if self.first_seed.checked_add(self.seeds - 1).is_none() {
            // The one that is out of range from the other's default is to blame.
            let too_many = Self::DEFAULT
                .first_seed
                .checked_add(self.seeds - 1)
                .is_none();
            return Err((
                if too_many { "seeds" } else { "first_seed" },
                format!(
                    "{} + {} seeds passes the largest seed",
                    self.first_seed, self.seeds
                ),
            ));
        }
        if self.permutations < 19 {
            return Err((
                "permutations",
                format!(
                    "{} is too few: below 19 the map test's p never reaches 0.05",
                    self.permutations
                ),
            ));
        }
        Ok(())
    }

    /// The droplet seeds of the GPU runs.
    pub fn seeds(&self) -> impl Iterator<Item = u32> {
        // Inclusive: the last seed may be the largest (checked to fit).
        self.first_seed..=self.first_seed + (self.seeds - 1)
    }

    /// The droplet seeds of the sequential reference.
    pub fn reference_seeds(&self) -> impl Iterator<Item = u32> {
        self.first_seed..=self.first_seed + (self.reference_seeds - 1)
    }
}

/// One speed variant: its label and the settings it sets over a configuration.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Variant {
    pub label: String,
    pub settings: toml::Table,
}

/// A setting's value as written: TOML where it parses (`8`, `true`), text otherwise.
fn value_of(text: &str) -> toml::Value {
    toml::from_str::<toml::Table>(&format!("v = {text}"))
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(text.to_string()))
}

/// `settings` as a table of keys, without the unset ones.
pub fn table_of(settings: &RunSettings) -> toml::Table {
    let value = serde_json::to_value(settings).expect("settings serialize");
    let mut table = toml::Table::new();
    if let serde_json::Value::Object(map) = value {
        for (key, v) in map {
            let v = match v {
                serde_json::Value::Null => continue,
                serde_json::Value::Bool(b) => toml::Value::Boolean(b),
                serde_json::Value::String(s) => toml::Value::String(s),
                serde_json::Value::Number(n) => match n.as_i64() {
                    Some(i) => toml::Value::Integer(i),
                    None => toml::Value::Float(n.as_f64().unwrap_or(f64::NAN)),
                },
                other => toml::Value::String(other.to_string()),
            };
            table.insert(key, v);
        }
    }
    table
}

/// `base` with `table`'s keys set over it.
pub fn with(base: &RunSettings, table: &toml::Table) -> Result<RunSettings, TableError> {
    let mut all = table_of(base);
    all.extend(table.clone());
    RunSettings::from_table(&all)
}

impl Variant {
    /// Reads `fast+image`, `paper`, `fast+spirv=optimised`: errors name the part.
    pub fn parse(spec: &str) -> Result<Self, VariantError> {
        let refused = |problem| VariantError {
            spec: spec.to_string(),
            problem,
        };
        let parts: Vec<&str> = spec.split('+').map(str::trim).collect();
        if spec.trim().is_empty() || parts.iter().any(|p| p.is_empty()) {
            return Err(refused(VariantProblem::EmptyName));
        }
        let mut settings = toml::Table::new();
        for part in parts {
            let (key, value) = match part.split_once('=') {
                Some((key, value)) => {
                    let key = key.trim();
                    if !SPEED_KEYS.contains(&key) {
                        return Err(refused(VariantProblem::NotSpeedSetting(key.to_string())));
                    }
                    (key.to_string(), value_of(value.trim()))
                }
                None => {
                    let value = toml::Value::String(part.to_string());
                    let key = NAMED_KEYS.iter().find(|&&key| {
                        let mut one = toml::Table::new();
                        one.insert(key.to_string(), value.clone());
                        RunSettings::from_table(&one).is_ok()
                    });
                    match key {
                        Some(key) => (key.to_string(), value),
                        None => return Err(refused(VariantProblem::UnknownName(part.to_string()))),
                    }
                }
            };
            if settings.contains_key(&key) {
                return Err(refused(VariantProblem::Twice(key)));
            }
            let mut one = toml::Table::new();
            one.insert(key.clone(), value.clone());
            if let Err(e) = RunSettings::from_table(&one) {
                return Err(refused(VariantProblem::Value {
                    key,
                    error: Box::new(e),
                }));
            }
            settings.insert(key, value);
        }
        Ok(Self {
            label: spec.trim().to_string(),
            settings,
        })
    }

    /// The paper's kernel: every speed setting at its default.
    pub fn paper() -> Self {
        let defaults = table_of(&RunSettings::DEFAULT);
        Self {
            label: PAPER.into(),
            settings: SPEED_KEYS
                .iter()
                .filter_map(|&k| Some((k.to_string(), defaults.get(k)?.clone())))
                .collect(),
        }
    }

    /// Its settings over `base`, with every speed setting it does not name at the
    /// paper's (default) value.
    pub fn over(&self, base: &RunSettings) -> Result<RunSettings, TableError> {
        let mut table = Self::paper().settings;
        table.extend(self.settings.clone());
        with(base, &table)
    }
}

/// A variant's name (`fast+image`) that names no variant: the name, and what is wrong
/// with it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{spec:?}: {problem}")]
pub struct VariantError {
    pub spec: String,
    pub problem: VariantProblem,
}

/// What is wrong with a variant's name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum VariantProblem {
    #[error("an empty name")]
    EmptyName,
    #[error("{} is not a speed setting; a variant sets only {}", .0, SPEED_KEYS.join(", "))]
    NotSpeedSetting(String),
    #[error("{:?} is no {}; see `vkerode erode --help`", .0, NAMED_KEYS.join(" or "))]
    UnknownName(String),
    #[error("sets {0} twice")]
    Twice(String),
    #[error("{key}: {error}")]
    Value { key: String, error: Box<TableError> },
}

/// One configuration: settings every group of it shares, and what tells it apart.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Configuration {
    /// `workgroup=8 batches=1`: its axes' values, or the settings flags given.
    pub label: String,
    #[serde(skip)]
    pub settings: RunSettings,
}

/// A checked equivalence run.
#[derive(Clone, Debug)]
pub struct Plan {
    pub name: String,
    pub description: String,
    pub options: EquivalenceOptions,
    pub variants: Vec<Variant>,
    pub configurations: Vec<Configuration>,
    /// FNV-1a of the plan as understood (description aside): equal for equal runs.
    pub config_hash: String,
    pub allow_long: bool,
}

/// A plan's problem: the key and the reason.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{key}: {reason}")]
pub struct PlanError {
    pub key: String,
    pub reason: String,
}

impl PlanError {
    fn new(key: impl Into<String>, reason: impl Into<String>) -> Self {
        Self {
            key: key.into(),
            reason: reason.into(),
        }
    }
}

/// The keys of a configuration no equivalence run may set: the speed settings (the
/// variants') and the seed (each run's).
fn check_base_keys<'k>(keys: impl IntoIterator<Item = &'k str>) -> Result<(), PlanError> {
    for key in keys {
        if SPEED_KEYS.contains(&key) {
            return Err(PlanError::new(
                key,
                "a speed setting: name it in a variant (variants = [\"fast+image\"]), not in the configuration",
            ));
        }
        if key == SEED_KEY {
            return Err(PlanError::new(
                key,
                "each run's own: the seeds are first_seed, first_seed + 1, ... (seeds of them)",
            ));
        }
    }
    Ok(())
}

impl Plan {
    /// A plan of one configuration, `settings`, of which the keys `given` were set
    /// (they label it).
    pub fn of_settings(
        settings: RunSettings,
        given: &[String],
        options: EquivalenceOptions,
        allow_long: bool,
    ) -> Result<Self, PlanError> {
        check_base_keys(given.iter().map(String::as_str))?;
        let table = table_of(&settings);
        let label: Vec<String> = given
            .iter()
            .filter_map(|k| Some(format!("{k}={}", plain(table.get(k)?))))
            .collect();
        let label = match label.is_empty() {
            true => "defaults".to_string(),
            false => label.join(" "),
        };
        Self::new(
            "equivalence".into(),
            String::new(),
            options,
            vec![Configuration { label, settings }],
            allow_long,
        )
    }

    fn new(
        name: String,
        description: String,
        options: EquivalenceOptions,
        configurations: Vec<Configuration>,
        allow_long: bool,
    ) -> Result<Self, PlanError> {
        options
            .check()
            .map_err(|(key, reason)| PlanError::new(key, reason))?;
        let variants = options
            .variants
            .iter()
            .map(|v| Variant::parse(v).map_err(|e| PlanError::new("variants", e.to_string())))
            .collect::<Result<Vec<_>, _>>()?;
        for (i, v) in variants.iter().enumerate() {
            if variants[..i].iter().any(|w| w.label == v.label) {
                return Err(PlanError::new(
                    "variants",
                    format!("{:?} is named twice", v.label),
                ));
            }
        }
        let plan = Self {
            config_hash: String::new(),
            name,
            description,
            options,
            variants,
            configurations,
            allow_long,
        };
        plan.check()?;
        let hash = config_hash_of(&serde_json::json!({
            "name": plan.name,
            "options": plan.options,
            "configurations": plan.configurations.iter().map(|c| serde_json::json!({
                "label": c.label,
                "settings": c.settings,
            })).collect::<Vec<_>>(),
        }));
        Ok(Self {
            config_hash: hash,
            ..plan
        })
    }

    /// Every group's settings at one seed checked on their own and on the noise map:
    /// errors name the configuration, the variant and the key.
    fn check(&self) -> Result<(), PlanError> {
        let paper = Variant::paper();
        for configuration in &self.configurations {
            let base = &configuration.settings;
            // Only a strategy whose settings the variants' keys are has speed variants.
            if let Some(key) = SPEED_KEYS
                .iter()
                .find(|&&k| RunSettings::owner_of(k) != Some(base.algorithm))
            {
                return Err(PlanError::new(
                    "algorithm",
                    format!(
                        "{}: its speed settings are not {}'s ({key} is not its own)",
                        configuration.label,
                        base.algorithm.as_str()
                    ),
                ));
            }
            for variant in std::iter::once(&paper).chain(&self.variants) {
                let at = |key: &str, reason: String| {
                    PlanError::new(
                        key,
                        format!("{} ({}): {reason}", configuration.label, variant.label),
                    )
                };
                let settings = variant
                    .over(base)
                    .map_err(|e| at("variants", e.to_string()))?;
                let mut seeded = toml::Table::new();
                seeded.insert(SEED_KEY.into(), self.options.first_seed.into());
                let settings = with(&settings, &seeded).map_err(|e| at(SEED_KEY, e.to_string()))?;
                settings
                    .check(None)
                    .map_err(|e| at(e.key, e.reason.clone()))?;
                settings
                    .check_run_length(settings.noise_map(), self.allow_long)
                    .map_err(|e| at(e.key, e.reason.clone()))?;
            }
        }
        Ok(())
    }

    /// Reads and checks an equivalence config, after its `--set` `overrides`
    /// (`fixed.KEY`, `axes.KEY`, `equivalence.KEY`). `options_given` are option keys
    /// given as flags, whose values (from `flags`) replace the config's.
    pub fn load(
        path: &Path,
        overrides: &[String],
        flags: &EquivalenceOptions,
        options_given: &[String],
        allow_long: bool,
    ) -> Result<Self, ConfigError> {
        let error = |key: &str, reason: String| ConfigError {
            file: path.to_path_buf(),
            key: key.into(),
            reason,
        };
        let text = crate::read_input_text(path).map_err(|e| error("(file)", e.to_string()))?;
        let mut table: toml::Table =
            toml::from_str(&text).map_err(|e| error("(syntax)", e.message().into()))?;
        for assignment in overrides {
            apply_override(
                &mut table,
                assignment,
                &["fixed", "axes", "equivalence"],
                &[],
            )
            .map_err(|e| error(&format!("--set {assignment}"), e.to_string()))?;
        }
        let file = EquivalenceConfig::deserialize(toml::Value::Table(table))
            .map_err(|e| error("(syntax)", e.message().into()))?;
        let mut options = file.equivalence;
        let flag_values = serde_json::to_value(flags).expect("options serialize");
        let mut merged = serde_json::to_value(&options).expect("options serialize");
        for key in options_given {
            if let Some(v) = flag_values.get(key) {
                merged[key.as_str()] = v.clone();
            }
        }
        options =
            serde_json::from_value(merged).map_err(|e| error("equivalence", e.to_string()))?;
        check_base_keys(
            file.fixed
                .keys()
                .chain(file.axes.keys())
                .map(String::as_str),
        )
        .map_err(|e| error(&format!("fixed or axes: {}", e.key), e.reason))?;
        let mut points: Vec<(Vec<(String, toml::Value)>, toml::Table)> =
            vec![(Vec::new(), file.fixed.clone())];
        for (key, values) in &file.axes {
            if file.fixed.contains_key(key) {
                return Err(error(
                    &format!("axes.{key}"),
                    "is fixed too: a key is fixed or an axis, not both".into(),
                ));
            }
            let toml::Value::Array(values) = values else {
                return Err(error(
                    &format!("axes.{key}"),
                    "must be a list of values".into(),
                ));
            };
            if values.is_empty() {
                return Err(error(&format!("axes.{key}"), "is an empty list".into()));
            }
            if let Some(i) = (1..values.len()).find(|&i| values[..i].contains(&values[i])) {
                return Err(error(
                    &format!("axes.{key}[{i}]"),
                    format!(
                        "repeats {}: each value is its own configuration, so list it once",
                        values[i]
                    ),
                ));
            }
            points = points
                .into_iter()
                .flat_map(|(label, table)| {
                    values.iter().map(move |v| {
                        let mut label = label.clone();
                        label.push((key.clone(), v.clone()));
                        let mut table = table.clone();
                        table.insert(key.clone(), v.clone());
                        (label, table)
                    })
                })
                .collect();
        }
        let configurations = points
            .into_iter()
            .map(|(label, table)| {
                let label: Vec<String> = label
                    .iter()
                    .map(|(k, v)| format!("{k}={}", plain(v)))
                    .collect();
                let label = match label.is_empty() {
                    true => "fixed".to_string(),
                    false => label.join(" "),
                };
                let settings = RunSettings::from_table(&table)
                    .map_err(|e| error("fixed or axes", format!("{label}: {e}")))?;
                Ok(Configuration { label, settings })
            })
            .collect::<Result<Vec<_>, ConfigError>>()?;
        if !plain_name(&file.name) {
            return Err(error(
                "name",
                format!("{:?} must be letters, digits, '-' or '_'", file.name),
            ));
        }
        Self::new(
            file.name,
            file.description,
            options,
            configurations,
            allow_long,
        )
        .map_err(|e| {
            let key = match options_given.contains(&e.key) {
                true => format!("--{}", e.key.replace('_', "-")),
                false => e.key,
            };
            error(&key, e.reason)
        })
    }
}

/// An equivalence config, as written.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct EquivalenceConfig {
    name: String,
    description: String,
    #[serde(default)]
    equivalence: EquivalenceOptions,
    #[serde(default)]
    fixed: toml::Table,
    #[serde(default)]
    axes: toml::Table,
}

/// A value as a label shows it: text without quotes.
fn plain(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn plain_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

#[cfg(test)]
mod tests {
    use super::EquivalenceOptions;

    #[test]
    fn seeds_past_the_largest_are_blamed_on_the_key_that_put_them_there() {
        let with = |first_seed, seeds| EquivalenceOptions {
            first_seed,
            seeds,
            reference_seeds: 2,
            ..EquivalenceOptions::default()
        };
        assert_eq!(with(1, u32::MAX).check().unwrap_err().0, "seeds");
        assert_eq!(with(u32::MAX, 20).check().unwrap_err().0, "first_seed");
        // The last seed may be the largest.
        let last = with(u32::MAX - 2, 3);
        assert!(last.check().is_ok());
        assert_eq!(last.seeds().last(), Some(u32::MAX));
        assert_eq!(with(1, u32::MAX).check().unwrap_err().0, "seeds");
    }
}
