//! What vkerode needs to know of a physical device, read once at start-up.

use ash::vk;
use serde::Serialize;

use super::context::{c_str_lossy, REQUIRED_API_VERSION};

#[derive(Clone, Debug, Serialize)]
pub struct DeviceInfo {
    /// Position in the driver's enumeration; what `--device <index>` matches.
    pub index: usize,
    pub name: String,
    pub device_type: String,
    pub vendor_id: u32,
    pub device_id: u32,
    /// "major.minor.patch" of the Vulkan API the device supports.
    pub api_version: String,
    pub driver_name: String,
    /// The driver's own version string, e.g. "580.159.04" or "Mesa 22.3.6 (LLVM 15.0.6)".
    pub driver_info: String,
    pub driver_version_raw: u32,
    pub subgroup_size: u32,
    /// Nanoseconds per timestamp tick.
    pub timestamp_period_ns: f32,
    /// Valid bits of compute-queue timestamps; 0 means no timestamps.
    pub timestamp_valid_bits: u32,
    /// `shaderBufferFloat32AtomicAdd` of VK_EXT_shader_atomic_float.
    pub float_atomic_add: bool,
    pub max_workgroup_size_x: u32,
    pub max_workgroup_invocations: u32,
    pub max_workgroup_count: [u32; 3],
    pub max_storage_buffer_range: u64,
    /// `maxComputeSharedMemorySize`: shared memory one workgroup may declare.
    pub max_shared_memory_bytes: u32,
    pub compute_queue_family: Option<u32>,
    #[serde(skip)]
    raw_api_version: u32,
    #[serde(skip)]
    raw_type: vk::PhysicalDeviceType,
}

impl DeviceInfo {
    pub(crate) fn query(instance: &ash::Instance, pd: vk::PhysicalDevice, index: usize) -> Self {
        let mut subgroup = vk::PhysicalDeviceSubgroupProperties::default();
        let mut driver = vk::PhysicalDeviceDriverProperties::default();
        let mut props2 = vk::PhysicalDeviceProperties2::default()
            .push_next(&mut subgroup)
            .push_next(&mut driver);
        // SAFETY: plain queries on a live instance; the chained structs outlive the calls.
        let (families, has_float_ext) = unsafe {
            instance.get_physical_device_properties2(pd, &mut props2);
            let families = instance.get_physical_device_queue_family_properties(pd);
            let has_float_ext = instance
                .enumerate_device_extension_properties(pd)
                .unwrap_or_default()
                .iter()
                .any(|e| e.extension_name_as_c_str() == Ok(ash::ext::shader_atomic_float::NAME));
            (families, has_float_ext)
        };
        let props = props2.properties;

        let mut float_atomic_add = false;
        if has_float_ext {
            let mut atomic_float = vk::PhysicalDeviceShaderAtomicFloatFeaturesEXT::default();
            let mut features = vk::PhysicalDeviceFeatures2::default().push_next(&mut atomic_float);
            // SAFETY: the extension is present, so its feature struct may be chained.
            unsafe { instance.get_physical_device_features2(pd, &mut features) };
            float_atomic_add = atomic_float.shader_buffer_float32_atomic_add == vk::TRUE;
        }

        let compute_family = families
            .iter()
            .position(|f| f.queue_flags.contains(vk::QueueFlags::COMPUTE));
        let limits = props.limits;
        let v = props.api_version;
        Self {
            index,
            name: c_str_lossy(props.device_name_as_c_str()),
            device_type: type_name(props.device_type).into(),
            vendor_id: props.vendor_id,
            device_id: props.device_id,
            api_version: format!(
                "{}.{}.{}",
                vk::api_version_major(v),
                vk::api_version_minor(v),
                vk::api_version_patch(v)
            ),
            driver_name: c_str_lossy(driver.driver_name_as_c_str()),
            driver_info: c_str_lossy(driver.driver_info_as_c_str()),
            driver_version_raw: props.driver_version,
            subgroup_size: subgroup.subgroup_size,
            timestamp_period_ns: limits.timestamp_period,
            timestamp_valid_bits: compute_family
                .map(|i| families[i].timestamp_valid_bits)
                .unwrap_or(0),
            float_atomic_add,
            max_workgroup_size_x: limits.max_compute_work_group_size[0],
            max_workgroup_invocations: limits.max_compute_work_group_invocations,
            max_workgroup_count: limits.max_compute_work_group_count,
            max_storage_buffer_range: u64::from(limits.max_storage_buffer_range),
            max_shared_memory_bytes: limits.max_compute_shared_memory_size,
            compute_queue_family: compute_family.map(|i| i as u32),
            raw_api_version: v,
            raw_type: props.device_type,
        }
    }

    /// Whether vkerode can run on it: Vulkan 1.2 and a compute queue.
    pub fn is_usable(&self) -> bool {
        self.raw_api_version >= REQUIRED_API_VERSION && self.compute_queue_family.is_some()
    }

    /// Largest workgroup size along x that a 1-D compute shader may use.
    pub fn max_workgroup_x(&self) -> u32 {
        self.max_workgroup_size_x
            .min(self.max_workgroup_invocations)
    }

    pub fn has_timestamps(&self) -> bool {
        self.timestamp_valid_bits > 0 && self.timestamp_period_ns > 0.0
    }

    /// Lower is better: discrete GPU, then integrated, virtual, CPU.
    fn preference(&self) -> u8 {
        match self.raw_type {
            vk::PhysicalDeviceType::DISCRETE_GPU => 0,
            vk::PhysicalDeviceType::INTEGRATED_GPU => 1,
            vk::PhysicalDeviceType::VIRTUAL_GPU => 2,
            vk::PhysicalDeviceType::CPU => 3,
            _ => 4,
        }
    }
}

/// Indices into `devices`, most preferred first; ties keep the driver's order.
pub(crate) fn rank_devices(devices: &[&DeviceInfo]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..devices.len()).collect();
    order.sort_by_key(|&i| (devices[i].preference(), devices[i].index));
    order
}

fn type_name(t: vk::PhysicalDeviceType) -> &'static str {
    match t {
        vk::PhysicalDeviceType::DISCRETE_GPU => "discrete GPU",
        vk::PhysicalDeviceType::INTEGRATED_GPU => "integrated GPU",
        vk::PhysicalDeviceType::VIRTUAL_GPU => "virtual GPU",
        vk::PhysicalDeviceType::CPU => "CPU",
        _ => "other",
    }
}
