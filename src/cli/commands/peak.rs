//! `vkerode peak`: the device's ceilings and cache microbenchmark, measured and cached.

use std::path::PathBuf;

use anyhow::Result;

use crate::cli::open_device;
use crate::cli::print::{begin_json, print_json, say_wrote};
use vkerode::gpu::ContextOptions;
use vkerode::probes::ceilings::measure_peaks;
use vkerode::terrain::output::StagedFolder;

pub fn run(
    options: &ContextOptions,
    out: Option<PathBuf>,
    force: bool,
    cache_only: bool,
    json: bool,
) -> Result<()> {
    begin_json(json);
    let staged = out
        .map(|dir| StagedFolder::begin(&dir, force))
        .transpose()?;
    let ctx = open_device(options)?;
    let (table, cached) = measure_peaks(&ctx, cache_only, |line| say!("{line}"))?;
    say!("cached in {}", cached.display());
    if let Some(staged) = staged {
        let written = table.write(staged.path())?;
        say_wrote(staged.publish(written)?);
    }
    if json {
        print_json(&table)?;
    }
    Ok(())
}
