//! `vkerode strategies`: strategies compared by dose.

use std::path::Path;

use anyhow::{Context as _, Result};

use crate::cli::open_device;
use crate::cli::print::{progress_bar, say_wrote};
use vkerode::gpu::ContextOptions;
use vkerode::studies::strategy_comparison::{run_strategies, Strategies};
use vkerode::terrain::output::StagedFolder;

pub fn run(
    options: &ContextOptions,
    config: &Path,
    overrides: &[String],
    out: Option<&Path>,
    force: bool,
) -> Result<()> {
    let strategies = Strategies::load_with(config, overrides)?;
    let ctx = open_device(options)?;
    let out = out.map_or_else(
        || strategies.default_out(&ctx.info().name),
        Path::to_path_buf,
    );
    let staged = StagedFolder::begin(&out, force, &[config.to_path_buf()]).context("--out")?;
    let bar = progress_bar(strategies.runs() as u64, "runs");
    // Told as each run starts: the ones before it are done.
    let mut started = 0;
    let ran = run_strategies(&ctx, &strategies, staged.path(), |line| {
        bar.set_position(started);
        started += 1;
        bar.set_message(line.clone());
        detail!("{line}");
    });
    bar.finish_and_clear();
    let (lines, written) = ran.with_context(|| format!("running {}", config.display()))?;
    lines.iter().for_each(|line| say!("{line}"));
    say_wrote(staged.publish(written)?);
    Ok(())
}
