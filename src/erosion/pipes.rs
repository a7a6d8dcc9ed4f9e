//! The paper's other strategy, grid-centric: the virtual-pipe shallow-water erosion of
//! Mei, Decaudin and Hu (2007), five passes a time step (glsl/pipes_*.comp) over
//! float32 fields, no atomics. `pipes_cpu.rs` is its sequential reference.

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

use super::ErosionError;
use crate::gpu::{
    shaders, Buffer, BufferKind, CommandStream, ComputePipeline, Context, DescriptorSet, Hazard,
    PipelineDesc, TimestampQueries,
};

/// The model's parameters; the defaults are the working values of open implementations
/// (rain 0.012, evaporation 0.015, pipe area 20, Kc 1, Ks 0.5, Kd 1).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct PipesParams {
    pub dt: f32,
    pub rain: f32,
    pub pipe_area: f32,
    pub gravity: f32,
    pub cell_length: f32,
    pub capacity: f32,
    pub dissolving: f32,
    pub deposition: f32,
    pub evaporation: f32,
    pub min_tilt: f32,
    /// Water depth from which the capacity is whole; shallower water carries less.
    pub max_erosion_depth: f32,
}

impl PipesParams {
    pub const DEFAULT: PipesParams = PipesParams {
        dt: 0.02,
        rain: 0.012,
        pipe_area: 20.0,
        gravity: 9.81,
        cell_length: 1.0,
        capacity: 1.0,
        dissolving: 0.5,
        deposition: 1.0,
        evaporation: 0.015,
        min_tilt: 0.05,
        max_erosion_depth: 0.1,
    };

    /// The flux and depth updates form a symplectic Euler step of surface waves whose
    /// fastest grid mode has angular frequency sqrt(8 A g / l^3); the step is stable for
    /// dt at most 2 over that, `dt <= sqrt(l^3 / (2 A g))` (the model's CFL condition).
    /// A larger dt is refused, naming the largest stable one.
    pub fn check(&self) -> Result<(), ErosionError> {
        let values = [
            self.dt,
            self.rain,
            self.pipe_area,
            self.gravity,
            self.cell_length,
            self.capacity,
            self.dissolving,
            self.deposition,
            self.evaporation,
            self.min_tilt,
            self.max_erosion_depth,
        ];
        if values.iter().any(|v| !v.is_finite() || *v < 0.0)
            || self.dt == 0.0
            || self.cell_length == 0.0
            || self.max_erosion_depth == 0.0
        {
            return Err(ErosionError::Variant(format!(
                "pipes parameters must be finite and not negative, dt and cell length positive: {self:?}"
            )));
        }
        let largest = self.largest_stable_dt();
        if self.dt > largest {
            return Err(ErosionError::Variant(format!(
                "time step {} breaks the flux step's stability (dt <= sqrt(cell length^3 / (2 pipe area g))): at most {largest}",
                self.dt
            )));
        }
        Ok(())
    }

    pub fn largest_stable_dt(&self) -> f32 {
        (self.cell_length.powi(3) / (2.0 * self.pipe_area * self.gravity)).sqrt()
    }
}

/// The model's fields, row-major.
#[derive(Clone, Debug, PartialEq)]
pub struct PipesState {
    pub width: usize,
    pub height: usize,
    pub terrain: Vec<f32>,
    pub water: Vec<f32>,
    pub sediment: Vec<f32>,
    /// Outflow to the left, right, top and bottom neighbour.
    pub flux: Vec<[f32; 4]>,
}

impl PipesState {
    /// Dry terrain: no water, sediment or flow.
    pub fn dry(width: usize, height: usize, terrain: Vec<f32>) -> Self {
        let n = terrain.len();
        Self {
            width,
            height,
            terrain,
            water: vec![0.0; n],
            sediment: vec![0.0; n],
            flux: vec![[0.0; 4]; n],
        }
    }

    /// Terrain, sediment and water, summed: what rain adds and evaporation and the
    /// advection's drift take.
    pub fn totals(&self) -> (f64, f64, f64) {
        let sum = |v: &[f32]| v.iter().map(|&x| f64::from(x)).sum::<f64>();
        (sum(&self.terrain), sum(&self.sediment), sum(&self.water))
    }
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct PipesPushConstants {
    width: i32,
    height: i32,
    dt: f32,
    rain: f32,
    pipe_area: f32,
    gravity: f32,
    cell_length: f32,
    capacity: f32,
    dissolving: f32,
    deposition: f32,
    evaporation: f32,
    min_tilt: f32,
    max_erosion_depth: f32,
}

const WORKGROUP: u32 = 16;
const BINDINGS: u32 = 9;

/// The five passes' pipelines.
pub struct PipesKernel {
    ctx: Arc<Context>,
    passes: [ComputePipeline; 5],
}

/// What a run on the GPU gave.
pub struct PipesRun {
    pub state: PipesState,
    /// GPU time of the steps (timestamps), `None` without timestamps.
    pub gpu_time: Option<Duration>,
}

impl PipesKernel {
    pub fn new(ctx: &Arc<Context>) -> Result<Self, ErosionError> {
        let build = |shader| {
            ComputePipeline::new(
                ctx,
                &PipelineDesc::storage(
                    shader,
                    &[],
                    BINDINGS,
                    std::mem::size_of::<PipesPushConstants>() as u32,
                ),
            )
        };
        Ok(Self {
            ctx: Arc::clone(ctx),
            passes: [
                build(shaders::PIPES_RAIN)?,
                build(shaders::PIPES_FLUX)?,
                build(shaders::PIPES_WATER)?,
                build(shaders::PIPES_EROSION)?,
                build(shaders::PIPES_ADVECT)?,
            ],
        })
    }

    /// Runs `steps` time steps from `state`; one submission, a barrier between passes.
    pub fn run(
        &self,
        state: &PipesState,
        params: &PipesParams,
        steps: u32,
    ) -> Result<PipesRun, ErosionError> {
        params.check()?;
        let ctx = &self.ctx;
        let cells = state.terrain.len() as u64;
        let field = |name: &str, data: &[f32]| Buffer::upload_from(ctx, name, data);
        let storage = |name: &str, bytes: u64| Buffer::new(ctx, name, bytes, BufferKind::Storage);
        let uploads = [
            field("terrain upload", &state.terrain)?,
            field("water upload", &state.water)?,
            field("sediment upload", &state.sediment)?,
            Buffer::upload_from(
                ctx,
                "flux upload",
                bytemuck::cast_slice::<_, f32>(&state.flux),
            )?,
        ];
        let fields = [
            storage("terrainA", cells * 4)?,
            storage("terrainB", cells * 4)?,
            storage("waterA", cells * 4)?,
            storage("waterB", cells * 4)?,
            storage("sedimentA", cells * 4)?,
            storage("sedimentB", cells * 4)?,
            storage("fluxA", cells * 16)?,
            storage("fluxB", cells * 16)?,
            storage("velocity", cells * 8)?,
        ];
        let downloads = [
            Buffer::new(ctx, "terrain read-back", cells * 4, BufferKind::Download)?,
            Buffer::new(ctx, "water read-back", cells * 4, BufferKind::Download)?,
            Buffer::new(ctx, "sediment read-back", cells * 4, BufferKind::Download)?,
            Buffer::new(ctx, "flux read-back", cells * 16, BufferKind::Download)?,
        ];
        // The A buffer of each uploaded field: terrain, water, sediment, flux.
        let state_fields = [&fields[0], &fields[2], &fields[4], &fields[6]];
        let bound: Vec<&Buffer> = fields.iter().collect();
        let sets = self
            .passes
            .iter()
            .map(|p| DescriptorSet::new(p, &bound))
            .collect::<Result<Vec<_>, _>>()?;
        let queries = TimestampQueries::new(ctx, 2)?;
        let push = PipesPushConstants {
            width: state.width as i32,
            height: state.height as i32,
            dt: params.dt,
            rain: params.rain,
            pipe_area: params.pipe_area,
            gravity: params.gravity,
            cell_length: params.cell_length,
            capacity: params.capacity,
            dissolving: params.dissolving,
            deposition: params.deposition,
            evaporation: params.evaporation,
            min_tilt: params.min_tilt,
            max_erosion_depth: params.max_erosion_depth,
        };
        let groups = [
            (state.width as u32).div_ceil(WORKGROUP),
            (state.height as u32).div_ceil(WORKGROUP),
        ];
        let mut stream = CommandStream::new(ctx)?;
        stream.submit(|rec| {
            if let Some(q) = &queries {
                rec.reset_queries(q);
            }
            rec.barrier(Hazard::EarlierWorkToTransfer);
            for (upload, field) in uploads.iter().zip(state_fields) {
                rec.copy(upload, field);
            }
            rec.fill_zero(&fields[8]);
            rec.barrier(Hazard::TransferToCompute);
            if let Some(q) = &queries {
                rec.timestamp(q, 0);
            }
            for step in 0..steps {
                for (pass, (pipeline, set)) in self.passes.iter().zip(&sets).enumerate() {
                    if step > 0 || pass > 0 {
                        rec.barrier(Hazard::ComputeToCompute);
                    }
                    rec.bind(pipeline, set);
                    rec.push_constants(&push);
                    rec.dispatch(groups[0], groups[1], 1);
                }
            }
            if let Some(q) = &queries {
                rec.timestamp(q, 1);
            }
            rec.barrier(Hazard::ComputeToTransfer);
            for (field, download) in state_fields.iter().zip(&downloads) {
                rec.copy(field, download);
            }
            rec.barrier(Hazard::TransferToHost);
        })?;
        let gpu_time = match &queries {
            Some(q) => Some(q.elapsed(0, 1)?),
            None => None,
        };
        let flux: Vec<f32> = downloads[3].read()?;
        Ok(PipesRun {
            state: PipesState {
                width: state.width,
                height: state.height,
                terrain: downloads[0].read()?,
                water: downloads[1].read()?,
                sediment: downloads[2].read()?,
                flux: flux
                    .chunks_exact(4)
                    .map(|c| [c[0], c[1], c[2], c[3]])
                    .collect(),
            },
            gpu_time,
        })
    }
}
