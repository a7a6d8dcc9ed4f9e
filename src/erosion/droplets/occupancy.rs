//! `shared_kib = "auto"`: the occupancy that runs a job fastest, chosen by a short probe.
//! On the H200 the droplets' speed depends on how many run at once per SM more than on
//! anything else a user sets, and the best number changes with the kernel, the
//! workgroup and the map: reserving shared memory per workgroup is the knob, and the
//! probe times the job itself at each candidate.

use std::sync::Arc;

use serde::Serialize;

use super::kernel::{DropletKernel, FixedHeightfield};
use super::params::DropletJob;
use super::runner::RunMode;
use super::settings::OCCUPANCY_CANDIDATES_KIB;
use super::variant::{DropletShader, KernelVariant};
use crate::erosion::ErosionError;
use crate::gpu::Context;

/// Timed runs of each candidate, interleaved so that a drift of the clocks weighs on
/// every candidate alike; the median decides.
const PROBE_ROUNDS: usize = 3;
/// GPU time the probe runs the first candidate for before it times any, so that the
/// clocks have risen from idle (as a sweep's warm-up does).
const PROBE_WARMUP_S: f64 = 0.3;

/// What the probe chose, and what it measured.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct OccupancyChoice {
    /// KiB of shared memory reserved per workgroup in the runs that followed.
    pub chosen_kib: u32,
    /// Each candidate and the median GPU time (or wall time without timestamps) of its
    /// probe runs, in ms.
    pub probe_ms: Vec<(u32, f64)>,
}

/// The kernel of `variant` at the candidate that runs `job` fastest, and the choice.
pub(super) fn fastest(
    ctx: &Arc<Context>,
    workgroup: u32,
    job: &DropletJob,
    variant: KernelVariant,
    map: &FixedHeightfield,
    batch: u32,
) -> Result<(DropletKernel, OccupancyChoice), ErosionError> {
    // The tile-cache kernel's windows share the workgroup's shared memory.
    let window = match variant.shader {
        DropletShader::TileCache => variant.cache.shared_bytes(),
        _ => 0,
    };
    let limit = u64::from(ctx.info().max_shared_memory_bytes);
    let candidates: Vec<u32> = OCCUPANCY_CANDIDATES_KIB
        .into_iter()
        .filter(|&kib| u64::from(kib) * 1024 + window <= limit)
        .collect();
    let kernels = candidates
        .iter()
        .map(|&kib| {
            let variant = KernelVariant {
                reserved_shared_bytes: kib * 1024,
                ..variant
            };
            DropletKernel::for_params(ctx, workgroup, &job.params, variant)
        })
        .collect::<Result<Vec<_>, _>>()?;
    // One candidate's map buffers at a time: a map near the device's memory holds no
    // more than two.
    let time = |kernel: &DropletKernel| {
        let run = kernel
            .prepare(map)?
            .execute(job, batch, RunMode::TIMED_ONLY)?;
        Ok::<f64, ErosionError>(run.gpu_time.unwrap_or(run.wall_time).as_secs_f64())
    };
    let mut warm = 0.0;
    while warm < PROBE_WARMUP_S {
        let seconds = time(&kernels[0])?;
        // A run that takes no time would never warm anything up.
        warm += seconds.max(PROBE_WARMUP_S / 20.0);
    }
    let mut times = vec![Vec::with_capacity(PROBE_ROUNDS); kernels.len()];
    for _ in 0..PROBE_ROUNDS {
        for (kernel, samples) in kernels.iter().zip(&mut times) {
            samples.push(time(kernel)? * 1e3);
        }
    }
    let probe_ms: Vec<(u32, f64)> = candidates
        .iter()
        .zip(&times)
        .map(|(&kib, samples)| (kib, crate::stats::median(samples).unwrap_or(f64::NAN)))
        .collect();
    let best = probe_ms
        .iter()
        .enumerate()
        .min_by(|a, b| a.1 .1.total_cmp(&b.1 .1))
        .map_or(0, |(i, _)| i);
    let kernel = kernels
        .into_iter()
        .nth(best)
        .expect("the best is one of the candidates");
    Ok((
        kernel,
        OccupancyChoice {
            chosen_kib: candidates[best],
            probe_ms,
        },
    ))
}
