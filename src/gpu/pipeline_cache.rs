//! A `VkPipelineCache` kept on disk between runs (`ContextOptions::pipeline_cache`), so
//! that a sweep's points and later commands build their pipelines from the driver's
//! compiled code instead of compiling SPIR-V again.

use std::path::{Path, PathBuf};

use ash::vk;

use super::device_info::DeviceInfo;
use super::error::{GpuResult, VkResultExt};

/// `VkPipelineCacheHeaderVersionOne`: its size, version, vendor and device ids and the
/// pipeline cache UUID, 32 bytes.
const HEADER_BYTES: usize = 32;

pub(crate) struct PipelineCache {
    pub(crate) raw: vk::PipelineCache,
    /// Where its data is saved when the device closes; `None`: not kept.
    file: Option<PathBuf>,
}

impl PipelineCache {
    /// The cache of `info`'s device, from the file in `folder` where one holds data of
    /// this device and driver; empty otherwise.
    pub(crate) fn open(
        device: &ash::Device,
        info: &DeviceInfo,
        folder: Option<&Path>,
    ) -> GpuResult<Self> {
        let file = folder.map(|f| f.join(file_name(info)));
        let data = file
            .as_deref()
            .filter(|f| crate::check_regular_file(f).is_ok())
            .and_then(|f| std::fs::read(f).ok())
            .filter(|data| matches_device(data, info))
            .unwrap_or_default();
        let create = vk::PipelineCacheCreateInfo::default().initial_data(&data);
        // SAFETY: the device is alive; the initial data carries this device's header
        // (checked above), and a driver ignores data it cannot use.
        let raw = unsafe { device.create_pipeline_cache(&create, None) }
            .during("vkCreatePipelineCache")?;
        Ok(Self { raw, file })
    }

    /// Writes the cache's data to its file (by a rename, so that a reader never sees
    /// half of it) and destroys it. A cache that cannot be written is only a cache:
    /// the next run compiles again.
    pub(crate) fn save_and_destroy(&self, device: &ash::Device) {
        if let Some(file) = &self.file {
            // SAFETY: the cache is alive and no pipeline is being created from it (the
            // device is idle and every pipeline is gone).
            if let Ok(data) = unsafe { device.get_pipeline_cache_data(self.raw) } {
                let _ = write_by_rename(file, &data);
            }
        }
        // SAFETY: as above; nothing uses the cache after this.
        unsafe { device.destroy_pipeline_cache(self.raw, None) };
    }
}

/// One file per device and driver version.
fn file_name(info: &DeviceInfo) -> String {
    format!(
        "pipelines-{:04x}-{:04x}-{:08x}.bin",
        info.vendor_id, info.device_id, info.driver_version_raw
    )
}

/// Whether `data` starts with a version-one header naming this device and its
/// pipeline cache UUID.
fn matches_device(data: &[u8], info: &DeviceInfo) -> bool {
    let word = |i: usize| {
        data.get(4 * i..4 * i + 4)
            .and_then(|b| b.try_into().ok())
            .map(u32::from_le_bytes)
    };
    data.len() >= HEADER_BYTES
        && word(0) == Some(HEADER_BYTES as u32)
        && word(1) == Some(vk::PipelineCacheHeaderVersion::ONE.as_raw() as u32)
        && word(2) == Some(info.vendor_id)
        && word(3) == Some(info.device_id)
        && data[16..32] == info.pipeline_cache_uuid
}

fn write_by_rename(file: &Path, data: &[u8]) -> std::io::Result<()> {
    let folder = file.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(folder)?;
    let mut temporary = tempfile::NamedTempFile::new_in(folder)?;
    std::io::Write::write_all(&mut temporary, data)?;
    temporary.persist(file).map_err(|e| e.error)?;
    Ok(())
}
