//! `vkerode reproduce`: the paper's claims on this device, in one command. A bounded
//! suite, sized to a time budget, measures each claim the paper makes (workgroup size,
//! batched spawning, staggered dispatch, fixed-point atomics against float and racy
//! adds, the grid-centric strategy); each gets a verdict with its effect and interval,
//! and, where the claim is about speed, the stability of the setting it favours and
//! whether that setting erodes as its base does. The results are set beside a committed
//! reference bundle (the H200's, made by this same command).
//!
//! Its parts: the claims, their sweeps and the scale (`suite.rs`), the verdicts
//! (`judge.rs`) and the summary as markdown and HTML (`summary.rs`).

mod judge;
mod suite;
mod summary;

pub use judge::{ClaimResult, ClaimVerdict, Effect, ErosionCheck};
pub use suite::{Claim, Measurement, Scale, SweepPlan, CLAIMS, GRID_WATER_PER_CELL, SIZES};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::results::{Existing, Table};
use super::strategies::{run_strategies, Strategies, STRATEGIES_CSV};
use super::sweep::config::Experiment;
use super::sweep::{run_sweep, OnPointError, SweepOptions, Verbosity};
use super::ExperimentError;
use crate::experiment::report::Threshold;
use crate::gpu::{Context, DeviceInfo};
use crate::terrain::files::write_atomically;
use judge::{Evidence, SweepFiles};
use suite::{grid_toml, largest_fitting, SWEEPS};

/// The default budget on a GPU, in seconds.
pub const GPU_BUDGET_S: f64 = 600.0;
/// The default budget on a CPU device (lavapipe), which runs a thousand times slower.
pub const CPU_BUDGET_S: f64 = 120.0;
/// The committed reference bundle: the H200's, from this command.
pub const REFERENCE_DIR: &str = "results/reproduce/nvidia-h200";
/// The verdicts and everything they rest on.
pub const JSON_FILE: &str = "reproduce.json";
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

/// What one run's cost per point came to in the calibration: seconds of wall time,
/// `fixed_s` plus `per_cell_s` for each cell of the map.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Calibration {
    pub fixed_s: f64,
    pub per_cell_s: f64,
}

/// reproduce.json: the device, the scale, the threshold and every claim's outcome.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Reproduction {
    pub device: String,
    pub driver: String,
    pub vulkan: String,
    pub commit: String,
    /// Seconds the suite was given.
    pub budget_s: f64,
    /// Seconds it took, calibration included.
    pub elapsed_s: f64,
    pub calibration: Calibration,
    pub scale: Scale,
    /// The noise threshold of the speed verdicts, in percent, and where it came from.
    pub threshold_percent: f64,
    pub threshold_source: String,
    pub claims: Vec<ClaimResult>,
}

impl Reproduction {
    /// The reference bundle's reproduce.json in `dir`, if there is one.
    pub fn read_reference(dir: &Path) -> Result<Option<Self>, ExperimentError> {
        let path = dir.join(JSON_FILE);
        if !path.exists() {
            return Ok(None);
        }
        let io = |source| ExperimentError::Io {
            path: path.clone(),
            source,
        };
        let text = std::fs::read_to_string(&path).map_err(io)?;
        serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| io(std::io::Error::other(e)))
    }
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
    let file = PathBuf::from(format!("reproduce-{}.toml", plan.name));
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
const CALIBRATION_SHARE: f64 = 0.1;

/// Times one point of the paper's kernel at growing sizes, from the smallest, while the
/// next would stay within [`CALIBRATION_SHARE`] of `budget_s`, and fits a cost per run
/// of a fixed part and a part per cell to the last two: the suite's sizes lie no more
/// than a few factors of four beyond them.
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
        if let [.., (c0, w0), (c1, w1)] = walls[..] {
            let per_cell_s = ((w1 - w0) / (c1 - c0)).max(0.0);
            fit = Calibration {
                fixed_s: (w0 - per_cell_s * c0).max(0.0),
                per_cell_s,
            };
        }
    }
    Ok(fit)
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
    for plan in SWEEPS {
        say(format!("sweep {}: {}", plan.name, plan.description));
        let folder = sweep(ctx, plan, &scale, &root, options.verbosity)?;
        sweeps.insert(plan.name, SweepFiles::read(&folder)?);
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
        &summary::html(&reproduction, reference, reference_dir, dir)?,
    )?);
    Ok((reproduction, written))
}
