//! Erosion-noise terrain on the GPU (glsl/terrain.comp) and on the CPU (noise.rs).

use std::sync::Arc;

use rayon::prelude::*;
use thiserror::Error;

use super::heightmap::Heightmap;
use super::noise::{heightmap, V2};
use crate::gpu::{
    shaders, Buffer, BufferKind, CommandStream, ComputePipeline, Context, GpuError, PipelineDesc,
};
use crate::hash::pcg_hash;

/// Smallest map side: the droplet kernel needs a one-cell border and a 2x2 stencil.
pub const MIN_SIZE: u32 = 4;

/// The most cells a generated terrain has: 65536^2, which the terrain kernel's 64-bit
/// index and the wide droplet build reach.
pub const MAX_CELLS: u64 = 1 << 32;

/// Default relief per cell of map side: the noise then has a mean slope of about 0.8 to
/// 1 height unit per cell, so the kernel's minimum slope (0.01) and its 1/1000
/// fixed-point step are both small against it.
pub const DEFAULT_RELIEF_PER_SIDE: f32 = 2.0;

#[derive(Debug, Error)]
pub enum TerrainError {
    #[error("terrain size {width} x {height} is below the minimum of {MIN_SIZE} x {MIN_SIZE}")]
    TooSmall { width: u32, height: u32 },
    #[error("terrain size {width} x {height} has more than 2^32 cells (65536^2), the largest map vkerode generates")]
    TooLarge { width: u32, height: u32 },
    #[error("relief must be finite and positive, got {0}")]
    BadRelief(f32),
    #[error(transparent)]
    Gpu(#[from] GpuError),
}

impl TerrainError {
    /// The setting at fault, for messages that name its flag or key.
    pub fn key(&self) -> &'static str {
        match self {
            TerrainError::BadRelief(_) => "relief",
            _ => "size",
        }
    }
}

/// What terrain to make: its size, seed and relief (in cell units).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct TerrainSpec {
    pub width: u32,
    pub height: u32,
    pub seed: u32,
    /// Heights are noise heights in [0, 1] times this, in cell units.
    pub relief: f32,
}

impl TerrainSpec {
    /// A square map with the default relief.
    pub fn square(size: u32, seed: u32) -> Self {
        Self {
            width: size,
            height: size,
            seed,
            relief: DEFAULT_RELIEF_PER_SIDE * size as f32,
        }
    }

    pub fn validate(&self) -> Result<(), TerrainError> {
        if self.width < MIN_SIZE || self.height < MIN_SIZE {
            return Err(TerrainError::TooSmall {
                width: self.width,
                height: self.height,
            });
        }
        if u64::from(self.width) * u64::from(self.height) > MAX_CELLS {
            return Err(TerrainError::TooLarge {
                width: self.width,
                height: self.height,
            });
        }
        if !(self.relief.is_finite() && self.relief > 0.0) {
            return Err(TerrainError::BadRelief(self.relief));
        }
        Ok(())
    }

    /// One noise window over the longer side, with square cells.
    fn uv_per_cell(&self) -> f32 {
        1.0 / self.width.max(self.height) as f32
    }

    /// Seed 0 is the seed shader's own window; other seeds shift it by up to one map.
    /// Larger shifts would push the noise's float hash past f32 precision.
    fn uv_offset(&self) -> V2 {
        if self.seed == 0 {
            return V2(0.0, 0.0);
        }
        let a = pcg_hash(self.seed);
        let b = pcg_hash(a);
        V2(
            (a >> 8) as f32 / (1 << 24) as f32,
            (b >> 8) as f32 / (1 << 24) as f32,
        )
    }

    fn uv(&self, x: u32, y: u32) -> V2 {
        let offset = self.uv_offset();
        let per_cell = self.uv_per_cell();
        V2(
            (x as f32 + 0.5) * per_cell + offset.0,
            (y as f32 + 0.5) * per_cell + offset.1,
        )
    }
}

/// The CPU port, row-parallel.
pub fn generate_on_cpu(spec: &TerrainSpec) -> Result<Heightmap, TerrainError> {
    spec.validate()?;
    let (w, h) = (spec.width as usize, spec.height as usize);
    let mut data = vec![0.0f32; w * h];
    data.par_chunks_mut(w).enumerate().for_each(|(y, row)| {
        for (x, cell) in row.iter_mut().enumerate() {
            *cell = heightmap(spec.uv(x as u32, y as u32)).0 * spec.relief;
        }
    });
    Ok(Heightmap::new(w, h, data).expect("length is width * height"))
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct TerrainPushConstants {
    width: i32,
    height: i32,
    relief: f32,
    uv_per_cell: f32,
    uv_offset: [f32; 2],
}

const TILE: u32 = 8;

/// glsl/terrain.comp on the given device.
pub fn generate_on_gpu(ctx: &Arc<Context>, spec: &TerrainSpec) -> Result<Heightmap, TerrainError> {
    spec.validate()?;
    let cells = u64::from(spec.width) * u64::from(spec.height);
    let bytes = cells * 4;
    let pipeline = ComputePipeline::new(
        ctx,
        &PipelineDesc::addressed(
            shaders::TERRAIN,
            &[],
            1,
            std::mem::size_of::<TerrainPushConstants>() as u32,
        ),
    )?;
    if !ctx.info().shader_int64 {
        return Err(GpuError::MissingFeature {
            what: "the terrain kernel's 64-bit cell index".into(),
            feature: "shaderInt64",
            device: ctx.info().name.clone(),
        }
        .into());
    }
    let heights = Buffer::new(ctx, "terrain heights", bytes, BufferKind::Addressed)?;
    let offset = spec.uv_offset();
    let push = TerrainPushConstants {
        width: spec.width as i32,
        height: spec.height as i32,
        relief: spec.relief,
        uv_per_cell: spec.uv_per_cell(),
        uv_offset: [offset.0, offset.1],
    };
    let groups = [spec.width.div_ceil(TILE), spec.height.div_ceil(TILE)];
    let limits = ctx.info().max_workgroup_count;
    for (axis, (&n, &limit)) in groups.iter().zip(&limits).enumerate() {
        if n > limit {
            return Err(GpuError::LimitExceeded {
                what: format!(
                    "terrain of {} x {} cells (axis {axis})",
                    spec.width, spec.height
                ),
                requested: u64::from(n),
                limit_name: "maxComputeWorkGroupCount",
                limit: u64::from(limit),
            }
            .into());
        }
    }
    let mut stream = CommandStream::new(ctx)?;
    stream.submit(|rec| {
        rec.bind_addressed(&pipeline, &[&heights], &push);
        rec.dispatch(groups[0], groups[1], 1);
    })?;
    // In chunks: a 65536^2 map is 16 GiB.
    let data = crate::gpu::download::<f32>(ctx, &heights, cells as usize)?;
    Ok(
        Heightmap::new(spec.width as usize, spec.height as usize, data)
            .expect("buffer holds width * height floats"),
    )
}
