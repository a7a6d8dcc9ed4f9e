//! `vkerode peak`: the device's ceilings and cache microbenchmark, measured and cached.

use std::path::PathBuf;

use anyhow::Result;

use crate::cli::open_device;
use crate::cli::print::{begin_json, print_json, progress_bar, say_wrote, show_progress};
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
        .map(|dir| StagedFolder::begin(&dir, force, &[]))
        .transpose()?;
    let ctx = open_device(options)?;
    // One step per probe; the report's lines print above the bar as they come.
    let bar = progress_bar(0, "probes");
    bar.set_message("peak");
    let measured = measure_peaks(&ctx, cache_only, |event| show_progress(&bar, event));
    bar.finish_and_clear();
    let (table, cached) = measured?;
    match cached {
        Ok(path) => note!("cached in {}", path.display()),
        Err(e) => eprintln!(
            "warning: the peak cache was not written ({}); sweeps will measure the peaks again",
            vkerode::error_chain(&e)
        ),
    }
    if let Some(staged) = staged {
        let written = table.write(staged.path())?;
        say_wrote(staged.publish(written)?);
    }
    if json {
        print_json(&table)?;
    }
    Ok(())
}
