//! Driver of glsl/droplet.comp and its variants: the pipelines of one build at one
//! workgroup size. `runner.rs` runs them on a map.

use std::sync::Arc;

use super::params::{AtomicMode, KernelParams, Model};
use super::spawn::SpawnMode;
use super::variant::{DropletShader, KernelVariant, Lever};
use crate::erosion::ErosionError;
use crate::gpu::{
    shaders, CompilerStatistic, ComputePipeline, Context, PipelineDesc, SpecConstant, SpecValue,
    Spirv, TexelKind,
};

/// The push-constant block of glsl/include/droplet_bindings.glsl, member for member.
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
pub(super) struct DropletPushConstants {
    pub map_width: i32,
    pub map_height: i32,
    pub max_lifetime: i32,
    pub inertia: f32,
    pub capacity_factor: f32,
    pub erosion_rate: f32,
    pub deposition_rate: f32,
    pub evaporation_rate: f32,
    pub seed: u32,
    pub batch_base_id: u32,
    pub batch_size: u32,
    pub tile_size: u32,
    pub tile_order: u32,
    pub phase_stride: u32,
    pub phase: u32,
    pub group_base: u32,
    pub pass: u32,
    pub pass_count: u32,
    pub steps_per_pass: u32,
    pub stagger: u32,
    pub colour_groups: u32,
}

/// The push-constant block of glsl/droplet_replay.comp.
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
pub(super) struct ReplayPushConstants {
    pub map_width: u32,
    pub max_lifetime: u32,
    pub batch_base_id: u32,
    pub batch_size: u32,
    pub pass: u32,
    pub pass_count: u32,
    pub steps_per_pass: u32,
    pub stagger: u32,
}

/// The push-constant block of glsl/apply_delta.comp.
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
pub(super) struct ApplyPushConstants {
    pub cells: u32,
}
pub(super) const APPLY_WORKGROUP: u32 = 256;
/// Bytes of one `DropletState` in glsl/include/droplet_bindings.glsl.
pub(super) const DROPLET_STATE_BYTES: u64 = 32;

/// SSBO bindings of the droplet kernel: heightData, the six of the instrumented and
/// stateful builds, the heightfield again for the readonly and quad loads, and the
/// address record. A texel view of it follows where a lever asks for one
/// (`texel_binding`).
const STORAGE_BINDINGS: u32 = 9;

/// Buffers the wide build reaches by address: heightData and cellHits.
pub(super) const WIDE_ADDRESSES: u32 = 2;

/// Specialization constant IDs of the droplet kernel.
pub(super) const WORKGROUP_SIZE_ID: u32 = 1;
const FIXED_POINT_SCALE_ID: u32 = 2;
pub(super) const RESERVED_SHARED_WORDS_ID: u32 = 3;
const PHYSICS_SIGN_ID: u32 = 4;
const ROUNDING_ID: u32 = 5;
const RECORDS_ADDRESSES_ID: u32 = 6;
/// The tile-cache kernel's window (glsl/droplet_tilecache.comp).
const CACHE_TILE_ID: u32 = 7;
const CACHE_MARGIN_ID: u32 = 8;
const SPAWN_TILED_ID: u32 = 9;
/// Slots of the `workCounters` SSBO: droplets, then 64 shards each of atomics, of
/// same-cell conflicts inside a subgroup, of adds of zero, and of the tile-cache
/// kernel's adds outside its window.
pub(super) const COUNTER_SHARDS: usize = 64;
pub(super) const COUNTER_SLOTS: u64 = 1 + 4 * COUNTER_SHARDS as u64;

/// A fixed-point heightfield: `int(h * scale)` per cell, row-major.
#[derive(Clone, Debug)]
pub struct FixedHeightfield<'a> {
    pub width: u32,
    pub height: u32,
    pub cells: &'a [i32],
}

impl<'a> FixedHeightfield<'a> {
    pub fn new(width: u32, height: u32, cells: &'a [i32]) -> Self {
        Self {
            width,
            height,
            cells,
        }
    }
}

pub struct DropletKernel {
    ctx: Arc<Context>,
    timed: ComputePipeline,
    counted: ComputePipeline,
    /// The counted build that records addresses, built on first use.
    recording: std::sync::OnceLock<ComputePipeline>,
    spec: Vec<SpecConstant>,
    /// Deterministic mode's glsl/apply_delta.comp.
    apply: Option<ComputePipeline>,
    workgroup: u32,
    variant: KernelVariant,
    scale: f32,
    model: Model,
}

impl DropletKernel {
    /// The kernel for jobs with `params`: their fixed-point scale, physics and rounding.
    pub fn for_params(
        ctx: &Arc<Context>,
        workgroup: u32,
        params: &KernelParams,
        variant: KernelVariant,
    ) -> Result<Self, ErosionError> {
        Self::build(
            ctx,
            workgroup,
            params.fixed_point_scale,
            params.model(),
            variant,
        )
    }

    /// Builds the timed and instrumented pipelines of this variant for this workgroup
    /// size and scale, with the paper's physics and rounding.
    pub fn new(
        ctx: &Arc<Context>,
        workgroup: u32,
        fixed_point_scale: f32,
        variant: KernelVariant,
    ) -> Result<Self, ErosionError> {
        Self::build(ctx, workgroup, fixed_point_scale, Model::default(), variant)
    }

    fn build(
        ctx: &Arc<Context>,
        workgroup: u32,
        fixed_point_scale: f32,
        model: Model,
        variant: KernelVariant,
    ) -> Result<Self, ErosionError> {
        let limit = ctx.info().max_workgroup_x();
        if workgroup == 0 || workgroup > limit {
            return Err(ErosionError::Workgroup {
                requested: workgroup,
                limit,
            });
        }
        if let Some(reason) = variant.unsupported() {
            return Err(reason.into());
        }
        let shared_limit = ctx.info().max_shared_memory_bytes;
        let cached_bytes = if variant.shader == DropletShader::TileCache {
            variant.cache.shared_bytes()
        } else {
            0
        };
        if u64::from(variant.reserved_shared_bytes) + cached_bytes > u64::from(shared_limit) {
            return Err(ErosionError::SharedMemory {
                reserved: variant.reserved_shared_bytes,
                cached: cached_bytes,
                limit: shared_limit,
            });
        }
        if variant.atomics == AtomicMode::Float && !ctx.info().float_atomic_add {
            return Err(ErosionError::Unsupported(
                "float atomics (shaderBufferFloat32AtomicAdd of VK_EXT_shader_atomic_float)",
            ));
        }
        let mut spec = vec![
            SpecConstant {
                id: WORKGROUP_SIZE_ID,
                value: SpecValue::U32(workgroup),
            },
            SpecConstant {
                id: FIXED_POINT_SCALE_ID,
                value: SpecValue::F32(fixed_point_scale),
            },
            SpecConstant {
                id: RESERVED_SHARED_WORDS_ID,
                value: SpecValue::U32((variant.reserved_shared_bytes / 4).max(1)),
            },
            SpecConstant {
                id: PHYSICS_SIGN_ID,
                value: SpecValue::F32(model.physics.sign()),
            },
            SpecConstant {
                id: ROUNDING_ID,
                value: SpecValue::U32(model.rounding.code()),
            },
            SpecConstant {
                id: SPAWN_TILED_ID,
                value: SpecValue::U32(u32::from(variant.spawn == SpawnMode::Tiled)),
            },
        ];
        let wide = variant.lever == Lever::Wide;
        if wide && !(ctx.info().buffer_device_address && ctx.info().shader_int64) {
            return Err(ErosionError::Unsupported(
                "the wide build (bufferDeviceAddress and shaderInt64)",
            ));
        }
        if variant.shader == DropletShader::TileCache {
            spec.push(SpecConstant {
                id: CACHE_TILE_ID,
                value: SpecValue::U32(variant.cache.tile),
            });
            spec.push(SpecConstant {
                id: CACHE_MARGIN_ID,
                value: SpecValue::U32(variant.cache.margin),
            });
        }
        let build = |shader: Spirv| droplet_pipeline(ctx, &variant, shader, &spec);
        let apply = if variant.atomics == AtomicMode::Deterministic {
            Some(ComputePipeline::new(
                ctx,
                &PipelineDesc::storage(
                    shaders::APPLY_DELTA,
                    &[],
                    2,
                    std::mem::size_of::<ApplyPushConstants>() as u32,
                ),
            )?)
        } else {
            None
        };
        Ok(Self {
            ctx: Arc::clone(ctx),
            timed: build(compiled_module(&variant, false)?)?,
            counted: build(compiled_module(&variant, true)?)?,
            recording: std::sync::OnceLock::new(),
            spec,
            apply,
            workgroup,
            variant,
            scale: fixed_point_scale,
            model,
        })
    }

    /// The physics and rounding the kernel was compiled for.
    pub fn model(&self) -> Model {
        self.model
    }

    pub fn workgroup(&self) -> u32 {
        self.workgroup
    }

    pub fn variant(&self) -> KernelVariant {
        self.variant
    }

    /// The driver's compiler statistics of the timed pipeline; empty where the device
    /// does not report them.
    pub fn statistics(&self) -> &[CompilerStatistic] {
        self.timed.statistics()
    }

    pub(super) fn context(&self) -> &Arc<Context> {
        &self.ctx
    }

    /// The fixed-point scale the pipelines were specialised with.
    pub(super) fn scale(&self) -> f32 {
        self.scale
    }

    /// The timed pipeline, the instrumented one, or the instrumented one that records
    /// addresses.
    pub(super) fn pipeline(
        &self,
        counted: bool,
        records: bool,
    ) -> Result<&ComputePipeline, ErosionError> {
        Ok(match (counted, records) {
            (false, _) => &self.timed,
            (true, false) => &self.counted,
            (true, true) => match self.recording.get() {
                Some(pipeline) => pipeline,
                None => {
                    let pipeline = self.build_recording()?;
                    self.recording.get_or_init(|| pipeline)
                }
            },
        })
    }

    fn build_recording(&self) -> Result<ComputePipeline, ErosionError> {
        let module = compiled_module(&self.variant, true)?;
        let mut spec = self.spec.clone();
        spec.push(SpecConstant {
            id: RECORDS_ADDRESSES_ID,
            value: SpecValue::U32(1),
        });
        Ok(droplet_pipeline(&self.ctx, &self.variant, module, &spec)?)
    }

    /// Deterministic mode's apply pipeline.
    pub(super) fn apply(&self) -> Option<&ComputePipeline> {
        self.apply.as_ref()
    }
}

/// The compiled module of `variant` (its counted build if `counted`); a missing one is
/// a gap between build.rs and the variants.
fn compiled_module(variant: &KernelVariant, counted: bool) -> Result<Spirv, ErosionError> {
    variant
        .module(counted)
        .ok_or_else(|| ErosionError::NoModule(variant.module_name()))
}

/// A droplet module's pipeline, with the variant's texel binding and robustness.
fn droplet_pipeline(
    ctx: &Arc<Context>,
    variant: &KernelVariant,
    shader: Spirv,
    spec: &[SpecConstant],
) -> crate::gpu::GpuResult<ComputePipeline> {
    // The wide build's addresses lead its push constants.
    let addressed = if variant.lever == Lever::Wide {
        WIDE_ADDRESSES
    } else {
        0
    };
    ComputePipeline::new(
        ctx,
        &PipelineDesc {
            texel_buffers: texel_binding(variant.lever).as_slice(),
            robustness_off: variant.lever == Lever::RobustnessOff,
            addressed_buffers: addressed,
            ..PipelineDesc::storage(
                shader,
                spec,
                STORAGE_BINDINGS,
                8 * addressed + std::mem::size_of::<DropletPushConstants>() as u32,
            )
        },
    )
}

/// The texel view of the heightfield a lever binds after the SSBOs, if any.
pub(super) fn texel_binding(lever: Lever) -> Option<TexelKind> {
    match lever {
        Lever::Texel => Some(TexelKind::Uniform),
        Lever::ImageAtomics | Lever::Image => Some(TexelKind::Storage),
        _ => None,
    }
}

/// The map's shape against its cells; past 2^31 cells only for the wide build.
pub(super) fn check_map(map: &FixedHeightfield, wide: bool) -> Result<(), ErosionError> {
    let min = crate::terrain::MIN_SIZE;
    if map.width < min || map.height < min {
        return Err(ErosionError::MapTooSmall {
            width: map.width,
            height: map.height,
        });
    }
    let cells = u64::from(map.width) * u64::from(map.height);
    if map.cells.len() as u64 != cells || (cells > i32::MAX as u64 && !wide) {
        return Err(ErosionError::MapShape {
            width: map.width,
            height: map.height,
            cells: map.cells.len(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::push_constant_members;
    use std::mem::offset_of;

    /// (GLSL member, offset of the Rust field) of a push-constant struct.
    macro_rules! layout {
        ($ty:ty { $($glsl:ident => $field:ident),* $(,)? }) => {
            [$((stringify!($glsl), offset_of!($ty, $field))),*]
        };
    }

    /// Each GLSL member of `DropletParams` and the offset of its Rust field: a test holds
    /// them to the offsets in every droplet module's SPIR-V.
    const DROPLET_PUSH_LAYOUT: [(&str, usize); 21] = layout!(DropletPushConstants {
        MAP_WIDTH => map_width,
        MAP_HEIGHT => map_height,
        MAX_LIFETIME => max_lifetime,
        INERTIA => inertia,
        CAPACITY_FACTOR => capacity_factor,
        EROSION_RATE => erosion_rate,
        DEPOSITION_RATE => deposition_rate,
        EVAPORATION_RATE => evaporation_rate,
        SEED => seed,
        BATCH_BASE_ID => batch_base_id,
        BATCH_SIZE => batch_size,
        TILE_SIZE => tile_size,
        TILE_ORDER => tile_order,
        PHASE_STRIDE => phase_stride,
        PHASE => phase,
        GROUP_BASE => group_base,
        PASS => pass,
        PASS_COUNT => pass_count,
        STEPS_PER_PASS => steps_per_pass,
        STAGGER => stagger,
        COLOUR_GROUPS => colour_groups,
    });
    const APPLY_PUSH_LAYOUT: [(&str, usize); 1] = layout!(ApplyPushConstants { CELLS => cells });
    const REPLAY_PUSH_LAYOUT: [(&str, usize); 8] = layout!(ReplayPushConstants {
        MAP_WIDTH => map_width,
        MAX_LIFETIME => max_lifetime,
        BATCH_BASE_ID => batch_base_id,
        BATCH_SIZE => batch_size,
        PASS => pass,
        PASS_COUNT => pass_count,
        STEPS_PER_PASS => steps_per_pass,
        STAGGER => stagger,
    });

    /// The module's push-constant members, with the Rust layout's names and offsets,
    /// and the block's size against the Rust struct's.
    fn assert_push_layout(spirv: Spirv, layout: &[(&str, usize)], rust_size: usize) {
        let members = push_constant_members(spirv).expect("a push-constant block");
        let expected: Vec<(String, u32)> = layout
            .iter()
            .map(|(name, offset)| (name.to_string(), *offset as u32))
            .collect();
        assert_eq!(members, expected, "{}", spirv.name);
        let (_, last) = layout.last().expect("members");
        assert_eq!(
            last + 4,
            rust_size,
            "{}: no padding after the last member",
            spirv.name
        );
    }

    #[test]
    fn push_constant_structs_have_the_offsets_of_their_glsl_blocks() {
        let size = std::mem::size_of::<DropletPushConstants>();
        for module in [
            shaders::DROPLET,
            shaders::DROPLET_PASSES,
            shaders::DROPLET_FAST,
            shaders::DROPLET_TILECACHE,
        ] {
            assert_push_layout(module, &DROPLET_PUSH_LAYOUT, size);
        }
        let apply = std::mem::size_of::<ApplyPushConstants>();
        assert_push_layout(shaders::APPLY_DELTA, &APPLY_PUSH_LAYOUT, apply);
        let replay = std::mem::size_of::<ReplayPushConstants>();
        assert_push_layout(shaders::DROPLET_REPLAY, &REPLAY_PUSH_LAYOUT, replay);
    }

    #[test]
    fn the_wide_build_leads_its_push_constants_with_two_addresses() {
        let shift = 8 * WIDE_ADDRESSES as usize;
        for module in [shaders::DROPLET_WIDE, shaders::DROPLET_FAST_WIDE] {
            let members = push_constant_members(module).expect("a push-constant block");
            let mut expected = vec![
                ("heightAddress".to_string(), 0u32),
                ("cellHitsAddress".to_string(), 8),
            ];
            expected.extend(
                DROPLET_PUSH_LAYOUT
                    .iter()
                    .map(|(name, offset)| (name.to_string(), (offset + shift) as u32)),
            );
            assert_eq!(members, expected, "{}", module.name);
        }
    }
}
