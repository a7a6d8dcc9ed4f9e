//! One map's fields on the device and their roles in each pass, and the balance checked
//! every so many steps of a counted run.

use std::time::Duration;

use serde::Serialize;

use super::kernel::{PipesPushConstants, FIELDS, STEP_FINISH, STEP_FIRST};
use super::params::{Advection, Boundary, Totals};
use super::variant::{Fusion, Packing};
use super::{Pipes, PipesRunner};
use crate::erosion::grid::{Chunk, GridFields, GridKernel, GridRunner};
use crate::erosion::steps::download_f32;
use crate::erosion::ErosionError;
use crate::gpu::{Buffer, BufferKind, Hazard, Recorder};

/// Bytes per second a step is assumed to move before one was timed, to split the first
/// run into submissions: low, so that the first submissions are short.
const ASSUMED_BYTES_PER_S: f64 = 2e10;

impl GridKernel<Pipes> {
    /// A runner of this kernel over a `width` x `height` map of `terrain`, dry or with
    /// `water` standing.
    pub fn prepare(
        self,
        width: usize,
        height: usize,
        terrain: &[f32],
        water: Option<&[f32]>,
    ) -> Result<PipesRunner, ErosionError> {
        let cells = width * height;
        if width == 0
            || height == 0
            || terrain.len() != cells
            || water.is_some_and(|w| w.len() != cells)
        {
            return Err(ErosionError::MapShape {
                width: width as u32,
                height: height as u32,
                cells: terrain.len(),
            });
        }
        let fields = PipesBuffers::new(&self, cells as u64, terrain, water)?;
        GridRunner::new(self, width, height, fields)
    }
}

/// Where the balance stood after `step` steps of a checked run.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct BalanceCheck {
    pub step: u32,
    pub totals: Totals,
    /// Rain added and evaporation taken since the start.
    pub rain: f64,
    pub evaporated: f64,
    /// Water, and the sediment it carried, that left past the open edges since the
    /// start (0 with closed ones).
    pub outflow: f64,
    pub sediment_outflow: f64,
    /// water - (initial water + rain - evaporation - outflow): what the flux broke,
    /// which only float rounding and the clamp of depths at zero may.
    pub water_error: f64,
    /// (terrain + sediment + sediment outflow) - initial terrain and sediment: the
    /// semi-Lagrangian advection's drift.
    pub advection_drift: f64,
}

/// The fields of one map.
pub struct PipesBuffers {
    terrain_upload: Buffer,
    water_upload: Option<Buffer>,
    terrain: [Buffer; 2],
    water: [Buffer; 2],
    sediment: [Buffer; 2],
    flux: [Buffer; 2],
    velocity: Buffer,
    evaporated: Buffer,
    /// Water and sediment out past the open edges per cell (a placeholder with closed
    /// ones, which the shaders never touch).
    drained: Buffer,
    /// Terrain, sediment and water of the prepared map.
    start: Totals,
}

/// Which buffer of each pair holds the state's terrain, water and sediment.
#[derive(Clone, Copy, Debug, Default)]
pub struct StateBuffers {
    terrain: usize,
    water: usize,
    sediment: usize,
}

impl PipesBuffers {
    fn new(
        kernel: &GridKernel<Pipes>,
        cells: u64,
        terrain: &[f32],
        water: Option<&[f32]>,
    ) -> Result<Self, ErosionError> {
        let ctx = kernel.ctx();
        let fused = kernel.variant().fusion == Fusion::Fused;
        let open = kernel.params().boundary == Boundary::Open;
        let (flux_bytes, velocity_bytes) = match kernel.variant().packing {
            Packing::F32 => (16, 8),
            Packing::Half => (8, 4),
        };
        let field = |name: &str, per_cell: u64| {
            Buffer::new(ctx, name, cells * per_cell, BufferKind::Addressed)
        };
        // The fused passes update the flux in place; their second flux buffer is a
        // placeholder the shaders never touch.
        let second = |name: &str, per_cell: u64| field(name, if fused { 1 } else { per_cell });
        Ok(Self {
            terrain_upload: Buffer::upload_from(ctx, "terrain upload", terrain)?,
            water_upload: water
                .map(|w| Buffer::upload_from(ctx, "water upload", w))
                .transpose()?,
            terrain: [field("terrainA", 4)?, field("terrainB", 4)?],
            water: [field("waterA", 4)?, field("waterB", 4)?],
            sediment: [field("sedimentA", 4)?, field("sedimentB", 4)?],
            flux: [field("fluxA", flux_bytes)?, second("fluxB", flux_bytes)?],
            velocity: field("velocity", velocity_bytes)?,
            evaporated: field("evaporated", 4)?,
            drained: if open {
                field("drained", 8)?
            } else {
                Buffer::new(ctx, "drained", 8, BufferKind::Addressed)?
            },
            start: Totals::of(terrain, &[], water.unwrap_or(&[])),
        })
    }
}

impl GridRunner<Pipes> {
    /// Terrain, sediment and water of the prepared map.
    pub fn start(&self) -> Totals {
        self.fields().start
    }

    /// Runs `steps` time steps from the prepared map with the counted build, checking
    /// the balance every `every` steps and at the end.
    pub fn run_checked(
        &mut self,
        steps: u32,
        every: u32,
    ) -> Result<Vec<BalanceCheck>, ErosionError> {
        if steps == 0 {
            return Ok(Vec::new());
        }
        self.run_in_chunks(steps, every, |runner, done| runner.balance(done))
    }

    fn balance(&self, step: u32) -> Result<BalanceCheck, ErosionError> {
        let params = self.kernel().params();
        let (buffers, start) = (self.fields(), self.fields().start);
        let fields = self.read()?;
        let totals = Totals::of(&fields.terrain, &fields.sediment, &fields.water);
        let sum = |v: &[f32]| v.iter().map(|&x| f64::from(x)).sum::<f64>();
        let evaporated = sum(&self.download(&buffers.evaporated)?);
        let (mut outflow, mut sediment_outflow) = (0.0, 0.0);
        if params.boundary == Boundary::Open {
            let drained = download_f32(self.kernel().ctx(), &buffers.drained, 2 * self.cells())?;
            for cell in drained.chunks_exact(2) {
                outflow += f64::from(cell[0]);
                sediment_outflow += f64::from(cell[1]);
            }
        }
        let rain =
            f64::from(params.rain) * f64::from(params.dt) * self.cells() as f64 * f64::from(step);
        Ok(BalanceCheck {
            step,
            totals,
            rain,
            evaporated,
            outflow,
            sediment_outflow,
            water_error: totals.water - (start.water + rain - evaporated - outflow),
            advection_drift: totals.terrain + totals.sediment + sediment_outflow
                - (start.terrain + start.sediment),
        })
    }

    /// The state's terrain, water and sediment after the last run.
    pub fn read(&self) -> Result<PipesFields, ErosionError> {
        let (buffers, state) = (self.fields(), self.state());
        Ok(PipesFields {
            width: self.width(),
            height: self.height(),
            terrain: self.read_heights()?,
            water: self.download(&buffers.water[state.water])?,
            sediment: self.download(&buffers.sediment[state.sediment])?,
        })
    }
}

impl GridFields<Pipes> for PipesBuffers {
    type State = StateBuffers;

    fn assumed_step(kernel: &GridKernel<Pipes>, cells: u64) -> Duration {
        let bytes = cells * kernel.variant().bytes_per_cell_step(kernel.params().advection);
        Duration::from_secs_f64(bytes as f64 / ASSUMED_BYTES_PER_S)
    }

    fn heights(&self, state: StateBuffers) -> &Buffer {
        &self.terrain[state.terrain]
    }

    /// Copies the prepared map into the state's buffers and zeroes the rest (the counted
    /// build's evaporation and outflow too).
    fn record_reset<'r>(&'r self, rec: &mut Recorder<'r>, counted: bool) {
        rec.barrier(Hazard::EarlierWorkToTransfer);
        rec.copy(&self.terrain_upload, &self.terrain[0]);
        match &self.water_upload {
            Some(upload) => rec.copy(upload, &self.water[0]),
            None => rec.fill_zero(&self.water[0]),
        }
        for buffer in self.sediment.iter().chain(&self.flux) {
            rec.fill_zero(buffer);
        }
        rec.fill_zero(&self.velocity);
        if counted {
            rec.fill_zero(&self.evaporated);
            rec.fill_zero(&self.drained);
        }
        rec.barrier(Hazard::TransferToCompute);
    }

    fn record_steps<'r>(
        &'r self,
        rec: &mut Recorder<'r>,
        chunk: &Chunk<'r, Pipes>,
        state: &mut StateBuffers,
    ) {
        let fused = chunk.kernel.variant().fusion == Fusion::Fused;
        let upwind = chunk.kernel.params().advection == Advection::Upwind;
        let push = |flags| PipesPushConstants {
            width: chunk.width as i32,
            height: chunk.height as i32,
            flags,
        };
        // Each pass reads its A buffers and writes its B buffers (pipes_common.glsl).
        // The plain passes keep the state in A; the fused ones swap terrain and water
        // each step. Their semi-Lagrangian flux pass advects the state's sediment from
        // B into A; their upwind erosion pass transports it from A into B.
        let roles = |state: StateBuffers| -> [&'r Buffer; FIELDS] {
            let (t, w, s) = (state.terrain, state.water, state.sediment);
            let s = if fused && !upwind { 1 - s } else { s };
            [
                &self.terrain[t],
                &self.terrain[1 - t],
                &self.water[w],
                &self.water[1 - w],
                &self.sediment[s],
                &self.sediment[1 - s],
                &self.flux[0],
                &self.flux[1],
                &self.velocity,
                &self.evaporated,
                &self.drained,
            ]
        };
        chunk.record(rec, |step| {
            let flags = if step == 0 { STEP_FIRST } else { 0 };
            let bound = (roles(*state), push(flags));
            if fused {
                state.terrain = 1 - state.terrain;
                state.water = 1 - state.water;
                if upwind {
                    state.sediment = 1 - state.sediment;
                }
            }
            bound
        });
        if fused && chunk.steps > 0 {
            rec.bind_addressed(&chunk.passes[0], &roles(*state), &push(STEP_FINISH));
            rec.dispatch(chunk.groups[0], chunk.groups[1], 1);
            if !upwind {
                state.sediment = 1 - state.sediment;
            }
        }
    }
}

/// A map's terrain, water and sediment, as read back from the device.
#[derive(Clone, Debug, PartialEq)]
pub struct PipesFields {
    pub width: usize,
    pub height: usize,
    pub terrain: Vec<f32>,
    pub water: Vec<f32>,
    pub sediment: Vec<f32>,
}

impl PipesFields {
    pub fn totals(&self) -> Totals {
        Totals::of(&self.terrain, &self.sediment, &self.water)
    }
}
