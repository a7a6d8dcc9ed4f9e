//! Typed errors for everything the GPU layer does. Each names the call that failed
//! and what it acted on; "device lost" and out-of-memory have variants of their own.

use ash::vk;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum GpuError {
    #[error("cannot load the Vulkan loader (libvulkan.so.1): {0}; install the Debian/Ubuntu packages libvulkan1 and mesa-vulkan-drivers")]
    Loader(String),

    #[error("no Vulkan 1.2 device with a compute queue was found; on a machine without a GPU install mesa-vulkan-drivers for the CPU device lavapipe")]
    NoDevice,

    #[error("no Vulkan device matches --device {selector:?}; the devices are: {available}")]
    DeviceNotFound { selector: String, available: String },

    #[error("validation was requested but the Khronos validation layer (VK_LAYER_KHRONOS_validation) is not installed; install the package vulkan-validationlayers")]
    ValidationLayerMissing,

    #[error("{call} failed: the device was lost")]
    DeviceLost { call: &'static str },

    /// The work did not finish in time: hung, or killed by a watchdog. The device is
    /// treated as lost.
    #[error("{call}: the work submitted did not finish within {seconds} s; the device is treated as lost")]
    Timeout { call: &'static str, seconds: u64 },

    /// A bad fault-injection setting (tests only).
    #[error("{0}")]
    Fault(String),

    #[error("{call} failed for {what}: out of {memory} memory ({requested} bytes asked for, the largest {memory} heap holds {heap_size} bytes)")]
    OutOfMemory {
        call: &'static str,
        what: String,
        memory: &'static str,
        requested: u64,
        heap_size: u64,
    },

    #[error("{call} failed: the driver ran out of {memory} memory")]
    DriverOutOfMemory {
        call: &'static str,
        memory: &'static str,
    },

    #[error("{call} failed: {result}")]
    Vulkan {
        call: &'static str,
        result: vk::Result,
    },

    #[error("allocating {requested} bytes for {what}: {message}")]
    Allocation {
        what: String,
        requested: u64,
        message: String,
    },

    #[error("{what} needs {requested}, above this device's {limit_name} of {limit}")]
    LimitExceeded {
        what: String,
        requested: u64,
        limit_name: &'static str,
        limit: u64,
    },

    #[error("{what} needs the device feature {feature}, which {device} does not offer")]
    MissingFeature {
        what: String,
        feature: &'static str,
        device: String,
    },

    #[error("buffer {0:?} is not host-visible, so it cannot be mapped")]
    NotHostVisible(String),

    #[error("shader module {name}: {message}")]
    Shader { name: &'static str, message: String },

    /// A command recorded out of order or with the wrong resources; nothing was
    /// submitted.
    #[error("recording {command}: {reason}; nothing was submitted")]
    Recording {
        command: &'static str,
        reason: String,
    },
}

pub type GpuResult<T> = Result<T, GpuError>;

/// Attaches the name of the Vulkan call to a raw `vk::Result`.
pub(crate) trait VkResultExt<T> {
    fn during(self, call: &'static str) -> GpuResult<T>;
}

impl<T> VkResultExt<T> for Result<T, vk::Result> {
    fn during(self, call: &'static str) -> GpuResult<T> {
        self.map_err(|result| from_vk(call, result))
    }
}

pub(crate) fn from_vk(call: &'static str, result: vk::Result) -> GpuError {
    match result {
        vk::Result::ERROR_DEVICE_LOST => GpuError::DeviceLost { call },
        vk::Result::ERROR_OUT_OF_DEVICE_MEMORY => GpuError::DriverOutOfMemory {
            call,
            memory: "device",
        },
        vk::Result::ERROR_OUT_OF_HOST_MEMORY => GpuError::DriverOutOfMemory {
            call,
            memory: "host",
        },
        _ => GpuError::Vulkan { call, result },
    }
}

impl GpuError {
    /// True when the device is gone and every later call on it will fail too.
    pub fn is_device_lost(&self) -> bool {
        matches!(self, GpuError::DeviceLost { .. } | GpuError::Timeout { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vulkan_results_become_typed_errors_that_name_the_call() {
        let lost = from_vk("vkQueueSubmit", vk::Result::ERROR_DEVICE_LOST);
        assert!(lost.is_device_lost());
        assert_eq!(
            lost.to_string(),
            "vkQueueSubmit failed: the device was lost"
        );
        let oom = from_vk("vkCreateBuffer", vk::Result::ERROR_OUT_OF_DEVICE_MEMORY);
        assert!(matches!(
            oom,
            GpuError::DriverOutOfMemory {
                memory: "device",
                ..
            }
        ));
        let other = from_vk("vkCreateFence", vk::Result::ERROR_INITIALIZATION_FAILED);
        assert!(other.to_string().starts_with("vkCreateFence failed: "));
    }
}
