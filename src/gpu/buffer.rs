//! A buffer and its gpu-allocator allocation, owned together and freed together.

use std::cell::Cell;
use std::marker::PhantomData;
use std::sync::Arc;

use ash::vk;
use gpu_allocator::vulkan::{Allocation, AllocationCreateDesc, AllocationScheme};
use gpu_allocator::{AllocationError, MemoryLocation};

use super::context::Context;
use super::error::{GpuError, GpuResult, VkResultExt};

/// Where a buffer lives and what it is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BufferKind {
    /// Device-local SSBO that transfers can fill and read back.
    Storage,
    /// Device-local buffer that shaders reach through its 64-bit address
    /// ([`Recorder::bind_addressed`](super::Recorder::bind_addressed)), past
    /// `maxStorageBufferRange`; transfers can fill and read it back.
    Addressed,
    /// Host-visible source of an upload.
    Upload,
    /// Host-visible destination of a read-back.
    Download,
}

impl BufferKind {
    fn usage(self) -> vk::BufferUsageFlags {
        match self {
            BufferKind::Storage => {
                vk::BufferUsageFlags::STORAGE_BUFFER
                    | vk::BufferUsageFlags::UNIFORM_TEXEL_BUFFER
                    | vk::BufferUsageFlags::STORAGE_TEXEL_BUFFER
                    | vk::BufferUsageFlags::TRANSFER_SRC
                    | vk::BufferUsageFlags::TRANSFER_DST
            }
            BufferKind::Addressed => {
                vk::BufferUsageFlags::STORAGE_BUFFER
                    | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS
                    | vk::BufferUsageFlags::TRANSFER_SRC
                    | vk::BufferUsageFlags::TRANSFER_DST
            }
            BufferKind::Upload => vk::BufferUsageFlags::TRANSFER_SRC,
            BufferKind::Download => vk::BufferUsageFlags::TRANSFER_DST,
        }
    }

    pub(crate) fn transfer_source(self) -> bool {
        self.usage().contains(vk::BufferUsageFlags::TRANSFER_SRC)
    }

    pub(crate) fn transfer_destination(self) -> bool {
        self.usage().contains(vk::BufferUsageFlags::TRANSFER_DST)
    }

    fn location(self) -> MemoryLocation {
        match self {
            BufferKind::Storage | BufferKind::Addressed => MemoryLocation::GpuOnly,
            BufferKind::Upload => MemoryLocation::CpuToGpu,
            BufferKind::Download => MemoryLocation::GpuToCpu,
        }
    }
}

/// How a buffer's memory is allocated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemoryScheme {
    /// [`Dedicated`](Self::Dedicated) where the driver prefers or requires it
    /// (`VkMemoryDedicatedRequirements`) or the buffer is at least
    /// [`DEDICATED_FROM_BYTES`]; else [`Pooled`](Self::Pooled).
    Automatic,
    /// A share of one of gpu-allocator's blocks, or a block of its own for a buffer
    /// past the block size, allocated without naming the buffer.
    Pooled,
    /// One `VkDeviceMemory` for this buffer alone, allocated with
    /// `VkMemoryDedicatedAllocateInfo` naming it.
    Dedicated,
}

/// Device-local buffers from this size up get a dedicated allocation. A buffer past
/// gpu-allocator's 256 MiB device block has a memory of its own anyway; without the
/// dedicated info, NVIDIA's driver maps it so that random atomics run 2x slower at
/// 4 GiB and 150x at 16 GiB (an H100, docs/findings/allocation.md; `vkerode peak
/// --footprint` measures both schemes against size).
pub const DEDICATED_FROM_BYTES: u64 = 256 << 20;

/// Not `Sync`: the host reads a mapped buffer only on the thread that waited for the
/// work writing it.
pub struct Buffer {
    ctx: Arc<Context>,
    raw: vk::Buffer,
    allocation: Option<Allocation>,
    size: u64,
    kind: BufferKind,
    name: String,
    /// The device address of an `Addressed` buffer, 0 for the others.
    address: u64,
    dedicated: bool,
    _not_sync: PhantomData<Cell<()>>,
}

impl Buffer {
    pub fn new(ctx: &Arc<Context>, name: &str, size: u64, kind: BufferKind) -> GpuResult<Self> {
        Self::allocated(ctx, name, size, kind, MemoryScheme::Automatic)
    }

    /// A buffer whose memory is allocated by `scheme`: for probes that compare the two.
    pub fn allocated(
        ctx: &Arc<Context>,
        name: &str,
        size: u64,
        kind: BufferKind,
        scheme: MemoryScheme,
    ) -> GpuResult<Self> {
        if kind == BufferKind::Storage && size > ctx.info().max_storage_buffer_range {
            return Err(GpuError::LimitExceeded {
                what: format!("storage buffer {name:?} ({size} bytes)"),
                requested: size,
                limit_name: "maxStorageBufferRange",
                limit: ctx.info().max_storage_buffer_range,
            });
        }
        if kind == BufferKind::Addressed && !ctx.info().buffer_device_address {
            return Err(GpuError::MissingFeature {
                what: format!("buffer {name:?}, reached by address,"),
                feature: "bufferDeviceAddress",
                device: ctx.info().name.clone(),
            });
        }
        let info = vk::BufferCreateInfo::default()
            .size(size.max(4))
            .usage(kind.usage())
            .sharing_mode(vk::SharingMode::EXCLUSIVE);
        // SAFETY: valid create info on a live device.
        let raw = unsafe { ctx.create_buffer(&info, None) }.during("vkCreateBuffer")?;
        let mut dedicated_needs = vk::MemoryDedicatedRequirements::default();
        let mut needs = vk::MemoryRequirements2::default().push_next(&mut dedicated_needs);
        let query = vk::BufferMemoryRequirementsInfo2::default().buffer(raw);
        // SAFETY: raw was just created on this device, which is Vulkan 1.2 or later
        // (vkGetBufferMemoryRequirements2 is core from 1.1).
        unsafe { ctx.get_buffer_memory_requirements2(&query, &mut needs) };
        let requirements = needs.memory_requirements;
        let dedicated = match scheme {
            MemoryScheme::Pooled => dedicated_needs.requires_dedicated_allocation == vk::TRUE,
            MemoryScheme::Dedicated => true,
            MemoryScheme::Automatic => {
                dedicated_needs.requires_dedicated_allocation == vk::TRUE
                    || dedicated_needs.prefers_dedicated_allocation == vk::TRUE
                    || (kind.location() == MemoryLocation::GpuOnly
                        && requirements.size >= DEDICATED_FROM_BYTES)
            }
        };
        let allocated = if ctx.faults().fails_allocation(name) {
            Err(AllocationError::OutOfMemory)
        } else {
            ctx.allocator().allocate(&AllocationCreateDesc {
                name,
                requirements,
                location: kind.location(),
                linear: true,
                allocation_scheme: match dedicated {
                    true => AllocationScheme::DedicatedBuffer(raw),
                    false => AllocationScheme::GpuAllocatorManaged,
                },
            })
        };
        let allocation = match allocated {
            Ok(a) => a,
            Err(e) => {
                // SAFETY: raw is unbound and unused.
                unsafe { ctx.destroy_buffer(raw, None) };
                return Err(allocation_error(ctx, name, requirements.size, kind, e));
            }
        };
        // SAFETY: the allocation satisfies raw's requirements and is not bound elsewhere.
        let bound =
            unsafe { ctx.bind_buffer_memory(raw, allocation.memory(), allocation.offset()) }
                .during("vkBindBufferMemory");
        let mut buffer = Self {
            ctx: Arc::clone(ctx),
            raw,
            allocation: Some(allocation),
            size,
            kind,
            name: name.to_string(),
            address: 0,
            dedicated,
            _not_sync: PhantomData,
        };
        bound?;
        if kind == BufferKind::Addressed {
            let info = vk::BufferDeviceAddressInfo::default().buffer(raw);
            // SAFETY: raw is bound to memory and was created with SHADER_DEVICE_ADDRESS
            // on a device with bufferDeviceAddress enabled.
            buffer.address = unsafe { ctx.get_buffer_device_address(&info) };
        }
        Ok(buffer)
    }

    /// A host-visible buffer holding a copy of `data`, ready to be copied from.
    pub fn upload_from<T: bytemuck::Pod>(
        ctx: &Arc<Context>,
        name: &str,
        data: &[T],
    ) -> GpuResult<Self> {
        let bytes: &[u8] = bytemuck::cast_slice(data);
        let mut buffer = Self::new(ctx, name, bytes.len() as u64, BufferKind::Upload)?;
        buffer.mapped_mut()?[..bytes.len()].copy_from_slice(bytes);
        Ok(buffer)
    }

    pub(crate) fn raw(&self) -> vk::Buffer {
        self.raw
    }

    pub fn kind(&self) -> BufferKind {
        self.kind
    }

    pub fn size(&self) -> u64 {
        self.size
    }

    /// The device address shaders reach an `Addressed` buffer by; only the GPU layer
    /// hands it to a shader, together with a borrow of the buffer.
    pub(crate) fn address(&self) -> Option<u64> {
        (self.kind == BufferKind::Addressed).then_some(self.address)
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether its memory is a dedicated allocation ([`MemoryScheme::Dedicated`]).
    pub fn dedicated(&self) -> bool {
        self.dedicated
    }

    /// The contents of a host-visible buffer, as `T`s. Call after the work that
    /// wrote it has finished and a transfer-to-host barrier made it visible.
    pub fn read<T: bytemuck::Pod>(&self) -> GpuResult<Vec<T>> {
        let bytes = self
            .allocation
            .as_ref()
            .and_then(|a| a.mapped_slice())
            .ok_or_else(|| GpuError::NotHostVisible(self.name.clone()))?;
        let count = self.size as usize / std::mem::size_of::<T>();
        Ok(bytemuck::pod_collect_to_vec(
            &bytes[..count * std::mem::size_of::<T>()],
        ))
    }

    /// Copies `data` to the start of a host-visible buffer, as much as fits.
    pub(crate) fn write_start<T: bytemuck::Pod>(&mut self, data: &[T]) -> GpuResult<()> {
        let bytes: &[u8] = bytemuck::cast_slice(data);
        let mapped = self.mapped_mut()?;
        let n = bytes.len().min(mapped.len());
        mapped[..n].copy_from_slice(&bytes[..n]);
        Ok(())
    }

    /// Fills `out` from the start of a host-visible buffer, as much as it holds.
    pub(crate) fn read_start<T: bytemuck::Pod>(&self, out: &mut [T]) -> GpuResult<()> {
        let bytes = self
            .allocation
            .as_ref()
            .and_then(|a| a.mapped_slice())
            .ok_or_else(|| GpuError::NotHostVisible(self.name.clone()))?;
        let out: &mut [u8] = bytemuck::cast_slice_mut(out);
        let n = out.len().min(bytes.len());
        out[..n].copy_from_slice(&bytes[..n]);
        Ok(())
    }

    fn mapped_mut(&mut self) -> GpuResult<&mut [u8]> {
        let name = &self.name;
        self.allocation
            .as_mut()
            .and_then(|a| a.mapped_slice_mut())
            .ok_or_else(|| GpuError::NotHostVisible(name.clone()))
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        if let Some(allocation) = self.allocation.take() {
            // A failed free only leaks; there is nothing better to do in a destructor.
            let _ = self.ctx.allocator().free(allocation);
        }
        // SAFETY: every submission that used this buffer has been waited on.
        unsafe { self.ctx.destroy_buffer(self.raw, None) };
    }
}

/// A view of a storage buffer's first `texels` 32-bit words as a texel buffer: read
/// through the texture path (`texelFetch` on a `samplerBuffer`), or as a storage
/// image (`imageLoad`, `imageAtomicAdd` on an `imageBuffer`). It borrows the buffer,
/// so the buffer outlives it.
pub struct TexelView<'b> {
    ctx: Arc<Context>,
    raw: vk::BufferView,
    kind: TexelKind,
    _buffer: PhantomData<&'b Buffer>,
}

/// How a shader binds a texel view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TexelKind {
    /// `samplerBuffer`: read-only, through the texture cache.
    Uniform,
    /// `imageBuffer`: loads, stores and image atomics.
    Storage,
}

impl TexelKind {
    pub(crate) fn descriptor_type(self) -> vk::DescriptorType {
        match self {
            TexelKind::Uniform => vk::DescriptorType::UNIFORM_TEXEL_BUFFER,
            TexelKind::Storage => vk::DescriptorType::STORAGE_TEXEL_BUFFER,
        }
    }
}

/// The format of a texel view's 32-bit words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TexelFormat {
    I32,
    U32,
}

impl<'b> TexelView<'b> {
    pub fn new(
        buffer: &'b Buffer,
        texels: u64,
        format: TexelFormat,
        kind: TexelKind,
    ) -> GpuResult<Self> {
        let ctx = &buffer.ctx;
        let limit = u64::from(ctx.info().max_texel_buffer_elements);
        if texels > limit {
            return Err(GpuError::LimitExceeded {
                what: format!("a texel view of buffer {:?} ({texels} texels)", buffer.name),
                requested: texels,
                limit_name: "maxTexelBufferElements",
                limit,
            });
        }
        if texels * 4 > buffer.size {
            return Err(GpuError::LimitExceeded {
                what: format!("a texel view of {texels} texels"),
                requested: texels * 4,
                limit_name: "the size of its buffer",
                limit: buffer.size,
            });
        }
        let info = vk::BufferViewCreateInfo::default()
            .buffer(buffer.raw)
            .format(match format {
                TexelFormat::I32 => vk::Format::R32_SINT,
                TexelFormat::U32 => vk::Format::R32_UINT,
            })
            .offset(0)
            .range(texels * 4);
        // SAFETY: the buffer is alive, has both texel-buffer usages, and the range is
        // inside it and within maxTexelBufferElements (both checked above). R32_SINT and
        // R32_UINT support uniform and storage texel buffers and their atomics on every
        // Vulkan device.
        let raw = unsafe { ctx.create_buffer_view(&info, None) }.during("vkCreateBufferView")?;
        Ok(Self {
            ctx: Arc::clone(ctx),
            raw,
            kind,
            _buffer: PhantomData,
        })
    }

    pub(crate) fn raw(&self) -> vk::BufferView {
        self.raw
    }

    pub fn kind(&self) -> TexelKind {
        self.kind
    }
}

impl Drop for TexelView<'_> {
    fn drop(&mut self) {
        // SAFETY: every submission that used this view has been waited on.
        unsafe { self.ctx.destroy_buffer_view(self.raw, None) };
    }
}

fn allocation_error(
    ctx: &Context,
    name: &str,
    requested: u64,
    kind: BufferKind,
    error: AllocationError,
) -> GpuError {
    match error {
        AllocationError::OutOfMemory => {
            let (memory, flags) = match kind {
                BufferKind::Storage | BufferKind::Addressed => {
                    ("device", vk::MemoryPropertyFlags::DEVICE_LOCAL)
                }
                _ => ("host-visible", vk::MemoryPropertyFlags::HOST_VISIBLE),
            };
            GpuError::OutOfMemory {
                call: "gpu_allocator::Allocator::allocate",
                what: format!("buffer {name:?}"),
                memory,
                requested,
                heap_size: ctx.largest_heap(flags),
            }
        }
        other => GpuError::Allocation {
            what: format!("buffer {name:?}"),
            requested,
            message: other.to_string(),
        },
    }
}
