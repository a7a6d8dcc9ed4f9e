//! Drivers of the atomic-rate probes (glsl/peak_walk.comp, glsl/peak_random.comp):
//! what the device can do with int atomicAdd, with no erosion arithmetic.

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::ProbeError;
use crate::gpu::{
    shaders, Buffer, BufferKind, CommandStream, ComputePipeline, Context, DescriptorSet, Hazard,
    MemoryScheme, PipelineDesc, Recorder, SpecConstant, SpecValue, Spirv, TimestampQueries,
};

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct WalkPushConstants {
    map_width: i32,
    map_height: i32,
    steps: i32,
    walkers: u32,
    seed: u32,
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct RandomPushConstants {
    footprint_mask: u32,
    adds: u32,
    invocations: u32,
    seed: u32,
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct FootprintPushConstants {
    footprint_mask: u64,
    adds: u32,
    invocations: u32,
    seed: u32,
    /// The block's size rounds up to its 8-byte alignment.
    _end: u32,
}

/// A command stream with a pair of timestamps (where the device has them), for
/// timing one dispatch at a time.
pub(super) struct TimedStream {
    stream: CommandStream,
    queries: Option<TimestampQueries>,
}

impl TimedStream {
    pub(super) fn new(ctx: &Arc<Context>) -> Result<Self, ProbeError> {
        Ok(Self {
            stream: CommandStream::new(ctx)?,
            queries: TimestampQueries::new(ctx, 2)?,
        })
    }

    /// Runs `record` once, untimed.
    pub(super) fn submit<'r>(
        &mut self,
        record: impl FnOnce(&mut Recorder<'r>),
    ) -> Result<(), ProbeError> {
        self.stream.submit(record)?;
        Ok(())
    }
}

/// Median time of `reps` runs (after one warm-up) of one dispatch of `groups`
/// workgroups of the last pipeline `prepare` bound; the dispatch alone is timed where
/// the device has timestamps, the whole submission where it has none.
pub(super) fn median_dispatch_time<'r>(
    timed: &'r mut TimedStream,
    reps: u32,
    groups: u32,
    prepare: impl Fn(&mut Recorder<'r>),
) -> Result<Duration, ProbeError> {
    let TimedStream { stream, queries } = timed;
    let queries = queries.as_ref();
    let mut times = Vec::new();
    for _ in 0..=reps.max(1) {
        let wall = stream.submit(|rec| {
            if let Some(q) = queries {
                rec.reset_queries(q);
            }
            prepare(rec);
            if let Some(q) = queries {
                rec.timestamp(q, 0);
            }
            rec.dispatch(groups, 1, 1);
            if let Some(q) = queries {
                rec.timestamp(q, 1);
            }
        })?;
        times.push(match queries {
            Some(q) => q.elapsed(0, 1)?,
            None => wall,
        });
    }
    times.remove(0); // the first run warms up
    let seconds: Vec<f64> = times.iter().map(Duration::as_secs_f64).collect();
    Ok(Duration::from_secs_f64(
        crate::stats::median(&seconds).unwrap_or_default(),
    ))
}

/// Median rate of one probe configuration.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProbeRate {
    /// Median GPU time of one dispatch, in ms.
    pub gpu_ms: f64,
    /// Atomic adds per second.
    pub atomics_per_s: f64,
}

pub struct AtomicProbe {
    ctx: Arc<Context>,
    walk: ComputePipeline,
    random: ComputePipeline,
    workgroup: u32,
}

impl AtomicProbe {
    pub fn new(ctx: &Arc<Context>, workgroup: u32) -> Result<Self, ProbeError> {
        let limit = ctx.info().max_workgroup_x();
        if workgroup == 0 || workgroup > limit {
            return Err(ProbeError::Workgroup {
                requested: workgroup,
                limit,
            });
        }
        let spec = [SpecConstant {
            id: 1,
            value: SpecValue::U32(workgroup),
        }];
        let build = |shader: Spirv, push: usize| {
            ComputePipeline::new(ctx, &PipelineDesc::storage(shader, &spec, 1, push as u32))
        };
        Ok(Self {
            ctx: Arc::clone(ctx),
            walk: build(shaders::PEAK_WALK, std::mem::size_of::<WalkPushConstants>())?,
            random: build(
                shaders::PEAK_RANDOM,
                std::mem::size_of::<RandomPushConstants>(),
            )?,
            workgroup,
        })
    }

    /// `walkers` straight walks of `steps` unit steps on a `side` x `side` map, four
    /// atomics a step. The rate counts atomics; walk-steps are a quarter of them.
    pub fn walk(
        &self,
        side: u32,
        walkers: u32,
        steps: u32,
        reps: u32,
    ) -> Result<ProbeRate, ProbeError> {
        let push = WalkPushConstants {
            map_width: side as i32,
            map_height: side as i32,
            steps: steps as i32,
            walkers,
            seed: 1,
        };
        let cells = u64::from(side) * u64::from(side);
        let atomics = u64::from(walkers) * u64::from(steps) * 4;
        self.time(&self.walk, cells, walkers, &push, atomics, reps)
    }

    /// `invocations` x `adds` atomics on random addresses among `footprint` ints (a
    /// power of two).
    pub fn random(
        &self,
        footprint: u32,
        invocations: u32,
        adds: u32,
        reps: u32,
    ) -> Result<ProbeRate, ProbeError> {
        assert!(footprint.is_power_of_two(), "footprint is a power of two");
        let push = RandomPushConstants {
            footprint_mask: footprint - 1,
            adds,
            invocations,
            seed: 1,
        };
        let atomics = u64::from(invocations) * u64::from(adds);
        self.time(
            &self.random,
            u64::from(footprint),
            invocations,
            &push,
            atomics,
            reps,
        )
    }

    fn time<T: bytemuck::Pod>(
        &self,
        pipeline: &ComputePipeline,
        cells: u64,
        invocations: u32,
        push: &T,
        atomics: u64,
        reps: u32,
    ) -> Result<ProbeRate, ProbeError> {
        let ctx = &self.ctx;
        let buffer = Buffer::new(ctx, "probe cells", cells * 4, BufferKind::Storage)?;
        let set = DescriptorSet::new(pipeline, &[&buffer])?;
        let mut stream = TimedStream::new(ctx)?;
        let groups = invocations.div_ceil(self.workgroup);
        let median = median_dispatch_time(&mut stream, reps, groups, |rec| {
            rec.barrier(Hazard::EarlierWorkToTransfer);
            rec.fill_zero(&buffer);
            rec.barrier(Hazard::TransferToCompute);
            rec.bind(pipeline, &set);
            rec.push_constants(push);
        })?
        .as_secs_f64();
        Ok(ProbeRate {
            gpu_ms: median * 1e3,
            atomics_per_s: atomics as f64 / median.max(f64::MIN_POSITIVE),
        })
    }
}

/// Invocations of the footprint probe's workgroups.
const FOOTPRINT_WORKGROUP: u32 = 256;

/// The footprint probe (glsl/peak_footprint.comp): random atomics over a map reached
/// by address, of any size the device's memory holds, allocated by a chosen scheme.
pub struct FootprintProbe {
    ctx: Arc<Context>,
    pipeline: ComputePipeline,
    workgroup: u32,
}

impl FootprintProbe {
    pub fn new(ctx: &Arc<Context>) -> Result<Self, ProbeError> {
        let workgroup = FOOTPRINT_WORKGROUP.min(ctx.info().max_workgroup_x());
        let spec = [SpecConstant {
            id: 1,
            value: SpecValue::U32(workgroup),
        }];
        let desc = PipelineDesc::addressed(
            shaders::PEAK_FOOTPRINT,
            &spec,
            1,
            std::mem::size_of::<FootprintPushConstants>() as u32,
        );
        Ok(Self {
            ctx: Arc::clone(ctx),
            pipeline: ComputePipeline::new(ctx, &desc)?,
            workgroup,
        })
    }

    /// `invocations` x `adds` atomics on random cells of a map of `cells` ints (a power
    /// of two) whose memory `scheme` allocated, `reps` times after a warm-up: the median
    /// rate, and whether the allocation came out dedicated.
    pub fn measure(
        &self,
        cells: u64,
        scheme: MemoryScheme,
        invocations: u32,
        adds: u32,
        reps: u32,
    ) -> Result<(ProbeRate, bool), ProbeError> {
        assert!(
            cells.is_power_of_two(),
            "the map's cells are a power of two"
        );
        let ctx = &self.ctx;
        let map = Buffer::allocated(
            ctx,
            "footprint map",
            cells * 4,
            BufferKind::Addressed,
            scheme,
        )?;
        let push = FootprintPushConstants {
            footprint_mask: cells - 1,
            adds,
            invocations,
            seed: 1,
            _end: 0,
        };
        let mut stream = TimedStream::new(ctx)?;
        stream.submit(|rec| {
            rec.barrier(Hazard::EarlierWorkToTransfer);
            rec.fill_zero(&map);
            rec.barrier(Hazard::TransferToCompute);
        })?;
        let groups = invocations.div_ceil(self.workgroup);
        let median = median_dispatch_time(&mut stream, reps, groups, |rec| {
            rec.barrier(Hazard::ComputeToCompute);
            rec.bind_addressed(&self.pipeline, &[&map], &push);
        })?
        .as_secs_f64();
        let atomics = u64::from(invocations) * u64::from(adds);
        let rate = ProbeRate {
            gpu_ms: median * 1e3,
            atomics_per_s: atomics as f64 / median.max(f64::MIN_POSITIVE),
        };
        Ok((rate, map.dedicated()))
    }

    /// The adds one run leaves in each of `cells` (a power of two), read back: what
    /// the probe times, for checking it.
    pub fn counts(&self, cells: u64, invocations: u32, adds: u32) -> Result<Vec<i32>, ProbeError> {
        assert!(
            cells.is_power_of_two(),
            "the map's cells are a power of two"
        );
        let ctx = &self.ctx;
        let map = Buffer::new(ctx, "footprint map", cells * 4, BufferKind::Addressed)?;
        let push = FootprintPushConstants {
            footprint_mask: cells - 1,
            adds,
            invocations,
            seed: 1,
            _end: 0,
        };
        let mut stream = CommandStream::new(ctx)?;
        stream.submit(|rec| {
            rec.fill_zero(&map);
            rec.barrier(Hazard::TransferToCompute);
            rec.bind_addressed(&self.pipeline, &[&map], &push);
            rec.dispatch(invocations.div_ceil(self.workgroup), 1, 1);
        })?;
        Ok(crate::gpu::download(ctx, &map, cells as usize)?)
    }
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct CopyPushConstants {
    quads: u32,
    threads: u32,
}

/// Invocations of the copy probe's workgroups.
const COPY_WORKGROUP: u32 = 256;

/// What a streaming copy achieved: bytes read plus bytes written per second.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CopyRate {
    /// Bytes of each of the two buffers.
    pub buffer_bytes: u64,
    pub bytes_per_s: f64,
    pub gpu_ms: f64,
}

/// The streaming copy (glsl/peak_copy.comp): the memory bandwidth ceiling.
pub struct CopyProbe {
    ctx: Arc<Context>,
    pipeline: ComputePipeline,
}

impl CopyProbe {
    pub fn new(ctx: &Arc<Context>) -> Result<Self, ProbeError> {
        let spec = [SpecConstant {
            id: 1,
            value: SpecValue::U32(COPY_WORKGROUP.min(ctx.info().max_workgroup_x())),
        }];
        let desc = PipelineDesc::addressed(
            shaders::PEAK_COPY,
            &spec,
            2,
            std::mem::size_of::<CopyPushConstants>() as u32,
        );
        Ok(Self {
            ctx: Arc::clone(ctx),
            pipeline: ComputePipeline::new(ctx, &desc)?,
        })
    }

    /// Copies `buffer_bytes` (a multiple of 16) with `groups` workgroups, `reps` times
    /// after a warm-up: the median rate.
    pub fn measure(
        &self,
        buffer_bytes: u64,
        groups: u32,
        reps: u32,
    ) -> Result<CopyRate, ProbeError> {
        let ctx = &self.ctx;
        let source = Buffer::new(ctx, "copy source", buffer_bytes, BufferKind::Addressed)?;
        let target = Buffer::new(ctx, "copy target", buffer_bytes, BufferKind::Addressed)?;
        let workgroup = COPY_WORKGROUP.min(ctx.info().max_workgroup_x());
        let push = CopyPushConstants {
            quads: u32::try_from(buffer_bytes / 16).map_err(|_| {
                ProbeError::Probe(format!(
                    "{buffer_bytes} bytes are past the copy probe's 2^32 elements"
                ))
            })?,
            threads: groups * workgroup,
        };
        let mut stream = TimedStream::new(ctx)?;
        let median = median_dispatch_time(&mut stream, reps, groups, |rec| {
            rec.barrier(Hazard::ComputeToCompute);
            rec.bind_addressed(&self.pipeline, &[&source, &target], &push);
        })?
        .as_secs_f64();
        Ok(CopyRate {
            buffer_bytes,
            bytes_per_s: 2.0 * buffer_bytes as f64 / median.max(f64::MIN_POSITIVE),
            gpu_ms: median * 1e3,
        })
    }
}
