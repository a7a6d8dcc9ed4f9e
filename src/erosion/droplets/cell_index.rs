//! The droplet kernels' cell index, run on the device for given coordinates
//! (glsl/cell_index_probe.comp, which runs glsl/include/cell_index.glsl): the
//! arithmetic of maps past 2^31 cells, checked where no such map fits in memory.

use std::sync::Arc;

use super::super::ErosionError;
use crate::gpu::{
    shaders, Buffer, BufferKind, CommandStream, ComputePipeline, Context, DescriptorSet,
    PipelineDesc, ShaderModule,
};

/// What the kernels compute for one cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ComputedCell {
    /// Its row-major index (the 32-bit build's, sign-extended).
    pub index: i64,
    /// Its address from the probe's base (the wide build only; 0 otherwise).
    pub address: u64,
}

const WORKGROUP: u32 = 64;

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct ProbeParams {
    map_width: i32,
    count: u32,
    base_address: [u32; 2],
}

/// The index (and, `wide`, the address from `base_address`) the wide or the 32-bit
/// build computes for each `(x, y)` of `cells` on a map `map_width` cells wide.
pub fn computed_cells(
    ctx: &Arc<Context>,
    wide: bool,
    map_width: i32,
    base_address: u64,
    cells: &[[i32; 2]],
) -> Result<Vec<ComputedCell>, ErosionError> {
    if cells.is_empty() {
        return Ok(Vec::new());
    }
    if wide && !ctx.info().shader_int64 {
        return Err(ErosionError::Unsupported(
            "the wide build's 64-bit index (shaderInt64)",
        ));
    }
    let build = if wide { "wide" } else { "" };
    let shader = ShaderModule::find(shaders::MODULES, "cell_index_probe", &[("build", build)])
        .ok_or_else(|| ErosionError::NoModule(format!("cell_index_probe (build {build:?})")))?;
    let params = ProbeParams {
        map_width,
        count: cells.len() as u32,
        base_address: [base_address as u32, (base_address >> 32) as u32],
    };
    let pipeline = ComputePipeline::new(
        ctx,
        &PipelineDesc::storage(shader, &[], 2, std::mem::size_of::<ProbeParams>() as u32),
    )?;
    let coordinates = Buffer::new(
        ctx,
        "cell coordinates",
        std::mem::size_of_val(cells) as u64,
        BufferKind::Storage,
    )?;
    crate::gpu::upload(ctx, cells, &coordinates)?;
    let results_bytes = cells.len() as u64 * 16;
    let results = Buffer::new(ctx, "computed cells", results_bytes, BufferKind::Storage)?;
    let set = DescriptorSet::new(&pipeline, &[&coordinates, &results])?;
    CommandStream::new(ctx)?.submit(|rec| {
        rec.bind(&pipeline, &set);
        rec.push_constants(&params);
        rec.dispatch((cells.len() as u32).div_ceil(WORKGROUP), 1, 1);
    })?;
    let words = crate::gpu::download::<[u32; 4]>(ctx, &results, cells.len())?;
    let wide_word = |low: u32, high: u32| u64::from(low) | (u64::from(high) << 32);
    Ok(words
        .iter()
        .map(|w| ComputedCell {
            index: wide_word(w[0], w[1]) as i64,
            address: wide_word(w[2], w[3]),
        })
        .collect())
}
