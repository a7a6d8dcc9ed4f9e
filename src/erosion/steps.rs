//! What the grid strategies share: time steps split into submissions that each last
//! about the context's longest, timed by GPU timestamps; f32 fields read back; and
//! their heights as float32 cells, with the work counted in cell-steps.

use std::sync::Arc;
use std::time::Duration;

use super::ErosionError;
use crate::gpu::{Buffer, BufferKind, CommandStream, Context, Hazard, Recorder, TimestampQueries};
use crate::terrain::{Cells, Values};

/// Submissions a chunk is split into at least before the pace of a step is known:
/// splits that change no height, only how soon progress is heard of.
const UNPACED_SUBMISSIONS: u32 = 10;

/// The timing of a runner's chunks of steps.
pub(crate) struct StepClock {
    queries: Option<TimestampQueries>,
    /// GPU time of one step in the last timed run.
    step_time: Option<Duration>,
    /// Submissions the last chunk of steps was split into.
    submissions: usize,
}

impl StepClock {
    pub fn new(ctx: &Arc<Context>) -> Result<Self, ErosionError> {
        Ok(Self {
            queries: TimestampQueries::new(ctx, 2)?,
            step_time: None,
            submissions: 0,
        })
    }

    /// Steps one submission of a chunk of `steps` may hold, so that it runs about the
    /// context's longest submission: from the last step timed, or `assumed_step`
    /// before one. The first chunk, before any step was timed, is split into
    /// [`UNPACED_SUBMISSIONS`] at least: at a CPU device's pace, far below the assumed
    /// one, it would otherwise be one long submission that a progress observer hears
    /// of only at its end: the counted run's first chunk, or where a run counts nothing
    /// (`pipes_check_every = 0`), its first timed one.
    /// Records how many submissions the chunk takes.
    pub fn plan(&mut self, ctx: &Context, steps: u32, assumed_step: Duration) -> u32 {
        let step = self.step_time.unwrap_or(assumed_step);
        let budget = ctx.max_submission().as_secs_f64();
        let mut per_submission =
            (budget / step.as_secs_f64().max(1e-9)).clamp(1.0, f64::from(u32::MAX)) as u32;
        if self.step_time.is_none() {
            per_submission = per_submission.min(steps.div_ceil(UNPACED_SUBMISSIONS).max(1));
        }
        self.submissions = steps.max(1).div_ceil(per_submission) as usize;
        per_submission
    }

    /// After an untimed chunk of `steps` (the counted build) that took `wall`: the step
    /// time the next plan assumes, until a timed chunk gives one. The assumed rate is a
    /// GPU's; on a CPU device (lavapipe) it would put a long run in one silent submission.
    pub fn walled(&mut self, steps: u32, wall: Duration) {
        if steps > 0 && self.step_time.is_none() {
            self.step_time = Some(wall / steps);
        }
    }

    /// Submissions the last chunk was split into.
    pub fn submissions(&self) -> usize {
        self.submissions
    }

    /// Records the start of the timed steps.
    pub fn record_start<'r>(&'r self, rec: &mut Recorder<'r>) {
        if let Some(q) = &self.queries {
            rec.reset_queries(q);
            rec.timestamp(q, 0);
        }
    }

    /// Records the end of the timed steps.
    pub fn record_end<'r>(&'r self, rec: &mut Recorder<'r>) {
        if let Some(q) = &self.queries {
            rec.timestamp(q, 1);
        }
    }

    /// After a timed chunk of `steps` that took `wall`: its GPU time (`None` without
    /// timestamps) and `wall`, and the time of one step for the next plan.
    pub fn timed(
        &mut self,
        steps: u32,
        wall: Duration,
    ) -> Result<(Option<Duration>, Duration), ErosionError> {
        let gpu = match &self.queries {
            Some(q) => Some(q.elapsed(0, 1)?),
            None => None,
        };
        if steps > 0 {
            self.step_time = Some(gpu.unwrap_or(wall) / steps);
        }
        Ok((gpu, wall))
    }
}

/// A field of `cells` f32 values, copied back to the host after the compute work.
pub(crate) fn download_f32(
    ctx: &Arc<Context>,
    field: &Buffer,
    cells: u64,
) -> Result<Vec<f32>, ErosionError> {
    let host = Buffer::new(ctx, "read-back", cells * 4, BufferKind::Download)?;
    CommandStream::new(ctx)?.submit(|rec| {
        rec.barrier(Hazard::ComputeToTransfer);
        rec.copy(field, &host);
        rec.barrier(Hazard::TransferToHost);
    })?;
    Ok(host.read()?)
}

/// The float32 heights of `cells`; refused for fixed-point ones, which `kernels` (the
/// strategy's, named in the error) do not run on.
pub(crate) fn float_cells<'c>(
    cells: &'c Cells,
    kernels: &'static str,
) -> Result<&'c [f32], ErosionError> {
    cells.float().ok_or(ErosionError::Heights {
        kernels,
        heights: "float32",
    })
}

/// A `width` x `height` map of float32 heights.
pub(crate) fn float_state(
    width: usize,
    height: usize,
    heights: Vec<f32>,
) -> Result<Cells, ErosionError> {
    Ok(Cells::new(width, height, Values::Float(heights))?)
}

/// The work of `steps` time steps over `cells` cells.
pub(crate) fn cell_steps(cells: usize, steps: u32) -> u64 {
    cells as u64 * u64::from(steps)
}
