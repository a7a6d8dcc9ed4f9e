//! One map's fields on the device, and the time steps run over them: timed, or with
//! the balance checked every so many steps.

use std::time::{Duration, Instant};

use serde::Serialize;

use super::kernel::{
    PipesKernel, PipesPushConstants, ASSUMED_BYTES_PER_S, FIELDS, STEP_FINISH, STEP_FIRST,
};
use super::params::{Advection, Boundary, Totals};
use super::variant::{Fusion, Packing};
use crate::erosion::steps::{download_f32, StepClock};
use crate::erosion::ErosionError;
use crate::erosion::grid::{record_steps, submit_chunk};
use crate::gpu::{Buffer, BufferKind, Hazard, Recorder};

impl PipesKernel {
    /// A runner of this kernel over a `width` x `height` map of `terrain`, dry or with
    /// `water` standing.
    pub fn prepare(
        self,
        width: usize,
        height: usize,
        terrain: &[f32],
        water: Option<&[f32]>,
    ) -> Result<PipesRunner, ErosionError> {
        PipesRunner::new(self, width, height, terrain, water)
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

/// One map's fields on the device. Each run starts from the map it was prepared with.
pub struct PipesRunner {
    kernel: PipesKernel,
    width: usize,
    height: usize,
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
    /// Which of each pair holds the state's fields after the last run.
    state: StateBuffers,
    clock: StepClock,
    start: Totals,
}

/// Which buffer of each pair holds the state's terrain, water and sediment.
#[derive(Clone, Copy, Debug, Default)]
struct StateBuffers {
    terrain: usize,
    water: usize,
    sediment: usize,
}

impl PipesRunner {
    fn new(
        kernel: PipesKernel,
        width: usize,
        height: usize,
        terrain: &[f32],
        water: Option<&[f32]>,
    ) -> Result<Self, ErosionError> {
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
        let ctx = &std::sync::Arc::clone(&kernel.ctx);
        let fused = kernel.variant.fusion == Fusion::Fused;
        let open = kernel.params.boundary == Boundary::Open;
        let bytes = cells as u64;
        let (flux_bytes, velocity_bytes) = match kernel.variant.packing {
            Packing::F32 => (16, 8),
            Packing::Half => (8, 4),
        };
        let field = |name: &str, per_cell: u64| {
            Buffer::new(ctx, name, bytes * per_cell, BufferKind::Addressed)
        };
        // The fused passes update the flux in place; their second flux buffer is a
        // placeholder the shaders never touch.
        let second = |name: &str, per_cell: u64| field(name, if fused { 1 } else { per_cell });
        let runner = Self {
            kernel,
            width,
            height,
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
            state: StateBuffers::default(),
            clock: StepClock::new(ctx)?,
            start: Totals::of(terrain, &[], water.unwrap_or(&[])),
        };
        Ok(runner)
    }

    fn cells(&self) -> u64 {
        (self.width * self.height) as u64
    }

    pub fn width(&self) -> usize {
        self.width
    }

    pub fn height(&self) -> usize {
        self.height
    }

    pub fn kernel(&self) -> &PipesKernel {
        &self.kernel
    }

    /// Terrain, sediment and water of the prepared map.
    pub fn start(&self) -> Totals {
        self.start
    }

    /// GPU submissions the last run was split into.
    pub fn submissions(&self) -> usize {
        self.clock.submissions()
    }

    /// Runs `steps` time steps from the prepared map, timed: the GPU time of the steps
    /// (timestamps; `None` without them) and the wall time of the whole submission.
    pub fn run(&mut self, steps: u32) -> Result<(Option<Duration>, Duration), ErosionError> {
        let started = Instant::now();
        self.submit_chunk(steps, true, false)?;
        self.clock.timed(steps, started.elapsed())
    }

    /// Runs `steps` time steps from the prepared map with the counted build, checking
    /// the balance every `every` steps and at the end.
    pub fn run_checked(
        &mut self,
        steps: u32,
        every: u32,
    ) -> Result<Vec<BalanceCheck>, ErosionError> {
        let every = every.clamp(1, steps.max(1));
        let mut checks = Vec::new();
        let mut done = 0;
        while done < steps {
            let chunk = every.min(steps - done);
            let started = Instant::now();
            self.submit_chunk(chunk, done == 0, true)?;
            self.clock.walled(chunk, started.elapsed());
            done += chunk;
            checks.push(self.balance(done)?);
        }
        Ok(checks)
    }

    fn balance(&self, step: u32) -> Result<BalanceCheck, ErosionError> {
        let params = &self.kernel.params;
        let fields = self.read()?;
        let totals = Totals::of(&fields.terrain, &fields.sediment, &fields.water);
        let sum = |v: &[f32]| v.iter().map(|&x| f64::from(x)).sum::<f64>();
        let evaporated = sum(&self.download(&self.evaporated)?);
        let (mut outflow, mut sediment_outflow) = (0.0, 0.0);
        if params.boundary == Boundary::Open {
            let drained = download_f32(&self.kernel.ctx, &self.drained, 2 * self.cells())?;
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
            water_error: totals.water - (self.start.water + rain - evaporated - outflow),
            advection_drift: totals.terrain + totals.sediment + sediment_outflow
                - (self.start.terrain + self.start.sediment),
        })
    }

    /// The state's terrain, water and sediment after the last run.
    pub fn read(&self) -> Result<PipesFields, ErosionError> {
        Ok(PipesFields {
            width: self.width,
            height: self.height,
            terrain: self.read_terrain()?,
            water: self.download(&self.water[self.state.water])?,
            sediment: self.download(&self.sediment[self.state.sediment])?,
        })
    }

    /// The state's terrain alone after the last run.
    pub fn read_terrain(&self) -> Result<Vec<f32>, ErosionError> {
        self.download(&self.terrain[self.state.terrain])
    }

    fn download(&self, field: &Buffer) -> Result<Vec<f32>, ErosionError> {
        download_f32(&self.kernel.ctx, field, self.cells())
    }

    /// Records and submits `steps` steps: from the prepared map when `reset` (the
    /// counted build's evaporation zeroed too), else from the state the last chunk left.
    fn submit_chunk(&mut self, steps: u32, reset: bool, counted: bool) -> Result<(), ErosionError> {
        let kernel = &self.kernel;
        let bytes = self.cells() * kernel.variant.bytes_per_cell_step(kernel.params.advection);
        let assumed_step = Duration::from_secs_f64(bytes as f64 / ASSUMED_BYTES_PER_S);
        let per_submission = self.clock.plan(&kernel.ctx, steps, assumed_step, counted);
        let passes = kernel.pipelines.passes(counted);
        let fused = kernel.variant.fusion == Fusion::Fused;
        let upwind = kernel.params.advection == Advection::Upwind;
        let groups = kernel.variant.workgroup.groups(self.width, self.height);
        let push = |flags| PipesPushConstants {
            width: self.width as i32,
            height: self.height as i32,
            flags,
        };
        let mut state = if reset {
            StateBuffers::default()
        } else {
            self.state
        };
        let this = &*self;
        // Each pass reads its A buffers and writes its B buffers (pipes_common.glsl).
        // The plain passes keep the state in A; the fused ones swap terrain and water
        // each step. Their semi-Lagrangian flux pass advects the state's sediment from
        // B into A; their upwind erosion pass transports it from A into B.
        let roles = |state: StateBuffers| -> [&Buffer; FIELDS as usize] {
            let (t, w, s) = (state.terrain, state.water, state.sediment);
            let s = if fused && !upwind { 1 - s } else { s };
            [
                &this.terrain[t],
                &this.terrain[1 - t],
                &this.water[w],
                &this.water[1 - w],
                &this.sediment[s],
                &this.sediment[1 - s],
                &this.flux[0],
                &this.flux[1],
                &this.velocity,
                &this.evaporated,
                &this.drained,
            ]
        };
        let record_reset = |rec: &mut _| {
            if reset {
                this.record_reset(rec, counted);
            }
        };
        submit_chunk(&kernel.ctx, &this.clock, record_reset, |rec| {
            record_steps(rec, passes, steps, per_submission, groups, |step| {
                let flags = if step == 0 { STEP_FIRST } else { 0 };
                let bound = (roles(state), push(flags));
                if fused {
                    state.terrain = 1 - state.terrain;
                    state.water = 1 - state.water;
                    if upwind {
                        state.sediment = 1 - state.sediment;
                    }
                }
                bound
            });
            if fused && steps > 0 {
                rec.bind_addressed(&passes[0], &roles(state), &push(STEP_FINISH));
                rec.dispatch(groups[0], groups[1], 1);
                if !upwind {
                    state.sediment = 1 - state.sediment;
                }
            }
        })?;
        self.state = state;
        Ok(())
    }

    /// Copies the prepared map into the state's buffers and zeroes the rest.
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
