//! `vkerode devices`: every Vulkan device and what vkerode needs to know of it.

use anyhow::{bail, Context as _, Result};
use clap::Args;

use crate::cli::options::GpuArgs;
use crate::cli::print::{begin_json, print_device, print_json};
use vkerode::gpu::list_devices;

/// `vkerode devices`'s flags.
#[derive(Args)]
pub struct DevicesArgs {
    /// Print the devices as one JSON document on stdout (docs/schemas/).
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub gpu: GpuArgs,
}

pub fn run(args: &DevicesArgs) -> Result<()> {
    begin_json(args.json);
    let devices = list_devices(&args.gpu.options()).context("listing Vulkan devices")?;
    if devices.is_empty() {
        bail!("no Vulkan device found; install mesa-vulkan-drivers for the CPU device lavapipe");
    }
    if args.json {
        return print_json(&devices);
    }
    devices.iter().for_each(print_device);
    Ok(())
}
