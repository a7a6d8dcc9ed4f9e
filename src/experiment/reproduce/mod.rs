//! `vkerode reproduce`: the paper's claims on this device, in one command. A bounded
//! suite, sized to a time budget, measures each claim the paper makes (workgroup size,
//! batched spawning, staggered dispatch, fixed-point atomics against float and racy
//! adds, the grid-centric strategy); each gets a verdict with its effect and interval,
//! and, where the claim is about speed, the stability of the setting it favours and
//! whether that setting erodes as its base does. The results are set beside a committed
//! reference bundle (the H200's, made by this same command).
//!
//! Its parts: the claims, their sweeps and the scale (`suite.rs`), the verdicts
//! (`judge.rs`), the outcome as reproduce.json holds it (`outcome.rs`) and the summary
//! as markdown and HTML (`summary.rs`).

mod judge;
mod outcome;
mod suite;
mod summary;

pub use judge::{ClaimResult, ClaimVerdict, Effect, ErosionCheck};
pub use outcome::{Calibration, Reproduction, JSON_FILE};
pub use suite::{Claim, Measurement, Scale, SweepPlan, CLAIMS, GRID_WATER_PER_CELL, SIZES};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use super::results::{Existing, Table};
use super::strategies::{run_strategies, Strategies, STRATEGIES_CSV};
use super::sweep::config::Experiment;
use super::sweep::{run_sweep, OnPointError, SweepOptions, Verbosity};
use super::ExperimentError;
use crate::experiment::report::Threshold;
use crate::gpu::{Context, DeviceInfo};
use crate::stats::LinearFit;
use crate::terrain::files::write_atomically;
use judge::{Evidence, SweepFiles};
use suite::{grid_toml, largest_fitting, SWEEPS};

/// The default budget on a GPU, in seconds.
pub const GPU_BUDGET_S: f64 = 600.0;
/// The default budget on a CPU device (lavapipe), which runs a thousand times slower.
pub const CPU_BUDGET_S: f64 = 120.0;
/// The committed reference bundle: the H200's, from this command.
pub const REFERENCE_DIR: &str = "results/reproduce/nvidia-h200";
pub const SUMMARY_MD: &str = "summary.md";
pub const REPORT_HTML: &str = "report.html";
/// The droplet seeds by default: the fewest that give an interval some width.
pub const DEFAULT_SEEDS: u32 = 3;

/// The budget for `device` when none is given.
pub fn default_budget_s(device: &DeviceInfo) -> f64 {
    match device.is_cpu() {
        true => CPU_BUDGET_S,
        false => GPU_BUDGET_S,
    }
}

pub struct ReproduceOptions {
    /// Seconds the whole suite may take, calibration included.
    pub budget_s: f64,
    /// Droplet seeds per point (at least 2, for an interval over seeds).
    pub seeds: u32,
    /// The reference bundle's folder, and its outcome where it has one
    /// ([`Reproduction::read_reference`]); a missing one is stated in the summary.
    pub reference_dir: PathBuf,
    pub reference: Option<Reproduction>,
    /// The sweeps' progress bars and notes.
    pub verbosity: Verbosity,
}

/// The sweep options of the suite's sweeps: results in `root/<experiment>/<device>`,
/// stop at a failure.
fn sweep_options(root: &Path, verbosity: Verbosity) -> SweepOptions {
    SweepOptions {
        out: root.join("{experiment}").join("{device}"),
        existing: Existing::Refuse,
        shard: None,
        verbosity,
        lock_sm_mhz: None,
        on_point_error: OnPointError::Stop,
        replicate: false,
    }
}

/// Runs `plan` at `scale` into `root`; returns its results folder.
fn sweep(
    ctx: &Arc<Context>,
    plan: &SweepPlan,
    scale: &Scale,
    root: &Path,
    verbosity: Verbosity,
) -> Result<PathBuf, ExperimentError> {
    let text = plan.config_toml(scale);
    let file = PathBuf::from(format!("{}.toml", plan.experiment()));
    let experiment = Experiment::parse(&file, &text, Some(ctx.info()))?;
    let summary = run_sweep(
        std::slice::from_ref(ctx),
        &experiment,
        &sweep_options(root, verbosity),
    )?;
    if let Some(why) = summary.stopped.or_else(|| {
        summary
            .failed
            .first()
            .map(|f| format!("point {} failed: {}", f.point, f.error))
    }) {
        return Err(ExperimentError::Run(format!(
            "the {} sweep stopped: {why}",
            plan.name
        )));
    }
    Ok(summary.dir)
}

/// The share of the budget the calibration may spend.
pub const CALIBRATION_SHARE: f64 = 0.1;

/// Times one point of the paper's kernel at growing sizes, from the smallest, while the
/// next would stay within [`CALIBRATION_SHARE`] of `budget_s`, and fits a cost per run
/// of a fixed part and a part per cell to them all ([`fitted`]).
fn calibrate(
    ctx: &Arc<Context>,
    budget_s: f64,
    point_budget_s: f64,
    root: &Path,
    verbosity: Verbosity,
) -> Result<Calibration, ExperimentError> {
    let started = Instant::now();
    let one_point = SweepPlan {
        name: "calibration",
        description: "The paper's kernel at workgroup 64, one seed.",
        axes: "workgroup = [64]",
    };
    let mut walls: Vec<(f64, f64)> = Vec::new();
    let mut fit = Calibration {
        fixed_s: 0.0,
        per_cell_s: 0.0,
    };
    for (i, &size) in SIZES.iter().enumerate() {
        let cells = f64::from(size * size);
        if walls.len() >= 2
            && started.elapsed().as_secs_f64() + fit.fixed_s + fit.per_cell_s * cells
                > CALIBRATION_SHARE * budget_s
        {
            break;
        }
        let point = Instant::now();
        sweep(
            ctx,
            &one_point,
            &Scale::at(size, 1, point_budget_s),
            &root.join(i.to_string()),
            verbosity,
        )?;
        walls.push((cells, point.elapsed().as_secs_f64()));
        if walls.len() >= 2 {
            fit = fitted(&walls);
        }
    }
    Ok(fit)
}

/// The least-squares line of wall time against cells. Where noise makes it fall or
/// cross zero, no fixed part and the steeper of the line and the largest point's time
/// per cell: an overestimate of larger maps (a smaller scale, never a blown budget).
fn fitted(walls: &[(f64, f64)]) -> Calibration {
    if let Some(line) = LinearFit::of(walls).filter(|l| l.slope > 0.0 && l.intercept >= 0.0) {
        return Calibration {
            fixed_s: line.intercept,
            per_cell_s: line.slope,
        };
    }
    let slope = LinearFit::of(walls).map_or(0.0, |l| l.slope);
    let &(c_last, w_last) = walls.last().expect("two points or more");
    Calibration {
        fixed_s: 0.0,
        per_cell_s: slope.max(w_last / c_last),
    }
}

/// Every file under `dir`.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        match path.is_dir() {
            true => files.extend(files_under(&path)),
            false => files.push(path),
        }
    }
    files.sort();
    files
}

/// Runs the suite on `ctx` within `options.budget_s` and writes into `dir` (a staging
/// folder): each sweep's results under `sweeps/`, the grid's under `grid/`, and
/// reproduce.json, summary.md and report.html. Returns the outcome and the files.
pub fn run_reproduce(
    ctx: &Arc<Context>,
    options: &ReproduceOptions,
    dir: &Path,
    say: &mut dyn FnMut(String),
) -> Result<(Reproduction, Vec<PathBuf>), ExperimentError> {
    let started = Instant::now();
    let info = ctx.info();
    // Repetitions get a quarter of each run's share at the smallest scale, 0.1 to 1 s.
    let smallest = Scale::at(SIZES[0], options.seeds, 0.0).runs() as f64;
    let point_budget_s = (options.budget_s / smallest / 4.0).clamp(0.1, 1.0);
    say(format!(
        "calibrating: one point at {}², {}² and larger, within {}% of the budget",
        SIZES[0],
        SIZES[1],
        CALIBRATION_SHARE * 100.0
    ));
    let calibration_dir = dir.join(".calibration");
    let calibration = calibrate(
        ctx,
        options.budget_s,
        point_budget_s,
        &calibration_dir,
        options.verbosity,
    )?;
    let _ = std::fs::remove_dir_all(&calibration_dir);
    let left = options.budget_s - started.elapsed().as_secs_f64();
    let size = largest_fitting(
        left,
        options.seeds,
        calibration.fixed_s,
        calibration.per_cell_s,
    );
    let scale = Scale::at(size, options.seeds, point_budget_s);
    let estimate = scale.runs() as f64
        * (calibration.fixed_s + calibration.per_cell_s * f64::from(size * size));
    say(format!(
        "the suite: {} runs at {size}² ({} droplets, {} seeds), about {:.0} s of the {:.0} s left{}",
        scale.runs(),
        scale.droplets,
        scale.seeds,
        estimate,
        left.max(0.0),
        if estimate > left {
            " (the smallest scale: the budget is too small for it)"
        } else {
            ""
        }
    ));

    let root = dir.join("sweeps");
    let mut sweeps = BTreeMap::new();
    let mut folders = Vec::new();
    for plan in SWEEPS {
        say(format!("sweep {}: {}", plan.name, plan.description));
        let folder = sweep(ctx, plan, &scale, &root, options.verbosity)?;
        sweeps.insert(plan.name, SweepFiles::read(&folder)?);
        folders.push((plan, folder));
    }
    say("the grid against the droplets at matched water".into());
    let grid_dir = dir.join("grid");
    std::fs::create_dir_all(&grid_dir).map_err(|source| ExperimentError::Io {
        path: grid_dir.clone(),
        source,
    })?;
    let strategies = Strategies::parse(Path::new("reproduce-grid.toml"), &grid_toml(&scale), &[])?;
    run_strategies(ctx, &strategies, &grid_dir, &mut *say)?;
    let grid_runs = Table::read(&grid_dir.join(STRATEGIES_CSV))?;

    let threshold = Threshold::for_devices(std::slice::from_ref(&info.name));
    let evidence = Evidence {
        sweeps,
        strategies: &grid_runs,
        threshold: threshold.relative,
    };
    let reproduction = Reproduction {
        device: info.name.clone(),
        driver: format!("{} {}", info.driver_name, info.driver_info),
        vulkan: info.api_version.clone(),
        commit: env!("VKERODE_GIT_COMMIT").into(),
        budget_s: options.budget_s,
        elapsed_s: started.elapsed().as_secs_f64(),
        calibration,
        scale,
        threshold_percent: threshold.relative * 100.0,
        threshold_source: threshold.describe(),
        claims: CLAIMS.iter().map(|c| evidence.judge(c)).collect(),
    };
    let mut written = files_under(dir);
    let write = |name: &str, text: &str| -> Result<PathBuf, ExperimentError> {
        let path = dir.join(name);
        write_atomically(&path, |out| std::io::Write::write_all(out, text.as_bytes()))?;
        Ok(path)
    };
    let json = serde_json::to_string_pretty(&reproduction).expect("reproduce.json serializes");
    written.push(write(JSON_FILE, &json)?);
    let reference_dir = options.reference_dir.as_path();
    let reference = options.reference.as_ref().map(|r| (reference_dir, r));
    written.push(write(
        SUMMARY_MD,
        &summary::markdown(&reproduction, reference, reference_dir),
    )?);
    written.push(write(
        REPORT_HTML,
        &summary::html(&reproduction, reference, reference_dir, &folders)?,
    )?);
    Ok((reproduction, written))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fit_is_a_line_through_the_points_and_never_falls() {
        let line = fitted(&[(100.0, 2.0), (200.0, 3.0), (400.0, 5.0)]);
        assert!((line.fixed_s - 1.0).abs() < 1e-9 && (line.per_cell_s - 0.01).abs() < 1e-12);
        // Noise: the larger map ran faster. All of its time counts per cell.
        let falling = fitted(&[(100.0, 2.0), (400.0, 1.0)]);
        assert_eq!(
            falling,
            Calibration {
                fixed_s: 0.0,
                per_cell_s: 1.0 / 400.0
            }
        );
    }
}
