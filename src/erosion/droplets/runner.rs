//! One map's buffers on the device and the runs of droplet jobs on them: each run is
//! planned (batches, passes, buffer sizes), recorded (upload, dispatches with their
//! barriers, read-back) and read back.

use std::sync::Arc;
use std::time::Duration;

use super::batches::{plan_batches, plan_phased, Batch};
use super::contention::{AtomicCounts, Contention, MassInputs};
use super::kernel::{
    check_map, texel_binding, ApplyPushConstants, DropletKernel, DropletPushConstants,
    FixedHeightfield, ReplayPushConstants, APPLY_WORKGROUP, COUNTER_SHARDS, COUNTER_SLOTS,
    DROPLET_STATE_BYTES,
};
use super::params::WorkCount;
use super::params::{AtomicMode, DropletJob};
use super::record::StepAddresses;
use super::variant::{DropletShader, KernelVariant, Lever};
use crate::erosion::ErosionError;
use crate::gpu::{
    Buffer, BufferKind, CommandStream, ComputePipeline, Context, DescriptorSet, Hazard, Recorder,
    TexelFormat, TexelView, TimestampQueries,
};

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
    /// Droplet dispatches: batches times passes.
    pub dispatches: usize,
    /// Submissions the dispatches were split into (see [`submission_starts`]).
    pub submissions: usize,
    /// Filled by the instrumented build only.
    pub work: Option<WorkCount>,
    pub contention: Option<Contention>,
    /// The addresses each droplet's steps touched, where the run recorded them.
    pub addresses: Option<Vec<StepAddresses>>,
}

/// What one replay gave.
pub(super) struct ReplayRun {
    pub gpu_time: Option<Duration>,
    pub wall_time: Duration,
    /// The atomics it made at each cell, where it counted them.
    pub adds_per_cell: Option<Vec<i32>>,
}

/// Which kernel a run uses and whether it reads the heights back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunMode {
    pub counted: bool,
    pub read_back: bool,
    /// The counted build records every step's addresses (see [`StepAddresses`]).
    pub records: bool,
}

impl RunMode {
    pub const TIMED: RunMode = RunMode {
        counted: false,
        read_back: true,
        records: false,
    };
    pub const COUNTED: RunMode = RunMode {
        counted: true,
        read_back: true,
        records: false,
    };
    /// For repetitions of a benchmark: no read-back.
    pub const TIMED_ONLY: RunMode = RunMode {
        counted: false,
        read_back: false,
        records: false,
    };
    /// The counted run that records its addresses, for a replay.
    pub const RECORDED: RunMode = RunMode {
        counted: true,
        read_back: true,
        records: true,
    };
}

/// A map's buffers on the device, ready to run droplet jobs on.
pub struct DropletRunner<'k> {
    /// First, so that it drops first: its drop waits for the device before the
    /// buffers (and an owned kernel's pipelines) are freed.
    stream: CommandStream,
    buffers: MapBuffers,
    /// GPU seconds per droplet of the last run, which sizes the submissions of the next.
    seconds_per_droplet: Option<f64>,
    kernel: KernelRef<'k>,
}

/// The kernel a runner runs: borrowed from its owner, or its own.
enum KernelRef<'k> {
    Borrowed(&'k DropletKernel),
    Owned(Box<DropletKernel>),
}

impl std::ops::Deref for KernelRef<'_> {
    type Target = DropletKernel;
    fn deref(&self) -> &DropletKernel {
        match self {
            KernelRef::Borrowed(k) => k,
            KernelRef::Owned(k) => k,
        }
    }
}

impl DropletKernel {
    /// Runs the job once with the uninstrumented kernel, timed with GPU timestamps.
    pub fn run(
        &self,
        map: &FixedHeightfield,
        job: &DropletJob,
        batch: u32,
    ) -> Result<GpuRun, ErosionError> {
        self.prepare(map)?.execute(job, batch, RunMode::TIMED)
    }

    /// Runs the job once with the instrumented kernel, which counts droplets, atomics
    /// and contention.
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
        DropletRunner::new(KernelRef::Borrowed(self), map)
    }

    /// [`DropletKernel::prepare`], the runner keeping the kernel.
    pub fn into_runner(
        self,
        map: &FixedHeightfield,
    ) -> Result<DropletRunner<'static>, ErosionError> {
        DropletRunner::new(KernelRef::Owned(Box::new(self)), map)
    }
}

/// The device buffers of one map, and their read-backs.
struct MapBuffers {
    width: u32,
    height: u32,
    /// Sum of the initial fixed-point cells, for the mass the map received.
    initial_sum: i64,
    heights: Buffer,
    counters: Buffer,
    hits: Buffer,
    delta: Buffer,
    states: Buffer,
    /// The address record of a recording run, and its read-back; token-sized otherwise.
    addresses: Buffer,
    addresses_readback: Buffer,
    per_droplet: Option<PerDroplet>,
    /// The initial heights: host-visible, or in the wide build a device buffer filled
    /// in chunks (a 65536^2 map is 16 GiB).
    upload: Buffer,
    /// The wide build: heights and cellHits by address, read back in chunks; `token`
    /// stands in their bindings.
    wide: bool,
    token: Buffer,
    readback: Buffer,
    counter_readback: Buffer,
    hits_readback: Buffer,
    queries: Option<TimestampQueries>,
}

/// Per-droplet instrumentation buffers, with their read-backs.
struct PerDroplet {
    droplets: u32,
    intended: Buffer,
    applied: Buffer,
    intended_readback: Buffer,
    applied_readback: Buffer,
}

/// How a job runs: its dispatches and the push constants of each.
struct Plan {
    batches: Vec<Batch>,
    /// Dispatches per batch: the passes of the stateful kernel, else one.
    passes: u32,
    /// Workgroups of each checkerboard colour over all its dispatches.
    colour_groups: [u32; 9],
    mode: RunMode,
    /// Per batch: whether it starts a new submission.
    starts: Vec<bool>,
}

impl Plan {
    /// `dispatch` for every batch and pass in order, each batch that starts a submission
    /// starting one, with a barrier between each two. Each submission counts the
    /// droplets of its batches, for an observer to tell how far the run has got.
    fn record_dispatches<'r>(
        &self,
        rec: &mut Recorder<'r>,
        mut dispatch: impl FnMut(&mut Recorder<'r>, &Batch, u32),
    ) {
        let mut first = true;
        for (b, &starts) in self.batches.iter().zip(&self.starts) {
            if starts && !first {
                rec.split_submission();
            }
            rec.count_units(u64::from(b.size));
            for pass in 0..self.passes {
                if !first {
                    rec.barrier(Hazard::ComputeToCompute);
                }
                first = false;
                dispatch(rec, b, pass);
            }
        }
    }
}

/// The descriptor sets of one run: the droplet kernel's, and deterministic mode's
/// apply kernel's.
struct Sets<'a> {
    droplet: (&'a ComputePipeline, DescriptorSet<'a>),
    apply: Option<(&'a ComputePipeline, DescriptorSet<'a>)>,
}

impl<'k> DropletRunner<'k> {
    fn new(kernel: KernelRef<'k>, map: &FixedHeightfield) -> Result<Self, ErosionError> {
        check_map(map, kernel.variant().lever == Lever::Wide)?;
        Ok(Self {
            stream: CommandStream::new(kernel.context())?,
            buffers: MapBuffers::new(&kernel, map)?,
            seconds_per_droplet: None,
            kernel,
        })
    }

    pub fn kernel(&self) -> &DropletKernel {
        &self.kernel
    }

    pub fn execute(
        &mut self,
        job: &DropletJob,
        batch: u32,
        mode: RunMode,
    ) -> Result<GpuRun, ErosionError> {
        let plan = self.plan(job, batch, mode)?;
        let kernel = &*self.kernel;
        let buffers = &self.buffers;
        let texels = texel_binding(kernel.variant().lever)
            .map(|kind| {
                let cells = u64::from(buffers.width) * u64::from(buffers.height);
                TexelView::new(&buffers.heights, cells, TexelFormat::I32, kind)
            })
            .transpose()?;
        let sets = buffers.sets(kernel, mode, texels.as_ref())?;
        let wall_time = self
            .stream
            .submit(|rec| buffers.record(rec, kernel, job, &plan, &sets))?;
        let gpu_time = match &buffers.queries {
            Some(q) => Some(q.elapsed(0, 1)?),
            None => None,
        };
        if job.droplets > 0 {
            let seconds = gpu_time.unwrap_or(wall_time).as_secs_f64();
            self.seconds_per_droplet = Some(seconds / f64::from(job.droplets));
        }
        let (cells, received) = if mode.read_back {
            buffers.read_heights(kernel)?
        } else {
            (Vec::new(), 0.0)
        };
        let addresses = if mode.records {
            Some(buffers.addresses_readback.read::<StepAddresses>()?)
        } else {
            None
        };
        let (work, contention) = if mode.counted {
            let (work, contention) =
                buffers.read_counts(kernel, job.droplets as usize, received)?;
            (Some(work), Some(contention))
        } else {
            (None, None)
        };
        Ok(GpuRun {
            cells,
            gpu_time,
            wall_time,
            dispatches: plan.batches.len() * plan.passes as usize,
            submissions: plan.starts.iter().filter(|&&s| s).count(),
            batches: plan.batches,
            work,
            contention,
            addresses,
        })
    }

    /// Frees the address record of the last recording run (read back by then), which
    /// holds 16 bytes per droplet-step twice over.
    pub(super) fn release_record(&mut self) -> Result<(), ErosionError> {
        let ctx = self.kernel.context();
        self.buffers.addresses = Buffer::new(ctx, "addressRecord", 16, BufferKind::Storage)?;
        self.buffers.addresses_readback =
            Buffer::new(ctx, "addressRecord read-back", 16, BufferKind::Download)?;
        Ok(())
    }

    /// A device-local storage buffer holding `data`.
    pub(super) fn storage_from<T: bytemuck::Pod>(
        &mut self,
        name: &str,
        data: &[T],
    ) -> Result<Buffer, ErosionError> {
        let ctx = self.kernel.context();
        let upload = Buffer::upload_from(ctx, name, data)?;
        let storage = Buffer::new(ctx, name, upload.size(), BufferKind::Storage)?;
        self.stream.submit(|rec| {
            rec.barrier(Hazard::EarlierWorkToTransfer);
            rec.copy(&upload, &storage);
        })?;
        Ok(storage)
    }

    /// One replay of an address record (see [`StepAddresses`]) by `pipeline`, in the
    /// dispatches, passes and submissions `job` runs in. It adds 1 per atomic into the
    /// map's heights, which every run uploads afresh: from zero, and read back, if
    /// `counts_adds`.
    pub(super) fn replay(
        &mut self,
        job: &DropletJob,
        batch: u32,
        pipeline: &ComputePipeline,
        record: &Buffer,
        sink: &Buffer,
        counts_adds: bool,
    ) -> Result<ReplayRun, ErosionError> {
        let plan = self.plan(job, batch, RunMode::TIMED_ONLY)?;
        let buffers = &self.buffers;
        let set = DescriptorSet::new(pipeline, &[&buffers.heights, record, sink])?;
        let steps_per_pass = job.passes.steps_per_pass(job.params.lifetime);
        let wall_time = self.stream.submit(|rec| {
            if let Some(q) = &buffers.queries {
                rec.reset_queries(q);
            }
            if counts_adds {
                rec.barrier(Hazard::EarlierWorkToTransfer);
                rec.fill_zero(&buffers.heights);
            }
            // After the record's upload and the runs before.
            rec.barrier(Hazard::TransferToCompute);
            rec.barrier(Hazard::ComputeToCompute);
            if let Some(q) = &buffers.queries {
                rec.timestamp(q, 0);
            }
            plan.record_dispatches(rec, |rec, b, pass| {
                rec.bind(pipeline, &set);
                rec.push_constants(&ReplayPushConstants {
                    map_width: buffers.width,
                    max_lifetime: job.params.lifetime,
                    batch_base_id: b.base_id,
                    batch_size: b.size,
                    pass,
                    // One pass, unstaggered, for the kernels without passes.
                    pass_count: job.passes.count,
                    steps_per_pass,
                    stagger: u32::from(job.passes.stagger),
                });
                rec.dispatch(b.groups, 1, 1);
            });
            if let Some(q) = &buffers.queries {
                rec.timestamp(q, 1);
            }
            if counts_adds {
                rec.barrier(Hazard::ComputeToTransfer);
                rec.copy(&buffers.heights, &buffers.readback);
                rec.barrier(Hazard::TransferToHost);
            }
        })?;
        let gpu_time = match &buffers.queries {
            Some(q) => Some(q.elapsed(0, 1)?),
            None => None,
        };
        let adds_per_cell = match counts_adds {
            true => Some(buffers.readback.read::<i32>()?),
            false => None,
        };
        Ok(ReplayRun {
            gpu_time,
            wall_time,
            adds_per_cell,
        })
    }

    /// Checks the job against the kernel and the map, splits it into dispatches, and
    /// grows the buffers it needs.
    fn plan(&mut self, job: &DropletJob, batch: u32, mode: RunMode) -> Result<Plan, ErosionError> {
        job.validate()?;
        let (kernel, buffers) = (&*self.kernel, &mut self.buffers);
        job.spawn.check_map(buffers.width, buffers.height)?;
        if batch == 0 {
            return Err(ErosionError::Batch);
        }
        let variant = kernel.variant();
        if variant.shader == DropletShader::TileCache {
            if variant.cache.tile != job.spawn.tile {
                return Err(ErosionError::TileMismatch {
                    job: job.spawn.tile,
                    built: variant.cache.tile,
                });
            }
            variant.cache.rule(job.spawn.phases)?;
        }
        if !variant.runs(job) {
            return Err(ErosionError::VariantMismatch {
                needed: KernelVariant::for_job(job, variant.atomics).module_name(),
                built: variant.module_name(),
            });
        }
        if job.params.fixed_point_scale != kernel.scale() {
            return Err(ErosionError::ScaleMismatch {
                job: job.params.fixed_point_scale,
                built: kernel.scale(),
            });
        }
        if job.params.model() != kernel.model() {
            return Err(ErosionError::ModelMismatch {
                job: job.params.model(),
                built: kernel.model(),
            });
        }
        let max_groups = kernel.context().info().max_workgroup_count[0];
        let whole = plan_batches(job.droplets, batch, kernel.workgroup(), max_groups);
        let batches = plan_phased(&whole, job.spawn.phases, kernel.workgroup());
        let mut colour_groups = [0u32; 9];
        for b in &batches {
            colour_groups[b.phase as usize] += b.groups;
        }
        let passes = if variant.shader == DropletShader::Passes {
            job.passes.dispatches()
        } else {
            1
        };
        buffers.reserve(kernel, job, &batches, mode)?;
        let bound = kernel.context().max_submission().as_secs_f64();
        Ok(Plan {
            starts: submission_starts(&batches, self.seconds_per_droplet, bound),
            batches,
            passes,
            colour_groups,
            mode,
        })
    }
}

/// Which batches start a submission, so that none is expected to run past `bound_s`
/// seconds (an OS watchdog's limit): consecutive batches share one while their
/// expected time, at the last run's rate, fits. Until a rate is measured each batch is
/// its own submission. A batch expected past the bound alone still runs whole: its
/// size is the experiment's to choose (`--batch`).
pub fn submission_starts(
    batches: &[Batch],
    seconds_per_droplet: Option<f64>,
    bound_s: f64,
) -> Vec<bool> {
    let mut open_s = 0.0;
    batches
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let expected = seconds_per_droplet.map_or(f64::INFINITY, |s| s * f64::from(b.size));
            let starts = i == 0 || open_s + expected > bound_s;
            open_s = if starts { expected } else { open_s + expected };
            starts
        })
        .collect()
}

impl MapBuffers {
    fn new(kernel: &DropletKernel, map: &FixedHeightfield) -> Result<Self, ErosionError> {
        let ctx = kernel.context();
        let bytes = map.cells.len() as u64 * 4;
        let wide = kernel.variant().lever == Lever::Wide;
        let upload = if wide {
            let initial = Buffer::new(ctx, "heightData initial", bytes, BufferKind::Addressed)?;
            crate::gpu::upload(ctx, map.cells, &initial)?;
            initial
        } else if kernel.variant().atomics == AtomicMode::Float {
            let scale = kernel.scale();
            let heights: Vec<f32> = map.cells.iter().map(|&c| c as f32 / scale).collect();
            Buffer::upload_from(ctx, "heightData upload", &heights)?
        } else {
            Buffer::upload_from(ctx, "heightData upload", map.cells)?
        };
        // Buffers a variant does not use are still bound, at a token size.
        let unused = 16;
        let delta_bytes = if kernel.apply().is_some() {
            bytes
        } else {
            unused
        };
        let storage = |name, size| Buffer::new(ctx, name, size, BufferKind::Storage);
        let download = |name, size| Buffer::new(ctx, name, size, BufferKind::Download);
        // The wide build's whole-map buffers: by address, read back in chunks.
        let (map_kind, read_bytes) = if wide {
            (BufferKind::Addressed, unused)
        } else {
            (BufferKind::Storage, bytes)
        };
        let map_buffer = |name, size| Buffer::new(ctx, name, size, map_kind);
        Ok(Self {
            width: map.width,
            height: map.height,
            initial_sum: map.cells.iter().map(|&c| i64::from(c)).sum(),
            // Whole 16-byte quads, for the quad loads.
            heights: map_buffer("heightData", bytes.next_multiple_of(16))?,
            counters: storage("workCounters", COUNTER_SLOTS * 4)?,
            hits: map_buffer("cellHits", bytes)?,
            delta: storage("deltaData", delta_bytes)?,
            states: storage("dropletState", unused)?,
            addresses: storage("addressRecord", unused)?,
            addresses_readback: download("addressRecord read-back", unused)?,
            per_droplet: None,
            upload,
            wide,
            token: storage("wide build's token binding", unused)?,
            readback: download("heightData read-back", read_bytes)?,
            counter_readback: download("workCounters read-back", COUNTER_SLOTS * 4)?,
            hits_readback: download("cellHits read-back", read_bytes)?,
            queries: TimestampQueries::new(ctx, 2)?,
        })
    }

    /// Grows the per-droplet buffers to the job's droplets for a counted run (only the
    /// counted build writes them; other runs bind them at a token size) and, for
    /// passes, the state buffer to its largest dispatch.
    fn reserve(
        &mut self,
        kernel: &DropletKernel,
        job: &DropletJob,
        batches: &[Batch],
        mode: RunMode,
    ) -> Result<(), ErosionError> {
        let ctx = kernel.context();
        let needed = if mode.counted { job.droplets } else { 1 };
        let limit = ctx.info().max_storage_buffer_range / PER_DROPLET_BYTES;
        if u64::from(needed) > limit {
            return Err(ErosionError::CountedDroplets {
                droplets: needed,
                limit,
            });
        }
        if self
            .per_droplet
            .as_ref()
            .is_none_or(|p| p.droplets < needed)
        {
            self.per_droplet = Some(PerDroplet::new(ctx, needed)?);
        }
        if mode.records {
            let steps = u64::from(job.droplets) * u64::from(job.params.lifetime);
            let bytes = steps * STEP_ADDRESSES_BYTES;
            let limit = ctx.info().max_storage_buffer_range;
            if bytes > limit {
                return Err(ErosionError::RecordTooLarge {
                    droplets: job.droplets,
                    lifetime: job.params.lifetime,
                    bytes,
                    limit,
                });
            }
            if self.addresses.size() < bytes {
                self.addresses = Buffer::new(ctx, "addressRecord", bytes, BufferKind::Storage)?;
                self.addresses_readback =
                    Buffer::new(ctx, "addressRecord read-back", bytes, BufferKind::Download)?;
            }
        }
        if kernel.variant().shader == DropletShader::Passes {
            let largest = batches.iter().map(|b| u64::from(b.size)).max().unwrap_or(1);
            let bytes = largest * DROPLET_STATE_BYTES;
            if self.states.size() < bytes {
                self.states = Buffer::new(ctx, "dropletState", bytes, BufferKind::Storage)?;
            }
        }
        Ok(())
    }

    fn per_droplet(&self) -> &PerDroplet {
        self.per_droplet
            .as_ref()
            .expect("reserved by the plan of every run")
    }

    fn sets<'a>(
        &'a self,
        kernel: &'a DropletKernel,
        mode: RunMode,
        texels: Option<&'a TexelView<'a>>,
    ) -> Result<Sets<'a>, ErosionError> {
        let pipeline = kernel.pipeline(mode.counted, mode.records)?;
        let per_droplet = self.per_droplet();
        let (heights, hits) = if self.wide {
            (&self.token, &self.token)
        } else {
            (&self.heights, &self.hits)
        };
        let droplet = DescriptorSet::with_texels(
            pipeline,
            &[
                heights,
                &self.counters,
                hits,
                &per_droplet.intended,
                &per_droplet.applied,
                &self.delta,
                &self.states,
                heights,
                &self.addresses,
            ],
            texels.as_slice(),
        )?;
        let apply = match kernel.apply() {
            Some(apply) => Some((
                apply,
                DescriptorSet::new(apply, &[&self.heights, &self.delta])?,
            )),
            None => None,
        };
        Ok(Sets {
            droplet: (pipeline, droplet),
            apply,
        })
    }

    /// Upload, the dispatches with a barrier between each two, the timestamps around
    /// them, and the read-backs the mode asks for.
    fn record<'r>(
        &'r self,
        rec: &mut Recorder<'r>,
        kernel: &DropletKernel,
        job: &DropletJob,
        plan: &Plan,
        sets: &'r Sets<'r>,
    ) {
        let (pipeline, set) = (sets.droplet.0, &sets.droplet.1);
        let per_droplet = self.per_droplet();
        let mode = plan.mode;
        if let Some(q) = &self.queries {
            rec.reset_queries(q);
        }
        rec.barrier(Hazard::EarlierWorkToTransfer);
        rec.copy(&self.upload, &self.heights);
        if sets.apply.is_some() {
            rec.fill_zero(&self.delta);
        }
        if mode.records {
            rec.fill_zero(&self.addresses);
        }
        if mode.counted {
            for buffer in [
                &self.counters,
                &self.hits,
                &per_droplet.intended,
                &per_droplet.applied,
            ] {
                rec.fill_zero(buffer);
            }
        }
        rec.barrier(Hazard::TransferToCompute);
        if let Some(q) = &self.queries {
            rec.timestamp(q, 0);
        }
        // Only deterministic mode's apply kernel uses it, and it has no wide build.
        let cells = self.width.saturating_mul(self.height);
        let apply_groups = cells
            .div_ceil(APPLY_WORKGROUP)
            .min(kernel.context().info().max_workgroup_count[0]);
        plan.record_dispatches(rec, |rec, b, pass| {
            let push = self.push_constants(job, plan, b, pass);
            if self.wide {
                rec.bind_with_addresses(pipeline, set, &[&self.heights, &self.hits], &push);
            } else {
                rec.bind(pipeline, set);
                rec.push_constants(&push);
            }
            rec.dispatch(b.groups, 1, 1);
            if let Some((apply, apply_set)) = &sets.apply {
                rec.barrier(Hazard::ComputeToCompute);
                rec.bind(apply, apply_set);
                rec.push_constants(&ApplyPushConstants { cells });
                rec.dispatch(apply_groups, 1, 1);
            }
        });
        if let Some(q) = &self.queries {
            rec.timestamp(q, 1);
        }
        if mode.read_back || mode.counted {
            rec.barrier(Hazard::ComputeToTransfer);
            // The wide build reads heights and hits back in chunks after the run.
            if mode.read_back && !self.wide {
                rec.copy(&self.heights, &self.readback);
            }
            if mode.counted {
                rec.copy(&self.counters, &self.counter_readback);
                if !self.wide {
                    rec.copy(&self.hits, &self.hits_readback);
                }
                rec.copy(&per_droplet.intended, &per_droplet.intended_readback);
                rec.copy(&per_droplet.applied, &per_droplet.applied_readback);
            }
            if mode.records {
                rec.copy(&self.addresses, &self.addresses_readback);
            }
            rec.barrier(Hazard::TransferToHost);
        }
    }

    fn push_constants(
        &self,
        job: &DropletJob,
        plan: &Plan,
        b: &Batch,
        pass: u32,
    ) -> DropletPushConstants {
        let spawn = job.spawn.constants();
        let p = &job.params;
        DropletPushConstants {
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
            tile_size: spawn.tile_size,
            tile_order: spawn.tile_order,
            phase_stride: spawn.phase_stride,
            phase: b.phase,
            group_base: b.group_base,
            pass,
            pass_count: job.passes.count,
            steps_per_pass: job.passes.steps_per_pass(p.lifetime),
            stagger: u32::from(job.passes.stagger),
            colour_groups: plan.colour_groups[b.phase as usize],
        }
    }

    /// The heights after a run, in fixed point, and the height it added to the map.
    fn read_heights(&self, kernel: &DropletKernel) -> Result<(Vec<i32>, f64), ErosionError> {
        let scale = kernel.scale();
        if kernel.variant().atomics == AtomicMode::Float {
            let heights = self.readback.read::<f32>()?;
            let sum: f64 = heights.iter().map(|&h| f64::from(h)).sum();
            let cells = heights
                .iter()
                .map(|&h| (h * scale).round() as i32)
                .collect();
            Ok((cells, sum - self.initial_sum as f64 / f64::from(scale)))
        } else {
            let cells = if self.wide {
                crate::gpu::download::<i32>(kernel.context(), &self.heights, self.cell_count())?
            } else {
                self.readback.read::<i32>()?
            };
            let sum: i64 = cells.iter().map(|&c| i64::from(c)).sum();
            Ok((cells, (sum - self.initial_sum) as f64 / f64::from(scale)))
        }
    }

    fn cell_count(&self) -> usize {
        (u64::from(self.width) * u64::from(self.height)) as usize
    }

    /// What the instrumented build counted, given the height the map received.
    fn read_counts(
        &self,
        kernel: &DropletKernel,
        droplets: usize,
        received: f64,
    ) -> Result<(WorkCount, Contention), ErosionError> {
        let per_droplet = self.per_droplet();
        let slots = self.counter_readback.read::<u32>()?;
        let shards = |k: usize| {
            slots[1 + k * COUNTER_SHARDS..1 + (k + 1) * COUNTER_SHARDS]
                .iter()
                .map(|&c| u64::from(c))
                .sum::<u64>()
        };
        let counts = AtomicCounts {
            atomics: shards(0),
            conflicts: shards(1),
            zero_adds: shards(2),
            escapes: (kernel.variant().shader == DropletShader::TileCache).then(|| shards(3)),
        };
        let intended = per_droplet.intended_readback.read::<[f32; 2]>()?;
        let applied = per_droplet.applied_readback.read::<[i32; 2]>()?;
        let hits = if self.wide {
            crate::gpu::download::<u32>(kernel.context(), &self.hits, self.cell_count())?
        } else {
            self.hits_readback.read::<u32>()?
        };
        let contention = Contention::measure(
            &hits,
            counts,
            &MassInputs {
                intended: &intended[..droplets],
                applied_fixed: &applied[..droplets],
                float_heights: kernel.variant().atomics == AtomicMode::Float,
                scale: kernel.scale(),
                received,
            },
        );
        let work = WorkCount::from_atomics(u64::from(slots[0]), counts.atomics);
        Ok((work, contention))
    }
}

const STEP_ADDRESSES_BYTES: u64 = std::mem::size_of::<StepAddresses>() as u64;

/// Bytes per droplet of each per-droplet buffer: two 32-bit numbers.
const PER_DROPLET_BYTES: u64 = 8;

impl PerDroplet {
    fn new(ctx: &Arc<Context>, droplets: u32) -> Result<Self, ErosionError> {
        let bytes = u64::from(droplets) * PER_DROPLET_BYTES;
        let storage = |name| Buffer::new(ctx, name, bytes, BufferKind::Storage);
        let download = |name| Buffer::new(ctx, name, bytes, BufferKind::Download);
        Ok(Self {
            droplets,
            intended: storage("intendedChange")?,
            applied: storage("appliedFixed")?,
            intended_readback: download("intendedChange read-back")?,
            applied_readback: download("appliedFixed read-back")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batches(sizes: &[u32]) -> Vec<Batch> {
        sizes
            .iter()
            .map(|&size| Batch {
                base_id: 0,
                size,
                groups: 1,
                phase: 0,
                group_base: 0,
            })
            .collect()
    }

    #[test]
    fn submissions_hold_what_the_bound_allows_at_the_measured_rate() {
        let b = batches(&[100, 100, 100, 100, 300]);
        // Unknown rate: one submission per batch.
        assert_eq!(submission_starts(&b, None, 1.0), [true; 5]);
        // 2 ms per droplet against 0.45 s: two batches fit, the 300 runs alone.
        assert_eq!(
            submission_starts(&b, Some(0.002), 0.45),
            [true, false, true, false, true]
        );
        // Everything fits.
        assert_eq!(
            submission_starts(&b, Some(1e-6), 1.0),
            [true, false, false, false, false]
        );
    }
}
