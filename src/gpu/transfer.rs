//! Copies between the host and device buffers of any size, through one staging buffer
//! a chunk at a time: a 65536^2 heightfield is 16 GiB, more than one host-visible
//! buffer should pin.

use std::sync::Arc;

use super::barriers::Hazard;
use super::buffer::{Buffer, BufferKind};
use super::commands::CommandStream;
use super::context::Context;
use super::error::GpuResult;

/// Bytes of the staging buffer, and so of each chunk's submission.
pub const STAGING_BYTES: u64 = 256 << 20;

/// Copies `data` into the start of `dst`, chunk by chunk; later work on `dst` may
/// read or write it without a barrier of its own.
pub fn upload<T: bytemuck::Pod>(ctx: &Arc<Context>, data: &[T], dst: &Buffer) -> GpuResult<()> {
    let bytes: &[u8] = bytemuck::cast_slice(data);
    let total = (bytes.len() as u64).min(dst.size());
    let mut staging = Buffer::new(
        ctx,
        &format!("{} upload", dst.name()),
        STAGING_BYTES.min(total.max(4)),
        BufferKind::Upload,
    )?;
    let mut stream = CommandStream::new(ctx)?;
    let mut done = 0u64;
    while done < total {
        let size = (total - done).min(staging.size());
        staging.write_start(&bytes[done as usize..(done + size) as usize])?;
        stream.submit(|rec| {
            rec.barrier(Hazard::EarlierWorkToTransfer);
            rec.copy_region(&staging, 0, dst, done, size);
            rec.barrier(Hazard::TransferToLaterWork);
        })?;
        done += size;
    }
    Ok(())
}

/// The first `count` `T`s of `src`, read back chunk by chunk after the work before.
pub fn download<T: bytemuck::Pod + Default>(
    ctx: &Arc<Context>,
    src: &Buffer,
    count: usize,
) -> GpuResult<Vec<T>> {
    let mut out = vec![T::default(); count];
    let total = (std::mem::size_of_val(out.as_slice()) as u64).min(src.size());
    let staging = Buffer::new(
        ctx,
        &format!("{} read-back", src.name()),
        STAGING_BYTES.min(total.max(4)),
        BufferKind::Download,
    )?;
    let mut stream = CommandStream::new(ctx)?;
    let bytes: &mut [u8] = bytemuck::cast_slice_mut(out.as_mut_slice());
    let mut done = 0u64;
    while done < total {
        let size = (total - done).min(staging.size());
        stream.submit(|rec| {
            rec.barrier(Hazard::EarlierWorkToTransfer);
            rec.barrier(Hazard::ComputeToTransfer);
            rec.copy_region(src, done, &staging, 0, size);
            rec.barrier(Hazard::TransferToHost);
        })?;
        staging.read_start(&mut bytes[done as usize..(done + size) as usize])?;
        done += size;
    }
    Ok(out)
}
