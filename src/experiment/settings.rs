//! Everything one erosion run is made of, written once: `vkerode erode` takes it as
//! flags (`--tile-order`), experiment configs as keys (`tile_order`, fixed or as an
//! axis). Both get their defaults from [`RunSettings::DEFAULT`] and their rules from
//! [`RunSettings::check`].

use serde::{Deserialize, Serialize};

use crate::erosion::pipes::{
    Advection, Fusion, Packing, PipesParams, PipesVariant, Tiles, WorkgroupShape,
};
use crate::erosion::{
    default_batch, Algorithm, AtomicMode, DropletJob, DropletShader, KernelParams, KernelVariant,
    Lever, ParamError, Passes, Physics, Rounding, Spawn, SpawnMode, SpirvBuild, TileOrder,
};
use crate::gpu::DeviceInfo;
use crate::terrain::{TerrainSpec, DEFAULT_RELIEF_PER_SIDE, FIXED_POINT_LIMIT};

/// The settings of one run. Every field is an `erode` flag and a config key.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, clap::Args)]
#[serde(default, deny_unknown_fields)]
pub struct RunSettings {
    /// The strategy: the paper's droplets, or the grid-centric virtual-pipe
    /// shallow-water model (Mei et al. 2007; its settings are the pipes_* ones).
    #[arg(long, value_enum, default_value_t = Self::DEFAULT.algorithm)]
    pub algorithm: Algorithm,
    /// Side of the square erosion-noise map, in cells.
    #[arg(long, default_value_t = Self::DEFAULT.size)]
    pub size: u32,
    /// Terrain seed; 0 is the seed shader's own window of the noise.
    #[arg(long, default_value_t = Self::DEFAULT.seed)]
    pub seed: u32,
    /// Relief in cell units: noise heights in [0, 1] are multiplied by it.
    /// Default: 2 x size, which gives a mean slope of about one per cell.
    #[arg(long)]
    pub relief: Option<f32>,
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
    /// The kernel: the paper's (droplet_passes.comp for passes), or vkerode's fast
    /// variants of it (int atomics, one pass).
    #[arg(long, value_enum, default_value_t = Self::DEFAULT.variant)]
    pub variant: DropletShader,
    /// SPIR-V as build.rs compiled it verbatim, or through shaderc's optimiser.
    #[arg(long, value_enum, default_value_t = Self::DEFAULT.spirv)]
    pub spirv: SpirvBuild,
    /// KiB of shared memory each workgroup reserves unused, to lower the occupancy.
    #[arg(long, default_value_t = Self::DEFAULT.shared_kib)]
    pub shared_kib: u32,
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
    /// Time steps of the virtual-pipe model.
    #[arg(long, default_value_t = Self::DEFAULT.pipes_steps)]
    pub pipes_steps: u32,
    /// Its time step; at most sqrt(cell length^3 / (2 pipe area g)), the flux step's
    /// stability limit.
    #[arg(long, default_value_t = Self::DEFAULT.pipes_dt)]
    pub pipes_dt: f32,
    /// Water depth rained per unit time on every cell.
    #[arg(long, default_value_t = Self::DEFAULT.pipes_rain)]
    pub pipes_rain: f32,
    /// Share of the water evaporating per unit time.
    #[arg(long, default_value_t = Self::DEFAULT.pipes_evaporation)]
    pub pipes_evaporation: f32,
    /// Cross-section of the virtual pipes.
    #[arg(long, default_value_t = Self::DEFAULT.pipes_area)]
    pub pipes_area: f32,
    /// Kc: sediment capacity per unit of tilt and speed.
    #[arg(long, default_value_t = Self::DEFAULT.pipes_capacity)]
    pub pipes_capacity: f32,
    /// Ks: dissolving rate.
    #[arg(long, default_value_t = Self::DEFAULT.pipes_dissolving)]
    pub pipes_dissolving: f32,
    /// Kd: deposition rate.
    #[arg(long, default_value_t = Self::DEFAULT.pipes_deposition)]
    pub pipes_deposition: f32,
    /// How sediment moves with the water: Mei et al.'s semi-Lagrangian advection (it
    /// does not conserve sediment), or upwind along the pipes (conserving; fused passes).
    #[arg(long, value_enum, default_value_t = Self::DEFAULT.pipes_advection)]
    pub pipes_advection: Advection,
    /// The grid kernels' passes: the model's five (none; semi-Lagrangian advection only)
    /// or two (fused).
    #[arg(long, value_enum, default_value_t = Self::DEFAULT.pipes_fusion)]
    pub pipes_fusion: Fusion,
    /// Flux and velocity as float32, or packed as half floats.
    #[arg(long, value_enum, default_value_t = Self::DEFAULT.pipes_packing)]
    pub pipes_packing: Packing,
    /// Neighbour reads of the fused passes from shared-memory tiles.
    #[arg(long, value_enum, default_value_t = Self::DEFAULT.pipes_tiles)]
    pub pipes_tiles: Tiles,
    /// Workgroup shape of the grid kernels, e.g. 16x16.
    #[arg(long, default_value_t = Self::DEFAULT.pipes_workgroup)]
    pub pipes_workgroup: WorkgroupShape,
    /// Steps between the balance checks of the counted run (terrain + sediment + water
    /// against initial + rain - evaporation); 0 runs no counted run.
    #[arg(long, default_value_t = Self::DEFAULT.pipes_check_every)]
    pub pipes_check_every: u32,
}

impl Default for RunSettings {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// A setting that breaks a rule: its key (the config key; the flag is `--key` with
/// dashes) and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("setting {key}: {reason}")]
pub struct SettingError {
    pub key: &'static str,
    pub reason: String,
}

impl SettingError {
    pub fn new(key: &'static str, reason: impl Into<String>) -> Self {
        Self {
            key,
            reason: reason.into(),
        }
    }

    /// The flag that sets the key, e.g. `--tile-order`.
    pub fn flag(&self) -> String {
        format!("--{}", self.key.replace('_', "-"))
    }
}

impl From<ParamError> for SettingError {
    fn from(e: ParamError) -> Self {
        SettingError::new(key_of(e.name), e.to_string())
    }
}

impl RunSettings {
    pub const DEFAULT: RunSettings = RunSettings {
        algorithm: Algorithm::Droplets,
        size: 512,
        seed: 1,
        relief: None,
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
        shared_kib: 0,
        lever: Lever::None,
        atomics: AtomicMode::Int,
        spawn: Spawn::DEFAULT.mode,
        tile: Spawn::DEFAULT.tile,
        tile_order: Spawn::DEFAULT.order,
        phases: Spawn::DEFAULT.phases,
        passes: 1,
        stagger: false,
        deterministic: false,
        pipes_steps: 500,
        pipes_dt: PipesParams::DEFAULT.dt,
        pipes_rain: PipesParams::DEFAULT.rain,
        pipes_evaporation: PipesParams::DEFAULT.evaporation,
        pipes_area: PipesParams::DEFAULT.pipe_area,
        pipes_capacity: PipesParams::DEFAULT.capacity,
        pipes_dissolving: PipesParams::DEFAULT.dissolving,
        pipes_deposition: PipesParams::DEFAULT.deposition,
        // Not Mei et al.'s semi-Lagrangian advection (PipesParams::DEFAULT): it loses the
        // sediment it moves, and long runs erode without bound (results/README.md).
        pipes_advection: Advection::Upwind,
        pipes_fusion: Fusion::Fused,
        pipes_packing: Packing::F32,
        pipes_tiles: Tiles::None,
        pipes_workgroup: WorkgroupShape::DEFAULT,
        pipes_check_every: 100,
    };

    /// The virtual-pipe model's parameters.
    pub fn pipes_params(&self) -> PipesParams {
        PipesParams {
            dt: self.pipes_dt,
            rain: self.pipes_rain,
            evaporation: self.pipes_evaporation,
            pipe_area: self.pipes_area,
            capacity: self.pipes_capacity,
            dissolving: self.pipes_dissolving,
            deposition: self.pipes_deposition,
            advection: self.pipes_advection,
            ..PipesParams::DEFAULT
        }
    }

    /// The grid kernels' build.
    pub fn pipes_variant(&self) -> PipesVariant {
        PipesVariant {
            fusion: self.pipes_fusion,
            packing: self.pipes_packing,
            tiles: self.pipes_tiles,
            workgroup: self.pipes_workgroup,
        }
    }

    /// The virtual-pipe model's rules, with the device's where there is one.
    fn check_pipes(&self, device: Option<&DeviceInfo>) -> Result<(), SettingError> {
        let named = |e: crate::erosion::pipes::PipesParamError| SettingError::new(e.key, e.reason);
        let params = self.pipes_params();
        params.check().map_err(named)?;
        self.pipes_variant()
            .check(params.advection, device)
            .map_err(named)
    }

    /// The erosion-noise terrain of these settings.
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
            seed: self.droplet_seed.unwrap_or(self.seed),
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
            shader: self.variant.for_job(&self.job()),
            atomics: self.atomic_mode(),
            spawn: self.spawn,
            spirv: self.spirv,
            reserved_shared_bytes: self.shared_kib.saturating_mul(1024),
            lever: self.lever,
        }
    }

    /// Every rule between the settings, for the noise terrain of `size`; with a device,
    /// also its limits. A run on a heightmap file checks [`RunSettings::check_job`] and
    /// [`RunSettings::check_map`] with the file's shape instead.
    pub fn check(&self, device: Option<&DeviceInfo>) -> Result<(), SettingError> {
        let terrain = self.terrain();
        terrain
            .validate()
            .map_err(|e| SettingError::new("size", e.to_string()))?;
        if self.algorithm == Algorithm::Pipes {
            // Its fields are reached by address: no maxStorageBufferRange, no fixed point.
            return self.check_pipes(device);
        }
        let top = f64::from(terrain.relief) * f64::from(self.scale);
        if top >= FIXED_POINT_LIMIT {
            return Err(SettingError::new(
                "scale",
                format!(
                    "heights up to the relief {} times scale {} pass the fixed-point limit 2^30; lower the scale or the relief",
                    terrain.relief, self.scale
                ),
            ));
        }
        self.check_job(device)?;
        self.check_map(self.size, self.size, device)
    }

    /// The rules that do not depend on the map.
    pub fn check_job(&self, device: Option<&DeviceInfo>) -> Result<(), SettingError> {
        if self.algorithm == Algorithm::Pipes {
            return self.check_pipes(device);
        }
        self.job().validate()?;
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
        if self.variant.is_fast() && self.job().passes.needs_state() {
            return Err(SettingError::new(
                "variant",
                "the fast kernels run one pass; passes and stagger need the paper's kernel",
            ));
        }
        if let Some(reason) = self.kernel_variant().unsupported() {
            return Err(SettingError::new("variant", reason));
        }
        if self.workgroup == 0 {
            return Err(SettingError::new("workgroup", "must be at least 1"));
        }
        let Some(device) = device else { return Ok(()) };
        let limit = device.max_workgroup_x();
        if self.workgroup > limit {
            return Err(SettingError::new(
                "workgroup",
                format!(
                    "workgroup size {} is above this device's limit of {limit} ({})",
                    self.workgroup, device.name
                ),
            ));
        }
        let shared = u64::from(self.shared_kib) * 1024;
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

    /// The rules between the settings and a `width` x `height` map: every colour of
    /// tiled spawning needs a tile, and the map must fit the device's SSBOs.
    pub fn check_map(
        &self,
        width: u32,
        height: u32,
        device: Option<&DeviceInfo>,
    ) -> Result<(), SettingError> {
        self.job().spawn.check_map(width, height)?;
        let Some(device) = device else { return Ok(()) };
        let bytes = u64::from(width) * u64::from(height) * 4;
        if bytes > device.max_storage_buffer_range {
            return Err(SettingError::new(
                "size",
                format!(
                    "a {width}x{height} map needs {bytes} bytes, above this device's maxStorageBufferRange of {}",
                    device.max_storage_buffer_range
                ),
            ));
        }
        Ok(())
    }

    /// What the device lacks to run these settings, if anything: sweeps skip such
    /// points with a note, so that one sweep can run on devices with different features.
    pub fn missing_feature(&self, device: &DeviceInfo) -> Option<String> {
        let name = &device.name;
        if self.algorithm == Algorithm::Pipes {
            return self
                .pipes_variant()
                .check(self.pipes_advection, Some(device))
                .err()
                .map(|e| e.reason);
        }
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
        "tile" => "tile",
        "passes" => "passes",
        _ => "droplets",
    }
}

/// A config switch: `"on"` / `"off"`, or `true` / `false`.
pub(crate) mod switch {
    use serde::{Deserializer, Serializer};

    pub fn serialize<S: Serializer>(on: &bool, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(if *on { "on" } else { "off" })
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<bool, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = bool;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("\"on\", \"off\", true or false")
            }
            fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<bool, E> {
                Ok(v)
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<bool, E> {
                match v {
                    "on" => Ok(true),
                    "off" => Ok(false),
                    _ => Err(E::invalid_value(serde::de::Unexpected::Str(v), &self)),
                }
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Flags {
        #[command(flatten)]
        settings: RunSettings,
    }

    #[test]
    fn flags_and_config_keys_have_the_same_defaults() {
        let flags = Flags::parse_from(["vkerode"]).settings;
        let keys: RunSettings = toml::from_str("").unwrap();
        assert_eq!(flags, RunSettings::DEFAULT);
        assert_eq!(keys, RunSettings::DEFAULT);
    }

    #[test]
    fn a_flag_and_its_key_set_the_same_job() {
        let flags = Flags::parse_from([
            "vkerode",
            "--tile-order",
            "morton",
            "--spawn",
            "tiled",
            "--phases",
            "4",
            "--stagger",
            "--passes",
            "3",
        ])
        .settings;
        let keys: RunSettings = toml::from_str(
            "tile_order = \"morton\"\nspawn = \"tiled\"\nphases = 4\nstagger = \"on\"\npasses = 3\n",
        )
        .unwrap();
        assert_eq!(flags, keys);
        assert_eq!(flags.job().spawn.order, TileOrder::Morton);
    }

    #[test]
    fn tiles_too_large_for_their_colours_are_refused() {
        let settings = RunSettings {
            size: 64,
            spawn: SpawnMode::Tiled,
            tile: 64,
            phases: 4,
            ..RunSettings::DEFAULT
        };
        let error = settings.check(None).unwrap_err();
        assert_eq!(error.key, "tile");
        assert_eq!(error.flag(), "--tile");
        assert!(RunSettings {
            phases: 1,
            ..settings.clone()
        }
        .check(None)
        .is_ok());
        assert!(RunSettings {
            tile: 32,
            ..settings
        }
        .check(None)
        .is_ok());
    }

    #[test]
    fn the_paper_kernel_becomes_the_passes_kernel_and_fast_ones_refuse_passes() {
        let passes = RunSettings {
            passes: 3,
            ..RunSettings::DEFAULT
        };
        assert_eq!(passes.kernel_variant().shader, DropletShader::Passes);
        let fast = RunSettings {
            variant: DropletShader::Fast,
            ..passes
        };
        assert_eq!(fast.check(None).unwrap_err().key, "variant");
    }
}
