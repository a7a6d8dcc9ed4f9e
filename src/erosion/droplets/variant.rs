//! Which compiled droplet kernel a run needs: the shader file and its macro variant.

use serde::Serialize;

use super::params::{AtomicMode, DropletJob, Physics};
use super::spawn::SpawnMode;
use crate::erosion::choice::setting_choice;
use crate::gpu::{shaders, ShaderModule, Spirv};

setting_choice! {
    /// The droplet shader file. Users choose all but `Passes` and `Stepped`, which the
    /// paper's kernel becomes for a job with several passes or stagger, or with physics
    /// other than the paper's ([`DropletShader::for_job`]).
    pub enum DropletShader {
        /// The paper's kernel (glsl/droplet.comp; droplet_passes.comp for passes,
        /// droplet_stepped.comp for the corrected physics).
        #[default]
        Paper,
        /// glsl/droplet_passes.comp: the same steps, state kept between passes.
        #[value(skip)]
        #[serde(skip_deserializing)]
        Passes,
        /// glsl/droplet_stepped.comp: the paper's main() around dropletStep(), whose speed
        /// update takes the physics; droplet.comp keeps the paper's.
        #[value(skip)]
        #[serde(skip_deserializing)]
        Stepped,
        /// glsl/droplet_fast.comp: the paper's algorithm with less memory traffic (int
        /// atomics, one pass).
        Fast,
        /// The fast kernel with only its first idea: no atomics for zero changes.
        FastSkipOnly,
        /// The fast kernel with only its second idea: corner heights reused.
        FastReuseOnly,
        /// The fast kernel reading each row's two corners with one aligned 16-byte load.
        FastQuads,
        /// glsl/droplet_tilecache.comp: the fast kernel with each workgroup's spawn tile
        /// and a margin cached in shared memory (tiled spawning, 4 or 9 phases, int atomics).
        TileCache,
    }
}

impl DropletShader {
    /// The shader that runs `job`: the paper's becomes the stateful one for passes
    /// (which takes either physics), else the stepped one for physics not the paper's.
    pub fn for_job(self, job: &DropletJob) -> Self {
        match self {
            DropletShader::Paper if job.passes.needs_state() => DropletShader::Passes,
            DropletShader::Paper if job.params.physics != Physics::Paper => DropletShader::Stepped,
            shader => shader,
        }
    }

    pub(crate) fn is_fast(self) -> bool {
        matches!(
            self,
            DropletShader::Fast
                | DropletShader::FastSkipOnly
                | DropletShader::FastReuseOnly
                | DropletShader::FastQuads
                | DropletShader::TileCache
        )
    }
}

/// The window the tile-cache kernel copies into shared memory: its workgroup's spawn
/// tile and `margin` cells around it, plus the column and row the SE corners of the
/// last cells need: `tile + 2 * margin + 1` cells a side. Zero for other kernels.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct CacheWindow {
    /// Tile side, in cells.
    pub tile: u32,
    /// Cells cached beyond the tile on each side.
    pub margin: u32,
}

impl CacheWindow {
    /// Cells a side.
    pub fn side(self) -> u32 {
        self.tile + 2 * self.margin + 1
    }

    /// Shared memory per workgroup, in bytes: the heights and the initial heights.
    pub fn shared_bytes(self) -> u64 {
        2 * 4 * u64::from(self.side()) * u64::from(self.side())
    }

    /// Why the windows of workgroups running at once could meet, if they could. Tiles
    /// of one checkerboard colour, the only ones a dispatch holds, start `stride * tile`
    /// cells apart (stride 2 for 4 phases, 3 for 9), and a window spans
    /// `tile + 2 * margin + 1` cells: they stay apart when
    /// `2 * margin + 1 <= (stride - 1) * tile`. Without phases neighbouring tiles run
    /// together and every margin meets.
    pub fn rule(self, phases: u32) -> Result<(), CacheWindowError> {
        let stride: u32 = match phases {
            4 => 2,
            9 => 3,
            _ => return Err(CacheWindowError::Phases { phases }),
        };
        let reach = 2 * u64::from(self.margin) + 1;
        let gap = u64::from(stride - 1) * u64::from(self.tile);
        if reach > gap {
            return Err(CacheWindowError::Overlap {
                window: self,
                phases,
                stride,
                widest: (gap.saturating_sub(1)) / 2,
            });
        }
        Ok(())
    }
}

/// Why the cached windows of workgroups running at once could meet ([`CacheWindow::rule`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CacheWindowError {
    #[error("the tile-cache kernel needs phases = 4 or 9, not {phases}: without checkerboard phases neighbouring tiles run together and their cached windows meet")]
    Phases { phases: u32 },
    /// `widest` is the margin that would keep them apart.
    #[error(
        "cache margin {} with tile {} and {phases} phases: the windows of one colour's tiles meet unless 2 x margin + 1 <= {} x tile, a margin of at most {widest}",
        window.margin,
        window.tile,
        stride - 1
    )]
    Overlap {
        window: CacheWindow,
        phases: u32,
        stride: u32,
        widest: u64,
    },
}

setting_choice! {
    /// A lever of the L1 experiments on how the heightfield is loaded and added to. Each
    /// keeps the kernel's arithmetic; only the path of the loads and adds, or the
    /// pipeline's declarations, change.
    pub enum Lever {
        /// As built: loads from the read-write heightfield SSBO, 4 bytes of shared memory.
        #[default]
        None,
        /// No shared memory declared at all.
        NoShared,
        /// Loads through a second, `readonly restrict` binding of the heightfield.
        Readonly,
        /// Loads through a uniform texel buffer view of the heightfield (the texture path).
        Texel,
        /// The adds as image atomics on a storage texel view of the heightfield, so that
        /// the shader has no SSBO atomics (int atomics only).
        ImageAtomics,
        /// Loads and adds both through a storage texel view (`imageLoad`,
        /// `imageAtomicAdd`), so that all the heightfield's traffic takes one path.
        Image,
        /// The shader declares the Vulkan memory model (needs `vulkanMemoryModel`).
        VulkanMemoryModel,
        /// The pipeline's storage-buffer robustness explicitly disabled
        /// (VK_EXT_pipeline_robustness).
        RobustnessOff,
        /// Loads and adds through the heightfield's buffer device address with 64-bit cell
        /// indices (int atomics), as the grid strategy reaches its fields: maps past 2^31
        /// cells or past maxStorageBufferRange. Chosen by itself for such maps
        /// ([`KernelVariant::for_map`]).
        Wide,
    }
}

impl Lever {
    pub const ALL: [Lever; 9] = [
        Lever::None,
        Lever::NoShared,
        Lever::Readonly,
        Lever::Texel,
        Lever::ImageAtomics,
        Lever::Image,
        Lever::VulkanMemoryModel,
        Lever::RobustnessOff,
        Lever::Wide,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Lever::None => "none",
            Lever::NoShared => "no-shared",
            Lever::Readonly => "readonly",
            Lever::Texel => "texel",
            Lever::ImageAtomics => "image-atomics",
            Lever::Image => "image",
            Lever::VulkanMemoryModel => "vulkan-memory-model",
            Lever::RobustnessOff => "robustness-off",
            Lever::Wide => "wide",
        }
    }

    /// Its option on the droplet shaders' `loads` axis; "" for levers that are not a
    /// build of their own.
    fn loads_option(self) -> &'static str {
        match self {
            Lever::NoShared => "noshared",
            Lever::Readonly => "readonly",
            Lever::Texel => "texel",
            Lever::ImageAtomics => "imageatomic",
            Lever::Image => "image",
            Lever::VulkanMemoryModel => "vmm",
            Lever::Wide => "wide",
            Lever::None | Lever::RobustnessOff => "",
        }
    }
}

setting_choice! {
    /// How build.rs compiled the SPIR-V.
    pub enum SpirvBuild {
        /// The GLSL as written, no optimisation passes.
        #[default]
        Verbatim,
        /// Through shaderc's performance optimiser.
        Optimised,
    }
}

/// Everything that selects a compiled droplet module.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct KernelVariant {
    pub shader: DropletShader,
    pub atomics: AtomicMode,
    pub spawn: SpawnMode,
    pub spirv: SpirvBuild,
    /// Shared memory each workgroup reserves without using it, to lower occupancy.
    pub reserved_shared_bytes: u32,
    pub lever: Lever,
    /// The tile-cache kernel's window (zero for the others).
    pub cache: CacheWindow,
}

impl KernelVariant {
    /// The paper's shader with these atomics and spawning.
    pub fn paper(atomics: AtomicMode, spawn: SpawnMode) -> Self {
        Self {
            shader: DropletShader::Paper,
            atomics,
            spawn,
            spirv: SpirvBuild::Verbatim,
            reserved_shared_bytes: 0,
            lever: Lever::None,
            cache: CacheWindow::default(),
        }
    }

    /// The variant a job needs with these atomics: the stateful shader only where the
    /// job has several passes or staggers, the stepped one where its physics is not the
    /// paper's.
    pub fn for_job(job: &DropletJob, atomics: AtomicMode) -> Self {
        Self {
            shader: DropletShader::Paper.for_job(job),
            atomics,
            spawn: job.spawn.mode,
            spirv: SpirvBuild::Verbatim,
            reserved_shared_bytes: 0,
            lever: Lever::None,
            cache: CacheWindow::default(),
        }
    }

    /// The compiled module of this variant (its instrumented build if `counted`),
    /// looked up in build.rs's table by the option on each axis of the shader file.
    pub fn module(&self, counted: bool) -> Option<Spirv> {
        let (stem, ideas) = match self.shader {
            DropletShader::Paper => ("droplet", ""),
            DropletShader::Passes => ("droplet_passes", ""),
            DropletShader::Stepped => ("droplet_stepped", ""),
            DropletShader::Fast => ("droplet_fast", ""),
            DropletShader::FastSkipOnly => ("droplet_fast", "skiponly"),
            DropletShader::FastReuseOnly => ("droplet_fast", "reuseonly"),
            DropletShader::FastQuads => ("droplet_fast", "quads"),
            DropletShader::TileCache => ("droplet_tilecache", ""),
        };
        let atomics = match self.atomics {
            AtomicMode::Int => "",
            AtomicMode::Float => "float",
            AtomicMode::Racy => "racy",
            AtomicMode::Deterministic => "deterministic",
        };
        let pick = |on: bool, option| if on { option } else { "" };
        ShaderModule::find(
            shaders::MODULES,
            stem,
            &[
                ("spirv", pick(self.spirv == SpirvBuild::Optimised, "opt")),
                ("ideas", ideas),
                ("atomics", atomics),
                ("loads", self.lever.loads_option()),
                ("build", pick(counted, "counted")),
            ],
        )
    }

    /// The name of the module that runs this variant, e.g. `droplet_opt_racy_image`.
    pub fn module_name(&self) -> String {
        self.module(false).map_or_else(
            || format!("{:?} kernel (not built)", self.shader),
            |m| m.name.to_string(),
        )
    }

    /// Whether a kernel of this variant can run `job`. droplet.comp's speed update is
    /// the paper's, whatever PHYSICS_SIGN says: it runs the paper's physics only.
    pub fn runs(&self, job: &DropletJob) -> bool {
        self.spawn == job.spawn.mode
            && (self.shader == DropletShader::Passes || !job.passes.needs_state())
            && (self.shader != DropletShader::Paper || job.params.physics == Physics::Paper)
            && (self.shader != DropletShader::TileCache
                || (self.cache.tile == job.spawn.tile && self.cache.rule(job.spawn.phases).is_ok()))
    }

    /// This variant on a map of `cells`: the wide build where the int32 index or one
    /// SSBO of the heightfield (or of the counted build's cellHits) would not reach,
    /// unless another lever was asked for.
    pub fn for_map(self, cells: u64, device: &crate::gpu::DeviceInfo) -> Self {
        if self.lever == Lever::None && needs_wide(cells, device.max_storage_buffer_range) {
            Self {
                lever: Lever::Wide,
                ..self
            }
        } else {
            self
        }
    }

    /// Why this variant's runs cannot be recorded and replayed, if they cannot.
    pub fn no_replay(&self) -> Option<NoReplay> {
        if self.shader == DropletShader::TileCache {
            Some(NoReplay::TileCache)
        } else if self.lever == Lever::Wide {
            Some(NoReplay::Wide)
        } else {
            None
        }
    }

    /// Why no module of this variant exists, if none does.
    pub fn unsupported(&self) -> Option<NoBuild> {
        let (lever, atomics) = (self.lever, self.atomics);
        let int = atomics == AtomicMode::Int;
        match self.shader {
            _ if lever == Lever::Wide && !int => Some(NoBuild::WideAtomics(atomics)),
            DropletShader::FastQuads if lever == Lever::Wide => Some(NoBuild::WideQuads),
            DropletShader::TileCache if self.spawn != SpawnMode::Tiled => {
                Some(NoBuild::TileCacheSpawn)
            }
            DropletShader::TileCache
                if !matches!(lever, Lever::None | Lever::Image | Lever::RobustnessOff) =>
            {
                Some(NoBuild::TileCacheLever(lever))
            }
            DropletShader::TileCache if self.cache.tile < 2 => {
                Some(NoBuild::TileCacheTile(self.cache.tile))
            }
            shader if shader.is_fast() && !int => Some(NoBuild::FastAtomics(atomics)),
            DropletShader::Passes if self.spirv == SpirvBuild::Optimised => {
                Some(NoBuild::PassesOptimised)
            }
            DropletShader::Passes if !lever.loads_option().is_empty() => {
                Some(NoBuild::PassesLever(lever))
            }
            DropletShader::FastQuads
                if matches!(lever, Lever::Readonly | Lever::Texel | Lever::Image) =>
            {
                Some(NoBuild::QuadsLever(lever))
            }
            _ if matches!(lever, Lever::ImageAtomics | Lever::Image) && !int => {
                Some(NoBuild::ImageAtomics(atomics))
            }
            _ if lever == Lever::NoShared && self.reserved_shared_bytes > 0 => {
                Some(NoBuild::NoSharedReserved)
            }
            _ => None,
        }
    }
}

/// Why a droplet kernel variant has no compiled module ([`KernelVariant::unsupported`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NoBuild {
    #[error("the wide build adds int atomics only, not {}", .0.as_str())]
    WideAtomics(AtomicMode),
    #[error("the quads kernel reads through its own 32-bit binding, not the wide build's address")]
    WideQuads,
    #[error("the tile-cache kernel caches each workgroup's spawn tile: it needs spawn = tiled")]
    TileCacheSpawn,
    #[error("the tile-cache kernel has no {} build (levers none, image, robustness-off)", .0.as_str())]
    TileCacheLever(Lever),
    #[error("the tile-cache kernel's window needs a tile of at least 2 cells, not {0}")]
    TileCacheTile(u32),
    #[error("the fast kernel runs int atomics only, not {}", .0.as_str())]
    FastAtomics(AtomicMode),
    #[error("the passes kernel is built verbatim only")]
    PassesOptimised,
    #[error("the passes kernel has no {} build", .0.as_str())]
    PassesLever(Lever),
    #[error("the quads kernel reads through its own aligned binding, not the {} lever's", .0.as_str())]
    QuadsLever(Lever),
    #[error("the image-atomics lever adds int image atomics, not {} ones", .0.as_str())]
    ImageAtomics(AtomicMode),
    #[error("the no-shared lever declares no shared memory, so none can be reserved")]
    NoSharedReserved,
}

/// Why a droplet kernel's run cannot be recorded and replayed
/// ([`KernelVariant::no_replay`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NoReplay {
    #[error("the tile-cache kernel's traffic is mostly to shared memory, which its record does not hold: it has no replay")]
    TileCache,
    #[error("the record holds 32-bit cell indices and the replay reaches the heightfield as one SSBO, the wide build's heights by address: the wide build (forced, or past 2^31 cells or the storage range) has no replay")]
    Wide,
}

/// Whether a map of `cells` int32 cells passes the int32 index (2^31 cells) or one
/// SSBO of at most `max_storage_buffer_range` bytes (its heights rounded up to whole
/// 16-byte quads).
pub fn needs_wide(cells: u64, max_storage_buffer_range: u64) -> bool {
    cells > i32::MAX as u64 || (cells * 4).next_multiple_of(16) > max_storage_buffer_range
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_tile_cache_kernel_and_the_wide_build_have_no_replay() {
        let of = |shader, lever| {
            KernelVariant {
                shader,
                lever,
                ..KernelVariant::default()
            }
            .no_replay()
        };
        assert_eq!(of(DropletShader::Paper, Lever::None), None);
        assert_eq!(of(DropletShader::Fast, Lever::None), None);
        let tile_cache = of(DropletShader::TileCache, Lever::None);
        assert_eq!(tile_cache, Some(NoReplay::TileCache));
        assert_eq!(of(DropletShader::Paper, Lever::Wide), Some(NoReplay::Wide));
    }

    #[test]
    fn the_wide_build_starts_where_the_index_or_the_storage_range_ends() {
        let h200 = 4_294_967_295;
        // 32767^2 fits in 4 GiB; 32768^2 is 4 GiB exactly, one byte past the range.
        assert!(!needs_wide(32767 * 32767, h200));
        assert!(needs_wide(32768 * 32768, h200));
        // From 2^31 cells the last index overflows int32, whatever the range.
        assert!(!needs_wide(i32::MAX as u64, u64::MAX));
        assert!(needs_wide(1 << 31, u64::MAX));
        // lavapipe's 128 MiB: 5792^2 cells fit, 5794^2 do not.
        let lavapipe = 128 << 20;
        assert!(!needs_wide(5792 * 5792, lavapipe));
        assert!(needs_wide(5794 * 5794, lavapipe));
    }

    #[test]
    fn every_variant_has_a_compiled_module_and_its_counted_build() {
        let shaders_ = [
            DropletShader::Paper,
            DropletShader::Passes,
            DropletShader::Stepped,
            DropletShader::Fast,
            DropletShader::FastSkipOnly,
            DropletShader::FastReuseOnly,
            DropletShader::FastQuads,
            DropletShader::TileCache,
        ];
        let modes = [
            AtomicMode::Int,
            AtomicMode::Float,
            AtomicMode::Racy,
            AtomicMode::Deterministic,
        ];
        for shader in shaders_ {
            for atomics in modes {
                for (spawn, spirv) in [SpawnMode::Global, SpawnMode::Tiled]
                    .into_iter()
                    .flat_map(|s| [(s, SpirvBuild::Verbatim), (s, SpirvBuild::Optimised)])
                {
                    for lever in Lever::ALL {
                        let variant = KernelVariant {
                            shader,
                            atomics,
                            spawn,
                            spirv,
                            reserved_shared_bytes: 0,
                            lever,
                            cache: CacheWindow {
                                tile: 32,
                                margin: 8,
                            },
                        };
                        if variant.unsupported().is_some() {
                            continue;
                        }
                        let name = variant.module_name();
                        assert!(variant.module(false).is_some(), "{name}");
                        assert!(variant.module(true).is_some(), "{name}_counted");
                    }
                }
            }
        }
    }

    #[test]
    fn the_paper_kernel_runs_the_corrected_physics_through_the_stepped_module() {
        use super::super::params::{KernelParams, Passes};
        use super::super::spawn::Spawn;
        let job = |physics, count| DropletJob {
            droplets: 1,
            seed: 1,
            params: KernelParams {
                physics,
                ..KernelParams::DEFAULT
            },
            spawn: Spawn::DEFAULT,
            passes: Passes {
                count,
                stagger: false,
            },
        };
        let (paper, corrected) = (job(Physics::Paper, 1), job(Physics::Corrected, 1));
        let needs = |job: &DropletJob| KernelVariant::for_job(job, AtomicMode::Int);
        assert_eq!(needs(&paper).module_name(), "droplet");
        assert_eq!(needs(&corrected).module_name(), "droplet_stepped");
        // The passes kernel's steps take either physics.
        let passes = job(Physics::Corrected, 3);
        assert_eq!(needs(&passes).shader, DropletShader::Passes);
        assert_eq!(DropletShader::Fast.for_job(&corrected), DropletShader::Fast);

        let variant = |shader| KernelVariant {
            shader,
            ..KernelVariant::default()
        };
        assert!(variant(DropletShader::Paper).runs(&paper));
        assert!(!variant(DropletShader::Paper).runs(&corrected));
        assert!(variant(DropletShader::Stepped).runs(&paper));
        assert!(variant(DropletShader::Stepped).runs(&corrected));
        assert!(!variant(DropletShader::Stepped).runs(&passes));
        assert!(variant(DropletShader::Stepped).unsupported().is_none());
    }

    #[test]
    fn cached_windows_of_one_colour_stay_apart_by_the_rule() {
        let window = |tile, margin| CacheWindow { tile, margin };
        // 4 phases: tiles of a colour one tile apart; 9 phases: two.
        assert!(window(32, 15).rule(4).is_ok());
        assert!(window(32, 16)
            .rule(4)
            .unwrap_err()
            .to_string()
            .contains("at most 15"));
        assert!(window(32, 31).rule(9).is_ok());
        assert!(window(32, 32).rule(9).is_err());
        assert!(window(32, 0)
            .rule(1)
            .unwrap_err()
            .to_string()
            .contains("phases"));
        // The rule is the geometry: the last cell of one window against the first of
        // the next window of the colour, for every tile and margin it accepts.
        for phases in [4, 9] {
            let stride = if phases == 4 { 2 } else { 3 };
            for tile in 2..40u32 {
                for margin in 0..40u32 {
                    let w = window(tile, margin);
                    // The last cell of tile 0's window, the first of the next one's.
                    let last = i64::from(tile + margin);
                    let next_first = i64::from(stride * tile) - i64::from(margin);
                    assert_eq!(w.rule(phases).is_ok(), last < next_first, "{tile} {margin}");
                }
            }
        }
        assert_eq!(window(16, 8).side(), 33);
        assert_eq!(window(16, 8).shared_bytes(), 2 * 4 * 33 * 33);
        let tiled = KernelVariant {
            shader: DropletShader::TileCache,
            ..KernelVariant::default()
        };
        assert_eq!(tiled.unsupported(), Some(NoBuild::TileCacheSpawn));
        let image = KernelVariant {
            spawn: SpawnMode::Tiled,
            lever: Lever::Image,
            cache: window(16, 4),
            ..tiled
        };
        assert_eq!(image.unsupported(), None);
        assert_eq!(image.module_name(), "droplet_tilecache_image");
        let texel = KernelVariant {
            lever: Lever::Texel,
            ..image
        };
        assert_eq!(texel.unsupported(), Some(NoBuild::TileCacheLever(Lever::Texel)));
    }

    #[test]
    fn module_names_are_the_stem_and_the_options_in_axis_order() {
        for module in shaders::MODULES {
            let options = module
                .options
                .iter()
                .map(|(_, o)| *o)
                .filter(|o| !o.is_empty());
            let name: Vec<&str> = std::iter::once(module.stem).chain(options).collect();
            assert_eq!(module.spirv.name, name.join("_"));
        }
        let fast = KernelVariant {
            shader: DropletShader::FastQuads,
            spawn: SpawnMode::Tiled,
            lever: Lever::VulkanMemoryModel,
            ..KernelVariant::default()
        };
        assert_eq!(fast.module_name(), "droplet_fast_quads_vmm");
        assert_eq!(
            fast.module(true).unwrap().name,
            "droplet_fast_quads_vmm_counted"
        );
    }
}
