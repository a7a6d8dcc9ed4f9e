//! What vkerode needs to know of a physical device, read once at start-up.

use std::ffi::CStr;

use ash::vk;
use serde::Serialize;

/// The Vulkan version vkerode needs: SPIR-V 1.5 and core driver properties.
pub const REQUIRED_API_VERSION: u32 = vk::API_VERSION_1_2;

/// The name as a `String`, whatever the driver put in the fixed-size array.
pub(crate) fn c_str_lossy(s: Result<&CStr, std::ffi::FromBytesUntilNulError>) -> String {
    s.map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct DeviceInfo {
    /// Position in the driver's enumeration; what `--device <index>` matches.
    pub index: usize,
    /// The driver's name of the device.
    pub name: String,
    /// DISCRETE_GPU, INTEGRATED_GPU, VIRTUAL_GPU, CPU or OTHER.
    pub device_type: String,
    /// PCI vendor id.
    pub vendor_id: u32,
    /// PCI device id.
    pub device_id: u32,
    /// VkPhysicalDeviceIDProperties::deviceUUID: the same UUID NVML knows the GPU by.
    /// 16 bytes.
    pub uuid: [u8; 16],
    /// VkPhysicalDeviceProperties::pipelineCacheUUID: pipeline cache data of another
    /// UUID does not load.
    #[serde(skip)]
    #[schemars(skip)]
    pub(crate) pipeline_cache_uuid: [u8; 16],
    /// "major.minor.patch" of the Vulkan API the device supports.
    pub api_version: String,
    /// The driver's name.
    pub driver_name: String,
    /// The driver's own version string, e.g. "580.159.04" or "Mesa 22.3.6 (LLVM 15.0.6)".
    pub driver_info: String,
    /// The driver version as Vulkan encodes it (vendor-specific packing).
    pub driver_version_raw: u32,
    /// Invocations per subgroup.
    pub subgroup_size: u32,
    /// Nanoseconds per timestamp tick.
    pub timestamp_period_ns: f32,
    /// Valid bits of compute-queue timestamps; 0 means no timestamps.
    pub timestamp_valid_bits: u32,
    /// `shaderBufferFloat32AtomicAdd` of VK_EXT_shader_atomic_float.
    pub float_atomic_add: bool,
    /// `maxComputeWorkGroupSize[0]`, in invocations.
    pub max_workgroup_size_x: u32,
    /// `maxComputeWorkGroupInvocations`, in invocations.
    pub max_workgroup_invocations: u32,
    /// `maxComputeWorkGroupCount` (x, y, z), in workgroups.
    pub max_workgroup_count: [u32; 3],
    /// `maxStorageBufferRange`, in bytes.
    pub max_storage_buffer_range: u64,
    /// `maxComputeSharedMemorySize`: shared memory one workgroup may declare, in bytes.
    pub max_shared_memory_bytes: u32,
    /// `maxTexelBufferElements`: the largest texel buffer view, in texels.
    pub max_texel_buffer_elements: u32,
    /// `[minSubgroupSize, maxSubgroupSize]` (Vulkan 1.3): what subgroup size control
    /// could choose from, in invocations; `[subgroup_size; 2]` before 1.3.
    pub subgroup_size_range: [u32; 2],
    /// The driver reports compiler statistics per pipeline
    /// (VK_KHR_pipeline_executable_properties, `pipelineExecutableInfo`).
    pub pipeline_statistics: bool,
    /// Robust buffer access can be turned off per pipeline (VK_EXT_pipeline_robustness).
    pub pipeline_robustness: bool,
    /// Shaders may declare the Vulkan memory model, device-scope atomics included
    /// (`vulkanMemoryModel` and `vulkanMemoryModelDeviceScope`, Vulkan 1.2).
    pub vulkan_memory_model: bool,
    /// Shaders may reach buffers through 64-bit addresses (`bufferDeviceAddress`,
    /// Vulkan 1.2): no descriptor, so no `maxStorageBufferRange`.
    pub buffer_device_address: bool,
    /// Shaders may use 64-bit integers (`shaderInt64`): the wide droplet build's cell
    /// indices and the terrain kernel's.
    #[serde(default)]
    pub shader_int64: bool,
    /// `maxPushConstantsSize`, in bytes.
    pub max_push_constant_bytes: u32,
    /// The queue family vkerode submits compute work to; null without one.
    pub compute_queue_family: Option<u32>,
    #[serde(skip)]
    raw_api_version: u32,
    #[serde(skip)]
    raw_type: vk::PhysicalDeviceType,
}

impl DeviceInfo {
    /// Whether it is a CPU device (lavapipe): by its recorded type, so that an info read
    /// back from a results file answers too.
    pub fn is_cpu(&self) -> bool {
        self.device_type == type_name(vk::PhysicalDeviceType::CPU)
    }

    /// The UUID as NVML writes it: "GPU-" and 8-4-4-4-12 hex digits.
    pub fn nvml_uuid(&self) -> String {
        let hex: String = self.uuid.iter().map(|b| format!("{b:02x}")).collect();
        format!(
            "GPU-{}-{}-{}-{}-{}",
            &hex[..8],
            &hex[8..12],
            &hex[12..16],
            &hex[16..20],
            &hex[20..]
        )
    }
}

impl DeviceInfo {
    pub(crate) fn query(instance: &ash::Instance, pd: vk::PhysicalDevice, index: usize) -> Self {
        // SAFETY: plain queries on a live instance.
        let (base, families, extensions) = unsafe {
            (
                instance.get_physical_device_properties(pd),
                instance.get_physical_device_queue_family_properties(pd),
                instance
                    .enumerate_device_extension_properties(pd)
                    .unwrap_or_default(),
            )
        };
        let has = |name: &std::ffi::CStr| {
            extensions
                .iter()
                .any(|e| e.extension_name_as_c_str() == Ok(name))
        };
        let is_1_3 = base.api_version >= vk::API_VERSION_1_3;
        let mut subgroup = vk::PhysicalDeviceSubgroupProperties::default();
        let mut driver = vk::PhysicalDeviceDriverProperties::default();
        let mut size_control = vk::PhysicalDeviceSubgroupSizeControlProperties::default();
        let mut ids = vk::PhysicalDeviceIDProperties::default();
        let mut props2 = vk::PhysicalDeviceProperties2::default()
            .push_next(&mut subgroup)
            .push_next(&mut driver)
            .push_next(&mut ids);
        if is_1_3 {
            props2 = props2.push_next(&mut size_control);
        }
        // SAFETY: every chained struct is core in the device's API version.
        unsafe { instance.get_physical_device_properties2(pd, &mut props2) };
        let props = props2.properties;

        let Features {
            float_atomic_add,
            pipeline_statistics,
            pipeline_robustness,
            vulkan_memory_model,
            buffer_device_address,
            shader_int64,
        } = Features::query(instance, pd, &has);

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
            max_texel_buffer_elements: limits.max_texel_buffer_elements,
            subgroup_size_range: if is_1_3 {
                [
                    size_control.min_subgroup_size,
                    size_control.max_subgroup_size,
                ]
            } else {
                [subgroup.subgroup_size; 2]
            },
            pipeline_statistics,
            pipeline_robustness,
            vulkan_memory_model,
            buffer_device_address,
            shader_int64,
            max_push_constant_bytes: limits.max_push_constants_size,
            compute_queue_family: compute_family.map(|i| i as u32),
            raw_api_version: v,
            raw_type: props.device_type,
            uuid: ids.device_uuid,
            pipeline_cache_uuid: props.pipeline_cache_uuid,
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

/// The optional features vkerode uses, where the device offers them.
struct Features {
    float_atomic_add: bool,
    pipeline_statistics: bool,
    pipeline_robustness: bool,
    vulkan_memory_model: bool,
    buffer_device_address: bool,
    shader_int64: bool,
}

impl Features {
    fn query(
        instance: &ash::Instance,
        pd: vk::PhysicalDevice,
        has: &dyn Fn(&std::ffi::CStr) -> bool,
    ) -> Self {
        let mut atomic_float = vk::PhysicalDeviceShaderAtomicFloatFeaturesEXT::default();
        let mut executables = vk::PhysicalDevicePipelineExecutablePropertiesFeaturesKHR::default();
        let mut robustness = vk::PhysicalDevicePipelineRobustnessFeaturesEXT::default();
        let mut memory_model = vk::PhysicalDeviceVulkanMemoryModelFeatures::default();
        let mut addresses = vk::PhysicalDeviceBufferDeviceAddressFeatures::default();
        let mut features = vk::PhysicalDeviceFeatures2::default()
            .push_next(&mut memory_model)
            .push_next(&mut addresses);
        let has_float_ext = has(ash::ext::shader_atomic_float::NAME);
        let has_executables_ext = has(ash::khr::pipeline_executable_properties::NAME);
        let has_robustness_ext = has(ash::ext::pipeline_robustness::NAME);
        if has_float_ext {
            features = features.push_next(&mut atomic_float);
        }
        if has_executables_ext {
            features = features.push_next(&mut executables);
        }
        if has_robustness_ext {
            features = features.push_next(&mut robustness);
        }
        // SAFETY: each feature struct is chained only where its extension is present; the
        // memory model's and buffer addresses' are core in Vulkan 1.2, which vkerode
        // requires.
        unsafe { instance.get_physical_device_features2(pd, &mut features) };
        let shader_int64 = features.features.shader_int64 == vk::TRUE;
        Features {
            float_atomic_add: has_float_ext
                && atomic_float.shader_buffer_float32_atomic_add == vk::TRUE,
            pipeline_statistics: has_executables_ext
                && executables.pipeline_executable_info == vk::TRUE,
            pipeline_robustness: has_robustness_ext && robustness.pipeline_robustness == vk::TRUE,
            vulkan_memory_model: memory_model.vulkan_memory_model == vk::TRUE
                && memory_model.vulkan_memory_model_device_scope == vk::TRUE,
            buffer_device_address: addresses.buffer_device_address == vk::TRUE,
            shader_int64,
        }
    }
}
