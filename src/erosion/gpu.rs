//! Driver of glsl/droplet.comp: uploads the fixed-point heightfield, dispatches the
//! droplets in batches with compute-to-compute barriers between them, and reads back.

use std::sync::Arc;
use std::time::Duration;

use super::batches::{plan_batches, Batch};
use super::params::DropletJob;
use super::{ErosionError, WorkCount};
use crate::gpu::barriers::{
    COMPUTE_TO_COMPUTE, COMPUTE_TO_TRANSFER, EARLIER_WORK_TO_TRANSFER, TRANSFER_TO_COMPUTE,
    TRANSFER_TO_HOST,
};
use crate::gpu::{
    shaders, Buffer, BufferKind, CommandStream, ComputePipeline, Context, DescriptorSet,
    PipelineDesc, SpecConstant, SpecValue, Spirv, TimestampQueries,
};

/// The push-constant block of glsl/include/droplet_bindings.glsl, member for member.
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct DropletPushConstants {
    map_width: i32,
    map_height: i32,
    max_lifetime: i32,
    inertia: f32,
    capacity_factor: f32,
    erosion_rate: f32,
    deposition_rate: f32,
    evaporation_rate: f32,
    seed: u32,
    batch_base_id: u32,
    batch_size: u32,
}

/// Specialization constant IDs of the droplet kernel.
const WORKGROUP_SIZE_ID: u32 = 1;
const FIXED_POINT_SCALE_ID: u32 = 2;
/// Slots of the `workCounters` SSBO: droplets, then 64 atomic-count shards.
const COUNTER_SLOTS: u64 = 1 + 64;

/// A fixed-point heightfield: `int(h * scale)` per cell, row-major.
#[derive(Clone, Debug)]
pub struct FixedHeightfield<'a> {
    pub width: u32,
    pub height: u32,
    pub cells: &'a [i32],
}

impl<'a> FixedHeightfield<'a> {
    pub fn new(width: u32, height: u32, cells: &'a [i32]) -> Self {
        Self {
            width,
            height,
            cells,
        }
    }
}

/// What one run on the GPU produced.
#[derive(Clone, Debug)]
pub struct GpuRun {
    /// The heights after the run; empty unless the run read them back.
    pub cells: Vec<i32>,
    /// Time between GPU timestamps around the dispatches; `None` where the device has
    /// no timestamps.
    pub gpu_time: Option<Duration>,
    /// Host time from submission to completion, upload and read-back included.
    pub wall_time: Duration,
    pub batches: Vec<Batch>,
    /// Filled by the instrumented build only.
    pub work: Option<WorkCount>,
}

pub struct DropletKernel {
    ctx: Arc<Context>,
    timed: ComputePipeline,
    counted: ComputePipeline,
    workgroup: u32,
}

impl DropletKernel {
    /// Builds the timed and instrumented pipelines for this workgroup size and scale.
    pub fn new(
        ctx: &Arc<Context>,
        workgroup: u32,
        fixed_point_scale: f32,
    ) -> Result<Self, ErosionError> {
        let limit = ctx.info().max_workgroup_x();
        if workgroup == 0 || workgroup > limit {
            return Err(ErosionError::Workgroup {
                requested: workgroup,
                limit,
            });
        }
        let spec = [
            SpecConstant {
                id: WORKGROUP_SIZE_ID,
                value: SpecValue::U32(workgroup),
            },
            SpecConstant {
                id: FIXED_POINT_SCALE_ID,
                value: SpecValue::F32(fixed_point_scale),
            },
        ];
        let build = |shader: Spirv| {
            ComputePipeline::new(
                ctx,
                &PipelineDesc {
                    shader,
                    specialization: &spec,
                    storage_buffers: 2,
                    push_constant_bytes: std::mem::size_of::<DropletPushConstants>() as u32,
                },
            )
        };
        Ok(Self {
            ctx: Arc::clone(ctx),
            timed: build(shaders::DROPLET)?,
            counted: build(shaders::DROPLET_COUNTED)?,
            workgroup,
        })
    }

    pub fn workgroup(&self) -> u32 {
        self.workgroup
    }

    /// Runs the job once with the uninstrumented kernel, timed with GPU timestamps.
    pub fn run(
        &self,
        map: &FixedHeightfield,
        job: &DropletJob,
        batch: u32,
    ) -> Result<GpuRun, ErosionError> {
        self.prepare(map)?.execute(job, batch, RunMode::TIMED)
    }

    /// Runs the job once with the instrumented kernel, which counts droplets and atomics.
    pub fn run_counted(
        &self,
        map: &FixedHeightfield,
        job: &DropletJob,
        batch: u32,
    ) -> Result<GpuRun, ErosionError> {
        self.prepare(map)?.execute(job, batch, RunMode::COUNTED)
    }

    /// Buffers and commands for one map, to run many times: each run starts from a
    /// fresh copy of `map`.
    pub fn prepare(&self, map: &FixedHeightfield) -> Result<DropletRunner<'_>, ErosionError> {
        check_map(map)?;
        let ctx = &self.ctx;
        let bytes = map.cells.len() as u64 * 4;
        let heights = Buffer::new(ctx, "heightData", bytes, BufferKind::Storage)?;
        let counters = Buffer::new(ctx, "workCounters", COUNTER_SLOTS * 4, BufferKind::Storage)?;
        let sets = [
            DescriptorSet::new(&self.timed, &[&heights, &counters])?,
            DescriptorSet::new(&self.counted, &[&heights, &counters])?,
        ];
        Ok(DropletRunner {
            kernel: self,
            width: map.width,
            height: map.height,
            upload: Buffer::upload_from(ctx, "heightData upload", map.cells)?,
            readback: Buffer::new(ctx, "heightData read-back", bytes, BufferKind::Download)?,
            counter_readback: Buffer::new(
                ctx,
                "workCounters read-back",
                COUNTER_SLOTS * 4,
                BufferKind::Download,
            )?,
            sets,
            heights,
            counters,
            queries: TimestampQueries::new(ctx, 2)?,
            stream: CommandStream::new(ctx)?,
        })
    }
}

/// Which kernel a run uses and whether it reads the heights back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunMode {
    pub counted: bool,
    pub read_back: bool,
}

impl RunMode {
    pub const TIMED: RunMode = RunMode {
        counted: false,
        read_back: true,
    };
    pub const COUNTED: RunMode = RunMode {
        counted: true,
        read_back: true,
    };
    /// For repetitions of a benchmark: no read-back.
    pub const TIMED_ONLY: RunMode = RunMode {
        counted: false,
        read_back: false,
    };
}

/// A map's buffers on the device, ready to run droplet jobs on.
pub struct DropletRunner<'k> {
    kernel: &'k DropletKernel,
    width: u32,
    height: u32,
    heights: Buffer,
    counters: Buffer,
    upload: Buffer,
    readback: Buffer,
    counter_readback: Buffer,
    /// For the timed and the counted pipeline.
    sets: [DescriptorSet; 2],
    queries: Option<TimestampQueries>,
    stream: CommandStream,
}

impl DropletRunner<'_> {
    pub fn execute(
        &mut self,
        job: &DropletJob,
        batch: u32,
        mode: RunMode,
    ) -> Result<GpuRun, ErosionError> {
        job.validate()?;
        if batch == 0 {
            return Err(ErosionError::Batch);
        }
        let kernel = self.kernel;
        let (pipeline, set) = if mode.counted {
            (&kernel.counted, &self.sets[1])
        } else {
            (&kernel.timed, &self.sets[0])
        };
        let batches = plan_batches(
            job.droplets,
            batch,
            kernel.workgroup,
            kernel.ctx.info().max_workgroup_count[0],
        );
        let p = &job.params;
        let push = |b: &Batch| DropletPushConstants {
            map_width: self.width as i32,
            map_height: self.height as i32,
            max_lifetime: p.lifetime as i32,
            inertia: p.inertia,
            capacity_factor: p.capacity,
            erosion_rate: p.erosion,
            deposition_rate: p.deposition,
            evaporation_rate: p.evaporation,
            seed: job.seed,
            batch_base_id: b.base_id,
            batch_size: b.size,
        };
        let (heights, counters, queries) = (&self.heights, &self.counters, &self.queries);
        let (upload, readback, counter_readback) =
            (&self.upload, &self.readback, &self.counter_readback);
        let wall_time = self.stream.submit(|rec| {
            if let Some(q) = queries {
                rec.reset_queries(q);
            }
            rec.barrier(EARLIER_WORK_TO_TRANSFER);
            rec.fill_zero(counters);
            rec.copy(upload, heights);
            rec.barrier(TRANSFER_TO_COMPUTE);
            rec.bind(pipeline, set);
            if let Some(q) = queries {
                rec.timestamp(q, 0);
            }
            for (i, b) in batches.iter().enumerate() {
                if i > 0 {
                    rec.barrier(COMPUTE_TO_COMPUTE);
                }
                rec.push_constants(pipeline, &push(b));
                rec.dispatch(b.groups, 1, 1);
            }
            if let Some(q) = queries {
                rec.timestamp(q, 1);
            }
            if mode.read_back || mode.counted {
                rec.barrier(COMPUTE_TO_TRANSFER);
                if mode.read_back {
                    rec.copy(heights, readback);
                }
                if mode.counted {
                    rec.copy(counters, counter_readback);
                }
                rec.barrier(TRANSFER_TO_HOST);
            }
        })?;

        let gpu_time = match queries {
            Some(q) => Some(q.elapsed(0, 1)?),
            None => None,
        };
        let work = if mode.counted {
            let slots = counter_readback.read::<u32>()?;
            let atomics: u64 = slots[1..].iter().map(|&c| u64::from(c)).sum();
            Some(WorkCount::from_atomics(u64::from(slots[0]), atomics))
        } else {
            None
        };
        let cells = if mode.read_back {
            readback.read::<i32>()?
        } else {
            Vec::new()
        };
        Ok(GpuRun {
            cells,
            gpu_time,
            wall_time,
            batches,
            work,
        })
    }
}

fn check_map(map: &FixedHeightfield) -> Result<(), ErosionError> {
    let min = crate::terrain::MIN_SIZE;
    if map.width < min || map.height < min {
        return Err(ErosionError::MapTooSmall {
            width: map.width,
            height: map.height,
        });
    }
    let cells = u64::from(map.width) * u64::from(map.height);
    if map.cells.len() as u64 != cells || cells > i32::MAX as u64 {
        return Err(ErosionError::MapShape {
            width: map.width,
            height: map.height,
            cells: map.cells.len(),
        });
    }
    Ok(())
}
