//! `vkerode equivalence`: whether the droplets' speed variants erode as the paper's
//! kernel does, as a verdict against two references. Each variant runs over many
//! droplet seeds in one configuration (map, droplets, workgroup, dispatches) beside
//! (a) the paper's kernel in the same configuration, which isolates the kernel, and (b)
//! the sequential CPU reference of the same job, which measures the configuration's
//! concurrency error. Each figure gets TOST against a margin fixed in advance and the
//! two-sided test, both paired by droplet seed where the sides share their seeds (else
//! Welch's), Holm-corrected across the pair's figures, and the smoothed change maps a
//! permutation test, paired likewise; each figure and each pair is equivalent,
//! different or inconclusive (docs/equivalence.md).
//!
//! Its parts: the plan and its options (`plan.rs`), one run's figures (`figures.rs`), the sequential reference's cache (`cache.rs`), the runs
//! (`run.rs`), its error (`error.rs`), the verdicts (`verdict.rs`) and the files written (`output.rs`).

mod cache;
mod error;
mod figures;
mod output;
mod plan;
mod run;
mod verdict;

pub use cache::{CachedRun, JobKey, CACHE_FOLDER, CACHE_FORMAT};
pub use error::EquivalenceError;
pub use figures::{
    figure_names, landform_figures, Figures, SmoothedMap, CHANGE_FIGURES, SMOOTHED_SIDE,
};
pub use output::{
    figure_columns, runs_columns, verdicts_columns, EquivalenceReport, JSON_FILE, RUNS_CSV,
    VERDICTS_CSV, VERDICTS_MD,
};
pub use plan::{
    Configuration, EquivalenceOptions, Plan, PlanError, Variant, VariantError, VariantProblem,
    DEFAULT_VARIANTS, EQUIVALENCE_TABLE, NAMED_KEYS, PAPER, SEED_KEY, SPEED_KEYS,
};
pub use run::{Role, RunRecord};
pub use verdict::{
    judge, margin_of, pair_by_seed, verdict_word, BySeed, FigureSamples, FigureTest, Groups,
    MapTest, PairVerdict, ALPHA, DEFAULT_MARGIN, INTERVAL_LEVEL, MAP_TEST, MARGINS,
};

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::gpu::Context;
use crate::progress::Tell;

/// The cache folders to read sequential runs from: each folder given, or its
/// `reference-cache/` where it has one (an earlier equivalence output).
pub fn cache_folders(folders: &[PathBuf]) -> Vec<PathBuf> {
    folders
        .iter()
        .map(|f| match f.join(CACHE_FOLDER) {
            inner if inner.is_dir() => inner,
            _ => f.clone(),
        })
        .collect()
}

/// Runs `plan` on `ctx` and writes its files into `out` (a staging folder); reads
/// cached sequential runs from `caches`. Returns the report and the files written.
pub fn run_equivalence(
    ctx: &Arc<Context>,
    plan: &Plan,
    caches: &[PathBuf],
    out: &Path,
    progress: Tell,
) -> Result<(EquivalenceReport, Vec<PathBuf>), EquivalenceError> {
    let runs = run::run_plan(ctx, plan, caches, out, progress)?;
    let report = EquivalenceReport::judge(plan, &runs);
    let mut written = runs.written.clone();
    written.extend(output::write_all(out, plan, &runs, &report)?);
    Ok((report, written))
}
