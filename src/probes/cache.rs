//! Driver of the cache microbenchmark (glsl/cache_chase.comp, glsl/cache_stream.comp):
//! the load latency and the read bandwidth a compute shader sees against its working
//! set, which show the L1 and L2 capacities our shaders actually get.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::atomic::{median_dispatch_time, TimedStream};
use super::ProbeError;
use crate::gpu::{
    shaders, Buffer, BufferKind, ComputePipeline, Context, DescriptorSet, Hazard, PipelineDesc,
    SpecConstant, SpecValue, Spirv, TexelFormat, TexelKind, TexelView,
};
use crate::hash::pcg_hash;

/// Bytes between chase nodes: one node per 128-byte cache line.
pub const NODE_BYTES: u64 = 128;
const NODE_WORDS: u32 = (NODE_BYTES / 4) as u32;
/// Nodes the chase visits once before the steps that count: enough to fill any L1
/// (the L1 does not outlive a dispatch); an earlier streaming pass warms the L2.
const WARM_NODES: u32 = 4096;
const STREAM_WORKGROUP: u32 = 256;
const RESERVED_SHARED_WORDS_ID: u32 = 3;

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct ChasePushConstants {
    warm_steps: u32,
    steps: u32,
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct StreamPushConstants {
    quads: u32,
    laps: u32,
    groups: u32,
    seed: u32,
    per_sm: u32,
}

/// Which working set a bandwidth point rereads (glsl/cache_stream.comp).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum StreamScope {
    /// Every workgroup streams the whole set: the set is per SM, which shows the L1.
    PerSm,
    /// The workgroups split the set between them each lap: the set is the device's,
    /// which shows the L2 and memory.
    Device,
}

/// Past this, workgroups streaming the same set in step share lines in the L2, so the
/// per-SM mode no longer measures what it names.
pub const PER_SM_MAX_BYTES: u64 = 1 << 20;

/// How the chase reads its chain: each way a shader can load a word.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ChasePath {
    /// A read-write SSBO with no shared memory declared: as the droplet kernel's
    /// heightfield.
    Ssbo,
    /// The same, with 4 bytes of shared memory declared, as the droplet kernel does.
    #[serde(rename = "ssbo-shared-4b")]
    SsboShared4B,
    /// The same, with the most shared memory a workgroup may declare.
    SsboSharedMax,
    /// A `readonly restrict` SSBO.
    Readonly,
    /// A uniform texel buffer (`texelFetch`): the texture path.
    Texel,
    /// The SSBO behind a branch that is never taken: the control for `GuardedAtomic`.
    Guarded,
    /// The SSBO, with an atomicAdd to it in that branch: present, never executed.
    GuardedAtomic,
    /// The SSBO, with an atomicAdd to another SSBO at every step.
    Atomic,
    /// As `Atomic`, with the shader declaring the Vulkan memory model.
    AtomicVmm,
    /// The SSBO, with an image atomic on a texel view of another buffer at every step.
    ImageAtomic,
    /// The SSBO, with a plain store to another SSBO at every step.
    Store,
}

impl ChasePath {
    pub const ALL: [ChasePath; 11] = [
        ChasePath::Ssbo,
        ChasePath::SsboShared4B,
        ChasePath::SsboSharedMax,
        ChasePath::Readonly,
        ChasePath::Texel,
        ChasePath::Guarded,
        ChasePath::GuardedAtomic,
        ChasePath::Atomic,
        ChasePath::AtomicVmm,
        ChasePath::ImageAtomic,
        ChasePath::Store,
    ];

    pub fn label(self) -> &'static str {
        match self {
            ChasePath::Ssbo => "ssbo",
            ChasePath::SsboShared4B => "ssbo-shared-4b",
            ChasePath::SsboSharedMax => "ssbo-shared-max",
            ChasePath::Readonly => "readonly",
            ChasePath::Texel => "texel",
            ChasePath::Guarded => "guarded",
            ChasePath::GuardedAtomic => "guarded-atomic",
            ChasePath::Atomic => "atomic",
            ChasePath::AtomicVmm => "atomic-vmm",
            ChasePath::ImageAtomic => "image-atomic",
            ChasePath::Store => "store",
        }
    }

    fn module(self) -> Spirv {
        match self {
            ChasePath::Ssbo => shaders::CACHE_CHASE,
            ChasePath::SsboShared4B | ChasePath::SsboSharedMax => shaders::CACHE_CHASE_SHARED,
            ChasePath::Readonly => shaders::CACHE_CHASE_READONLY,
            ChasePath::Texel => shaders::CACHE_CHASE_TEXEL,
            ChasePath::Guarded => shaders::CACHE_CHASE_GUARD,
            ChasePath::GuardedAtomic => shaders::CACHE_CHASE_GUARDATOMIC,
            ChasePath::Atomic => shaders::CACHE_CHASE_ATOMIC,
            ChasePath::AtomicVmm => shaders::CACHE_CHASE_ATOMIC_VMM,
            ChasePath::ImageAtomic => shaders::CACHE_CHASE_IMAGEATOMIC,
            ChasePath::Store => shaders::CACHE_CHASE_STORE,
        }
    }

    /// The texel view the chase binds after its two SSBOs, if any.
    fn texel_binding(self) -> Option<TexelKind> {
        match self {
            ChasePath::Texel => Some(TexelKind::Uniform),
            ChasePath::ImageAtomic => Some(TexelKind::Storage),
            _ => None,
        }
    }

    /// Shared memory the pipeline declares, in bytes.
    fn shared_bytes(self, max: u32) -> u32 {
        match self {
            ChasePath::SsboShared4B => 4,
            ChasePath::SsboSharedMax => max,
            _ => 0,
        }
    }
}

/// One latency point: nanoseconds per dependent load over a working set.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LatencyPoint {
    pub path: ChasePath,
    /// Shared memory the chase declared, in bytes.
    pub shared_bytes: u32,
    pub working_set_bytes: u64,
    /// None where the chase of twice the loads was not slower than the chase of the
    /// loads (the difference is below what the timer resolves, and 0 would be a
    /// latency), or where it came out under one clock cycle (`measure_cache`).
    pub latency_ns: Option<f64>,
    /// Loads timed: the difference between the two runs' step counts.
    pub steps: u32,
}

/// One bandwidth point: bytes read per second with the working set reread.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BandwidthPoint {
    pub scope: StreamScope,
    pub working_set_bytes: u64,
    pub bytes_per_s: f64,
    pub workgroups: u32,
    pub laps: u32,
    pub gpu_ms: f64,
}

/// How much work each point gets; smaller on a CPU device.
#[derive(Clone, Copy, Debug)]
pub struct CacheProbeSize {
    /// Working sets, from 4 KiB up, doubling, to this many bytes.
    pub max_bytes: u64,
    /// Loads timed per latency point (the difference of two runs).
    pub steps: u32,
    pub reps: u32,
    pub stream_workgroups: u32,
    /// Bytes each bandwidth point reads at least.
    pub stream_bytes: u64,
}

/// The smallest working set measured.
pub const MIN_WORKING_SET: u64 = 4 << 10;
/// The step of the finer working sets between 64 and 512 KiB.
const L1_STEP: u64 = 32 << 10;

impl CacheProbeSize {
    pub fn for_device(cpu: bool) -> Self {
        // llvmpipe ends any shader loop after 65,535 iterations, so a CPU device's chase
        // (warm-up plus twice `steps`) stays under that.
        if cpu {
            Self {
                max_bytes: 4 << 20,
                steps: 16384,
                reps: 3,
                stream_workgroups: 4,
                stream_bytes: 64 << 20,
            }
        } else {
            Self {
                max_bytes: 256 << 20,
                steps: 16384,
                reps: 5,
                stream_workgroups: 1024,
                stream_bytes: 8 << 30,
            }
        }
    }

    /// 4 KiB, 8 KiB, ... doubling up to `max_bytes` and the device's largest SSBO,
    /// with 32 KiB steps from 64 to 512 KiB, where GPUs' L1 capacities lie.
    pub fn working_sets(&self, max_storage_buffer_range: u64) -> Vec<u64> {
        let top = self.max_bytes.min(max_storage_buffer_range);
        let doubling = std::iter::successors(Some(MIN_WORKING_SET), |&w| Some(w * 2));
        let fine = (2..=16).map(|k| k * L1_STEP);
        let mut sets: Vec<u64> = doubling
            .take_while(|&w| w <= top)
            .chain(fine.filter(|&w| w <= top))
            .collect();
        sets.sort_unstable();
        sets.dedup();
        sets
    }
}

pub struct CacheProbe {
    ctx: Arc<Context>,
    chase: Vec<(ChasePath, ComputePipeline)>,
    stream: ComputePipeline,
    size: CacheProbeSize,
}

impl CacheProbe {
    pub fn new(ctx: &Arc<Context>, size: CacheProbeSize) -> Result<Self, ProbeError> {
        let max_shared = ctx.info().max_shared_memory_bytes;
        let mut chase = Vec::new();
        let paths = ChasePath::ALL
            .into_iter()
            .filter(|&p| p != ChasePath::AtomicVmm || ctx.info().vulkan_memory_model);
        for path in paths {
            let words = (path.shared_bytes(max_shared) / 4).max(1);
            let spec = [SpecConstant {
                id: RESERVED_SHARED_WORDS_ID,
                value: SpecValue::U32(words),
            }];
            let texels = path.texel_binding();
            let desc = PipelineDesc {
                texel_buffers: texels.as_slice(),
                ..PipelineDesc::storage(
                    path.module(),
                    &spec,
                    2,
                    std::mem::size_of::<ChasePushConstants>() as u32,
                )
            };
            chase.push((path, ComputePipeline::new(ctx, &desc)?));
        }
        let workgroup = STREAM_WORKGROUP.min(ctx.info().max_workgroup_x());
        let spec = [SpecConstant {
            id: 1,
            value: SpecValue::U32(workgroup),
        }];
        let stream = ComputePipeline::new(
            ctx,
            &PipelineDesc::storage(
                shaders::CACHE_STREAM,
                &spec,
                2,
                std::mem::size_of::<StreamPushConstants>() as u32,
            ),
        )?;
        Ok(Self {
            ctx: Arc::clone(ctx),
            chase,
            stream,
            size,
        })
    }

    pub fn size(&self) -> CacheProbeSize {
        self.size
    }

    /// Latency of every chase path over a working set of `bytes` (a multiple of
    /// [`NODE_BYTES`]). Paths that cannot view the set (a texel buffer past
    /// `maxTexelBufferElements`) are left out.
    pub fn latency(&self, bytes: u64) -> Result<Vec<LatencyPoint>, ProbeError> {
        let ctx = &self.ctx;
        let nodes = (bytes / NODE_BYTES) as u32;
        let upload = Buffer::upload_from(ctx, "chase chain upload", &chain(nodes))?;
        let chain = Buffer::new(ctx, "chase chain", bytes, BufferKind::Storage)?;
        let sink = Buffer::new(ctx, "chase sink", 16, BufferKind::Storage)?;
        let mut stream = TimedStream::new(ctx)?;
        stream.submit(|rec| {
            rec.copy(&upload, &chain);
            rec.barrier(Hazard::TransferToCompute);
        })?;
        let words = bytes / 4;
        let texels = (words <= u64::from(ctx.info().max_texel_buffer_elements))
            .then(|| TexelView::new(&chain, words, TexelFormat::U32, TexelKind::Uniform))
            .transpose()?;
        let sink_image = TexelView::new(&sink, 4, TexelFormat::U32, TexelKind::Storage)?;
        let warm_set = DescriptorSet::new(&self.stream, &[&chain, &sink])?;
        let warm = stream_push(bytes, 1, 1, StreamScope::PerSm);
        let warm_steps = nodes.min(WARM_NODES);
        let mut points = Vec::new();
        for (path, pipeline) in &self.chase {
            let set = match (*path, &texels) {
                (ChasePath::Texel, Some(view)) => {
                    DescriptorSet::with_texels(pipeline, &[&chain, &sink], &[view])?
                }
                (ChasePath::Texel, None) => continue,
                (ChasePath::ImageAtomic, _) => {
                    DescriptorSet::with_texels(pipeline, &[&chain, &sink], &[&sink_image])?
                }
                _ => DescriptorSet::new(pipeline, &[&chain, &sink])?,
            };
            let run = |stream: &mut TimedStream, steps: u32| {
                let push = ChasePushConstants { warm_steps, steps };
                median_dispatch_time(stream, self.size.reps, 1, |rec| {
                    rec.barrier(Hazard::ComputeToCompute);
                    rec.bind(&self.stream, &warm_set);
                    rec.push_constants(&warm);
                    rec.dispatch(1, 1, 1);
                    rec.barrier(Hazard::ComputeToCompute);
                    rec.bind(pipeline, &set);
                    rec.push_constants(&push);
                })
            };
            let short = run(&mut stream, self.size.steps)?;
            let long = run(&mut stream, 2 * self.size.steps)?;
            let extra = long.saturating_sub(short);
            points.push(LatencyPoint {
                path: *path,
                shared_bytes: path.shared_bytes(ctx.info().max_shared_memory_bytes),
                working_set_bytes: bytes,
                latency_ns: (!extra.is_zero())
                    .then(|| extra.as_secs_f64() * 1e9 / f64::from(self.size.steps)),
                steps: self.size.steps,
            });
        }
        Ok(points)
    }

    /// Read bandwidth over a working set of `bytes` (a multiple of 4 KiB), as many
    /// laps as reading `stream_bytes` takes: per SM (every workgroup reads the whole
    /// set; `None` past [`PER_SM_MAX_BYTES`]) or for the device (the workgroups split
    /// it).
    pub fn bandwidth(
        &self,
        bytes: u64,
        scope: StreamScope,
    ) -> Result<Option<BandwidthPoint>, ProbeError> {
        let quads = bytes / 16;
        let (groups, per_lap) = match scope {
            StreamScope::PerSm if bytes > PER_SM_MAX_BYTES => return Ok(None),
            StreamScope::PerSm => {
                let groups = self.size.stream_workgroups;
                (groups, bytes * u64::from(groups))
            }
            StreamScope::Device => {
                // A power of two of workgroups, each with a chunk of a quad per thread
                // or more; the chunks cover the set.
                let most = (quads / u64::from(STREAM_WORKGROUP)).max(1);
                let groups = u64::from(self.size.stream_workgroups).min(most);
                let groups = 1u64 << groups.ilog2();
                (groups as u32, quads / groups * groups * 16)
            }
        };
        let laps = self.size.stream_bytes.div_ceil(per_lap).max(1) as u32;
        let ctx = &self.ctx;
        // Hashed words, not zeros: a GPU may compress zeros and read them faster.
        let words: Vec<u32> = (0..(bytes / 4) as u32).map(pcg_hash).collect();
        let upload = Buffer::upload_from(ctx, "stream data upload", &words)?;
        let data = Buffer::new(ctx, "stream data", bytes, BufferKind::Storage)?;
        let sink = Buffer::new(ctx, "stream sink", 16, BufferKind::Storage)?;
        let set = DescriptorSet::new(&self.stream, &[&data, &sink])?;
        let push = stream_push(bytes, laps, groups, scope);
        let mut stream = TimedStream::new(ctx)?;
        stream.submit(|rec| {
            rec.copy(&upload, &data);
            rec.barrier(Hazard::TransferToCompute);
        })?;
        let time = median_dispatch_time(&mut stream, self.size.reps, groups, |rec| {
            rec.barrier(Hazard::ComputeToCompute);
            rec.bind(&self.stream, &set);
            rec.push_constants(&push);
        })?;
        let seconds = time.as_secs_f64().max(f64::MIN_POSITIVE);
        Ok(Some(BandwidthPoint {
            scope,
            working_set_bytes: bytes,
            bytes_per_s: (per_lap * u64::from(laps)) as f64 / seconds,
            workgroups: groups,
            laps,
            gpu_ms: seconds * 1e3,
        }))
    }
}

fn stream_push(bytes: u64, laps: u32, groups: u32, scope: StreamScope) -> StreamPushConstants {
    StreamPushConstants {
        quads: (bytes / 16) as u32,
        laps,
        groups,
        seed: 0x5eed_1234,
        per_sm: u32::from(scope == StreamScope::PerSm),
    }
}

/// One cycle through `nodes` nodes one cache line apart, in a random order: word
/// `k * NODE_WORDS` holds the word index of the node after node k. The other words
/// hold hashes, not zeros, which a GPU might compress.
pub fn chain(nodes: u32) -> Vec<u32> {
    let mut order: Vec<u32> = (0..nodes).collect();
    let mut state = 0x2545_f491u32;
    for i in (1..nodes as usize).rev() {
        state = pcg_hash(state);
        let j = ((u64::from(state) * i as u64) >> 32) as usize;
        order.swap(i, j);
    }
    let mut words: Vec<u32> = (0..nodes * NODE_WORDS).map(pcg_hash).collect();
    for k in 0..nodes as usize {
        let next = order[(k + 1) % nodes as usize];
        words[order[k] as usize * NODE_WORDS as usize] = next * NODE_WORDS;
    }
    words
}
