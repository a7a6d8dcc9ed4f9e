//! One map's fields of a grid model on the device, and the time steps run over them:
//! one submission per chunk of steps between the clock's timestamps, each step its
//! passes over the whole map; timed, or with the counted build in chunks checked one
//! by one.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::model::{Chunk, GridFields, GridKernel, GridModel, GridRunner, GridVariant, StateOf};
use crate::erosion::steps::{download_f32, StepClock};
use crate::erosion::ErosionError;
use crate::gpu::{Buffer, CommandStream, Context, Hazard, Recorder};

impl<'r, M: GridModel> Chunk<'r, M> {
    /// Records the chunk's steps, each pass followed by a barrier and the submission
    /// split every `per_submission` steps. Each submission counts its steps, for an
    /// observer to tell how far the run has got. `bindings(step)` gives the fields (in the
    /// push-constant block's order) and the push constants of every pass of `step`, and
    /// moves the state on for the next.
    pub fn record<const FIELDS: usize, P: bytemuck::Pod>(
        &self,
        rec: &mut Recorder<'r>,
        mut bindings: impl FnMut(u32) -> ([&'r Buffer; FIELDS], P),
    ) {
        for step in 0..self.steps {
            if step > 0 && step % self.per_submission == 0 {
                rec.split_submission();
            }
            rec.count_units(1);
            let (fields, push) = bindings(step);
            for pipeline in self.passes {
                rec.bind_addressed(pipeline, &fields, &push);
                rec.dispatch(self.groups[0], self.groups[1], 1);
                rec.barrier(Hazard::ComputeToCompute);
            }
        }
    }
}

impl<M: GridModel> GridRunner<M> {
    /// A runner of `kernel` over `fields`, which hold a `width` x `height` map.
    pub(crate) fn new(
        kernel: GridKernel<M>,
        width: usize,
        height: usize,
        fields: M::Fields,
    ) -> Result<Self, ErosionError> {
        Ok(Self {
            clock: StepClock::new(kernel.ctx())?,
            kernel,
            width,
            height,
            fields,
            state: StateOf::<M>::default(),
        })
    }

    pub(crate) fn cells(&self) -> u64 {
        (self.width * self.height) as u64
    }

    pub fn width(&self) -> usize {
        self.width
    }

    pub fn height(&self) -> usize {
        self.height
    }

    pub fn kernel(&self) -> &GridKernel<M> {
        &self.kernel
    }

    pub(crate) fn fields(&self) -> &M::Fields {
        &self.fields
    }

    /// Which buffer of each pair holds the state after the last run.
    pub(crate) fn state(&self) -> StateOf<M> {
        self.state
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

    /// Runs `steps` time steps from the prepared map with the counted build, in chunks
    /// of `every` steps: after each, `check(self, steps done)`.
    pub(crate) fn run_in_chunks<C>(
        &mut self,
        steps: u32,
        every: u32,
        mut check: impl FnMut(&Self, u32) -> Result<C, ErosionError>,
    ) -> Result<Vec<C>, ErosionError> {
        let every = every.clamp(1, steps.max(1));
        let mut checks = Vec::new();
        let mut done = 0;
        // At least one chunk, so that a run of no steps still starts from the map.
        loop {
            let chunk = every.min(steps - done);
            let started = Instant::now();
            self.submit_chunk(chunk, done == 0, true)?;
            self.clock.walled(chunk, started.elapsed());
            done += chunk;
            checks.push(check(self, done)?);
            if done >= steps {
                return Ok(checks);
            }
        }
    }

    /// The state's heights after the last run.
    pub fn read_heights(&self) -> Result<Vec<f32>, ErosionError> {
        self.download(self.fields.heights(self.state))
    }

    /// A field of one f32 a cell, copied back to the host.
    pub(crate) fn download(&self, field: &Buffer) -> Result<Vec<f32>, ErosionError> {
        download_f32(self.kernel.ctx(), field, self.cells())
    }

    /// Records and submits `steps` steps: from the prepared map when `reset` (the
    /// counted build's sums zeroed too), else from the state the last chunk left.
    fn submit_chunk(&mut self, steps: u32, reset: bool, counted: bool) -> Result<(), ErosionError> {
        let kernel = &self.kernel;
        let assumed_step = M::Fields::assumed_step(kernel, self.cells());
        let per_submission = self.clock.plan(kernel.ctx(), steps, assumed_step);
        let chunk = Chunk {
            kernel,
            passes: kernel.pipelines().passes(counted),
            steps,
            per_submission,
            groups: kernel.variant().workgroup().groups(self.width, self.height),
            width: self.width,
            height: self.height,
        };
        let mut state = if reset {
            StateOf::<M>::default()
        } else {
            self.state
        };
        let fields = &self.fields;
        let record_reset = |rec: &mut _| {
            if reset {
                fields.record_reset(rec, counted);
            }
        };
        submit(kernel.ctx(), &self.clock, record_reset, |rec| {
            fields.record_steps(rec, &chunk, &mut state);
        })?;
        self.state = state;
        Ok(())
    }
}

/// Records and submits one chunk of steps: `reset` (which copies the prepared map in
/// where the chunk starts from it), then `steps` between the clock's timestamps.
fn submit<'r>(
    ctx: &Arc<Context>,
    clock: &'r StepClock,
    reset: impl FnOnce(&mut Recorder<'r>),
    steps: impl FnOnce(&mut Recorder<'r>),
) -> Result<(), ErosionError> {
    let mut stream = CommandStream::new(ctx)?;
    stream.submit(|rec: &mut Recorder<'r>| {
        reset(rec);
        clock.record_start(rec);
        steps(rec);
        clock.record_end(rec);
    })?;
    Ok(())
}
