//! The pipelines of a grid model's passes: one build timed, one counted.

use std::sync::Arc;

use crate::erosion::ErosionError;
use crate::gpu::{
    CompilerStatistic, ComputePipeline, Context, PipelineDesc, SpecConstant, SpecValue, Spirv,
};

/// The pipelines of a time step's passes, in order, in the timed and the counted build.
pub struct GridPipelines {
    timed: Vec<ComputePipeline>,
    counted: Vec<ComputePipeline>,
}

impl GridPipelines {
    /// Each of `passes` built from `module(pass, counted)`, timed then counted, with
    /// the constants `spec`, `fields` field addresses and the push constants `P` after
    /// them.
    pub fn new<T, P: bytemuck::Pod>(
        ctx: &Arc<Context>,
        passes: &[T],
        spec: &[SpecConstant],
        fields: u32,
        module: impl Fn(&T, bool) -> Result<Spirv, ErosionError>,
    ) -> Result<Self, ErosionError> {
        let build = |counted| {
            passes
                .iter()
                .map(|pass| {
                    let desc = PipelineDesc::addressed(
                        module(pass, counted)?,
                        spec,
                        fields,
                        std::mem::size_of::<P>() as u32,
                    );
                    Ok(ComputePipeline::new(ctx, &desc)?)
                })
                .collect::<Result<Vec<_>, ErosionError>>()
        };
        Ok(Self {
            timed: build(false)?,
            counted: build(true)?,
        })
    }

    /// The passes of a step in the counted build, or the timed one.
    pub fn passes(&self, counted: bool) -> &[ComputePipeline] {
        if counted {
            &self.counted
        } else {
            &self.timed
        }
    }

    /// The timed modules of a step, in order, joined by `+`.
    pub fn module_name(&self) -> String {
        let names: Vec<&str> = self.timed.iter().map(|p| p.name()).collect();
        names.join("+")
    }

    /// The compiler statistics of the step's last pass.
    pub fn statistics(&self) -> &[CompilerStatistic] {
        self.timed.last().map_or(&[], |p| p.statistics())
    }
}

/// `values` as specialization constants with the ids 1, 2, ... in order.
pub fn numbered(values: impl IntoIterator<Item = SpecValue>) -> Vec<SpecConstant> {
    values
        .into_iter()
        .zip(1..)
        .map(|(value, id)| SpecConstant { id, value })
        .collect()
}
