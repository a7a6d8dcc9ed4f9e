//! One map's heights on the device and their roles in each pass, and the mass checked
//! every so many steps of a counted run.

use std::time::Duration;

use serde::Serialize;

use super::kernel::{ThermalPushConstants, FIELDS};
use super::params::rounding_bound;
use super::variant::Fusion;
use super::{Thermal, ThermalRunner};
use crate::erosion::grid::{Chunk, GridFields, GridKernel, GridRunner};
use crate::erosion::ErosionError;
use crate::gpu::{Buffer, BufferKind, Hazard, Recorder};

/// Cell-steps per second a run is assumed to make before one was timed, to split the
/// first run into submissions: low, so that the first submissions are short (the fused
/// pass is bound by its arithmetic more than by its 8 bytes a cell).
const ASSUMED_CELL_STEPS_PER_S: f64 = 1e9;

/// Bytes of a field the variant never touches: a placeholder address for its slot.
const PLACEHOLDER_BYTES: u64 = 16;

impl GridKernel<Thermal> {
    /// A runner of this kernel over a `width` x `height` map of `heights`.
    pub fn prepare(
        self,
        width: usize,
        height: usize,
        heights: &[f32],
    ) -> Result<ThermalRunner, ErosionError> {
        let cells = width * height;
        if width == 0 || height == 0 || heights.len() != cells || cells > i32::MAX as usize {
            return Err(ErosionError::MapShape {
                width: width as u32,
                height: height as u32,
                cells: heights.len(),
            });
        }
        let fields = ThermalBuffers::new(&self, cells as u64, heights)?;
        GridRunner::new(self, width, height, fields)
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

/// The fields of one map.
pub struct ThermalBuffers {
    upload: Buffer,
    /// The state and, for the fused pass, the heights it writes (they swap each step).
    heights: [Buffer; 2],
    /// The two-pass step's outflows: axial, and diagonal for 8 neighbours.
    axial_out: Buffer,
    diagonal_out: Buffer,
    /// The counted build's sum of what each cell sent.
    sent: Buffer,
    /// Sum and largest magnitude of the prepared map's heights.
    start: (f64, f64),
}

impl ThermalBuffers {
    fn new(kernel: &GridKernel<Thermal>, cells: u64, heights: &[f32]) -> Result<Self, ErosionError> {
        let ctx = kernel.ctx();
        let fused = kernel.variant().fusion == Fusion::Fused;
        let eight = kernel.params().neighbours == 8;
        let field = |name: &str, per_cell: u64, used: bool| {
            let size = if used {
                cells * per_cell
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
            start: mass_of(heights),
        })
    }
}

impl GridRunner<Thermal> {
    /// The prepared map's heights summed, in height units x cells.
    pub fn start_mass(&self) -> f64 {
        self.fields().start.0
    }

    /// Runs `steps` time steps from the prepared map with the counted build, checking
    /// the mass every `every` steps and at the end.
    pub fn run_checked(&mut self, steps: u32, every: u32) -> Result<Vec<MassCheck>, ErosionError> {
        let (start, mut highest) = self.fields().start;
        self.run_in_chunks(steps, every, |runner, done| {
            let (mass, largest) = mass_of(&runner.read_heights()?);
            highest = highest.max(largest);
            Ok(MassCheck {
                step: done,
                mass,
                drift: mass - start,
                // Twice the largest height seen at the checks, for what the steps
                // between them reached: a margin, not a proof (a pit that several
                // neighbours fill in one Jacobi step overshoots them).
                bound: rounding_bound(u64::from(done), runner.cells(), 2.0 * highest),
            })
        })
    }

    /// What each cell sent over the last counted run, in height units.
    pub fn read_sent(&self) -> Result<Vec<f32>, ErosionError> {
        self.download(&self.fields().sent)
    }
}

impl GridFields<Thermal> for ThermalBuffers {
    /// Which of `heights` holds the state.
    type State = usize;

    fn assumed_step(_kernel: &GridKernel<Thermal>, cells: u64) -> Duration {
        Duration::from_secs_f64(cells as f64 / ASSUMED_CELL_STEPS_PER_S)
    }

    fn heights(&self, state: usize) -> &Buffer {
        &self.heights[state]
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

    fn record_steps<'r>(&'r self, rec: &mut Recorder<'r>, chunk: &Chunk<'r, Thermal>, state: &mut usize) {
        let fused = chunk.kernel.variant().fusion == Fusion::Fused;
        let push = ThermalPushConstants {
            width: chunk.width as i32,
            height: chunk.height as i32,
        };
        // Every pass reads the state from heightsA; the fused one writes heightsB, and
        // the two buffers swap roles each step.
        let roles = |state: usize| -> [&'r Buffer; FIELDS] {
            [
                &self.heights[state],
                &self.heights[1 - state],
                &self.axial_out,
                &self.diagonal_out,
                &self.sent,
            ]
        };
        chunk.record(rec, |_| {
            let bound = (roles(*state), push);
            if fused {
                *state = 1 - *state;
            }
            bound
        });
    }
}
