//! `vkerode reproduce`: the paper's claims judged on this device.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context as _, Result};
use clap::Args;

use crate::cli::open_device;
use crate::cli::options::GpuArgs;
use crate::cli::print::{begin_json, print_json, say_wrote};
use vkerode::experiment::sweep::Verbosity;
use vkerode::gpu::ContextOptions;
use vkerode::studies::reproduce::{
    self, default_budget_s, rejudge, run_reproduce, ReferenceBundle, ReproduceOptions,
    Reproduction, CLAIMS, REFERENCE_DIR, SUMMARY_MD,
};
use vkerode::terrain::output::{default_out, StagedFolder};

#[derive(Args)]
pub struct ReproduceArgs {
    /// How long the whole suite may take: seconds, or with a unit ("90s", "10m"), at
    /// least the suite's floor (docs/reproduce.md). Default: 10 minutes on a GPU, 2 on a
    /// CPU device (lavapipe).
    #[arg(long, value_name = "DURATION", value_parser = parse_budget)]
    pub budget: Option<f64>,
    /// Only these claims, by id (comma-separated): their steps alone run. Default: every
    /// claim (docs/reproduce.md lists the ids).
    #[arg(long, value_name = "ID,...", value_delimiter = ',', value_parser = parse_claim)]
    pub claims: Vec<&'static reproduce::Claim>,
    /// Run every step on this map side (64 to 4096, a power of two) instead of the
    /// largest the budget fits; the budget still cuts repetitions, seeds and steps.
    #[arg(long, value_name = "SIDE", value_parser = parse_side)]
    pub size: Option<u32>,
    /// The reference bundle to set the results beside: a folder of reproduce.json, or of
    /// one folder per scale. Default: results/reproduce/nvidia-h200 where it exists (run
    /// from the repository); a folder given must exist.
    #[arg(long, value_name = "DIR", conflicts_with = "no_reference")]
    pub reference: Option<PathBuf>,
    /// Set the results beside no reference (a reference run itself).
    #[arg(long)]
    pub no_reference: bool,
    /// Judge again, by this build's rules and without a device, the suite whose folders
    /// DIR holds (an earlier --out, or one scale of a reference bundle), and rewrite its
    /// reproduce.json, summary.md and report.html; what ran stays as recorded.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["out", "force", "budget", "claims", "size"])]
    pub rejudge: Option<PathBuf>,
    /// Output folder, written whole at the end. Default: out/reproduce/<device>.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Replace --out whole if it already holds files (by default it is refused).
    #[arg(long)]
    pub force: bool,
    /// Print reproduce.json as one JSON document on stdout (docs/schemas/), the other
    /// lines on stderr.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub gpu: GpuArgs,
}

/// A claim of the suite, by its id.
fn parse_claim(text: &str) -> Result<&'static reproduce::Claim> {
    reproduce::claim(text.trim()).ok_or_else(|| {
        let ids: Vec<&str> = reproduce::CLAIMS.iter().map(|c| c.id).collect();
        anyhow!("no claim {text:?}; the claims are {}", ids.join(", "))
    })
}

/// A side the suite may run at.
fn parse_side(text: &str) -> Result<u32> {
    let sides: Vec<u32> = reproduce::sizes().collect();
    text.trim()
        .parse::<u32>()
        .ok()
        .filter(|s| sides.contains(s))
        .ok_or_else(|| {
            let listed: Vec<String> = sides.iter().map(u32::to_string).collect();
            anyhow!("{text:?} is not a side of the suite: {}", listed.join(", "))
        })
}

/// A budget: a duration the suite can keep, refused below its floor before any work.
fn parse_budget(text: &str) -> Result<f64> {
    let seconds = parse_duration(text)?;
    reproduce::check_budget(seconds)?;
    Ok(seconds)
}

/// A duration in seconds: a number of seconds, or humantime's ("90s", "10m", "1h 30m").
fn parse_duration(text: &str) -> Result<f64> {
    let t = text.trim();
    let seconds = t
        .parse::<f64>()
        .ok()
        .or_else(|| humantime::parse_duration(t).ok().map(|d| d.as_secs_f64()));
    match seconds {
        Some(seconds) if seconds.is_finite() && seconds > 0.0 => Ok(seconds),
        _ => Err(anyhow!(
            "{text:?} is not a finite duration above 0 in seconds, minutes or hours (600, 90s, 10m or 1h)"
        )),
    }
}

pub fn run(gpu: &ContextOptions, args: &ReproduceArgs, verbosity: Verbosity) -> Result<()> {
    begin_json(args.json);
    // Read before any work: a broken or missing reference given stops the run here.
    let reference_dir = match (&args.reference, args.no_reference) {
        (Some(dir), _) if !dir.is_dir() => {
            anyhow::bail!("--reference {}: no such folder", dir.display())
        }
        (Some(dir), _) => Some(dir.clone()),
        (None, true) => None,
        (None, false) => Some(PathBuf::from(REFERENCE_DIR)),
    };
    let reference = match &reference_dir {
        Some(dir) => {
            ReferenceBundle::read(dir).with_context(|| format!("--reference {}", dir.display()))?
        }
        None => None,
    };
    if let Some(dir) = &args.rejudge {
        let (outcome, written) = rejudge(dir, reference.as_ref(), reference_dir.as_deref())
            .with_context(|| format!("--rejudge {}", dir.display()))?;
        return report(&outcome, dir, written, args.json);
    }
    let ctx = open_device(gpu)?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| default_out("reproduce", None, &ctx.info().name));
    let reads: Vec<PathBuf> = reference_dir.iter().cloned().collect();
    let staged = StagedFolder::begin(&out, args.force, &reads).context("--out")?;
    let options = ReproduceOptions {
        budget_s: args.budget.unwrap_or_else(|| default_budget_s(ctx.info())),
        claims: match args.claims.is_empty() {
            true => CLAIMS.iter().collect(),
            false => args.claims.clone(),
        },
        size: args.size,
        reference_dir,
        reference,
        verbosity,
    };
    let (outcome, written) =
        run_reproduce(&ctx, &options, staged.path(), &mut |line| note!("{line}"))
            .context("running the paper's claims")?;
    let written = staged.publish(written)?;
    report(&outcome, &out, written, args.json)
}

/// The files written, each claim's line, the summary's path and, with --json, the
/// outcome.
fn report(outcome: &Reproduction, out: &Path, written: Vec<PathBuf>, json: bool) -> Result<()> {
    // The files first: there are dozens, and the verdicts are what should stay on screen.
    say_wrote(written);
    for claim in &outcome.claims {
        let effect = claim.effect.as_ref().map_or("-".into(), |e| e.text());
        say!(
            "{}: {} ({effect}; {}², {} seeds): {}",
            claim.topic,
            claim.verdict_text(),
            claim.scale.size,
            claim.seeds.len(),
            claim.why
        );
    }
    say!("summary: {}", out.join(SUMMARY_MD).display());
    if json {
        print_json(outcome)?;
    }
    Ok(())
}
