//! Every synchronisation vkerode records, on one screen. Each barrier is a global
//! `VkMemoryBarrier` named for the hazard it resolves; exact stages and access masks.

use ash::vk;

#[derive(Clone, Copy, Debug)]
pub struct Barrier {
    pub name: &'static str,
    pub src_stage: vk::PipelineStageFlags,
    pub src_access: vk::AccessFlags,
    pub dst_stage: vk::PipelineStageFlags,
    pub dst_access: vk::AccessFlags,
}

/// A copy or fill into an SSBO, then a dispatch that reads or atomically updates it.
pub const TRANSFER_TO_COMPUTE: Barrier = Barrier {
    name: "transfer_to_compute",
    src_stage: vk::PipelineStageFlags::TRANSFER,
    src_access: vk::AccessFlags::TRANSFER_WRITE,
    dst_stage: vk::PipelineStageFlags::COMPUTE_SHADER,
    dst_access: vk::AccessFlags::from_raw(
        vk::AccessFlags::SHADER_READ.as_raw() | vk::AccessFlags::SHADER_WRITE.as_raw(),
    ),
};

/// One dispatch's SSBO writes, then the next dispatch's reads and writes.
pub const COMPUTE_TO_COMPUTE: Barrier = Barrier {
    name: "compute_to_compute",
    src_stage: vk::PipelineStageFlags::COMPUTE_SHADER,
    src_access: vk::AccessFlags::SHADER_WRITE,
    dst_stage: vk::PipelineStageFlags::COMPUTE_SHADER,
    dst_access: vk::AccessFlags::from_raw(
        vk::AccessFlags::SHADER_READ.as_raw() | vk::AccessFlags::SHADER_WRITE.as_raw(),
    ),
};

/// An earlier submission's dispatches and copies, then copies or fills over the same
/// buffers: the first command of a submission that reuses buffers.
pub const EARLIER_WORK_TO_TRANSFER: Barrier = Barrier {
    name: "earlier_work_to_transfer",
    src_stage: vk::PipelineStageFlags::from_raw(
        vk::PipelineStageFlags::COMPUTE_SHADER.as_raw() | vk::PipelineStageFlags::TRANSFER.as_raw(),
    ),
    src_access: vk::AccessFlags::from_raw(
        vk::AccessFlags::SHADER_WRITE.as_raw() | vk::AccessFlags::TRANSFER_WRITE.as_raw(),
    ),
    dst_stage: vk::PipelineStageFlags::TRANSFER,
    dst_access: vk::AccessFlags::TRANSFER_WRITE,
};

/// A dispatch's SSBO writes, then a copy out of that SSBO for read-back.
pub const COMPUTE_TO_TRANSFER: Barrier = Barrier {
    name: "compute_to_transfer",
    src_stage: vk::PipelineStageFlags::COMPUTE_SHADER,
    src_access: vk::AccessFlags::SHADER_WRITE,
    dst_stage: vk::PipelineStageFlags::TRANSFER,
    dst_access: vk::AccessFlags::TRANSFER_READ,
};

/// A copy into a host-visible buffer, then the host reading it after the fence.
pub const TRANSFER_TO_HOST: Barrier = Barrier {
    name: "transfer_to_host",
    src_stage: vk::PipelineStageFlags::TRANSFER,
    src_access: vk::AccessFlags::TRANSFER_WRITE,
    dst_stage: vk::PipelineStageFlags::HOST,
    dst_access: vk::AccessFlags::HOST_READ,
};
