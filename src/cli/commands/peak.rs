//! `vkerode peak`: the device's ceilings and cache microbenchmark, measured and cached.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use crate::cli::open_device;
use crate::cli::options::GpuArgs;
use crate::cli::print::{begin_json, print_json, progress_bar, say_wrote, show_progress};
use vkerode::probes::ceilings::measure_peaks;
use vkerode::terrain::output::StagedFolder;

/// `vkerode peak`'s flags.
#[derive(Args)]
pub struct PeakArgs {
    /// Also write peak.json and, for each probe that has rows, its CSV (random.csv,
    /// walk.csv, copy.csv, cache_latency.csv, cache_bandwidth.csv) into this folder.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Replace the --out folder whole if it already holds files (by default it is
    /// refused).
    #[arg(long, requires = "out")]
    pub force: bool,
    /// Run only the copy and the cache microbenchmark; the cached atomic rates are kept.
    #[arg(long)]
    pub cache_only: bool,
    /// Print the table (peak.json's) as one JSON document on stdout (docs/schemas/),
    /// the other lines on stderr.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub gpu: GpuArgs,
}

pub fn run(args: &PeakArgs) -> Result<()> {
    begin_json(args.json);
    let staged = args
        .out
        .as_ref()
        .map(|dir| StagedFolder::begin(dir, args.force, &[]))
        .transpose()?;
    let ctx = open_device(&args.gpu.options())?;
    // One step per probe; the report's lines print above the bar as they come.
    let bar = progress_bar(0, "probes");
    bar.set_message("peak");
    let measured = measure_peaks(&ctx, args.cache_only, |event| show_progress(&bar, event));
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
    if args.json {
        print_json(&table)?;
    }
    Ok(())
}
