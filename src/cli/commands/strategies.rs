//! `vkerode strategies`: strategies compared by dose.

use std::path::PathBuf;

use anyhow::{Context as _, Result};
use clap::Args;

use crate::cli::open_device;
use crate::cli::options::GpuArgs;
use crate::cli::print::{say_wrote, uneven_bar};
use vkerode::studies::strategy_comparison::{run_strategies, Strategies};
use vkerode::terrain::output::StagedFolder;

/// `vkerode strategies`'s flags.
#[derive(Args)]
pub struct StrategiesArgs {
    pub config: PathBuf,
    /// Output folder. Default: out/strategies/<config name>/<device>.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Replace the folder whole if it already holds files (by default it is refused).
    #[arg(long)]
    pub force: bool,
    /// Override a setting of the config, e.g. `--set seeds=[1]`,
    /// `--set measure.min_reps=3`, `--set pipes.pipes_dt=0.01` (values in TOML).
    #[arg(long = "set", value_name = "[SECTION.]KEY=VALUE")]
    pub overrides: Vec<String>,
    #[command(flatten)]
    pub gpu: GpuArgs,
}

pub fn run(args: &StrategiesArgs) -> Result<()> {
    let config = &args.config;
    let strategies = Strategies::load_with(config, &args.overrides)?;
    let ctx = open_device(&args.gpu.options())?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| strategies.default_out(&ctx.info().name));
    let staged =
        StagedFolder::begin(&out, args.force, std::slice::from_ref(config)).context("--out")?;
    let bar = uneven_bar(strategies.runs() as u64, "runs");
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
