//! Experiment configs (`experiments/*.toml`): fixed settings, axes whose cartesian
//! product is the sweep, and how to measure each point. Every point is built and
//! checked before any GPU work.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::erosion::{
    AtomicMode, DropletJob, DropletShader, KernelParams, KernelVariant, Lever, Passes, Spawn,
    SpawnMode, SpirvBuild, TileOrder,
};
use crate::gpu::DeviceInfo;
use crate::terrain::{TerrainSpec, DEFAULT_RELIEF_PER_SIDE};

/// A config problem: the file, the key and the reason.
#[derive(Debug, Error)]
#[error("{}: {key}: {reason}", file.display())]
pub struct ConfigError {
    pub file: PathBuf,
    pub key: String,
    pub reason: String,
}

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
}

/// Everything one point runs with. Every key may be fixed or an axis.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PointSettings {
    /// Side of the square erosion-noise map, in cells.
    #[serde(default = "defaults::size")]
    pub size: u32,
    #[serde(default = "defaults::seed")]
    pub seed: u32,
    /// Relief in cells; default 2 x size.
    #[serde(default)]
    pub relief: Option<f32>,
    #[serde(default = "defaults::droplets")]
    pub droplets: u32,
    #[serde(default = "defaults::seed")]
    pub droplet_seed: u32,
    #[serde(default = "defaults::lifetime")]
    pub lifetime: u32,
    #[serde(default = "defaults::inertia")]
    pub inertia: f32,
    #[serde(default = "defaults::capacity")]
    pub capacity: f32,
    #[serde(default = "defaults::erosion")]
    pub erosion: f32,
    #[serde(default = "defaults::deposition")]
    pub deposition: f32,
    #[serde(default = "defaults::evaporation")]
    pub evaporation: f32,
    #[serde(default = "defaults::scale")]
    pub scale: f32,
    #[serde(default = "defaults::workgroup")]
    pub workgroup: u32,
    /// Droplets per dispatch; default one per 64 cells.
    #[serde(default)]
    pub batch: Option<u32>,
    /// K: run the droplets in K dispatches of equal size (instead of `batch`).
    #[serde(default)]
    pub batches: Option<u32>,
    /// The kernel: "paper" (glsl/droplet.comp, or droplet_passes.comp for passes) or
    /// "fast" (glsl/droplet_fast.comp).
    #[serde(default)]
    pub variant: KernelChoice,
    /// "verbatim" SPIR-V (the default) or "optimised" by shaderc.
    #[serde(default)]
    pub spirv: SpirvBuild,
    /// KiB of shared memory each workgroup reserves unused, to lower the occupancy.
    #[serde(default)]
    pub shared_kib: u32,
    /// The L1 study's lever: "none" (as built), "no-shared", "readonly", "texel",
    /// "image-atomics", "image", "vulkan-memory-model" or "robustness-off".
    #[serde(default)]
    pub lever: Lever,
    /// How modifyHeight adds: "int" (the paper's), "float" or "racy".
    #[serde(default)]
    pub atomics: AtomicMode,
    /// "global" (the paper's) or "tiled".
    #[serde(default)]
    pub spawn: SpawnMode,
    /// Tile side in cells, for tiled spawning.
    #[serde(default = "defaults::tile")]
    pub tile: u32,
    /// "linear", "morton" or "scattered": which tile consecutive workgroups get.
    #[serde(default)]
    pub tile_order: TileOrder,
    /// 1, 4 or 9 checkerboard colours, each its own dispatch (tiled spawning).
    #[serde(default = "defaults::phases")]
    pub phases: u32,
    /// P: dispatch passes each droplet's life is split over (state kept in a buffer).
    #[serde(default = "defaults::passes")]
    pub passes: u32,
    /// on: droplet i starts in pass i mod P.
    #[serde(default)]
    pub stagger: Switch,
    /// on: droplets read frozen heights and add into a delta buffer applied after each
    /// dispatch (int atomics only).
    #[serde(default)]
    pub deterministic: Switch,
}

/// The `variant` key.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum KernelChoice {
    /// The paper's kernel.
    #[default]
    Paper,
    /// vkerode's fast variant of it.
    Fast,
    /// The fast variant with only its zero-skipping.
    FastSkipOnly,
    /// The fast variant with only its corner reuse.
    FastReuseOnly,
    /// The fast variant reading each row's two corners with one aligned 16-byte load.
    FastQuads,
}

impl KernelChoice {
    /// The variant a job needs with these atomics, SPIR-V build and lever.
    pub fn variant(
        self,
        job: &DropletJob,
        atomics: AtomicMode,
        spirv: SpirvBuild,
        lever: Lever,
    ) -> KernelVariant {
        let mut variant = KernelVariant::for_job(job, atomics);
        variant.spirv = spirv;
        variant.lever = lever;
        match self {
            KernelChoice::Paper => {}
            KernelChoice::Fast => variant.shader = DropletShader::Fast,
            KernelChoice::FastSkipOnly => variant.shader = DropletShader::FastSkipOnly,
            KernelChoice::FastReuseOnly => variant.shader = DropletShader::FastReuseOnly,
            KernelChoice::FastQuads => variant.shader = DropletShader::FastQuads,
        }
        variant
    }
}

/// A config switch: `on` / `off`, or `true` / `false`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Switch(pub bool);

impl Serialize for Switch {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(if self.0 { "on" } else { "off" })
    }
}

impl<'de> Deserialize<'de> for Switch {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = Switch;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("\"on\", \"off\", true or false")
            }
            fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Switch, E> {
                Ok(Switch(v))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Switch, E> {
                match v {
                    "on" => Ok(Switch(true)),
                    "off" => Ok(Switch(false)),
                    _ => Err(E::invalid_value(serde::de::Unexpected::Str(v), &self)),
                }
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

mod defaults {
    use crate::erosion::KernelParams;
    pub fn size() -> u32 {
        1024
    }
    pub fn seed() -> u32 {
        1
    }
    pub fn droplets() -> u32 {
        1_000_000
    }
    pub fn lifetime() -> u32 {
        KernelParams::default().lifetime
    }
    pub fn inertia() -> f32 {
        KernelParams::default().inertia
    }
    pub fn capacity() -> f32 {
        KernelParams::default().capacity
    }
    pub fn erosion() -> f32 {
        KernelParams::default().erosion
    }
    pub fn deposition() -> f32 {
        KernelParams::default().deposition
    }
    pub fn evaporation() -> f32 {
        KernelParams::default().evaporation
    }
    pub fn scale() -> f32 {
        KernelParams::default().fixed_point_scale
    }
    pub fn workgroup() -> u32 {
        64
    }
    pub fn tile() -> u32 {
        32
    }
    pub fn phases() -> u32 {
        1
    }
    pub fn passes() -> u32 {
        1
    }
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
}

impl Default for MeasureSettings {
    fn default() -> Self {
        toml::from_str("").expect("defaults deserialize")
    }
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
    pub settings: PointSettings,
}

impl PointSettings {
    pub fn terrain(&self) -> TerrainSpec {
        TerrainSpec {
            relief: self
                .relief
                .unwrap_or(DEFAULT_RELIEF_PER_SIDE * self.size as f32),
            ..TerrainSpec::square(self.size, self.seed)
        }
    }

    pub fn job(&self) -> DropletJob {
        DropletJob {
            droplets: self.droplets,
            seed: self.droplet_seed,
            params: KernelParams {
                inertia: self.inertia,
                capacity: self.capacity,
                erosion: self.erosion,
                deposition: self.deposition,
                evaporation: self.evaporation,
                lifetime: self.lifetime,
                fixed_point_scale: self.scale,
            },
            spawn: Spawn {
                mode: self.spawn,
                tile: self.tile,
                order: self.tile_order,
                phases: self.phases,
            },
            passes: Passes {
                count: self.passes,
                stagger: self.stagger.0,
            },
        }
    }

    /// The atomic mode the kernel runs: `deterministic = on` is int atomics into a
    /// delta buffer.
    pub fn atomic_mode(&self) -> AtomicMode {
        if self.deterministic.0 {
            AtomicMode::Deterministic
        } else {
            self.atomics
        }
    }

    /// Droplets per dispatch: `batch`, or the droplets over `batches`, or the default of
    /// one per 64 cells of a map of `cells`.
    pub fn droplets_per_dispatch(&self, cells: u64) -> u32 {
        match (self.batch, self.batches) {
            (Some(batch), _) => batch,
            (None, Some(k)) => self.droplets.div_ceil(k),
            (None, None) => crate::erosion::default_batch(cells),
        }
    }

    pub fn kernel_variant(&self) -> KernelVariant {
        KernelVariant {
            reserved_shared_bytes: self.shared_kib.saturating_mul(1024),
            ..self
                .variant
                .variant(&self.job(), self.atomic_mode(), self.spirv, self.lever)
        }
    }

    /// Checks the point against the algorithm's rules and, given one, the device's
    /// limits. Returns the offending key and the reason.
    fn check(&self, device: Option<&DeviceInfo>) -> Result<(), (&'static str, String)> {
        self.terrain()
            .validate()
            .map_err(|e| ("size", e.to_string()))?;
        self.job()
            .validate()
            .map_err(|e| (key_of(e.name), e.to_string()))?;
        let top = f64::from(self.terrain().relief) * f64::from(self.scale);
        if top >= crate::terrain::FIXED_POINT_LIMIT {
            return Err((
                "scale",
                format!(
                    "heights up to the relief {} times scale {} pass the fixed-point limit 2^30; lower the scale or the relief",
                    self.terrain().relief,
                    self.scale
                ),
            ));
        }
        if self.deterministic.0 && self.atomics != AtomicMode::Int {
            return Err((
                "deterministic",
                format!(
                    "needs atomics = \"int\", not {:?}: only integer sums are order-independent",
                    self.atomics.as_str()
                ),
            ));
        }
        if self.batches == Some(0) {
            return Err(("batches", "must be at least 1".into()));
        }
        if self.batch.is_some() && self.batches.is_some() {
            return Err((
                "batches",
                "set batch (droplets per dispatch) or batches (dispatches), not both".into(),
            ));
        }
        if self.batch == Some(0) {
            return Err(("batch", "must be at least 1".into()));
        }
        if let Some(reason) = self.kernel_variant().unsupported() {
            return Err(("variant", reason));
        }
        if self.variant != KernelChoice::Paper && self.job().passes.needs_state() {
            return Err((
                "variant",
                "the fast kernel runs one pass; passes and stagger need variant = \"paper\"".into(),
            ));
        }
        if self.workgroup == 0 {
            return Err(("workgroup", "must be at least 1".into()));
        }
        if let Some(device) = device {
            let limit = device.max_workgroup_x();
            if self.workgroup > limit {
                return Err((
                    "workgroup",
                    format!(
                        "{} is above this device's limit of {limit} ({})",
                        self.workgroup, device.name
                    ),
                ));
            }
            let shared = u64::from(self.shared_kib) * 1024;
            if shared > u64::from(device.max_shared_memory_bytes) {
                return Err((
                    "shared_kib",
                    format!(
                        "{} KiB is above this device's maxComputeSharedMemorySize of {} bytes",
                        self.shared_kib, device.max_shared_memory_bytes
                    ),
                ));
            }
            let bytes = u64::from(self.size).pow(2) * 4;
            if bytes > device.max_storage_buffer_range {
                return Err((
                    "size",
                    format!(
                        "a {0}x{0} map needs {bytes} bytes, above this device's maxStorageBufferRange of {1}",
                        self.size, device.max_storage_buffer_range
                    ),
                ));
            }
        }
        Ok(())
    }
}

impl PointSettings {
    /// What the device lacks to run this point, if anything: such points are skipped
    /// with a note, so that one sweep can run on devices with different features.
    fn missing_feature(&self, device: &DeviceInfo) -> Option<String> {
        let name = &device.name;
        if self.atomics == AtomicMode::Float && !device.float_atomic_add {
            return Some(format!("{name} has no float atomicAdd on storage buffers"));
        }
        if self.lever == Lever::VulkanMemoryModel && !device.vulkan_memory_model {
            return Some(format!(
                "{name} does not support the Vulkan memory model with device scope"
            ));
        }
        if self.lever == Lever::RobustnessOff && !device.pipeline_robustness {
            return Some(format!(
                "{name} does not offer VK_EXT_pipeline_robustness, which the robustness-off lever needs"
            ));
        }
        let cells = u64::from(self.size).pow(2);
        (self.lever == Lever::Texel && cells > u64::from(device.max_texel_buffer_elements)).then(
            || {
                format!(
                    "a texel view of a {0}x{0} map is past {name}'s maxTexelBufferElements of {1}",
                    self.size, device.max_texel_buffer_elements
                )
            },
        )
    }
}

/// The config key of a kernel parameter named in a ParamError.
fn key_of(param: &str) -> &'static str {
    match param {
        "inertia" => "inertia",
        "capacity" => "capacity",
        "erosion" => "erosion",
        "deposition" => "deposition",
        "evaporation" => "evaporation",
        "lifetime" => "lifetime",
        "fixed-point scale" => "scale",
        "phases" => "phases",
        "tile" => "tile",
        "passes" => "passes",
        _ => "droplets",
    }
}

/// A loaded config and its points, all checked.
#[derive(Clone, Debug)]
pub struct Experiment {
    pub file: PathBuf,
    pub config: ExperimentConfig,
    pub points: Vec<Point>,
}

impl Experiment {
    /// Reads and checks `file`, with `overrides` ("section.key=value", the value in
    /// TOML) applied; with a device, also against its limits.
    pub fn load(
        file: &Path,
        overrides: &[String],
        device: Option<&DeviceInfo>,
    ) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(file).map_err(|e| ConfigError {
            file: file.to_path_buf(),
            key: "(file)".into(),
            reason: format!("cannot read: {e}"),
        })?;
        Self::parse_with(file, &text, overrides, device)
    }

    pub fn parse(
        file: &Path,
        text: &str,
        device: Option<&DeviceInfo>,
    ) -> Result<Self, ConfigError> {
        Self::parse_with(file, text, &[], device)
    }

    fn parse_with(
        file: &Path,
        text: &str,
        overrides: &[String],
        device: Option<&DeviceInfo>,
    ) -> Result<Self, ConfigError> {
        let error = |key: &str, reason: String| ConfigError {
            file: file.to_path_buf(),
            key: key.to_string(),
            reason,
        };
        let toml_error = |e: toml::de::Error| {
            let reason = e.to_string().trim().replace('\n', " ");
            error(
                &key_named_in(&reason).unwrap_or_else(|| "(syntax)".into()),
                reason,
            )
        };
        let mut table: toml::Table = toml::from_str(text).map_err(toml_error)?;
        for assignment in overrides {
            apply_override(&mut table, assignment)
                .map_err(|reason| error(&format!("--set {assignment}"), reason))?;
        }
        let config =
            ExperimentConfig::deserialize(toml::Value::Table(table)).map_err(toml_error)?;
        if config.name.is_empty()
            || !config
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(error(
                "name",
                format!("{:?} must be letters, digits, '-' or '_'", config.name),
            ));
        }
        let m = &config.measure;
        if m.min_reps == 0 || m.max_reps < m.min_reps {
            return Err(error(
                "measure.max_reps",
                format!(
                    "need 1 <= min_reps <= max_reps, got {} and {}",
                    m.min_reps, m.max_reps
                ),
            ));
        }
        if !(m.target_rel_iqr.is_finite() && m.target_rel_iqr >= 0.0) {
            return Err(error(
                "measure.target_rel_iqr",
                "must be a finite number >= 0".into(),
            ));
        }
        if !(m.time_budget_s.is_finite() && m.time_budget_s > 0.0) {
            return Err(error(
                "measure.time_budget_s",
                "must be a positive number of seconds".into(),
            ));
        }

        // Fixed settings on their own must be valid, axes aside.
        settings_from(&config.fixed).map_err(|reason| {
            let key = key_named_in(&reason).map_or("fixed".into(), |k| format!("fixed.{k}"));
            error(&key, reason)
        })?;
        let mut axes: Vec<(String, Vec<toml::Value>)> = Vec::new();
        for (name, values) in &config.axes {
            let key = format!("axes.{name}");
            let toml::Value::Array(values) = values else {
                return Err(error(&key, "must be a list of values".into()));
            };
            if values.is_empty() {
                return Err(error(
                    &key,
                    "is empty; an axis needs at least one value".into(),
                ));
            }
            for (i, value) in values.iter().enumerate() {
                let mut table = config.fixed.clone();
                table.insert(name.clone(), value.clone());
                settings_from(&table).map_err(|reason| error(&format!("{key}[{i}]"), reason))?;
            }
            axes.push((name.clone(), values.clone()));
        }

        let mut points = Vec::new();
        for (index, combination) in product(&axes).into_iter().enumerate() {
            let mut table = config.fixed.clone();
            let mut labels = Vec::new();
            for (&value_index, (name, values)) in combination.iter().zip(&axes) {
                let value = &values[value_index];
                table.insert(name.clone(), value.clone());
                labels.push((name.clone(), value_label(value)));
            }
            let settings = settings_from(&table).map_err(|reason| error("axes", reason))?;
            settings.check(device).map_err(|(key, reason)| {
                let key = if config.axes.contains_key(key) {
                    let value = labels
                        .iter()
                        .find(|(n, _)| n == key)
                        .map(|(_, v)| v.clone())
                        .unwrap_or_default();
                    format!("axes.{key} = {value}")
                } else {
                    format!("fixed.{key}")
                };
                error(&key, reason)
            })?;
            let unsupported = device.and_then(|d| settings.missing_feature(d));
            points.push(Point {
                index,
                unsupported,
                axes: labels,
                settings,
            });
        }
        Ok(Self {
            file: file.to_path_buf(),
            config,
            points,
        })
    }

    pub fn axis_names(&self) -> Vec<String> {
        self.config.axes.keys().cloned().collect()
    }

    /// FNV-1a of the config as vkerode understood it: equal for equal experiments,
    /// whatever the file's layout or comments.
    pub fn config_hash(&self) -> String {
        let canonical = serde_json::to_string(&self.config).expect("config serializes");
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        for byte in canonical.bytes() {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
        format!("{hash:016x}")
    }
}

/// Sets `section.key` (e.g. `fixed.size`, `axes.workgroup`, `measure.max_reps`) to a
/// TOML value.
fn apply_override(table: &mut toml::Table, assignment: &str) -> Result<(), String> {
    let (path, value) = assignment
        .split_once('=')
        .ok_or("expected section.key=value")?;
    let (section, key) = path
        .trim()
        .split_once('.')
        .ok_or("the key must name its section: fixed.KEY, axes.KEY or measure.KEY")?;
    if !matches!(section, "fixed" | "axes" | "measure") {
        return Err(format!(
            "unknown section {section:?}; use fixed, axes or measure"
        ));
    }
    let parsed: toml::Table = toml::from_str(&format!("v = {}", value.trim()))
        .map_err(|e| format!("{value:?} is not a TOML value: {}", e.message()))?;
    let value = parsed.get("v").cloned().ok_or("no value")?;
    let section = table
        .entry(section)
        .or_insert_with(|| toml::Value::Table(toml::Table::new()));
    match section {
        toml::Value::Table(t) => {
            t.insert(key.to_string(), value);
            Ok(())
        }
        _ => Err(format!("{path} is not inside a table")),
    }
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

fn settings_from(table: &toml::Table) -> Result<PointSettings, String> {
    PointSettings::deserialize(toml::Value::Table(table.clone()))
        .map_err(|e| e.to_string().trim().replace('\n', " "))
}

fn value_label(value: &toml::Value) -> String {
    match value {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Every combination of indices into the axes, first axis outermost.
fn product(axes: &[(String, Vec<toml::Value>)]) -> Vec<Vec<usize>> {
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
        assert_eq!(e.points[3].settings.workgroup, 64);
        assert_eq!(e.points[3].settings.droplets, 2000);
        assert_eq!(e.points[3].settings.size, 64);
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
        let e = Experiment::parse_with(Path::new("x.toml"), text, &sets, None).unwrap();
        assert_eq!(e.points.len(), 3);
        assert!(e.points.iter().all(|p| p.settings.size == 128));
        let bad = Experiment::parse_with(Path::new("x.toml"), text, &["size=1".to_string()], None);
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
    fn switches_and_batches_set_the_job() {
        let e = parse(
            "name = \"s\"\ndescription = \"\"\n[fixed]\ndroplets = 1000\nbatches = 3\npasses = 5\nstagger = \"on\"\ndeterministic = true\n",
        )
        .unwrap();
        let s = &e.points[0].settings;
        assert_eq!(s.droplets_per_dispatch(1 << 20), 334);
        assert_eq!(s.atomic_mode(), AtomicMode::Deterministic);
        assert_eq!(
            s.job().passes,
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
    fn no_axes_is_one_point() {
        let e = parse("name = \"one\"\ndescription = \"\"\n").unwrap();
        assert_eq!(e.points.len(), 1);
        assert!(e.points[0].axes.is_empty());
    }
}
