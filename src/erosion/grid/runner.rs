//! The recording of a grid strategy's time steps: one submission per chunk of steps
//! between the clock's timestamps, each step its passes over the whole map.

use std::sync::Arc;

use crate::erosion::steps::StepClock;
use crate::erosion::ErosionError;
use crate::gpu::{Buffer, CommandStream, ComputePipeline, Context, Hazard, Recorder};

/// Records and submits one chunk of steps: `reset` (which copies the prepared map in
/// where the chunk starts from it), then `steps` between the clock's timestamps.
pub(crate) fn submit_chunk<'r>(
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

/// Records `steps` time steps of `passes`, each pass dispatched over `groups` and
/// followed by a barrier, the submission split every `per_submission` steps. Each
/// submission counts its steps, for an observer to tell how far the run has got.
/// `bindings(step)` gives the fields (in the push-constant block's order) and the push
/// constants of every pass of `step`, and moves the state on for the next.
pub(crate) fn record_steps<'r, const FIELDS: usize, P: bytemuck::Pod>(
    rec: &mut Recorder<'r>,
    passes: &'r [ComputePipeline],
    steps: u32,
    per_submission: u32,
    groups: [u32; 2],
    mut bindings: impl FnMut(u32) -> ([&'r Buffer; FIELDS], P),
) {
    for step in 0..steps {
        if step > 0 && step % per_submission == 0 {
            rec.split_submission();
        }
        rec.count_units(1);
        let (fields, push) = bindings(step);
        for pipeline in passes {
            rec.bind_addressed(pipeline, &fields, &push);
            rec.dispatch(groups[0], groups[1], 1);
            rec.barrier(Hazard::ComputeToCompute);
        }
    }
}
