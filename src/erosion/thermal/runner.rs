//! One map's heights on the device, and the time steps run over them: timed, or with
//! the mass checked every so many steps.

use std::time::{Duration, Instant};

use serde::Serialize;

use super::kernel::{ThermalKernel, ThermalPushConstants, ASSUMED_CELL_STEPS_PER_S, FIELDS};
use super::params::rounding_bound;
use super::variant::Fusion;
use crate::erosion::steps::{download_f32, StepClock};
use crate::erosion::ErosionError;
use crate::erosion::grid::{record_steps, submit_chunk};
use crate::gpu::{Buffer, BufferKind, Hazard, Recorder};

/// Bytes of a field the variant never touches: a placeholder address for its slot.
const PLACEHOLDER_BYTES: u64 = 16;

impl ThermalKernel {
    /// A runner of this kernel over a `width` x `height` map of `heights`.
    pub fn prepare(
        self,
        width: usize,
        height: usize,
        heights: &[f32],
    ) -> Result<ThermalRunner, ErosionError> {
        ThermalRunner::new(self, width, height, heights)
    }
}

/// Where the mass stood after `step` steps of a checked run.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct MassCheck {
    pub step: u32,
    /// The heights' sum, in height units x cells.
    pub mass: f64,
    /// `mass` minus the start's: float rounding alone.
    pub drift: f64,
    /// The most float rounding could have drifted by ([`rounding_bound`]).
    pub bound: f64,
}

/// Sum and largest magnitude of a map's heights.
pub fn mass_of(heights: &[f32]) -> (f64, f64) {
    heights.iter().fold((0.0, 0.0), |(sum, highest), &h| {
        (sum + f64::from(h), f64::max(highest, f64::from(h.abs())))
    })
}

/// One map's fields on the device. Each run starts from the map it was prepared with.
pub struct ThermalRunner {
    kernel: ThermalKernel,
    width: usize,
    height: usize,
    upload: Buffer,
    /// The state and, for the fused pass, the heights it writes (they swap each step).
    heights: [Buffer; 2],
    /// The two-pass step's outflows: axial, and diagonal for 8 neighbours.
    axial_out: Buffer,
    diagonal_out: Buffer,
    /// The counted build's sum of what each cell sent.
    sent: Buffer,
    /// Which of `heights` holds the state after the last run.
    state: usize,
    clock: StepClock,
    /// Sum and largest magnitude of the prepared map's heights.
    start: (f64, f64),
}

impl ThermalRunner {
    fn new(
        kernel: ThermalKernel,
        width: usize,
        height: usize,
        heights: &[f32],
    ) -> Result<Self, ErosionError> {
        let cells = width * height;
        if width == 0 || height == 0 || heights.len() != cells || cells > i32::MAX as usize {
            return Err(ErosionError::MapShape {
                width: width as u32,
                height: height as u32,
                cells: heights.len(),
            });
        }
        let ctx = &std::sync::Arc::clone(&kernel.ctx);
        let fused = kernel.variant.fusion == Fusion::Fused;
        let eight = kernel.params.neighbours == 8;
        let field = |name: &str, per_cell: u64, used: bool| {
            let size = if used {
                cells as u64 * per_cell
            } else {
                PLACEHOLDER_BYTES
            };
            Buffer::new(ctx, name, size, BufferKind::Addressed)
        };
        Ok(Self {
            upload: Buffer::upload_from(ctx, "heights upload", heights)?,
            heights: [field("heightsA", 4, true)?, field("heightsB", 4, fused)?],
            axial_out: field("axial outflows", 16, !fused)?,
            diagonal_out: field("diagonal outflows", 16, !fused && eight)?,
            sent: field("sent", 4, true)?,
            state: 0,
            clock: StepClock::new(ctx)?,
            start: mass_of(heights),
            kernel,
            width,
            height,
        })
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

    pub fn kernel(&self) -> &ThermalKernel {
        &self.kernel
    }

    /// The prepared map's heights summed, in height units x cells.
    pub fn start_mass(&self) -> f64 {
        self.start.0
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
    /// the mass every `every` steps and at the end.
    pub fn run_checked(&mut self, steps: u32, every: u32) -> Result<Vec<MassCheck>, ErosionError> {
        let every = every.clamp(1, steps.max(1));
        let mut checks = Vec::new();
        let mut done = 0;
        let mut highest = self.start.1;
        // At least one chunk, so that a run of no steps still starts from the map.
        loop {
            let chunk = every.min(steps - done);
            let started = Instant::now();
            self.submit_chunk(chunk, done == 0, true)?;
            self.clock.walled(chunk, started.elapsed());
            done += chunk;
            let (mass, largest) = mass_of(&self.read_heights()?);
            highest = highest.max(largest);
            checks.push(MassCheck {
                step: done,
                mass,
                drift: mass - self.start.0,
                // Twice the largest height seen at the checks, for what the steps
                // between them reached: a margin, not a proof (a pit that several
                // neighbours fill in one Jacobi step overshoots them).
                bound: rounding_bound(u64::from(done), self.cells(), 2.0 * highest),
            });
            if done >= steps {
                return Ok(checks);
            }
        }
    }

    /// The state's heights after the last run.
    pub fn read_heights(&self) -> Result<Vec<f32>, ErosionError> {
        self.download(&self.heights[self.state])
    }

    /// What each cell sent over the last counted run, in height units.
    pub fn read_sent(&self) -> Result<Vec<f32>, ErosionError> {
        self.download(&self.sent)
    }

    fn download(&self, field: &Buffer) -> Result<Vec<f32>, ErosionError> {
        download_f32(&self.kernel.ctx, field, self.cells())
    }

    /// Records and submits `steps` steps: from the prepared map when `reset` (the
    /// counted build's sums zeroed too), else from the state the last chunk left.
    fn submit_chunk(&mut self, steps: u32, reset: bool, counted: bool) -> Result<(), ErosionError> {
        let assumed_step = Duration::from_secs_f64(self.cells() as f64 / ASSUMED_CELL_STEPS_PER_S);
        let per_submission = self.clock.plan(&self.kernel.ctx, steps, assumed_step, counted);
        let kernel = &self.kernel;
        let passes = kernel.pipelines.passes(counted);
        let fused = kernel.variant.fusion == Fusion::Fused;
        let groups = kernel.variant.workgroup.groups(self.width, self.height);
        let push = ThermalPushConstants {
            width: self.width as i32,
            height: self.height as i32,
        };
        let mut state = if reset { 0 } else { self.state };
        let this = &*self;
        // Every pass reads the state from heightsA; the fused one writes heightsB, and
        // the two buffers swap roles each step.
        let roles = |state: usize| -> [&Buffer; FIELDS as usize] {
            [
                &this.heights[state],
                &this.heights[1 - state],
                &this.axial_out,
                &this.diagonal_out,
                &this.sent,
            ]
        };
        let record_reset = |rec: &mut _| {
            if reset {
                this.record_reset(rec, counted);
            }
        };
        submit_chunk(&kernel.ctx, &this.clock, record_reset, |rec| {
            record_steps(rec, passes, steps, per_submission, groups, |_| {
                let bound = (roles(state), push);
                if fused {
                    state = 1 - state;
                }
                bound
            });
        })?;
        self.state = state;
        Ok(())
    }

    /// Copies the prepared map into the state's buffer, and zeroes the counted build's
    /// sums.
    fn record_reset<'r>(&'r self, rec: &mut Recorder<'r>, counted: bool) {
        rec.barrier(Hazard::EarlierWorkToTransfer);
        rec.copy(&self.upload, &self.heights[0]);
        if counted {
            rec.fill_zero(&self.sent);
        }
        rec.barrier(Hazard::TransferToCompute);
    }
}
