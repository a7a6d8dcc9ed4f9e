//! The thermal kernels on the GPU: the passes of one variant with one set of the
//! model's parameters, timed and counted. `runner.rs` runs them over a map.

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
pub(super) const FIELDS: u32 = 5;
/// Cell-steps per second a run is assumed to make before one was timed, to split the
/// first run into submissions: low, so that the first submissions are short (the fused
/// pass is bound by its arithmetic more than by its 8 bytes a cell).
pub(super) const ASSUMED_CELL_STEPS_PER_S: f64 = 1e9;

/// The pipelines of one variant and one set of the model's parameters, timed and
/// counted.
pub struct ThermalKernel {
    pub(super) ctx: Arc<Context>,
    pub(super) variant: ThermalVariant,
    pub(super) params: ThermalParams,
    pub(super) pipelines: GridPipelines,
}

impl ThermalKernel {
    pub fn new(
        ctx: &Arc<Context>,
        variant: ThermalVariant,
        params: &ThermalParams,
    ) -> Result<Self, ErosionError> {
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
                    ErosionError::Variant(format!(
                        "{} has no module for {variant} with {} neighbours",
                        pass.stem, params.neighbours
                    ))
                })
        };
        let pipelines = GridPipelines::new::<_, ThermalPushConstants>(
            ctx,
            variant.passes(),
            &spec,
            FIELDS,
            module,
        )?;
        Ok(Self {
            ctx: Arc::clone(ctx),
            variant,
            params: *params,
            pipelines,
        })
    }

    pub fn variant(&self) -> ThermalVariant {
        self.variant
    }

    pub fn params(&self) -> &ThermalParams {
        &self.params
    }

    /// The timed modules of a step, in order, joined by `+`.
    pub fn module_name(&self) -> String {
        self.pipelines.module_name()
    }

    /// The compiler statistics of the step's last pass (the one that writes the
    /// heights).
    pub fn statistics(&self) -> &[crate::gpu::CompilerStatistic] {
        self.pipelines.statistics()
    }
}
