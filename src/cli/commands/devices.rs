//! `vkerode devices`: every Vulkan device and what vkerode needs to know of it.

use anyhow::{bail, Context as _, Result};

use crate::cli::print::{begin_json, print_device, print_json};
use vkerode::gpu::{list_devices, ContextOptions};

pub fn run(options: &ContextOptions, json: bool) -> Result<()> {
    begin_json(json);
    let devices = list_devices(options).context("listing Vulkan devices")?;
    if devices.is_empty() {
        bail!("no Vulkan device found; install mesa-vulkan-drivers for the CPU device lavapipe");
    }
    if json {
        return print_json(&devices);
    }
    devices.iter().for_each(print_device);
    Ok(())
}
