//! Recording and submitting work: one command pool, one command buffer and one fence.
//! Every submission is waited on before `submit` returns, so no buffer, pipeline or
//! descriptor set is ever in use by the device when its owner drops it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ash::vk;

use super::barriers::Barrier;
use super::buffer::Buffer;
use super::context::Context;
use super::error::{GpuResult, VkResultExt};
use super::pipeline::{ComputePipeline, DescriptorSet};
use super::timing::TimestampQueries;

pub struct CommandStream {
    ctx: Arc<Context>,
    pool: vk::CommandPool,
    cmd: vk::CommandBuffer,
    fence: vk::Fence,
}

impl CommandStream {
    pub fn new(ctx: &Arc<Context>) -> GpuResult<Self> {
        let pool_info = vk::CommandPoolCreateInfo::default()
            .queue_family_index(ctx.queue_family())
            .flags(vk::CommandPoolCreateFlags::TRANSIENT);
        // SAFETY: valid create infos on a live device, here and below.
        let pool =
            unsafe { ctx.create_command_pool(&pool_info, None) }.during("vkCreateCommandPool")?;
        let mut stream = Self {
            ctx: Arc::clone(ctx),
            pool,
            cmd: vk::CommandBuffer::null(),
            fence: vk::Fence::null(),
        };
        let alloc = vk::CommandBufferAllocateInfo::default()
            .command_pool(pool)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(1);
        stream.cmd =
            unsafe { ctx.allocate_command_buffers(&alloc) }.during("vkAllocateCommandBuffers")?[0];
        stream.fence = unsafe { ctx.create_fence(&vk::FenceCreateInfo::default(), None) }
            .during("vkCreateFence")?;
        Ok(stream)
    }

    /// Records what `record` asks for, submits it and waits for it to finish.
    /// Returns the host-side time from submission to completion.
    pub fn submit<F>(&mut self, record: F) -> GpuResult<Duration>
    where
        F: FnOnce(&Recorder<'_>),
    {
        let ctx = &self.ctx;
        // SAFETY: the previous submission (if any) was waited on, so the pool is idle.
        unsafe {
            ctx.reset_command_pool(self.pool, vk::CommandPoolResetFlags::empty())
                .during("vkResetCommandPool")?;
            let begin = vk::CommandBufferBeginInfo::default()
                .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
            ctx.begin_command_buffer(self.cmd, &begin)
                .during("vkBeginCommandBuffer")?;
        }
        record(&Recorder { ctx, cmd: self.cmd });
        let cmds = [self.cmd];
        let submit = [vk::SubmitInfo::default().command_buffers(&cmds)];
        let started = Instant::now();
        // SAFETY: the command buffer was recorded above; the fence is unsignalled.
        unsafe {
            ctx.end_command_buffer(self.cmd)
                .during("vkEndCommandBuffer")?;
            ctx.queue_submit(ctx.queue(), &submit, self.fence)
                .during("vkQueueSubmit")?;
            ctx.wait_for_fences(&[self.fence], true, u64::MAX)
                .during("vkWaitForFences")?;
            let elapsed = started.elapsed();
            ctx.reset_fences(&[self.fence]).during("vkResetFences")?;
            Ok(elapsed)
        }
    }
}

impl Drop for CommandStream {
    fn drop(&mut self) {
        // SAFETY: a submission that failed half-way may still be executing, so wait for
        // the device before freeing what it might use.
        unsafe {
            let _ = self.ctx.device_wait_idle();
            self.ctx.destroy_fence(self.fence, None);
            self.ctx.destroy_command_pool(self.pool, None);
        }
    }
}

/// The commands vkerode records, each a thin, checked wrapper of one Vulkan command.
pub struct Recorder<'a> {
    ctx: &'a Context,
    cmd: vk::CommandBuffer,
}

impl Recorder<'_> {
    /// Copies all of `src` to the start of `dst`.
    pub fn copy(&self, src: &Buffer, dst: &Buffer) {
        let region = [vk::BufferCopy::default().size(src.size().min(dst.size()))];
        // SAFETY: both buffers are alive and outlive the submission (it is waited on).
        unsafe {
            self.ctx
                .cmd_copy_buffer(self.cmd, src.raw(), dst.raw(), &region)
        };
    }

    pub fn fill_zero(&self, buffer: &Buffer) {
        // SAFETY: as for `copy`.
        unsafe {
            self.ctx
                .cmd_fill_buffer(self.cmd, buffer.raw(), 0, vk::WHOLE_SIZE, 0)
        };
    }

    pub fn barrier(&self, barrier: Barrier) {
        let memory = [vk::MemoryBarrier::default()
            .src_access_mask(barrier.src_access)
            .dst_access_mask(barrier.dst_access)];
        // SAFETY: a global memory barrier with valid stage and access masks.
        unsafe {
            self.ctx.cmd_pipeline_barrier(
                self.cmd,
                barrier.src_stage,
                barrier.dst_stage,
                vk::DependencyFlags::empty(),
                &memory,
                &[],
                &[],
            )
        };
    }

    pub fn bind(&self, pipeline: &ComputePipeline, set: &DescriptorSet) {
        // SAFETY: the pipeline and set are alive and made for each other.
        unsafe {
            self.ctx
                .cmd_bind_pipeline(self.cmd, vk::PipelineBindPoint::COMPUTE, pipeline.raw());
            self.ctx.cmd_bind_descriptor_sets(
                self.cmd,
                vk::PipelineBindPoint::COMPUTE,
                pipeline.layout(),
                0,
                &[set.raw()],
                &[],
            );
        }
    }

    /// Sets the whole push-constant block of `pipeline`.
    pub fn push_constants<T: bytemuck::Pod>(&self, pipeline: &ComputePipeline, value: &T) {
        let bytes = bytemuck::bytes_of(value);
        assert_eq!(
            bytes.len() as u32,
            pipeline.push_constant_bytes(),
            "push-constant struct does not match the pipeline layout of {}",
            pipeline.name()
        );
        // SAFETY: the range matches the layout's single push-constant range.
        unsafe {
            self.ctx.cmd_push_constants(
                self.cmd,
                pipeline.layout(),
                vk::ShaderStageFlags::COMPUTE,
                0,
                bytes,
            )
        };
    }

    pub fn dispatch(&self, groups_x: u32, groups_y: u32, groups_z: u32) {
        // SAFETY: a pipeline is bound; counts are checked against limits by callers.
        unsafe {
            self.ctx
                .cmd_dispatch(self.cmd, groups_x, groups_y, groups_z)
        };
    }

    pub fn reset_queries(&self, queries: &TimestampQueries) {
        // SAFETY: the pool is alive and not in use by another submission.
        unsafe {
            self.ctx
                .cmd_reset_query_pool(self.cmd, queries.raw(), 0, queries.count())
        };
    }

    /// Writes timestamp `index` once all earlier commands have completed.
    pub fn timestamp(&self, queries: &TimestampQueries, index: u32) {
        // SAFETY: index < count, and the query was reset earlier in this buffer.
        unsafe {
            self.ctx.cmd_write_timestamp(
                self.cmd,
                vk::PipelineStageFlags::ALL_COMMANDS,
                queries.raw(),
                index,
            )
        };
    }
}
