//! `vkerode reproduce`: the paper's claims on this device, in one command, within a
//! time budget. A calibration times one droplet point and one grid seed at growing
//! sizes; the suite then takes the largest scale of the ladder (1024², 2048², 4096²)
//! whose three seeds fit, the reference's where one does, and runs each step's base
//! seeds, then their third, checking the budget before every unit and cutting what is
//! left where it would overrun (`budget.rs`). Claims over seeds whose interval stays
//! unclear, or whose verdict is fragile, get more seeds while time is left. Each claim
//! gets a verdict (or, for what the paper does not claim, its effect as context) with
//! its effect, unit and direction, interval, seeds and fragility, set beside the
//! reference bundle at its own scale.
//!
//! Its parts: the claims, their steps and scales (`suite.rs`), the budget
//! (`budget.rs`), the files read (`evidence.rs`), the verdicts (`judge.rs`), the outcome
//! and the reference (`outcome.rs`) and the summary as markdown and HTML
//! (`summary.rs`).

mod budget;
mod error;
mod evidence;
mod judge;
mod outcome;
mod suite;
mod summary;

pub use budget::{
    budget_reference, check_budget, reserve_s, Calibration, Line, ScaleChoice, BUDGET_FLOOR_S,
    CALIBRATION_SHARE, FINISH_LEAST_S, FINISH_SHARE,
};
pub use error::ReproduceError;
pub use judge::{FRAGILITY_DRAWS, FRAGILITY_MIN_SEEDS};
pub use outcome::{
    Beside, ClaimResult, ClaimVerdict, Effect, ErosionCheck, ReferenceBundle, Reproduction,
    UnitRun, FRAGILE_SHARE, JSON_FILE,
};
pub use suite::{
    claim, sizes, Better, Claim, ClaimKind, Reps, Scale, Step, SweepPlan, BELOW_LADDER, CLAIMS,
    COUNT_MARGIN, GRID_METHOD, GRID_WATER_PER_CELL, LADDER, SEED_BATCH, SEED_CAP, STEPS,
};

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use super::strategy_comparison::{run_strategies, Strategies, STRATEGIES_CSV};
use crate::experiment::report::Threshold;
use crate::experiment::results::{Existing, ResultsError, POINTS_CSV};
use crate::experiment::sweep::config::Experiment;
use crate::experiment::sweep::{run_sweep, OnPointError, SweepError, SweepOptions, Verbosity};
use crate::gpu::{Context, DeviceInfo};
use crate::readable_number;
use crate::terrain::files::write_atomically;
use crate::PathIoError;
use budget::{choose_scale, Costs, Plan, Unit};
use evidence::{folders_holding, StepFiles};
use judge::Evidence;
use suite::grid_toml;

/// The default budget on a GPU, in seconds.
pub const GPU_BUDGET_S: f64 = 600.0;
/// The default budget on a CPU device (lavapipe), which runs a thousand times slower.
pub const CPU_BUDGET_S: f64 = 120.0;
/// The committed reference bundle: the H200's, one folder per scale, from this command.
pub const REFERENCE_DIR: &str = "results/reproduce/nvidia-h200";
pub const SUMMARY_MD: &str = "summary.md";
pub const REPORT_HTML: &str = "report.html";
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
    /// The claims to run (every one by default); their steps alone run.
    pub claims: Vec<&'static Claim>,
    /// A map side the user chose (one of [`sizes`]), which the budget does not change.
    pub size: Option<u32>,
    /// The reference bundle's folder (none with --no-reference), and the bundle where
    /// it has one ([`ReferenceBundle::read`]); a missing one is stated in the summary.
    pub reference_dir: Option<PathBuf>,
    pub reference: Option<ReferenceBundle>,
    /// The sweeps' progress bars and notes.
    pub verbosity: Verbosity,
}

/// What the suite's units write under the output folder.
struct Layout<'a> {
    dir: &'a Path,
    verbosity: Verbosity,
}

impl Layout<'_> {
    fn sweeps(&self) -> PathBuf {
        self.dir.join("sweeps")
    }

    fn grid(&self) -> PathBuf {
        self.dir.join("grid")
    }

    fn calibration(&self) -> PathBuf {
        self.dir.join(".calibration")
    }

    /// Runs `unit` with `reps` into its folder under `root` (a sweep's
    /// `<root>/reproduce-<name>/<unit>/<device>`, the grid's `<root>/<unit>`).
    fn run(
        &self,
        ctx: &Arc<Context>,
        unit: &Unit,
        reps: &Reps,
        root: &Path,
        say: &mut dyn FnMut(String),
    ) -> Result<PathBuf, ReproduceError> {
        match unit.step {
            Step::Sweep(plan) => {
                let text = plan.config_toml(&unit.scale, &unit.seeds, reps, unit.extra);
                let file = PathBuf::from(format!("{}.toml", plan.experiment()));
                let experiment = Experiment::parse(&file, &text, Some(ctx.info()))?;
                let options = SweepOptions {
                    out: root
                        .join("{experiment}")
                        .join(unit.folder())
                        .join("{device}"),
                    existing: Existing::Refuse,
                    shard: None,
                    verbosity: self.verbosity,
                    lock_sm_mhz: None,
                    on_point_error: OnPointError::Stop,
                    replicate: false,
                };
                let summary = run_sweep(std::slice::from_ref(ctx), &experiment, &options)?;
                let failed = summary
                    .failed
                    .first()
                    .map(|f| format!("point {} failed: {}", f.point, f.error));
                match summary.stopped.or(failed) {
                    Some(why) => Err(SweepError::Stopped {
                        name: plan.name.to_string(),
                        why,
                    }
                    .into()),
                    None => Ok(summary.dir),
                }
            }
            Step::Grid => {
                let folder = root.join(unit.folder());
                std::fs::create_dir_all(&folder).map_err(PathIoError::at(&folder))?;
                let text = grid_toml(&unit.scale, &unit.seeds, reps);
                let strategies = Strategies::parse(Path::new("reproduce-grid.toml"), &text, &[])?;
                // Each run's line stays with its time moving: a grid seed runs for
                // seconds on lavapipe, and its sweep neighbours have bars of their own.
                let line = crate::progress::elapsed_line(self.verbosity == Verbosity::Quiet);
                let ran = run_strategies(ctx, &strategies, &folder, |text| {
                    line.reset_elapsed();
                    line.set_message(text.clone());
                    line.suspend(|| say(text));
                });
                line.finish_and_clear();
                ran?;
                Ok(folder)
            }
        }
    }

    /// Every step's files so far.
    fn evidence(&self, threshold: f64) -> Result<Evidence, ReproduceError> {
        let mut steps = BTreeMap::new();
        for step in STEPS {
            let files = match step {
                Step::Sweep(plan) => {
                    let folders =
                        folders_holding(&self.sweeps().join(plan.experiment()), POINTS_CSV);
                    (!folders.is_empty())
                        .then(|| StepFiles::sweep(&folders))
                        .transpose()?
                }
                Step::Grid => {
                    let folders = folders_holding(&self.grid(), STRATEGIES_CSV);
                    (!folders.is_empty())
                        .then(|| StepFiles::grid(&folders))
                        .transpose()?
                }
            };
            if let Some(files) = files {
                steps.insert(step.name(), files);
            }
        }
        Ok(Evidence { steps, threshold })
    }
}

/// What the calibration leaves: its lines, and the grid seeds it ran (side, folder),
/// which the suite reuses where it runs the grid at that side.
struct Calibrated {
    calibration: Calibration,
    grid_folders: Vec<(u32, PathBuf)>,
}

/// Times two droplet points of one job (the paper's kernel at workgroups 64 and 128,
/// seed 1: the CPU reference of a job is computed once for the points that share it, as
/// in the suite's sweeps) and one grid seed, at 64² and then at each next side while
/// [`budget::climb_to`] finds it worth measuring.
fn calibrate(
    ctx: &Arc<Context>,
    steps: &[Step],
    options: &ReproduceOptions,
    reps: Reps,
    layout: &Layout,
    say: &mut dyn FnMut(String),
) -> Result<Calibrated, ReproduceError> {
    let started = Instant::now();
    let mut runs: Vec<(String, u32, f64)> = Vec::new();
    let mut grid_folders = Vec::new();
    let mut stopped = String::new();
    for size in sizes() {
        if !runs.is_empty() {
            let so_far = Costs::new(Calibration::of_runs(runs.clone(), reps, String::new()));
            let spent_s = started.elapsed().as_secs_f64();
            if let budget::Climb::Stop(why) = budget::climb_to(
                &so_far,
                steps,
                size,
                spent_s,
                options.budget_s,
                options.size,
            ) {
                stopped = why;
                break;
            }
        }
        let scale = Scale::at(size);
        for step in budget::calibration_steps(steps) {
            let unit = Unit {
                step,
                seeds: vec![1],
                scale,
                extra: false,
            };
            let root = layout.calibration().join(size.to_string());
            let at = Instant::now();
            let folder = layout.run(ctx, &unit, &reps, &root, say)?;
            let wall = at.elapsed().as_secs_f64();
            // A droplet point's time: the mean of the two.
            let (kind, per_run) = match step {
                Step::Sweep(plan) => (
                    budget::DROPLET_POINT,
                    wall / plan.points_per_seed(false) as f64,
                ),
                Step::Grid => (budget::GRID_SEED, wall),
            };
            runs.push((kind.to_string(), size, per_run));
            if step == Step::Grid {
                grid_folders.push((size, folder));
            }
        }
    }
    Ok(Calibrated {
        calibration: Calibration::of_runs(runs, reps, stopped),
        grid_folders,
    })
}

/// "0.94 s + 0.48 µs a cell".
fn line_text(line: &Line) -> String {
    format!(
        "{} s + {} µs a cell",
        readable_number(line.fixed_s),
        readable_number(line.per_cell_s * 1e6)
    )
}

/// What the calibration measured, in one line: each kind's line, the sides, and why it
/// stopped where it did.
fn calibration_text(calibration: &Calibration, steps: &[Step]) -> String {
    let kinds: Vec<String> = budget::calibration_steps(steps)
        .into_iter()
        .map(|step| match step {
            Step::Sweep(_) => format!("a droplet point {}", line_text(&calibration.droplet_point)),
            Step::Grid => format!("a grid seed {}", line_text(&calibration.grid_seed)),
        })
        .collect();
    format!(
        "{}, measured at {}; no larger side: {}",
        kinds.join(", "),
        calibration.sides_text(),
        calibration.stopped
    )
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

/// What the budget cut, as sentences, each once: the repetitions cut for the units
/// that ran with fewer, the steps run smaller than `scale`, the units never run, and
/// the claims left short of seeds (`short`).
fn cuts_made(left: &Plan, ran: &[UnitRun], scale: Scale, short: &[&str]) -> Vec<String> {
    let ran_steps: BTreeSet<&str> = ran.iter().map(|u| u.step.as_str()).collect();
    let mut cuts: Vec<String> = Vec::new();
    let mut add = |cut: String| {
        if !cuts.contains(&cut) {
            cuts.push(cut);
        }
    };
    for unit in ran.iter().filter(|u| u.reps != left.reps) {
        add(format!(
            "fewer repetitions ({} s and {} at most a point) for {}",
            crate::readable_number(unit.reps.point_budget_s),
            unit.reps.max_reps,
            unit.step
        ));
    }
    for unit in ran.iter().filter(|u| u.size != scale.size) {
        add(format!(
            "{} at {}² instead of {}²",
            unit.step, unit.size, scale.size
        ));
    }
    for unit in &left.queue {
        add(match ran_steps.contains(unit.step.name()) {
            true => format!("seeds {:?} of {}", unit.seeds, unit.step.name()),
            false => format!("{}: not run, the budget ran out", unit.step.name()),
        });
    }
    for claim in short {
        add(format!("more seeds for {claim}, still undecided"));
    }
    cuts
}

/// The next seeds of a claim that adds them, where its verdict is not yet decided (its
/// interval unclear, or fragile) and it has fewer than [`SEED_CAP`].
fn more_seeds_for(claim: &Claim, evidence: &Evidence, scale: Scale) -> Option<Vec<u32>> {
    if !claim.adds_seeds {
        return None;
    }
    let result = evidence.result(claim, scale);
    let decided = result
        .interval_verdict
        .is_some_and(|s| s != crate::stats::Verdict::Unclear);
    let last = *result.seeds.last()?;
    if (decided && !result.fragile) || last >= SEED_CAP {
        return None;
    }
    Some((last + 1..=(last + SEED_BATCH).min(SEED_CAP)).collect())
}

/// Runs the suite on `ctx` within `options.budget_s` and writes into `dir` (a staging
/// folder): each sweep's results under `sweeps/`, the grid's under `grid/`, and
/// reproduce.json, summary.md and report.html. Returns the outcome and the files.
pub fn run_reproduce(
    ctx: &Arc<Context>,
    options: &ReproduceOptions,
    dir: &Path,
    say: &mut dyn FnMut(String),
) -> Result<(Reproduction, Vec<PathBuf>), ReproduceError> {
    let started = Instant::now();
    let elapsed = || started.elapsed().as_secs_f64();
    let info = ctx.info();
    let layout = Layout {
        dir,
        verbosity: options.verbosity,
    };
    let steps: Vec<Step> = STEPS
        .into_iter()
        .filter(|s| options.claims.iter().any(|c| c.step == *s))
        .collect();
    check_budget(options.budget_s)?;
    let reserve = reserve_s(options.budget_s);
    let full_reps = Reps::for_budget(options.budget_s);
    say(format!(
        "calibrating: two droplet points and one grid seed at 64², then at each larger side while it may buy a larger suite, within {}% of the budget",
        readable_number(CALIBRATION_SHARE * 100.0)
    ));
    let calibrated = calibrate(ctx, &steps, options, full_reps, &layout, say)?;
    say(format!(
        "calibration ({:.0} s): {}",
        elapsed(),
        calibration_text(&calibrated.calibration, &steps)
    ));
    let mut costs = Costs::new(calibrated.calibration.clone());
    let left = options.budget_s - elapsed() - reserve;
    let reference_sizes = options.reference.as_ref().map_or(Vec::new(), |r| r.sizes());
    let (scale, scale_choice) = match options.size {
        Some(size) => {
            let predicted = Plan::new(&steps, Scale::at(size), full_reps, true).predicted(&costs);
            let choice = ScaleChoice {
                left_s: left,
                predicted: vec![(size, predicted)],
                why: format!(
                    "--size chose it; the suite predicts {predicted:.0} s there, of the {:.0} s left",
                    left.max(0.0)
                ),
            };
            (Scale::at(size), choice)
        }
        None => choose_scale(&costs, &steps, full_reps, left, &reference_sizes),
    };
    say(format!(
        "budget {} s buys {}² ({} droplets a run): {}",
        readable_number(options.budget_s),
        scale.size,
        scale.droplets,
        scale_choice.why
    ));
    let mut plan = Plan::new(&steps, scale, full_reps, options.size.is_some());
    let mut begun: BTreeSet<&str> = BTreeSet::new();
    let mut scales: BTreeMap<&str, Scale> = steps.iter().map(|s| (s.name(), scale)).collect();
    // The calibration's grid seed at this side is the grid's first seed: the grid has
    // begun, at this side.
    if let Some((_, folder)) = calibrated
        .grid_folders
        .iter()
        .find(|(s, _)| *s == scale.size)
    {
        let first = Unit {
            step: Step::Grid,
            seeds: vec![1],
            scale,
            extra: false,
        };
        let reused = layout.grid().join(first.folder());
        std::fs::create_dir_all(layout.grid())
            .and_then(|()| std::fs::rename(folder, &reused))
            .map_err(PathIoError::at(&reused))?;
        plan.take(&first);
        begun.insert(Step::Grid.name());
    }
    let _ = std::fs::remove_dir_all(layout.calibration());
    let predicted_s = elapsed() + plan.trimmed(&costs, left, &begun).predicted(&costs);

    let run = |unit: &Unit, reps: &Reps, costs: &mut Costs, say: &mut dyn FnMut(String)| {
        let predicted_s = costs.predict(unit, reps);
        say(format!(
            "[{:.0} s of the {:.0} s budget, this unit about {predicted_s:.0} s] {} at {}², seeds {:?}: {}",
            elapsed(),
            options.budget_s,
            unit.step.name(),
            unit.scale.size,
            unit.seeds,
            unit.step.description()
        ));
        let at = Instant::now();
        let root = match unit.step {
            Step::Sweep(_) => layout.sweeps(),
            Step::Grid => layout.grid(),
        };
        layout.run(ctx, unit, reps, &root, say)?;
        let taken_s = at.elapsed().as_secs_f64();
        costs.observe(unit, reps, taken_s);
        Ok::<UnitRun, ReproduceError>(UnitRun {
            step: unit.step.name().into(),
            seeds: unit.seeds.clone(),
            size: unit.scale.size,
            reps: *reps,
            predicted_s,
            taken_s,
        })
    };
    let mut said: BTreeSet<String> = BTreeSet::new();
    let mut ran: Vec<UnitRun> = Vec::new();
    loop {
        let trimmed = plan.trimmed(&costs, options.budget_s - elapsed() - reserve, &begun);
        for cut in &trimmed.cuts {
            if said.insert(cut.clone()) {
                say(format!("to keep the budget, for now: {cut}"));
            }
        }
        let Some(unit) = trimmed.queue.front().cloned() else {
            break;
        };
        plan.take(&unit);
        begun.insert(unit.step.name());
        scales.insert(unit.step.name(), unit.scale);
        ran.push(run(&unit, &trimmed.reps, &mut costs, say)?);
    }
    let threshold = Threshold::for_devices(std::slice::from_ref(&info.name));
    // More seeds, while time is left, for the claims over seeds not yet decided, with the
    // repetitions the last unit ran with.
    let reps = ran.last().map_or(plan.reps, |u| u.reps);
    let mut waiting: Vec<&Claim> = options
        .claims
        .iter()
        .copied()
        .filter(|c| c.adds_seeds && begun.contains(c.step.name()))
        .collect();
    let mut short: Vec<&str> = Vec::new();
    // Judged once a round, after a unit ran; the time a judgement takes is kept back
    // with the reserve, for the last one.
    let judge = || {
        let at = Instant::now();
        layout
            .evidence(threshold.relative)
            .map(|evidence| (evidence, at.elapsed().as_secs_f64()))
    };
    let (mut evidence, mut judging_s) = judge()?;
    while !waiting.is_empty() {
        let at = 0;
        let claim = waiting[at];
        let scale = scales[claim.step.name()];
        let Some(seeds) = more_seeds_for(claim, &evidence, scale) else {
            waiting.remove(at);
            continue;
        };
        let unit = Unit {
            step: claim.step,
            seeds,
            scale,
            extra: true,
        };
        if elapsed() + costs.predict(&unit, &reps) + judging_s > options.budget_s - reserve {
            short.push(claim.id);
            waiting.remove(at);
            continue;
        }
        ran.push(run(&unit, &reps, &mut costs, say)?);
        (evidence, judging_s) = judge()?;
        // The next claim's turn: seeds go round the claims that need them.
        waiting.rotate_left(1);
    }

    let claims = options
        .claims
        .iter()
        .map(|c| evidence.result(c, scales.get(c.step.name()).copied().unwrap_or(scale)))
        .collect();
    let reproduction = Reproduction {
        device: info.name.clone(),
        driver: format!("{} {}", info.driver_name, info.driver_info),
        vulkan: info.api_version.clone(),
        commit: env!("VKERODE_GIT_COMMIT").into(),
        budget_s: options.budget_s,
        predicted_s,
        elapsed_s: 0.0,
        calibration: calibrated.calibration,
        scale,
        scale_choice: Some(scale_choice),
        reps,
        cuts: cuts_made(&plan, &ran, scale, &short),
        units: ran,
        threshold_percent: threshold.relative * 100.0,
        threshold_source: threshold.describe(),
        claims,
    };
    // Judged before the time is read: it counts all but the page and the writes.
    let mut reproduction = reproduction;
    reproduction.elapsed_s = elapsed();
    let mut written = files_under(dir);
    written.extend(write_outcome(
        &layout,
        &reproduction,
        &evidence,
        options.reference.as_ref(),
        options.reference_dir.as_deref(),
    )?);
    Ok((reproduction, written))
}

/// The grid folder whose pictures the page shows: its first seed's.
fn first_grid_folder(layout: &Layout) -> Option<PathBuf> {
    let first_seed = |folder: &PathBuf| -> u32 {
        let name = folder
            .file_name()
            .map_or(String::new(), |n| n.to_string_lossy().into_owned());
        let digits: String = name
            .chars()
            .skip_while(|c| !c.is_ascii_digit())
            .take_while(char::is_ascii_digit)
            .collect();
        digits.parse().unwrap_or(u32::MAX)
    };
    folders_holding(&layout.grid(), STRATEGIES_CSV)
        .into_iter()
        .min_by_key(first_seed)
}

/// Writes reproduce.json, summary.md and report.html of `outcome` into the layout's
/// folder; returns their paths.
fn write_outcome(
    layout: &Layout,
    outcome: &Reproduction,
    evidence: &Evidence,
    reference: Option<&ReferenceBundle>,
    reference_dir: Option<&Path>,
) -> Result<Vec<PathBuf>, ReproduceError> {
    let write = |name: &str, text: &str| -> Result<PathBuf, ReproduceError> {
        let path = layout.dir.join(name);
        write_atomically(&path, |out| std::io::Write::write_all(out, text.as_bytes()))?;
        Ok(path)
    };
    let json = serde_json::to_string_pretty(outcome).expect("reproduce.json serializes");
    let pictures = first_grid_folder(layout).map(|f| f.join("noise"));
    let page = summary::html(
        outcome,
        reference,
        reference_dir,
        evidence,
        pictures.as_deref(),
    )?;
    Ok(vec![
        write(JSON_FILE, &json)?,
        write(
            SUMMARY_MD,
            &summary::markdown(outcome, reference, reference_dir),
        )?,
        write(REPORT_HTML, &page)?,
    ])
}

/// Judges again, by this build's rules, the claims of the suite whose folders `dir`
/// holds (a reproduce output or a reference bundle's scale), and rewrites its
/// reproduce.json, summary.md and report.html; what was run (device, budget, time,
/// calibration, cuts, units) stays as recorded. No device is opened.
pub fn rejudge(
    dir: &Path,
    reference: Option<&ReferenceBundle>,
    reference_dir: Option<&Path>,
) -> Result<(Reproduction, Vec<PathBuf>), ReproduceError> {
    let path = dir.join(JSON_FILE);
    let bad = |reason: String| {
        ReproduceError::from(ResultsError::Mismatch {
            path: path.clone(),
            reason,
        })
    };
    let text = crate::read_input_text(&path).map_err(PathIoError::at(&path))?;
    let mut recorded: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
    // The claims are judged anew: only each one's id and scale are read back.
    let claims: Vec<(String, Scale)> = recorded["claims"]
        .as_array()
        .ok_or_else(|| bad("no claims".into()))?
        .iter()
        .map(|c| {
            let id = c["id"].as_str().unwrap_or_default().to_string();
            let scale =
                serde_json::from_value(c["scale"].clone()).map_err(|e| bad(e.to_string()))?;
            Ok((id, scale))
        })
        .collect::<Result<_, ReproduceError>>()?;
    recorded["claims"] = serde_json::Value::Array(Vec::new());
    let mut outcome: Reproduction =
        serde_json::from_value(recorded).map_err(|e| bad(e.to_string()))?;
    let layout = Layout {
        dir,
        verbosity: Verbosity::Quiet,
    };
    let evidence = layout.evidence(outcome.threshold_percent / 100.0)?;
    outcome.claims = claims
        .iter()
        .map(|(id, scale)| {
            let claim =
                suite::claim(id).ok_or_else(|| bad(format!("no claim {id:?} in this build")))?;
            Ok(evidence.result(claim, *scale))
        })
        .collect::<Result<_, ReproduceError>>()?;
    let written = write_outcome(&layout, &outcome, &evidence, reference, reference_dir)?;
    Ok((outcome, written))
}

#[cfg(test)]
mod tests {
    use super::evidence::planted::{files, Row};
    use super::*;

    fn collisions(ratios: &[f64]) -> Evidence {
        let rows: Vec<Row> = ratios
            .iter()
            .enumerate()
            .flat_map(|(i, &ratio)| {
                [("off", 10.0), ("on", 10.0 * ratio)].map(|(stagger, conflicts)| Row {
                    settings: vec![
                        ("stagger", stagger.into()),
                        ("subgroup_conflicts_per_1000", conflicts.to_string()),
                    ],
                    seed: i as u32 + 1,
                    times_ms: vec![1.0; 10],
                })
            })
            .collect();
        Evidence {
            steps: BTreeMap::from([("stagger", files(&rows))]),
            threshold: 0.036,
        }
    }

    #[test]
    fn seeds_are_added_while_a_claim_is_unclear_and_up_to_the_cap() {
        let stagger = claim("stagger-collisions").unwrap();
        let scale = Scale::at(1024);
        let unclear = collisions(&[0.35, 1.05, 0.7]);
        assert_eq!(
            more_seeds_for(stagger, &unclear, scale),
            Some(vec![4, 5, 6])
        );
        let decided: Vec<f64> = (0..6).map(|i| 0.6 + f64::from(i % 2) * 0.05).collect();
        assert_eq!(more_seeds_for(stagger, &collisions(&decided), scale), None);
        let capped: Vec<f64> = (0..SEED_CAP)
            .map(|i| [0.35, 1.05][i as usize % 2])
            .collect();
        assert_eq!(more_seeds_for(stagger, &collisions(&capped), scale), None);
        // Only the claims that add seeds do.
        let speed = claim("stagger-speed").unwrap();
        assert_eq!(more_seeds_for(speed, &unclear, scale), None);
    }

    #[test]
    fn a_budget_below_the_floor_is_refused_and_names_it() {
        assert!(check_budget(BUDGET_FLOOR_S).is_ok());
        assert!(check_budget(GPU_BUDGET_S).is_ok() && check_budget(CPU_BUDGET_S).is_ok());
        let refused = check_budget(BUDGET_FLOOR_S - 0.5).unwrap_err().to_string();
        let floor = format!("floor of {} s", readable_number(BUDGET_FLOOR_S));
        assert!(refused.contains(&floor), "{refused}");
    }

    #[test]
    fn every_cut_is_said_once() {
        let scale = Scale::at(1024);
        let reps = Reps::for_budget(600.0);
        let mut left = Plan::new(&STEPS, scale, reps, false);
        left.queue.retain(|u| u.step == Step::Grid);
        let ran = [UnitRun {
            step: "workgroup".into(),
            seeds: vec![1],
            size: 512,
            reps: reps.fewer(),
            predicted_s: 1.0,
            taken_s: 1.0,
        }];
        let cuts = cuts_made(&left, &ran, scale, &["grid"]);
        assert_eq!(
            cuts,
            [
                "fewer repetitions (0.5 s and 25 at most a point) for workgroup",
                "workgroup at 512² instead of 1024²",
                "grid: not run, the budget ran out",
                "more seeds for grid, still undecided",
            ]
        );
    }
}
