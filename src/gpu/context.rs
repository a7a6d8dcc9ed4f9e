//! One owner for the whole device side: loader, instance, validation messenger,
//! physical device, logical device, compute queue and memory allocator. Children hold
//! an `Arc<Context>`, so none can outlive the device.

use std::mem::ManuallyDrop;
use std::ops::Deref;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use ash::vk;
use gpu_allocator::vulkan::{Allocator, AllocatorCreateDesc};

use super::device_info::{rank_devices, DeviceInfo};
use super::error::{GpuError, GpuResult, VkResultExt};
use super::faults::FaultPlan;
use super::pipeline_cache::PipelineCache;
use super::validation::{DebugMessenger, ValidationLog, ValidationRequest, LAYER_NAME};

/// How to pick and set up the device.
#[derive(Clone, Debug, Default)]
pub struct ContextOptions {
    /// A device index (as `vkerode devices` lists them) or a name substring.
    pub device: Option<String>,
    /// Turn on the Khronos validation layer with synchronization validation.
    /// `VKERODE_VALIDATE=1` in the environment does the same.
    pub validation: bool,
    /// The longest a single submission is expected to run; work is split into more
    /// submissions to stay under it. `None`: [`DEFAULT_MAX_SUBMISSION_MS`].
    pub max_submission_ms: Option<u32>,
    /// The folder where the pipeline cache of each device and driver is kept between
    /// runs; `None`: pipelines are compiled afresh by every context.
    pub pipeline_cache: Option<PathBuf>,
}

/// What [`Context::observe_submissions`] hears as each submission of a recording
/// completes.
pub type SubmissionObserver = Arc<dyn Fn(SubmissionDone) + Send + Sync>;

/// A submission of a recording that completed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SubmissionDone {
    /// Its place in the recording, from 1, and the recording's submissions.
    pub done: usize,
    pub of: usize,
    /// The units of the caller's work it held, as counted while recording
    /// ([`Recorder::count_units`](super::Recorder::count_units)): 0 where none were.
    pub units: u64,
}

/// Half of Windows' 2 s GPU watchdog (TDR): a submission expected to run longer is
/// split, so that a desktop GPU's OS does not kill it.
pub const DEFAULT_MAX_SUBMISSION_MS: u32 = 1000;

impl ContextOptions {
    fn validation_wanted(&self) -> bool {
        self.validation || std::env::var("VKERODE_VALIDATE").is_ok_and(|v| v == "1")
    }
}

/// The loader and instance, with the validation messenger if there is one.
struct InstanceOwner {
    // Keeps libvulkan loaded for as long as the instance lives.
    _entry: ash::Entry,
    instance: ash::Instance,
    messenger: Option<DebugMessenger>,
    // The instance-creation messenger points at this log until the instance is gone.
    _creation_log: Option<Arc<ValidationLog>>,
}

impl InstanceOwner {
    fn new(validation: bool) -> GpuResult<Self> {
        // SAFETY: loading libvulkan has no preconditions beyond the library being sane.
        let entry = unsafe { ash::Entry::load() }.map_err(|e| GpuError::Loader(e.to_string()))?;
        // SAFETY: plain queries on a loaded entry.
        let loader_version = unsafe { entry.try_enumerate_instance_version() }
            .during("vkEnumerateInstanceVersion")?
            .unwrap_or(vk::API_VERSION_1_0);
        let api_version = loader_version.min(vk::API_VERSION_1_3);

        let request = validation.then(ValidationRequest::new);
        let mut layers = Vec::new();
        let mut extensions = Vec::new();
        if request.is_some() {
            // SAFETY: plain query on a loaded entry.
            let available = unsafe { entry.enumerate_instance_layer_properties() }
                .during("vkEnumerateInstanceLayerProperties")?;
            let has_layer = available
                .iter()
                .any(|l| l.layer_name_as_c_str() == Ok(LAYER_NAME));
            if !has_layer {
                return Err(GpuError::ValidationLayerMissing);
            }
            layers.push(LAYER_NAME.as_ptr());
            extensions.push(ash::ext::debug_utils::NAME.as_ptr());
        }

        let app = vk::ApplicationInfo::default()
            .application_name(c"vkerode")
            .application_version(0)
            .engine_name(c"vkerode")
            .api_version(api_version);
        let mut create_info = vk::InstanceCreateInfo::default()
            .application_info(&app)
            .enabled_layer_names(&layers)
            .enabled_extension_names(&extensions);
        let mut features;
        let mut messenger_info;
        if let Some(request) = &request {
            features = request.features();
            messenger_info = request.messenger_info();
            create_info = create_info
                .push_next(&mut features)
                .push_next(&mut messenger_info);
        }
        // SAFETY: every pointer in create_info outlives the call.
        let instance =
            unsafe { entry.create_instance(&create_info, None) }.during("vkCreateInstance")?;
        let messenger = match &request {
            Some(request) => match DebugMessenger::new(&entry, &instance, request) {
                Ok(m) => Some(m),
                Err(e) => {
                    // SAFETY: nothing else was created from this instance.
                    unsafe { instance.destroy_instance(None) };
                    return Err(e);
                }
            },
            None => None,
        };
        Ok(Self {
            _entry: entry,
            instance,
            messenger,
            _creation_log: request.map(|r| r.log),
        })
    }

    fn devices(&self) -> GpuResult<Vec<(vk::PhysicalDevice, DeviceInfo)>> {
        // SAFETY: plain query on a live instance.
        let handles = unsafe { self.instance.enumerate_physical_devices() }
            .during("vkEnumeratePhysicalDevices")?;
        Ok(handles
            .into_iter()
            .enumerate()
            .map(|(index, pd)| (pd, DeviceInfo::query(&self.instance, pd, index)))
            .collect())
    }
}

impl Drop for InstanceOwner {
    fn drop(&mut self) {
        self.messenger = None;
        // SAFETY: every child of the instance is gone: Context drops its device first.
        unsafe { self.instance.destroy_instance(None) };
    }
}

/// Lists every physical device with what vkerode needs to know of it.
pub fn list_devices(options: &ContextOptions) -> GpuResult<Vec<DeviceInfo>> {
    let owner = InstanceOwner::new(options.validation_wanted())?;
    let mut devices = owner.devices()?;
    // A selector lists the one device it picks, and is refused as `Context::new`
    // refuses it when it picks none.
    if let Some(selector) = options.device.as_deref() {
        let chosen = choose_device(&devices, Some(selector))?;
        devices = vec![devices.swap_remove(chosen)];
    }
    Ok(devices.into_iter().map(|(_, info)| info).collect())
}

pub struct Context {
    /// VK_KHR_pipeline_executable_properties, where the device reports statistics.
    executables: Option<ash::khr::pipeline_executable_properties::Device>,
    device: ash::Device,
    /// Submissions and waits for idle need the queue to themselves (external
    /// synchronisation), whichever thread holds the context.
    queue: Mutex<vk::Queue>,
    queue_family: u32,
    info: DeviceInfo,
    memory: vk::PhysicalDeviceMemoryProperties,
    allocator: ManuallyDrop<Mutex<Allocator>>,
    pipeline_cache: PipelineCache,
    faults: FaultPlan,
    max_submission: std::time::Duration,
    /// Told as each submission of a split recording completes ([`Context::observe_submissions`]).
    observer: Mutex<Option<SubmissionObserver>>,
    // Declared last: dropped after `Drop::drop` has destroyed the device.
    owner: InstanceOwner,
}

impl Context {
    pub fn new(options: &ContextOptions) -> GpuResult<Arc<Self>> {
        let faults = FaultPlan::from_env()?;
        let owner = InstanceOwner::new(options.validation_wanted())?;
        let devices = owner.devices()?;
        let chosen = choose_device(&devices, options.device.as_deref())?;
        let (physical_device, info) = (devices[chosen].0, devices[chosen].1.clone());
        let queue_family = info.compute_queue_family.ok_or(GpuError::NoDevice)?;

        let device = create_device(&owner.instance, physical_device, &info, queue_family)?;
        // SAFETY: the queue family and index were requested above.
        let queue = unsafe { device.get_device_queue(queue_family, 0) };
        // SAFETY: plain query.
        let memory = unsafe {
            owner
                .instance
                .get_physical_device_memory_properties(physical_device)
        };

        let allocator = Allocator::new(&AllocatorCreateDesc {
            instance: owner.instance.clone(),
            device: device.clone(),
            physical_device,
            debug_settings: Default::default(),
            buffer_device_address: info.buffer_device_address,
            allocation_sizes: Default::default(),
        });
        let allocator = match allocator {
            Ok(a) => a,
            Err(e) => {
                // SAFETY: nothing was created from this device yet.
                unsafe { device.destroy_device(None) };
                return Err(GpuError::Allocation {
                    what: "the memory allocator".into(),
                    requested: 0,
                    message: e.to_string(),
                });
            }
        };

        let pipeline_cache =
            match PipelineCache::open(&device, &info, options.pipeline_cache.as_deref()) {
                Ok(cache) => cache,
                Err(e) => {
                    drop(allocator);
                    // SAFETY: the allocator, which held the only objects made from this
                    // device, is gone.
                    unsafe { device.destroy_device(None) };
                    return Err(e);
                }
            };
        let executables = info.pipeline_statistics.then(|| {
            ash::khr::pipeline_executable_properties::Device::new(&owner.instance, &device)
        });
        Ok(Arc::new(Self {
            executables,
            device,
            queue: Mutex::new(queue),
            queue_family,
            info,
            memory,
            allocator: ManuallyDrop::new(Mutex::new(allocator)),
            pipeline_cache,
            faults,
            max_submission: std::time::Duration::from_millis(u64::from(
                options
                    .max_submission_ms
                    .unwrap_or(DEFAULT_MAX_SUBMISSION_MS),
            )),
            observer: Mutex::new(None),
            owner,
        }))
    }

    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    pub(crate) fn pipeline_cache(&self) -> vk::PipelineCache {
        self.pipeline_cache.raw
    }

    pub fn queue_family(&self) -> u32 {
        self.queue_family
    }

    /// Warnings and errors the validation layer reported so far; `None` when
    /// validation is off.
    pub fn validation_messages(&self) -> Option<Vec<String>> {
        self.owner.messenger.as_ref().map(|m| m.log.messages())
    }

    /// The validation log itself, for callers that outlive this context.
    pub fn validation_log(&self) -> Option<Arc<ValidationLog>> {
        self.owner.messenger.as_ref().map(|m| Arc::clone(&m.log))
    }

    pub(crate) fn executables(&self) -> Option<&ash::khr::pipeline_executable_properties::Device> {
        self.executables.as_ref()
    }

    /// The longest a single submission is expected to run (see
    /// [`ContextOptions::max_submission_ms`]).
    pub fn max_submission(&self) -> std::time::Duration {
        self.max_submission
    }

    /// Has `observer` told, from now on, of each submission every [`CommandStream`]
    /// of this context completes ([`SubmissionDone`]: its place in its recording and
    /// the units of work it held), heard on the host while the later ones run (the GPU
    /// never waits for it). `None` stops it.
    ///
    /// [`CommandStream`]: super::CommandStream
    pub fn observe_submissions(&self, observer: Option<SubmissionObserver>) {
        *self.observer.lock().unwrap_or_else(|e| e.into_inner()) = observer;
    }

    pub(crate) fn submission_observer(&self) -> Option<SubmissionObserver> {
        self.observer
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    pub(crate) fn faults(&self) -> &FaultPlan {
        &self.faults
    }

    pub(crate) fn allocator(&self) -> MutexGuard<'_, Allocator> {
        // The allocator's state stays consistent even if a holder panicked.
        self.allocator.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Size of the largest heap with the given property, for out-of-memory reports.
    /// The size of the largest device-local memory heap, in bytes.
    pub fn device_local_bytes(&self) -> u64 {
        self.largest_heap(vk::MemoryPropertyFlags::DEVICE_LOCAL)
    }

    pub(crate) fn largest_heap(&self, flags: vk::MemoryPropertyFlags) -> u64 {
        let types = &self.memory.memory_types[..self.memory.memory_type_count as usize];
        types
            .iter()
            .filter(|t| t.property_flags.contains(flags))
            .map(|t| self.memory.memory_heaps[t.heap_index as usize].size)
            .max()
            .unwrap_or(0)
    }

    fn lock_queue(&self) -> MutexGuard<'_, vk::Queue> {
        // A queue handle has no state to corrupt if a holder panicked.
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Submits one recorded command buffer, to signal `fence`.
    pub(crate) fn submit(&self, cmd: vk::CommandBuffer, fence: vk::Fence) -> GpuResult<()> {
        let cmds = [cmd];
        let submit = [vk::SubmitInfo::default().command_buffers(&cmds)];
        let queue = self.lock_queue();
        // SAFETY: the queue is held under its lock; the caller passes an ended command
        // buffer and an unsignalled fence of this device.
        unsafe { self.device.queue_submit(*queue, &submit, fence) }.during("vkQueueSubmit")
    }

    pub fn wait_idle(&self) -> GpuResult<()> {
        let _queue = self.lock_queue();
        // SAFETY: the device is alive while self is, and its queue is held.
        unsafe { self.device.device_wait_idle() }.during("vkDeviceWaitIdle")
    }
}

impl Deref for Context {
    type Target = ash::Device;
    fn deref(&self) -> &ash::Device {
        &self.device
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        // Nothing useful can be done with a failure here; the device goes regardless.
        let _ = self.wait_idle();
        // SAFETY: every child holds an Arc<Context>, so all are gone; the allocator's
        // blocks are freed before the device that owns them.
        unsafe {
            ManuallyDrop::drop(&mut self.allocator);
            self.pipeline_cache.save_and_destroy(&self.device);
            self.device.destroy_device(None);
        }
    }
}

/// The logical device with one compute queue, and the extensions and features vkerode
/// uses wherever the device offers them.
fn create_device(
    instance: &ash::Instance,
    physical_device: vk::PhysicalDevice,
    info: &DeviceInfo,
    queue_family: u32,
) -> GpuResult<ash::Device> {
    let priorities = [1.0f32];
    let queue_info = [vk::DeviceQueueCreateInfo::default()
        .queue_family_index(queue_family)
        .queue_priorities(&priorities)];
    let mut extensions: Vec<*const std::ffi::c_char> = Vec::new();
    let mut float_atomics = vk::PhysicalDeviceShaderAtomicFloatFeaturesEXT::default()
        .shader_buffer_float32_atomic_add(true);
    let mut executables = vk::PhysicalDevicePipelineExecutablePropertiesFeaturesKHR::default()
        .pipeline_executable_info(true);
    let mut robustness =
        vk::PhysicalDevicePipelineRobustnessFeaturesEXT::default().pipeline_robustness(true);
    let mut memory_model = vk::PhysicalDeviceVulkanMemoryModelFeatures::default()
        .vulkan_memory_model(true)
        .vulkan_memory_model_device_scope(true);
    let mut addresses =
        vk::PhysicalDeviceBufferDeviceAddressFeatures::default().buffer_device_address(true);
    let core_features = vk::PhysicalDeviceFeatures::default().shader_int64(info.shader_int64);
    let mut create_info = vk::DeviceCreateInfo::default()
        .queue_create_infos(&queue_info)
        .enabled_features(&core_features);
    if info.buffer_device_address {
        create_info = create_info.push_next(&mut addresses);
    }
    if info.vulkan_memory_model {
        create_info = create_info.push_next(&mut memory_model);
    }
    if info.float_atomic_add {
        extensions.push(ash::ext::shader_atomic_float::NAME.as_ptr());
        create_info = create_info.push_next(&mut float_atomics);
    }
    if info.pipeline_statistics {
        extensions.push(ash::khr::pipeline_executable_properties::NAME.as_ptr());
        create_info = create_info.push_next(&mut executables);
    }
    if info.pipeline_robustness {
        extensions.push(ash::ext::pipeline_robustness::NAME.as_ptr());
        create_info = create_info.push_next(&mut robustness);
    }
    create_info = create_info.enabled_extension_names(&extensions);
    // SAFETY: every pointer in create_info outlives the call.
    unsafe { instance.create_device(physical_device, &create_info, None) }.during("vkCreateDevice")
}

fn choose_device(
    devices: &[(vk::PhysicalDevice, DeviceInfo)],
    selector: Option<&str>,
) -> GpuResult<usize> {
    let usable: Vec<usize> = (0..devices.len())
        .filter(|&i| devices[i].1.is_usable())
        .collect();
    let Some(selector) = selector else {
        let infos: Vec<&DeviceInfo> = usable.iter().map(|&i| &devices[i].1).collect();
        return rank_devices(&infos)
            .first()
            .map(|&k| usable[k])
            .ok_or(GpuError::NoDevice);
    };
    let matches = |i: usize| {
        let info = &devices[i].1;
        match selector.trim().parse::<usize>() {
            Ok(index) => info.index == index,
            Err(_) => info
                .name
                .to_lowercase()
                .contains(&selector.trim().to_lowercase()),
        }
    };
    usable
        .iter()
        .copied()
        .find(|&i| matches(i))
        .ok_or_else(|| GpuError::DeviceNotFound {
            selector: selector.to_string(),
            available: if devices.is_empty() {
                "none".into()
            } else {
                devices
                    .iter()
                    .map(|(_, d)| format!("[{}] {}", d.index, d.name))
                    .collect::<Vec<_>>()
                    .join(", ")
            },
        })
}
