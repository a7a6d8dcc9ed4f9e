//! The droplet strategy's settings (erode flags and config keys) and their rules, on
//! their own, with the map and with the device: the rules live beside the kernel they
//! protect and are checked once, by [`super::Droplets`]'s `check`.

use serde::{Deserialize, Serialize};

use super::batches::default_batch;
use super::error::ParamError;
use super::params::{AtomicMode, DropletJob, KernelParams, Passes, Physics, Rounding};
use super::spawn::{Spawn, SpawnMode, TileOrder};
use super::variant::{CacheWindow, DropletShader, KernelVariant, Lever, SpirvBuild};
use crate::erosion::keys::{switch, SettingError};
use crate::gpu::DeviceInfo;
use crate::terrain::fits_fixed_point;
use crate::terrain::MapInfo;

/// The keys of the droplet settings that readers of results pick points by (a key is
/// its field's name in [`DropletSettings`], and its column in points.csv).
pub mod key {
    pub const DROPLET_SEED: &str = "droplet_seed";
    pub const WORKGROUP: &str = "workgroup";
    pub const ATOMICS: &str = "atomics";
    pub const SPAWN: &str = "spawn";
    pub const TILE: &str = "tile";
    pub const STAGGER: &str = "stagger";

    /// Every one of them.
    pub const ALL: [&str; 6] = [DROPLET_SEED, WORKGROUP, ATOMICS, SPAWN, TILE, STAGGER];
}

/// The droplet kernels' settings. Every field is an `erode` flag and a config key.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, clap::Args)]
#[serde(default, deny_unknown_fields)]
pub struct DropletSettings {
    /// Number of droplets.
    #[arg(long, default_value_t = Self::DEFAULT.droplets)]
    pub droplets: u32,
    /// Droplet spawn seed. Default: the terrain seed.
    #[arg(long)]
    pub droplet_seed: Option<u32>,
    /// MAX_LIFETIME: steps per droplet at most.
    #[arg(long, default_value_t = Self::DEFAULT.lifetime)]
    pub lifetime: u32,
    /// INERTIA: share of the previous direction kept each step.
    #[arg(long, default_value_t = Self::DEFAULT.inertia)]
    pub inertia: f32,
    /// CAPACITY_FACTOR: sediment capacity per unit of slope, speed and water.
    #[arg(long, default_value_t = Self::DEFAULT.capacity)]
    pub capacity: f32,
    /// EROSION_RATE: share of the capacity deficit eroded per step.
    #[arg(long, default_value_t = Self::DEFAULT.erosion)]
    pub erosion: f32,
    /// DEPOSITION_RATE: share of the excess sediment deposited per step.
    #[arg(long, default_value_t = Self::DEFAULT.deposition)]
    pub deposition: f32,
    /// EVAPORATION_RATE: share of the water lost per step.
    #[arg(long, default_value_t = Self::DEFAULT.evaporation)]
    pub evaporation: f32,
    /// Fixed-point units per height unit (the paper's 1000).
    #[arg(long, default_value_t = Self::DEFAULT.scale)]
    pub scale: f32,
    /// Speed update: the paper's (droplets slow going downhill) or corrected (they
    /// speed up), in every kernel and in the CPU reference.
    #[arg(long, value_enum, default_value_t = Self::DEFAULT.physics)]
    pub physics: Physics,
    /// Fixed-point rounding of each height change: the paper's trunc, nearest, or
    /// stochastic (unbiased, reproducible).
    #[arg(long, value_enum, default_value_t = Self::DEFAULT.rounding)]
    pub rounding: Rounding,
    /// Workgroup size (local_size_x; the paper uses 64).
    #[arg(long, default_value_t = Self::DEFAULT.workgroup)]
    pub workgroup: u32,
    /// Droplets per dispatch at most. Default: one per 64 map cells, for stability.
    #[arg(long)]
    pub batch: Option<u32>,
    /// Run the droplets in this many dispatches of equal size (instead of --batch).
    #[arg(long)]
    pub batches: Option<u32>,
    /// The kernel: the paper's (droplet_passes.comp for passes, droplet_stepped.comp
    /// for the corrected physics), or vkerode's fast variants of it (int atomics, one
    /// pass).
    #[arg(long, value_enum, default_value_t = Self::DEFAULT.variant)]
    pub variant: DropletShader,
    /// SPIR-V as build.rs compiled it verbatim, or through shaderc's optimiser.
    #[arg(long, value_enum, default_value_t = Self::DEFAULT.spirv)]
    pub spirv: SpirvBuild,
    /// KiB of shared memory each workgroup reserves unused, to lower the occupancy; or
    /// auto: the fastest of a short probe of the job at each of OCCUPANCY_CANDIDATES_KIB
    /// that the device allows, recorded as shared_kib_chosen.
    #[arg(long, default_value_t = Self::DEFAULT.shared_kib)]
    pub shared_kib: SharedKib,
    /// How the heightfield's loads and adds reach the caches (the L1 experiments).
    #[arg(long, value_enum, default_value_t = Self::DEFAULT.lever)]
    pub lever: Lever,
    /// How modifyHeight adds: int (the paper's fixed point and atomicAdd), float
    /// (float atomics, where the device has them) or racy (a plain read-modify-write).
    #[arg(long, value_enum, default_value_t = Self::DEFAULT.atomics)]
    pub atomics: AtomicMode,
    /// Where droplets start: global (the paper's) or tiled (each workgroup in one tile).
    #[arg(long, value_enum, default_value_t = Self::DEFAULT.spawn)]
    pub spawn: SpawnMode,
    /// Tile side in cells, for tiled spawning.
    #[arg(long, default_value_t = Self::DEFAULT.tile)]
    pub tile: u32,
    /// Which tile consecutive workgroups get, for tiled spawning.
    #[arg(long, value_enum, default_value_t = Self::DEFAULT.tile_order)]
    pub tile_order: TileOrder,
    /// Checkerboard colours (1, 4 or 9), each its own dispatch, for tiled spawning.
    #[arg(long, default_value_t = Self::DEFAULT.phases)]
    pub phases: u32,
    /// Cells the tile-cache kernel caches beyond its spawn tile on each side (at most
    /// (tile - 1) / 2 with 4 phases, tile - 1 with 9).
    #[arg(long, default_value_t = Self::DEFAULT.cache_margin)]
    pub cache_margin: u32,
    /// Dispatch passes each droplet's life is split over, its state kept in a buffer.
    #[arg(long, default_value_t = Self::DEFAULT.passes)]
    pub passes: u32,
    /// Start droplet i in pass i mod passes, so droplets of every age run together.
    #[arg(long)]
    #[serde(with = "switch")]
    pub stagger: bool,
    /// Droplets read frozen heights and add into a delta buffer applied after each
    /// dispatch: reruns are bit-identical (int atomics only).
    #[arg(long)]
    #[serde(with = "switch")]
    pub deterministic: bool,
}

impl Default for DropletSettings {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl DropletSettings {
    /// The heading of its flags in `erode --help`.
    pub const HEADING: &'static str = "Droplets (algorithm = droplets)";
    /// What it is, in the help of the `algorithm` setting.
    pub const CHOICE: &'static str = "the paper's droplets";

    pub const DEFAULT: DropletSettings = DropletSettings {
        droplets: 300_000,
        droplet_seed: None,
        lifetime: KernelParams::DEFAULT.lifetime,
        inertia: KernelParams::DEFAULT.inertia,
        capacity: KernelParams::DEFAULT.capacity,
        erosion: KernelParams::DEFAULT.erosion,
        deposition: KernelParams::DEFAULT.deposition,
        evaporation: KernelParams::DEFAULT.evaporation,
        scale: KernelParams::DEFAULT.fixed_point_scale,
        physics: KernelParams::DEFAULT.physics,
        rounding: KernelParams::DEFAULT.rounding,
        workgroup: 64,
        batch: None,
        batches: None,
        variant: DropletShader::Paper,
        spirv: SpirvBuild::Verbatim,
        shared_kib: SharedKib::Kib(0),
        lever: Lever::None,
        atomics: AtomicMode::Int,
        spawn: Spawn::DEFAULT.mode,
        tile: Spawn::DEFAULT.tile,
        tile_order: Spawn::DEFAULT.order,
        phases: Spawn::DEFAULT.phases,
        cache_margin: 8,
        passes: 1,
        stagger: false,
        deterministic: false,
    };

    /// The unit of each key, for the config reference.
    pub const UNITS: &'static [(&'static str, &'static str)] = &[
        ("droplets", "droplets"),
        (key::DROPLET_SEED, "seed"),
        ("lifetime", "steps"),
        ("inertia", "share"),
        (
            "capacity",
            "kernel height units per unit of slope, speed and water",
        ),
        ("erosion", "share per step"),
        ("deposition", "share per step"),
        ("evaporation", "share per step"),
        ("scale", "fixed-point units per kernel height unit"),
        ("physics", "choice"),
        ("rounding", "choice"),
        (key::WORKGROUP, "invocations"),
        ("batch", "droplets per dispatch"),
        ("batches", "dispatches"),
        ("variant", "choice"),
        ("spirv", "choice"),
        ("shared_kib", "KiB per workgroup, or auto"),
        ("lever", "choice"),
        (key::ATOMICS, "choice"),
        (key::SPAWN, "choice"),
        (key::TILE, "cells"),
        ("tile_order", "choice"),
        ("phases", "colours"),
        ("cache_margin", "cells"),
        ("passes", "dispatch passes"),
        (key::STAGGER, "switch"),
        ("deterministic", "switch"),
    ];

    /// The keys only the kernels use: the CPU reference runs whole lives from the
    /// global spawn, one droplet at a time, with no dispatches or atomics to choose.
    pub const GPU_ONLY: &'static [&'static str] = &[
        key::WORKGROUP,
        "batch",
        "batches",
        "variant",
        "spirv",
        "shared_kib",
        "lever",
        key::ATOMICS,
        key::SPAWN,
        key::TILE,
        "tile_order",
        "phases",
        "cache_margin",
        "passes",
        key::STAGGER,
        "deterministic",
    ];

    /// The droplet job of these settings on a terrain of `terrain_seed`.
    pub fn job(&self, terrain_seed: u32) -> DropletJob {
        DropletJob {
            droplets: self.droplets,
            seed: self.droplet_seed.unwrap_or(terrain_seed),
            params: KernelParams {
                inertia: self.inertia,
                capacity: self.capacity,
                erosion: self.erosion,
                deposition: self.deposition,
                evaporation: self.evaporation,
                lifetime: self.lifetime,
                fixed_point_scale: self.scale,
                physics: self.physics,
                rounding: self.rounding,
            },
            spawn: Spawn {
                mode: self.spawn,
                tile: self.tile,
                order: self.tile_order,
                phases: self.phases,
            },
            passes: Passes {
                count: self.passes,
                stagger: self.stagger,
            },
        }
    }

    /// The atomic mode the kernel runs: deterministic is int atomics into a delta
    /// buffer.
    pub fn atomic_mode(&self) -> AtomicMode {
        if self.deterministic {
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
            (None, None) => default_batch(cells),
        }
    }

    pub fn kernel_variant(&self) -> KernelVariant {
        KernelVariant {
            shader: self.variant.for_job(&self.job(0)),
            atomics: self.atomic_mode(),
            spawn: self.spawn,
            spirv: self.spirv,
            reserved_shared_bytes: self.shared_kib.kib().unwrap_or(0).saturating_mul(1024),
            lever: self.lever,
            cache: self.cache_window(),
        }
    }

    /// The tile-cache kernel's window; zero for the other kernels.
    pub fn cache_window(&self) -> CacheWindow {
        if self.variant == DropletShader::TileCache {
            CacheWindow {
                tile: self.tile,
                margin: self.cache_margin,
            }
        } else {
            CacheWindow::default()
        }
    }

    /// The settings as a run on a map of `cells` on a terrain of `terrain_seed` uses
    /// them: the derived defaults (spawn seed, batch and dispatches, atomic mode) filled.
    pub fn resolved(&self, cells: u64, terrain_seed: u32) -> Self {
        let batch = self.droplets_per_dispatch(cells);
        Self {
            droplet_seed: Some(self.droplet_seed.unwrap_or(terrain_seed)),
            batch: Some(batch),
            batches: Some(self.droplets.div_ceil(batch.max(1))),
            atomics: self.atomic_mode(),
            // One spelling of deterministic mode, however it was asked for.
            deterministic: self.atomic_mode() == AtomicMode::Deterministic,
            ..self.clone()
        }
    }

    /// The rules that do not depend on the map; with a device, also its limits.
    pub fn check_job(&self, device: Option<&DeviceInfo>) -> Result<(), SettingError> {
        self.job(0).validate()?;
        if self.deterministic
            && !matches!(self.atomics, AtomicMode::Int | AtomicMode::Deterministic)
        {
            return Err(SettingError::new(
                "deterministic",
                format!(
                    "needs int atomics, not {:?}: only integer sums are order-independent",
                    self.atomics.as_str()
                ),
            ));
        }
        if self.batches == Some(0) {
            return Err(SettingError::new("batches", "must be at least 1"));
        }
        if self.batch.is_some() && self.batches.is_some() {
            return Err(SettingError::new(
                "batches",
                "set batch (droplets per dispatch) or batches (dispatches), not both",
            ));
        }
        if self.batch == Some(0) {
            return Err(SettingError::new("batch", "must be at least 1"));
        }
        if self.variant.is_fast() && self.job(0).passes.needs_state() {
            return Err(SettingError::new(
                "variant",
                "the fast kernels run one pass; passes and stagger need the paper's kernel",
            ));
        }
        if let Some(reason) = self.kernel_variant().unsupported() {
            return Err(SettingError::new("variant", reason.to_string()));
        }
        if self.variant == DropletShader::TileCache {
            let key = if matches!(self.phases, 4 | 9) {
                "cache_margin"
            } else {
                "phases"
            };
            self.cache_window()
                .rule(self.phases)
                .map_err(|e| SettingError::new(key, e.to_string()))?;
        }
        if self.workgroup == 0 {
            return Err(SettingError::new(key::WORKGROUP, "must be at least 1"));
        }
        if self.shared_kib == SharedKib::Auto && self.lever == Lever::NoShared {
            return Err(SettingError::new(
                "shared_kib",
                "auto probes reserved shared memory, which the no-shared lever declares none of",
            ));
        }
        let Some(device) = device else { return Ok(()) };
        let limit = device.max_workgroup_x();
        if self.workgroup > limit {
            return Err(SettingError::new(
                key::WORKGROUP,
                format!(
                    "workgroup size {} is above this device's limit of {limit} ({})",
                    self.workgroup, device.name
                ),
            ));
        }
        let shared = u64::from(self.shared_kib.kib().unwrap_or(0)) * 1024;
        let cached = if self.variant == DropletShader::TileCache {
            self.cache_window().shared_bytes()
        } else {
            0
        };
        if shared + cached > u64::from(device.max_shared_memory_bytes) && cached > 0 {
            return Err(SettingError::new(
                "cache_margin",
                format!(
                    "tile {} and cache margin {} need {cached} bytes of shared memory (two int32 windows of {} x {} cells){}, above this device's maxComputeSharedMemorySize of {} bytes",
                    self.tile,
                    self.cache_margin,
                    self.cache_window().side(),
                    self.cache_window().side(),
                    if shared > 0 { format!(" besides {} KiB reserved", self.shared_kib) } else { String::new() },
                    device.max_shared_memory_bytes
                ),
            ));
        }
        if shared > u64::from(device.max_shared_memory_bytes) {
            return Err(SettingError::new(
                "shared_kib",
                format!(
                    "{} KiB is above this device's maxComputeSharedMemorySize of {} bytes",
                    self.shared_kib, device.max_shared_memory_bytes
                ),
            ));
        }
        Ok(())
    }

    /// The rules between the settings and a map: its heights must fit the fixed point,
    /// every colour of tiled spawning needs a tile, and the map must fit the device's
    /// SSBOs.
    pub fn check_map(&self, map: MapInfo, device: Option<&DeviceInfo>) -> Result<(), SettingError> {
        fits_fixed_point(map.highest, self.scale)
            .map_err(|e| SettingError::new("scale", e.to_string()))?;
        self.job(0).spawn.check_map(map.width, map.height)?;
        let Some(device) = device else { return Ok(()) };
        let bytes = map.cells() * 4;
        // Past the int32 index or one SSBO, the wide build by itself, if no other
        // lever was asked for.
        let variant = self.kernel_variant().for_map(map.cells(), device);
        if variant.lever != Lever::Wide
            && super::variant::needs_wide(map.cells(), device.max_storage_buffer_range)
        {
            return Err(SettingError::new(
                "lever",
                format!(
                    "a {}x{} map needs {bytes} bytes, past the int32 index or this device's maxStorageBufferRange of {}: only the wide build (lever none or wide) reaches it, not the {} lever",
                    map.width, map.height, device.max_storage_buffer_range, self.lever.as_str()
                ),
            ));
        }
        if let Some(reason) = variant.unsupported() {
            return Err(SettingError::new(
                "lever",
                format!(
                    "a {}x{} map needs the wide build, and {reason}",
                    map.width, map.height
                ),
            ));
        }
        Ok(())
    }

    /// What the device lacks to run these settings on `map`, if anything.
    pub fn missing_feature(&self, map: MapInfo, device: &DeviceInfo) -> Option<String> {
        let name = &device.name;
        if self.atomics == AtomicMode::Float && !device.float_atomic_add {
            return Some(format!("{name} has no float atomicAdd on storage buffers"));
        }
        if self.lever == Lever::VulkanMemoryModel && !device.vulkan_memory_model {
            return Some(format!(
                "{name} does not support the Vulkan memory model with device scope"
            ));
        }
        let wide = self.kernel_variant().for_map(map.cells(), device).lever == Lever::Wide;
        if wide && !(device.buffer_device_address && device.shader_int64) {
            return Some(format!(
                "{name} lacks bufferDeviceAddress or shaderInt64, which the wide build (maps past 2^31 cells or maxStorageBufferRange) needs"
            ));
        }
        if self.lever == Lever::RobustnessOff && !device.pipeline_robustness {
            return Some(format!(
                "{name} does not offer VK_EXT_pipeline_robustness, which the robustness-off lever needs"
            ));
        }
        (self.lever == Lever::Texel && map.cells() > u64::from(device.max_texel_buffer_elements))
            .then(|| {
                format!(
                    "a texel view of a {}x{} map is past {name}'s maxTexelBufferElements of {}",
                    map.width, map.height, device.max_texel_buffer_elements
                )
            })
    }
}

/// The shared memory each workgroup reserves: a size, or the fastest of a probe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SharedKib {
    Kib(u32),
    Auto,
}

/// What `shared_kib = "auto"` probes, in KiB per workgroup: on the H200 (228 KiB per SM)
/// 0 to 48 KiB would hold 32 down to 4 workgroups of 64 per SM by the arithmetic, but
/// GPM reads fewer (9% occupancy at 16 KiB): the driver reserves more than is declared.
pub const OCCUPANCY_CANDIDATES_KIB: [u32; 8] = [0, 4, 8, 12, 16, 24, 32, 48];

impl SharedKib {
    /// The size set; `None` for auto.
    pub fn kib(self) -> Option<u32> {
        match self {
            SharedKib::Kib(kib) => Some(kib),
            SharedKib::Auto => None,
        }
    }
}

impl std::fmt::Display for SharedKib {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SharedKib::Kib(kib) => write!(f, "{kib}"),
            SharedKib::Auto => f.write_str("auto"),
        }
    }
}

/// A `--shared-kib` that is neither KiB nor `auto`: the text as given.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is neither KiB (a whole number) nor \"auto\"")]
pub struct SharedKibError(pub String);

impl std::str::FromStr for SharedKib {
    type Err = SharedKibError;
    fn from_str(text: &str) -> Result<Self, SharedKibError> {
        match text.trim() {
            "auto" => Ok(SharedKib::Auto),
            kib => kib
                .parse()
                .map(SharedKib::Kib)
                .map_err(|_| SharedKibError(text.to_string())),
        }
    }
}

impl Serialize for SharedKib {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            SharedKib::Kib(kib) => serializer.serialize_u32(*kib),
            SharedKib::Auto => serializer.serialize_str("auto"),
        }
    }
}

impl<'de> Deserialize<'de> for SharedKib {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = SharedKib;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("KiB (a whole number) or \"auto\"")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<SharedKib, E> {
                u32::try_from(v)
                    .map(SharedKib::Kib)
                    .map_err(|_| E::invalid_value(serde::de::Unexpected::Unsigned(v), &self))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<SharedKib, E> {
                u32::try_from(v)
                    .map(SharedKib::Kib)
                    .map_err(|_| E::invalid_value(serde::de::Unexpected::Signed(v), &self))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<SharedKib, E> {
                match v {
                    "auto" => Ok(SharedKib::Auto),
                    _ => Err(E::invalid_value(serde::de::Unexpected::Str(v), &self)),
                }
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

impl From<ParamError> for SettingError {
    fn from(e: ParamError) -> Self {
        SettingError::new(key_of(e.name), e.to_string())
    }
}

/// The settings key of a kernel parameter named in a ParamError.
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
        "tile" => key::TILE,
        "passes" => "passes",
        _ => "droplets",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_named_keys_are_the_settings_own() {
        let keys = crate::erosion::keys::keys_of::<DropletSettings>();
        for k in key::ALL {
            assert!(keys.iter().any(|own| own == k), "{k} is no droplet setting");
        }
    }

    #[test]
    fn shared_kib_is_kib_or_auto_in_flags_and_configs() {
        assert_eq!("16".parse(), Ok(SharedKib::Kib(16)));
        assert_eq!("auto".parse(), Ok(SharedKib::Auto));
        assert!("sixteen".parse::<SharedKib>().is_err());
        #[derive(Deserialize)]
        struct Key {
            shared_kib: SharedKib,
        }
        let key = |text: &str| toml::from_str::<Key>(text).map(|k| k.shared_kib);
        assert_eq!(key("shared_kib = 8").ok(), Some(SharedKib::Kib(8)));
        assert_eq!(key("shared_kib = \"auto\"").ok(), Some(SharedKib::Auto));
        assert!(key("shared_kib = -1").is_err());
        assert!(key("shared_kib = \"most\"").is_err());
        let no_shared = DropletSettings {
            shared_kib: SharedKib::Auto,
            lever: Lever::NoShared,
            ..DropletSettings::DEFAULT
        };
        assert_eq!(no_shared.check_job(None).unwrap_err().key, "shared_kib");
    }

    #[test]
    fn deterministic_mode_has_one_spelling_in_the_resolved_settings() {
        let by_atomics = DropletSettings {
            atomics: AtomicMode::Deterministic,
            ..DropletSettings::DEFAULT
        };
        let by_switch = DropletSettings {
            deterministic: true,
            ..DropletSettings::DEFAULT
        };
        assert_eq!(by_atomics.resolved(4096, 1), by_switch.resolved(4096, 1));
        assert!(by_atomics.resolved(4096, 1).deterministic);
        assert!(!DropletSettings::DEFAULT.resolved(4096, 1).deterministic);
    }

    #[test]
    fn the_tile_cache_kernel_refuses_windows_that_meet_and_untiled_spawning() {
        let cached = |tile, cache_margin, phases| DropletSettings {
            variant: DropletShader::TileCache,
            spawn: SpawnMode::Tiled,
            tile,
            cache_margin,
            phases,
            ..DropletSettings::DEFAULT
        };
        let key = |s: DropletSettings| s.check_job(None).err().map(|e| e.key.to_string());
        assert_eq!(key(cached(32, 15, 4)), None);
        assert_eq!(key(cached(32, 16, 4)).as_deref(), Some("cache_margin"));
        assert_eq!(key(cached(16, 15, 9)), None);
        assert_eq!(key(cached(16, 16, 9)).as_deref(), Some("cache_margin"));
        assert_eq!(key(cached(32, 0, 1)).as_deref(), Some("phases"));
        let global = DropletSettings {
            spawn: SpawnMode::Global,
            ..cached(32, 8, 1)
        };
        assert_eq!(key(global).as_deref(), Some("variant"));
        let float = DropletSettings {
            atomics: AtomicMode::Float,
            ..cached(32, 8, 4)
        };
        assert_eq!(key(float).as_deref(), Some("variant"));
        // The margin is the tile-cache kernel's alone.
        let fast = DropletSettings {
            variant: DropletShader::Fast,
            ..cached(32, 30, 1)
        };
        assert_eq!(key(fast.clone()), None);
        assert_eq!(fast.kernel_variant().cache, CacheWindow::default());
        assert_eq!(
            cached(32, 8, 4).kernel_variant().cache,
            CacheWindow {
                tile: 32,
                margin: 8
            }
        );
    }
}
