//! Every synchronisation vkerode records, on one screen. A barrier can only be made
//! from a named hazard: each is a global `VkMemoryBarrier` with exact stages and access
//! masks.

use ash::vk;

/// A hazard between two commands of one submission, or between submissions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hazard {
    /// A copy or fill into an SSBO, then a dispatch that reads or atomically updates it.
    TransferToCompute,
    /// One dispatch's SSBO writes, then the next dispatch's reads and writes.
    ComputeToCompute,
    /// An earlier submission's dispatches and copies, then copies or fills over the same
    /// buffers: the first command of a submission that reuses buffers.
    EarlierWorkToTransfer,
    /// A dispatch's SSBO writes, then a copy out of that SSBO for read-back.
    ComputeToTransfer,
    /// A copy into a host-visible buffer, then the host reading it after the fence.
    TransferToHost,
    /// A copy into a device buffer, then any later copy or dispatch that reads or
    /// writes it: the end of each chunk of a staged upload.
    TransferToLaterWork,
}

/// The stages and access masks of one hazard.
pub(crate) struct Masks {
    pub src_stage: vk::PipelineStageFlags,
    pub src_access: vk::AccessFlags,
    pub dst_stage: vk::PipelineStageFlags,
    pub dst_access: vk::AccessFlags,
}

impl Hazard {
    pub(crate) fn masks(self) -> Masks {
        use vk::AccessFlags as A;
        use vk::PipelineStageFlags as S;
        let (src_stage, src_access, dst_stage, dst_access) = match self {
            Hazard::TransferToCompute => (
                S::TRANSFER,
                A::TRANSFER_WRITE,
                S::COMPUTE_SHADER,
                A::SHADER_READ | A::SHADER_WRITE,
            ),
            Hazard::ComputeToCompute => (
                S::COMPUTE_SHADER,
                A::SHADER_WRITE,
                S::COMPUTE_SHADER,
                A::SHADER_READ | A::SHADER_WRITE,
            ),
            Hazard::EarlierWorkToTransfer => (
                S::COMPUTE_SHADER | S::TRANSFER,
                A::SHADER_WRITE | A::TRANSFER_WRITE,
                S::TRANSFER,
                A::TRANSFER_WRITE,
            ),
            Hazard::ComputeToTransfer => (
                S::COMPUTE_SHADER,
                A::SHADER_WRITE,
                S::TRANSFER,
                A::TRANSFER_READ,
            ),
            Hazard::TransferToHost => (S::TRANSFER, A::TRANSFER_WRITE, S::HOST, A::HOST_READ),
            Hazard::TransferToLaterWork => (
                S::TRANSFER,
                A::TRANSFER_WRITE,
                S::TRANSFER | S::COMPUTE_SHADER,
                A::TRANSFER_READ | A::TRANSFER_WRITE | A::SHADER_READ | A::SHADER_WRITE,
            ),
        };
        Masks {
            src_stage,
            src_access,
            dst_stage,
            dst_access,
        }
    }
}
