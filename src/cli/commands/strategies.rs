//! `vkerode strategies`: strategies compared by dose.

use std::path::Path;

use anyhow::{Context as _, Result};

use crate::cli::open_device;
use crate::cli::print::say_wrote;
use vkerode::experiment::strategies::{run_strategies, Strategies};
use vkerode::gpu::ContextOptions;
use vkerode::terrain::output::StagedFolder;

pub fn run(options: &ContextOptions, config: &Path, out: Option<&Path>, force: bool) -> Result<()> {
    let strategies = Strategies::load(config)?;
    let ctx = open_device(options)?;
    let out = out.map_or_else(
        || strategies.default_out(&ctx.info().name),
        Path::to_path_buf,
    );
    let staged = StagedFolder::begin(&out, force).context("--out")?;
    let (lines, written) = run_strategies(&ctx, &strategies, staged.path(), |line| say!("{line}"))
        .with_context(|| format!("running {}", config.display()))?;
    lines.iter().for_each(|line| say!("{line}"));
    say_wrote(staged.publish(written)?);
    Ok(())
}
