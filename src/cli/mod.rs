//! The binary's own modules: its top-level clap types (`args.rs`), the option groups
//! several commands share (`options.rs`), what it prints (`print.rs`) and one module per
//! command (`commands/`), each with its flags, calling one library function and
//! printing its result.

#[macro_use]
mod print;
pub mod args;
pub mod commands;
pub mod options;

use std::sync::Arc;

use anyhow::{Context as _, Result};

use vkerode::gpu::{Context, ContextOptions};

pub use print::set_verbosity;

/// A failure that ends the process with its own exit status (not the usual 1).
#[derive(Debug)]
pub struct ExitStatus {
    pub code: u8,
    pub message: String,
}

impl std::fmt::Display for ExitStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ExitStatus {}

/// Says how long `command` took, on stderr (the results may be on stdout), unless
/// --quiet.
pub fn tell_time(command: &str, took: std::time::Duration) {
    if print::informing() {
        eprintln!(
            "vkerode {command} took {} (h:m:s)",
            indicatif::FormattedDuration(took)
        );
    }
}

/// Opens the device `options` names, and says which it is.
pub fn open_device(options: &ContextOptions) -> Result<Arc<Context>> {
    let ctx = Context::new(options).context("setting up the Vulkan device")?;
    let info = ctx.info();
    detail!("{}", device_choice(options));
    note!(
        "device: {} ({}), driver {} {}, Vulkan {}",
        info.name,
        info.device_type,
        info.driver_name,
        info.driver_info,
        info.api_version
    );
    Ok(ctx)
}

/// Why `--verbose` says the device was chosen.
fn device_choice(options: &ContextOptions) -> String {
    match &options.device {
        Some(given) => {
            format!("device chosen by --device {given} (an index, else a name substring)")
        }
        None => {
            "device chosen by default: the first discrete GPU, else integrated, else CPU".into()
        }
    }
}
