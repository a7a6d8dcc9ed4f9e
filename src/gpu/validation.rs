//! The Khronos validation layer with synchronization validation, and a debug-utils
//! messenger that prints every warning and error and keeps it for tests to check.

use std::ffi::{c_void, CStr};
use std::sync::{Arc, Mutex};

use ash::vk;

use super::error::{GpuResult, VkResultExt};

pub(crate) const LAYER_NAME: &CStr = c"VK_LAYER_KHRONOS_validation";

/// Messages of warning or error severity that the validation layer reported.
#[derive(Debug, Default)]
pub struct ValidationLog {
    messages: Mutex<Vec<String>>,
}

impl ValidationLog {
    pub fn messages(&self) -> Vec<String> {
        self.lock().clone()
    }

    fn push(&self, message: String) {
        self.lock().push(message);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<String>> {
        // A panic while holding the lock cannot leave the Vec inconsistent.
        self.messages.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// What an instance needs to be created with validation on.
pub(crate) struct ValidationRequest {
    pub log: Arc<ValidationLog>,
    enabled_features: [vk::ValidationFeatureEnableEXT; 1],
}

impl ValidationRequest {
    pub fn new() -> Self {
        Self {
            log: Arc::new(ValidationLog::default()),
            enabled_features: [vk::ValidationFeatureEnableEXT::SYNCHRONIZATION_VALIDATION],
        }
    }

    pub fn features(&self) -> vk::ValidationFeaturesEXT<'_> {
        vk::ValidationFeaturesEXT::default().enabled_validation_features(&self.enabled_features)
    }

    pub fn messenger_info(&self) -> vk::DebugUtilsMessengerCreateInfoEXT<'_> {
        vk::DebugUtilsMessengerCreateInfoEXT::default()
            .message_severity(
                vk::DebugUtilsMessageSeverityFlagsEXT::WARNING
                    | vk::DebugUtilsMessageSeverityFlagsEXT::ERROR,
            )
            .message_type(
                vk::DebugUtilsMessageTypeFlagsEXT::GENERAL
                    | vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION
                    | vk::DebugUtilsMessageTypeFlagsEXT::PERFORMANCE,
            )
            .pfn_user_callback(Some(on_message))
            .user_data(Arc::as_ptr(&self.log) as *mut c_void)
    }
}

/// The messenger; it holds the log alive for as long as Vulkan may call back into it.
pub(crate) struct DebugMessenger {
    loader: ash::ext::debug_utils::Instance,
    messenger: vk::DebugUtilsMessengerEXT,
    pub log: Arc<ValidationLog>,
}

impl DebugMessenger {
    pub fn new(
        entry: &ash::Entry,
        instance: &ash::Instance,
        request: &ValidationRequest,
    ) -> GpuResult<Self> {
        let loader = ash::ext::debug_utils::Instance::new(entry, instance);
        // SAFETY: the create info points at `request.log`, which this struct keeps alive.
        let messenger =
            unsafe { loader.create_debug_utils_messenger(&request.messenger_info(), None) }
                .during("vkCreateDebugUtilsMessengerEXT")?;
        Ok(Self {
            loader,
            messenger,
            log: Arc::clone(&request.log),
        })
    }
}

impl Drop for DebugMessenger {
    fn drop(&mut self) {
        // SAFETY: created by this loader; the instance outlives this struct.
        unsafe {
            self.loader
                .destroy_debug_utils_messenger(self.messenger, None)
        };
    }
}

unsafe extern "system" fn on_message(
    severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    _kind: vk::DebugUtilsMessageTypeFlagsEXT,
    data: *const vk::DebugUtilsMessengerCallbackDataEXT<'_>,
    user_data: *mut c_void,
) -> vk::Bool32 {
    // SAFETY: Vulkan passes valid callback data for the duration of the call.
    let (id, text) = unsafe {
        let data = &*data;
        (
            data.message_id_name_as_c_str()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default(),
            data.message_as_c_str()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default(),
        )
    };
    let level = if severity.contains(vk::DebugUtilsMessageSeverityFlagsEXT::ERROR) {
        "error"
    } else {
        "warning"
    };
    let message = format!("validation {level}: [{id}] {text}");
    eprintln!("{message}");
    if !user_data.is_null() {
        // SAFETY: user_data is the ValidationLog that the messenger (or the instance
        // create info) was made with, kept alive by an Arc for as long as either lives.
        unsafe { &*(user_data as *const ValidationLog) }.push(message);
    }
    vk::FALSE
}
