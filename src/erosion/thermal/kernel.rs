//! The thermal kernels on the GPU: the passes of one variant with one set of the
//! model's parameters, timed and counted. `runner.rs` runs them over a map.

use std::sync::Arc;

use super::params::ThermalParams;
use super::variant::ThermalVariant;
use crate::erosion::ErosionError;
use crate::gpu::{ComputePipeline, Context, PipelineDesc, SpecConstant, SpecValue};

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
    pub(super) timed: Vec<ComputePipeline>,
    pub(super) counted: Vec<ComputePipeline>,
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
        let spec = [
            SpecValue::U32(variant.workgroup.x),
            SpecValue::U32(variant.workgroup.y),
            SpecValue::F32(axial),
            SpecValue::F32(diagonal),
            SpecValue::F32(params.rate),
        ];
        let spec: Vec<SpecConstant> = spec
            .into_iter()
            .zip(1..)
            .map(|(value, id)| SpecConstant { id, value })
            .collect();
        let build = |counted| {
            variant
                .passes()
                .iter()
                .map(|&pass| {
                    let module = variant
                        .module(pass, params.neighbours, counted)
                        .ok_or_else(|| {
                            ErosionError::Variant(format!(
                                "{} has no module for {variant} with {} neighbours",
                                pass.stem, params.neighbours
                            ))
                        })?;
                    let desc = PipelineDesc::addressed(
                        module,
                        &spec,
                        FIELDS,
                        std::mem::size_of::<ThermalPushConstants>() as u32,
                    );
                    Ok(ComputePipeline::new(ctx, &desc)?)
                })
                .collect::<Result<Vec<_>, ErosionError>>()
        };
        Ok(Self {
            ctx: Arc::clone(ctx),
            variant,
            params: *params,
            timed: build(false)?,
            counted: build(true)?,
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
        let names: Vec<&str> = self.timed.iter().map(|p| p.name()).collect();
        names.join("+")
    }

    /// The compiler statistics of the step's last pass (the one that writes the
    /// heights).
    pub fn statistics(&self) -> &[crate::gpu::CompilerStatistic] {
        self.timed.last().map_or(&[], |p| p.statistics())
    }
}
