//! `vkerode reproduce`: the paper's claims judged on this device.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};

use crate::cli::args::ReproduceArgs;
use crate::cli::open_device;
use crate::cli::print::{begin_json, print_json, say_wrote};
use vkerode::experiment::sweep::Verbosity;
use vkerode::gpu::ContextOptions;
use vkerode::studies::reproduce::{
    default_budget_s, rejudge, run_reproduce, ReferenceBundle, ReproduceOptions, Reproduction,
    CLAIMS, REFERENCE_DIR, SUMMARY_MD,
};
use vkerode::terrain::output::{default_out, StagedFolder};

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

/// Each claim's line, the summary's path, the files written and, with --json, the
/// outcome.
fn report(outcome: &Reproduction, out: &Path, written: Vec<PathBuf>, json: bool) -> Result<()> {
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
    say_wrote(written);
    if json {
        print_json(outcome)?;
    }
    Ok(())
}
