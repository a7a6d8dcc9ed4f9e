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

/// The version-one header that the driver writes first in this device's cache data.
fn header_of(vendor_id: u32, device_id: u32, pipeline_cache_uuid: &[u8; 16]) -> [u8; HEADER_BYTES] {
    let mut header = [0; HEADER_BYTES];
    let version = vk::PipelineCacheHeaderVersion::ONE.as_raw() as u32;
    for (i, word) in [HEADER_BYTES as u32, version, vendor_id, device_id]
        .iter()
        .enumerate()
    {
        header[4 * i..4 * i + 4].copy_from_slice(&word.to_le_bytes());
    }
    header[16..].copy_from_slice(pipeline_cache_uuid);
    header
}

/// Whether `data` starts with the header of this device and its pipeline cache UUID.
fn matches_device(data: &[u8], info: &DeviceInfo) -> bool {
    data.starts_with(&header_of(
        info.vendor_id,
        info.device_id,
        &info.pipeline_cache_uuid,
    ))
}

fn write_by_rename(file: &Path, data: &[u8]) -> std::io::Result<()> {
    let folder = file.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(folder)?;
    let mut temporary = tempfile::NamedTempFile::new_in(folder)?;
    std::io::Write::write_all(&mut temporary, data)?;
    temporary.persist(file).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_data_behind_this_devices_header_is_handed_to_the_driver() {
        let uuid = [7; 16];
        let header = header_of(0x10de, 0x2330, &uuid);
        let data = [&header[..], b"compiled pipelines"].concat();
        let starts = |d: &[u8], h: &[u8; HEADER_BYTES]| d.starts_with(h);
        assert!(starts(&data, &header));
        assert_eq!(&header[..8], &[32, 0, 0, 0, 1, 0, 0, 0]);
        assert!(!starts(b"not a pipeline cache", &header));
        assert!(!starts(&data[..HEADER_BYTES - 1], &header));
        assert!(!starts(&data, &header_of(0x10de, 0x2331, &uuid)));
        assert!(!starts(&data, &header_of(0x10de, 0x2330, &[8; 16])));
    }
}
