//! `vkerode equivalence`: the speed variants against the paper's kernel and the
//! sequential reference, as verdicts.

use std::path::PathBuf;

use anyhow::{bail, Context as _, Result};
use clap::parser::ValueSource;
use clap::{ArgMatches, Args};

use crate::cli::open_device;
use crate::cli::options::{GpuArgs, RunLengthArgs};
use crate::cli::print::{begin_json, print_json, progress_bar, say_wrote, show_progress};
use vkerode::erosion::RunSettings;
use vkerode::gpu::ContextOptions;
use vkerode::studies::equivalence::{
    cache_folders, run_equivalence, EquivalenceOptions, Plan, CACHE_FOLDER,
};
use vkerode::terrain::output::{default_out, StagedFolder};

#[derive(Args)]
pub struct EquivalenceArgs {
    /// An equivalence config (experiments/equivalence*.toml): `[fixed]` settings,
    /// `[axes]` whose product is the configurations, and `[equivalence]` options (the
    /// flags below replace them). Without one, the settings flags give one
    /// configuration.
    pub config: Option<PathBuf>,
    #[command(flatten)]
    pub settings: RunSettings,
    #[command(flatten, next_help_heading = "Equivalence")]
    pub options: EquivalenceOptions,
    #[command(flatten)]
    pub run_length: RunLengthArgs,
    /// Output folder, written whole at the end; its reference-cache/ keeps the
    /// sequential runs for a rerun with --force. Default: out/equivalence/<device>, with
    /// the config's name between where one is given.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Replace --out whole if it already holds files (by default it is refused); its
    /// cached sequential runs are reused.
    #[arg(long)]
    pub force: bool,
    /// Also reuse the sequential runs cached in this folder (an earlier equivalence
    /// output, or its reference-cache/); may be repeated.
    #[arg(long, value_name = "DIR")]
    pub reference_cache: Vec<PathBuf>,
    /// Print equivalence.json's report as one JSON document on stdout (docs/schemas/),
    /// the other lines on stderr.
    #[arg(long)]
    pub json: bool,
    /// Override a setting of the config, e.g. `--set fixed.size=128`,
    /// `--set equivalence.seeds=5` (values in TOML); needs a config.
    #[arg(long = "set", value_name = "SECTION.KEY=VALUE", requires = "config")]
    pub overrides: Vec<String>,
    #[command(flatten)]
    pub gpu: GpuArgs,
    /// The settings' keys given on the command line.
    #[arg(skip)]
    pub given: Vec<String>,
    /// The equivalence options given on the command line.
    #[arg(skip)]
    pub options_given: Vec<String>,
}

impl EquivalenceArgs {
    /// Records which settings and options `matches` (equivalence's) has from the
    /// command line.
    pub fn with_given(mut self, matches: &ArgMatches) -> Self {
        let given = |keys: Vec<String>| -> Vec<String> {
            keys.into_iter()
                .filter(|key| matches.value_source(key) == Some(ValueSource::CommandLine))
                .collect()
        };
        self.given = given(RunSettings::keys());
        self.options_given = given(vkerode::erosion::keys::keys_of::<EquivalenceOptions>());
        self
    }
}

pub fn run(options: &ContextOptions, args: &EquivalenceArgs) -> Result<()> {
    begin_json(args.json);
    let allow_long = args.run_length.allow_long_runs;
    let plan = match &args.config {
        Some(path) => {
            if let Some(key) = args.given.first() {
                bail!(
                    "--{}: the settings of {} are its [fixed] and [axes]; set them there, or drop the config",
                    key.replace('_', "-"),
                    path.display()
                );
            }
            Plan::load(
                path,
                &args.overrides,
                &args.options,
                &args.options_given,
                allow_long,
            )?
        }
        None => Plan::of_settings(
            args.settings.clone(),
            &args.given,
            args.options.clone(),
            allow_long,
        )
        .map_err(|e| anyhow::anyhow!("--{}: {}", e.key.replace('_', "-"), e.reason))?,
    };
    for dir in &args.reference_cache {
        if !dir.is_dir() {
            bail!("--reference-cache {}: not a folder", dir.display());
        }
    }
    // Checked, cleared of dead runs' leftovers and staged before any work.
    let reads: Vec<PathBuf> = args.config.iter().cloned().collect();
    let ctx = open_device(options)?;
    let out = args.out.clone().unwrap_or_else(|| {
        let config = args.config.is_some().then_some(plan.name.as_str());
        default_out("equivalence", config, &ctx.info().name)
    });
    let staged = StagedFolder::begin(&out, args.force, &reads).context("--out")?;
    // The folder replaced keeps its cache until the new one is published.
    let mut caches = vec![out.join(CACHE_FOLDER)];
    caches.extend(cache_folders(&args.reference_cache));
    note!(
        "{} configuration(s) x {} variant(s) and the paper's kernel, {} seeds each on the GPU; the sequential reference {} seeds per job",
        plan.configurations.len(),
        plan.variants.len(),
        plan.options.seeds,
        plan.options.reference_seeds
    );
    let bar = progress_bar(0, "runs");
    let ran = run_equivalence(&ctx, &plan, &caches, staged.path(), &mut |event| {
        show_progress(&bar, event)
    });
    bar.finish_and_clear();
    let (report, written) = ran.with_context(|| match &args.config {
        Some(path) => format!("running {}", path.display()),
        None => "running the equivalence".into(),
    })?;
    if args.json {
        print_json(&report)?;
    } else {
        for line in report.lines() {
            say!("{line}");
        }
    }
    say_wrote(
        staged
            .publish(written)?
            .into_iter()
            .filter(|p| !p.parent().is_some_and(|d| d.ends_with(CACHE_FOLDER)))
            .collect::<Vec<_>>(),
    );
    Ok(())
}
