//! The thermal kernels on the GPU: the passes of one variant with one set of the
//! model's parameters, and what their push-constant block holds. `runner.rs` runs them
//! over a map.

use std::sync::Arc;

use super::params::ThermalParams;
use super::variant::{Pass, ThermalVariant};
use crate::erosion::grid::{numbered, GridPipelines};
use crate::erosion::ErosionError;
use crate::gpu::{Context, SpecValue};

/// The push-constant block after the five field addresses
/// (glsl/include/thermal_common.glsl); the model's numbers are specialization constants.
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
pub(super) struct ThermalPushConstants {
    pub width: i32,
    pub height: i32,
}

/// The five fields the push-constant block addresses, in its order.
pub(super) const FIELDS: usize = 5;

/// The model's rules, then the pipelines of `variant` with `params`: the talus drops and
/// the rate as specialization constants, after the workgroup's shape.
pub(super) fn pipelines(
    ctx: &Arc<Context>,
    variant: ThermalVariant,
    params: &ThermalParams,
) -> Result<GridPipelines, ErosionError> {
    params.check()?;
    variant.check(Some(ctx.info()))?;
    let [axial, diagonal] = params.talus_drops();
    let spec = numbered([
        SpecValue::U32(variant.workgroup.x),
        SpecValue::U32(variant.workgroup.y),
        SpecValue::F32(axial),
        SpecValue::F32(diagonal),
        SpecValue::F32(params.rate),
    ]);
    let module = |&pass: &Pass, counted| {
        variant
            .module(pass, params.neighbours, counted)
            .ok_or_else(|| {
                ErosionError::NoModule(format!(
                    "{} for {variant} with {} neighbours",
                    pass.stem, params.neighbours
                ))
            })
    };
    GridPipelines::new::<_, ThermalPushConstants>(
        ctx,
        variant.passes(),
        &spec,
        FIELDS as u32,
        module,
    )
}
