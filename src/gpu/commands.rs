//! Recording and submitting work: one command pool, its command buffers and one fence.
//! A recording may be split into several submissions
//! ([`Recorder::split_submission`]), so that no single one runs long enough for an OS
//! watchdog to kill it; they run back to back, in order.
//!
//! Every submission is waited on before `submit` returns, even when it fails, so no
//! buffer, pipeline or descriptor set is in use by the device once `submit` is done.
//! What a submission records is borrowed for the lifetime `'r` of the `Recorder`,
//! which outlives the call to `submit`: a resource dropped before the submission, or
//! made inside the recording closure, does not compile.
//!
//! ```compile_fail,E0597
//! # use vkerode::gpu::{Buffer, BufferKind, CommandStream, Context, ContextOptions};
//! # let ctx = Context::new(&ContextOptions::default()).unwrap();
//! let mut stream = CommandStream::new(&ctx).unwrap();
//! let dst = Buffer::new(&ctx, "dst", 64, BufferKind::Storage).unwrap();
//! stream.submit(|rec| {
//!     // Dropped at the end of the closure, before the submission: refused.
//!     let src = Buffer::upload_from(&ctx, "src", &[0u32; 16]).unwrap();
//!     rec.copy(&src, &dst);
//! });
//! ```
//!
//! The same recording with the buffer made outside compiles:
//!
//! ```no_run
//! # use vkerode::gpu::{Buffer, BufferKind, CommandStream, Context, ContextOptions};
//! # let ctx = Context::new(&ContextOptions::default()).unwrap();
//! let mut stream = CommandStream::new(&ctx).unwrap();
//! let dst = Buffer::new(&ctx, "dst", 64, BufferKind::Storage).unwrap();
//! let src = Buffer::upload_from(&ctx, "src", &[0u32; 16]).unwrap();
//! stream.submit(|rec| rec.copy(&src, &dst)).unwrap();
//! ```

use std::sync::Arc;
use std::time::{Duration, Instant};

use ash::vk;

use super::barriers::Hazard;
use super::buffer::Buffer;
use super::context::{Context, SubmissionDone};
use super::error::{GpuError, GpuResult, VkResultExt};
use super::pipeline::{ComputePipeline, DescriptorSet};
use super::timing::TimestampQueries;

/// How long a submission may take before it is taken for hung, as a watchdog would.
pub const SUBMISSION_TIMEOUT: Duration = Duration::from_secs(600);

pub struct CommandStream {
    ctx: Arc<Context>,
    pool: vk::CommandPool,
    /// The pool's command buffers, reused by every submission; more are made when a
    /// recording is split further than before.
    cmds: Vec<vk::CommandBuffer>,
    fence: vk::Fence,
    /// One fence per submission but the last, made when a context's observer first
    /// needs them: each is waited on and told while the later submissions run.
    observed: Vec<vk::Fence>,
}

impl CommandStream {
    pub fn new(ctx: &Arc<Context>) -> GpuResult<Self> {
        let pool_info = vk::CommandPoolCreateInfo::default()
            .queue_family_index(ctx.queue_family())
            .flags(vk::CommandPoolCreateFlags::TRANSIENT);
        // SAFETY: valid create info on a live device.
        let pool =
            unsafe { ctx.create_command_pool(&pool_info, None) }.during("vkCreateCommandPool")?;
        // Built up one handle at a time; on error, `stream` frees what exists.
        let mut stream = Self {
            ctx: Arc::clone(ctx),
            pool,
            cmds: Vec::new(),
            fence: vk::Fence::null(),
            observed: Vec::new(),
        };
        stream.cmds.push(allocate_command_buffer(ctx, pool)?);
        // SAFETY: valid create info on a live device.
        stream.fence = unsafe { ctx.create_fence(&vk::FenceCreateInfo::default(), None) }
            .during("vkCreateFence")?;
        Ok(stream)
    }

    /// Records what `record` asks for, submits it and waits for it to finish.
    /// Returns the host-side time from submission to completion. A command recorded
    /// out of order (a dispatch with no pipeline bound, a timestamp past its pool)
    /// is an error, and then nothing is submitted. Work that has not finished after
    /// [`SUBMISSION_TIMEOUT`] is an error, [`GpuError::Timeout`].
    pub fn submit<'r, F>(&mut self, record: F) -> GpuResult<Duration>
    where
        F: FnOnce(&mut Recorder<'r>),
    {
        let ctx = &self.ctx;
        // SAFETY: the previous submission (if any) was waited on, so the pool is idle.
        unsafe { ctx.reset_command_pool(self.pool, vk::CommandPoolResetFlags::empty()) }
            .during("vkResetCommandPool")?;
        let mut recorder = Recorder {
            ctx: Arc::clone(ctx),
            pool: self.pool,
            cmds: std::mem::take(&mut self.cmds),
            current: 0,
            recording: false,
            bound: None,
            pushed: false,
            reset_pools: Vec::new(),
            units: vec![0],
            error: None,
        };
        match recorder.begin_current() {
            Ok(()) => record(&mut recorder),
            Err(e) => recorder.error = Some(e),
        }
        if recorder.recording {
            if let Err(e) = recorder.end_current() {
                recorder.error.get_or_insert(e);
            }
        }
        let used = recorder.current + 1;
        let units = std::mem::take(&mut recorder.units);
        let done = |i: usize| SubmissionDone {
            done: i + 1,
            of: used,
            units: units.get(i).copied().unwrap_or(0),
        };
        self.cmds = std::mem::take(&mut recorder.cmds);
        if let Some(error) = recorder.error {
            return Err(error);
        }
        let observer = ctx.submission_observer();
        if observer.is_some() {
            make_fences(ctx, &mut self.observed, used - 1)?;
        }
        let started = Instant::now();
        let (last, earlier) = self.cmds[..used].split_last().expect("one buffer at least");
        let fences = match &observer {
            Some(_) => &self.observed[..earlier.len()],
            None => &[],
        };
        let fence_of = |i: usize| fences.get(i).copied().unwrap_or(vk::Fence::null());
        let waited = earlier
            .iter()
            .enumerate()
            .try_for_each(|(i, &cmd)| ctx.submit(cmd, fence_of(i)))
            .and_then(|()| ctx.submit(*last, self.fence))
            .and_then(|()| {
                // Every submission is queued already: waiting here holds up no GPU work.
                if let Some(observe) = &observer {
                    for (i, &fence) in fences.iter().enumerate() {
                        self.wait_for(fence)?;
                        observe(done(i));
                    }
                }
                self.wait_for(self.fence)
            })
            .map(|()| started.elapsed());
        if let (Some(observe), Ok(_)) = (&observer, &waited) {
            observe(done(used - 1));
        }
        if waited.is_err() {
            // The submissions may still run: let nothing they use be freed under them.
            let _ = ctx.wait_idle();
        }
        // SAFETY: the fences are not in use by a pending submission (waited on above,
        // or the device is idle).
        unsafe { ctx.reset_fences(&[self.fence]) }.during("vkResetFences")?;
        if observer.is_some() && !fences.is_empty() {
            // SAFETY: as above.
            unsafe { ctx.reset_fences(fences) }.during("vkResetFences")?;
        }
        waited
    }

    fn wait_for(&self, fence: vk::Fence) -> GpuResult<()> {
        let timeout = GpuError::Timeout {
            call: "vkWaitForFences",
            seconds: SUBMISSION_TIMEOUT.as_secs(),
        };
        let nanos = SUBMISSION_TIMEOUT.as_nanos() as u64;
        // SAFETY: the fence belongs to this device and was just submitted with.
        match unsafe { self.ctx.wait_for_fences(&[fence], true, nanos) } {
            Err(vk::Result::TIMEOUT) => Err(timeout),
            Err(e) => Err(super::error::from_vk("vkWaitForFences", e)),
            Ok(()) if self.ctx.faults().times_out() => Err(timeout),
            Ok(()) => Ok(()),
        }
    }
}

/// Makes fences until `fences` holds `count`, for an observer's submissions.
fn make_fences(ctx: &Context, fences: &mut Vec<vk::Fence>, count: usize) -> GpuResult<()> {
    while fences.len() < count {
        // SAFETY: valid create info on a live device.
        let fence = unsafe { ctx.create_fence(&vk::FenceCreateInfo::default(), None) }
            .during("vkCreateFence")?;
        fences.push(fence);
    }
    Ok(())
}

fn allocate_command_buffer(ctx: &Context, pool: vk::CommandPool) -> GpuResult<vk::CommandBuffer> {
    let alloc = vk::CommandBufferAllocateInfo::default()
        .command_pool(pool)
        .level(vk::CommandBufferLevel::PRIMARY)
        .command_buffer_count(1);
    // SAFETY: the pool is alive, made on this device, and used by one thread (its
    // owner holds `&mut`).
    let cmds =
        unsafe { ctx.allocate_command_buffers(&alloc) }.during("vkAllocateCommandBuffers")?;
    Ok(cmds[0])
}

impl Drop for CommandStream {
    fn drop(&mut self) {
        // Nothing useful can be done with a failure here.
        let _ = self.ctx.wait_idle();
        // SAFETY: the device is idle, so neither the fence nor the pool is in use.
        unsafe {
            self.ctx.destroy_fence(self.fence, None);
            for &fence in &self.observed {
                self.ctx.destroy_fence(fence, None);
            }
            self.ctx.destroy_command_pool(self.pool, None);
        }
    }
}

/// The commands vkerode records, each a checked wrapper of one Vulkan command. What a
/// command uses is borrowed for `'r`, past the end of the submission. The first
/// misuse is kept and returned by `submit`; the commands after it are not recorded.
pub struct Recorder<'r> {
    ctx: Arc<Context>,
    pool: vk::CommandPool,
    /// The stream's command buffers; `current` is the one being recorded.
    cmds: Vec<vk::CommandBuffer>,
    current: usize,
    /// Whether `cmds[current]` is begun and not yet ended.
    recording: bool,
    bound: Option<&'r ComputePipeline>,
    /// Whether the bound pipeline's push constants were set since it was bound.
    pushed: bool,
    reset_pools: Vec<vk::QueryPool>,
    /// Per submission, the units of the caller's work it holds ([`Recorder::count_units`]).
    units: Vec<u64>,
    error: Option<GpuError>,
}

impl<'r> Recorder<'r> {
    fn cmd(&self) -> vk::CommandBuffer {
        self.cmds[self.current]
    }

    fn begin_current(&mut self) -> GpuResult<()> {
        if self.current == self.cmds.len() {
            let cmd = allocate_command_buffer(&self.ctx, self.pool)?;
            self.cmds.push(cmd);
        }
        let begin = vk::CommandBufferBeginInfo::default()
            .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
        // SAFETY: the buffer was reset with its pool at the start of this submission
        // and is not recording.
        unsafe { self.ctx.begin_command_buffer(self.cmd(), &begin) }
            .during("vkBeginCommandBuffer")?;
        self.recording = true;
        Ok(())
    }

    fn end_current(&mut self) -> GpuResult<()> {
        self.recording = false;
        // SAFETY: the current buffer is recording (the caller checked `recording`).
        unsafe { self.ctx.end_command_buffer(self.cmd()) }.during("vkEndCommandBuffer")
    }

    /// Ends the submission recorded so far and starts the next: the GPU runs them back
    /// to back, and barriers order them as within one. Pipelines must be bound again.
    pub fn split_submission(&mut self) {
        if !self.check("a split", None) {
            return;
        }
        let next = self.end_current().and_then(|()| {
            self.current += 1;
            self.begin_current()
        });
        if let Err(error) = next {
            self.error = Some(error);
            return;
        }
        self.units.push(0);
        self.bound = None;
        self.pushed = false;
    }

    /// Counts `units` of the caller's work (whatever it counts in) into the submission
    /// being recorded: a context's observer hears them as that submission completes.
    /// Recorded nowhere on the GPU.
    pub fn count_units(&mut self, units: u64) {
        if let Some(held) = self.units.get_mut(self.current) {
            *held = held.saturating_add(units);
        }
    }

    /// How many submissions the recording holds so far.
    pub fn submissions(&self) -> usize {
        self.current + 1
    }

    /// Whether recording may go on; records `reason` as the error otherwise.
    fn check(&mut self, command: &'static str, problem: Option<String>) -> bool {
        if self.error.is_some() {
            return false;
        }
        match problem {
            Some(reason) => {
                self.error = Some(GpuError::Recording { command, reason });
                false
            }
            None => true,
        }
    }

    /// Copies all of `src` (or as much as fits) to the start of `dst`.
    pub fn copy(&mut self, src: &'r Buffer, dst: &'r Buffer) {
        self.copy_region(src, 0, dst, 0, src.size().min(dst.size()));
    }

    /// Copies `size` bytes from `src` at `src_offset` to `dst` at `dst_offset`: the
    /// chunks of a transfer larger than one host buffer holds.
    pub fn copy_region(
        &mut self,
        src: &'r Buffer,
        src_offset: u64,
        dst: &'r Buffer,
        dst_offset: u64,
        size: u64,
    ) {
        let problem = if !src.kind().transfer_source() {
            Some(format!("buffer {:?} cannot be copied from", src.name()))
        } else if !dst.kind().transfer_destination() {
            Some(format!("buffer {:?} cannot be copied into", dst.name()))
        } else if std::ptr::eq(src, dst) {
            Some(format!(
                "buffer {:?} cannot be copied onto itself",
                src.name()
            ))
        } else if src_offset
            .checked_add(size)
            .is_none_or(|end| end > src.size())
            || dst_offset
                .checked_add(size)
                .is_none_or(|end| end > dst.size())
        {
            Some(format!(
                "{size} bytes from {src_offset} of {:?} to {dst_offset} of {:?} lie outside a buffer",
                src.name(),
                dst.name()
            ))
        } else {
            None
        };
        if !self.check("a copy", problem) || size == 0 {
            return;
        }
        let region = [vk::BufferCopy::default()
            .src_offset(src_offset)
            .dst_offset(dst_offset)
            .size(size)];
        // SAFETY: both buffers are borrowed past the submission and have the transfer
        // usages checked above; the region lies inside both.
        unsafe {
            self.ctx
                .cmd_copy_buffer(self.cmd(), src.raw(), dst.raw(), &region)
        };
    }

    pub fn fill_zero(&mut self, buffer: &'r Buffer) {
        let problem = (!buffer.kind().transfer_destination())
            .then(|| format!("buffer {:?} cannot be filled", buffer.name()));
        if !self.check("a fill", problem) {
            return;
        }
        // SAFETY: the buffer is borrowed past the submission and is a transfer
        // destination; WHOLE_SIZE rounds down to whole words.
        unsafe {
            self.ctx
                .cmd_fill_buffer(self.cmd(), buffer.raw(), 0, vk::WHOLE_SIZE, 0)
        };
    }

    pub fn barrier(&mut self, hazard: Hazard) {
        if !self.check("a barrier", None) {
            return;
        }
        let masks = hazard.masks();
        let memory = [vk::MemoryBarrier::default()
            .src_access_mask(masks.src_access)
            .dst_access_mask(masks.dst_access)];
        // SAFETY: a global memory barrier whose access masks match its stages.
        unsafe {
            self.ctx.cmd_pipeline_barrier(
                self.cmd(),
                masks.src_stage,
                masks.dst_stage,
                vk::DependencyFlags::empty(),
                &memory,
                &[],
                &[],
            )
        };
    }

    /// Binds `pipeline`, which reaches its buffers by address, and sets its push
    /// constants: the addresses of `buffers` (each `Addressed`, borrowed past the
    /// submission), then `params`.
    pub fn bind_addressed<T: bytemuck::Pod>(
        &mut self,
        pipeline: &'r ComputePipeline,
        buffers: &[&'r Buffer],
        params: &T,
    ) {
        let addresses: Vec<u64> = buffers.iter().filter_map(|b| b.address()).collect();
        let mut bytes: Vec<u8> = bytemuck::cast_slice(&addresses).to_vec();
        bytes.extend_from_slice(bytemuck::bytes_of(params));
        let problem = if let Some(b) = buffers.iter().find(|b| b.address().is_none()) {
            Some(format!("buffer {:?} is not reached by address", b.name()))
        } else if buffers.len() != pipeline.addressed_buffers() as usize {
            Some(format!(
                "{} reaches {} buffers by address, not {}",
                pipeline.name(),
                pipeline.addressed_buffers(),
                buffers.len()
            ))
        } else if bytes.len() != pipeline.push_constant_bytes() as usize {
            Some(format!(
                "{} bytes of addresses and parameters do not match the {} bytes of {}'s push-constant block",
                bytes.len(),
                pipeline.push_constant_bytes(),
                pipeline.name()
            ))
        } else {
            None
        };
        if !self.check("an addressed bind", problem) {
            return;
        }
        // SAFETY: the buffers whose addresses are pushed are borrowed past the
        // submission; the bytes fill the layout's single push-constant range exactly.
        unsafe {
            self.ctx
                .cmd_bind_pipeline(self.cmd(), vk::PipelineBindPoint::COMPUTE, pipeline.raw());
            self.ctx.cmd_push_constants(
                self.cmd(),
                pipeline.layout(),
                vk::ShaderStageFlags::COMPUTE,
                0,
                &bytes,
            );
        }
        self.bound = Some(pipeline);
        self.pushed = true;
    }

    /// Binds `pipeline` with `set`, and sets its push constants: the addresses of
    /// `buffers` (each `Addressed`, borrowed past the submission), then `params`. For a
    /// pipeline that reaches some buffers through descriptors and others by address.
    pub fn bind_with_addresses<T: bytemuck::Pod>(
        &mut self,
        pipeline: &'r ComputePipeline,
        set: &'r DescriptorSet<'_>,
        buffers: &[&'r Buffer],
        params: &T,
    ) {
        self.bind(pipeline, set);
        if self.error.is_some() {
            return;
        }
        self.bind_addressed(pipeline, buffers, params);
    }

    /// Binds `pipeline` with `set`, which must have been made for it.
    pub fn bind(&mut self, pipeline: &'r ComputePipeline, set: &'r DescriptorSet<'_>) {
        let problem = (set.layout() != pipeline.set_layout()).then(|| {
            format!(
                "the descriptor set was made for another pipeline than {}",
                pipeline.name()
            )
        });
        if !self.check("a bind", problem) {
            return;
        }
        // SAFETY: the pipeline and the set (and through it its buffers) are borrowed
        // past the submission, and the set's layout is the pipeline's.
        unsafe {
            self.ctx
                .cmd_bind_pipeline(self.cmd(), vk::PipelineBindPoint::COMPUTE, pipeline.raw());
            self.ctx.cmd_bind_descriptor_sets(
                self.cmd(),
                vk::PipelineBindPoint::COMPUTE,
                pipeline.layout(),
                0,
                &[set.raw()],
                &[],
            );
        }
        self.bound = Some(pipeline);
        self.pushed = false;
    }

    /// Sets the whole push-constant block of the bound pipeline.
    pub fn push_constants<T: bytemuck::Pod>(&mut self, value: &T) {
        let bytes = bytemuck::bytes_of(value);
        let problem = match self.bound {
            None => Some("no pipeline is bound".to_string()),
            Some(p) if p.addressed_buffers() > 0 => Some(format!(
                "{} reaches buffers by address: bind it with bind_addressed",
                p.name()
            )),
            Some(p) if bytes.len() != p.push_constant_bytes() as usize => Some(format!(
                "{} bytes do not match the {} bytes of {}'s push-constant block",
                bytes.len(),
                p.push_constant_bytes(),
                p.name()
            )),
            Some(_) => None,
        };
        if !self.check("push constants", problem) {
            return;
        }
        let Some(pipeline) = self.bound else { return };
        // SAFETY: the bytes fill the layout's single push-constant range exactly.
        unsafe {
            self.ctx.cmd_push_constants(
                self.cmd(),
                pipeline.layout(),
                vk::ShaderStageFlags::COMPUTE,
                0,
                bytes,
            )
        };
        self.pushed = true;
    }

    pub fn dispatch(&mut self, groups_x: u32, groups_y: u32, groups_z: u32) {
        let limits = self.ctx.info().max_workgroup_count;
        let problem = match self.bound {
            None => Some("no pipeline is bound".to_string()),
            Some(p) if p.push_constant_bytes() > 0 && !self.pushed => Some(format!(
                "{}'s push constants were not set since it was bound",
                p.name()
            )),
            Some(_) if [groups_x, groups_y, groups_z].iter().zip(limits).any(|(&n, l)| n > l) => {
                Some(format!(
                    "[{groups_x}, {groups_y}, {groups_z}] workgroups are past maxComputeWorkGroupCount {limits:?}"
                ))
            }
            Some(_) => None,
        };
        if !self.check("a dispatch", problem) {
            return;
        }
        // SAFETY: a pipeline with its set and push constants is bound; the counts are
        // within the device's limits.
        unsafe {
            self.ctx
                .cmd_dispatch(self.cmd(), groups_x, groups_y, groups_z)
        };
    }

    pub fn reset_queries(&mut self, queries: &'r TimestampQueries) {
        if !self.check("a query reset", None) {
            return;
        }
        // SAFETY: the pool is borrowed past the submission; every query is reset.
        unsafe {
            self.ctx
                .cmd_reset_query_pool(self.cmd(), queries.raw(), 0, queries.count())
        };
        self.reset_pools.push(queries.raw());
    }

    /// Writes timestamp `index` once all earlier commands have completed. The pool
    /// must have been reset earlier in this recording.
    pub fn timestamp(&mut self, queries: &'r TimestampQueries, index: u32) {
        let problem = if index >= queries.count() {
            Some(format!(
                "index {index} is past the pool's {} timestamps",
                queries.count()
            ))
        } else if !self.reset_pools.contains(&queries.raw()) {
            Some("the pool was not reset earlier in this recording".into())
        } else {
            None
        };
        if !self.check("a timestamp", problem) {
            return;
        }
        // SAFETY: index < count, and the pool was reset earlier in this buffer.
        unsafe {
            self.ctx.cmd_write_timestamp(
                self.cmd(),
                vk::PipelineStageFlags::ALL_COMMANDS,
                queries.raw(),
                index,
            )
        };
    }
}
