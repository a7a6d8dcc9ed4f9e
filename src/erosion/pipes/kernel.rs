//! The grid kernels on the GPU: the passes of one variant with one set of the model's
//! parameters, and what their push-constant block holds. `runner.rs` runs them over a
//! map.

use std::sync::Arc;

use super::params::{Boundary, PipesParams};
use super::variant::PipesVariant;
use crate::erosion::grid::{numbered, GridPipelines};
use crate::erosion::ErosionError;
use crate::gpu::{Context, SpecValue};

/// The push-constant block after the eleven field addresses
/// (glsl/include/pipes_common.glsl); the model's parameters are specialization constants.
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
pub(super) struct PipesPushConstants {
    pub width: i32,
    pub height: i32,
    pub flags: i32,
}

/// The eleven fields the push-constant block addresses, in its order.
pub(super) const FIELDS: usize = 11;
/// FLAGS bits of the fused passes (glsl/include/pipes_fused.glsl).
pub(super) const STEP_FIRST: i32 = 1;
pub(super) const STEP_FINISH: i32 = 2;

/// The model's rules, then the pipelines of `variant` with `params`: the parameters as
/// specialization constants, after the workgroup's shape.
pub(super) fn pipelines(
    ctx: &Arc<Context>,
    variant: PipesVariant,
    params: &PipesParams,
) -> Result<GridPipelines, ErosionError> {
    params.check()?;
    variant.check(params.advection, Some(ctx.info()))?;
    let p = params;
    let floats = [
        p.dt,
        p.rain,
        p.pipe_area,
        p.gravity,
        p.cell_length,
        p.capacity,
        p.dissolving,
        p.deposition,
        p.evaporation,
        p.min_tilt,
        p.max_erosion_depth,
    ]
    .map(SpecValue::F32);
    let shape = [variant.workgroup.x, variant.workgroup.y].map(SpecValue::U32);
    // Booleans are 32-bit (VkBool32).
    let flag = |on: bool| SpecValue::U32(u32::from(on));
    let edges_and_cap = [
        SpecValue::F32(p.flux_kept()),
        flag(p.boundary == Boundary::Open),
        SpecValue::F32(p.base_level),
        flag(p.sediment_cap.is_some()),
        SpecValue::F32(p.sediment_cap.unwrap_or(1.0)),
    ];
    let spec = numbered(shape.into_iter().chain(floats).chain(edges_and_cap));
    let module = |stem: &&str, counted| {
        variant
            .module(stem, params.advection, counted)
            .ok_or_else(|| ErosionError::NoModule(format!("{stem} for {variant}")))
    };
    GridPipelines::new::<_, PipesPushConstants>(ctx, variant.stems(), &spec, FIELDS as u32, module)
}
