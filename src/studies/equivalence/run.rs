//! The runs of an equivalence plan: per configuration, the paper's kernel (reference
//! a) and each speed variant on the GPU at every seed, one after another on the main
//! thread, while the other cores take each run's figures and run the sequential CPU
//! reference (reference b) of each job not already cached.

use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc, Condvar, Mutex};

use serde::Serialize;

use super::cache::{CachedRun, JobKey, CACHE_FOLDER};
use super::error::{EquivalenceError, ReferenceError, RunFailure};
use super::figures::{figure_names, figures_of, Figures, SmoothedMap};
use super::plan::{table_of, with, Plan, Variant, SEED_KEY};
use crate::erosion::{initial_cells, CpuEngine, RunSettings};
use crate::experiment::run::{prepare_terrain, InvariantError, TerrainSource};
use crate::experiment::Provenance;
use crate::gpu::Context;
use crate::progress::{Progress, Tell};
use crate::terrain::units::{GridUnits, HeightUnit};
use crate::terrain::Cells;

/// What a run is to the verdicts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// A speed variant under test.
    Variant,
    /// The paper's kernel in the same configuration: reference (a).
    Paper,
    /// The sequential CPU reference of the same job: reference (b).
    Sequential,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Variant => "variant",
            Role::Paper => "paper",
            Role::Sequential => "sequential",
        }
    }
}

/// One run with its figures.
#[derive(Clone, Debug)]
pub struct RunRecord {
    /// The configurations it belongs to (a sequential run may serve several).
    pub configurations: Vec<String>,
    /// The variant's label; `paper` for reference (a), `sequential` for (b).
    pub group: String,
    pub role: Role,
    pub seed: u32,
    /// The job key of its sequential reference (its own, for one).
    pub job: String,
    pub device: String,
    pub driver: String,
    pub commit: String,
    /// A sequential run read from a cache rather than run.
    pub cached: bool,
    pub kernel: String,
    pub dispatches: usize,
    pub gpu_ms: Option<f64>,
    pub wall_ms: f64,
    /// Its settings that differ from the defaults, `key=value` joined by spaces.
    pub settings: String,
    pub figures: Figures,
    pub map: SmoothedMap,
}

/// One configuration's terrain: the initial cells in the strategy's arithmetic and the
/// units its figures are taken in.
struct Terrain {
    initial: Cells,
    units: GridUnits,
    unit: HeightUnit,
}

enum Task {
    Reference {
        key: JobKey,
        job: serde_json::Value,
        seed: u32,
        settings: Box<RunSettings>,
        terrain: Arc<Terrain>,
    },
    Figures {
        index: usize,
        after: Cells,
        terrain: Arc<Terrain>,
    },
}

enum Done {
    Reference {
        key: JobKey,
        seed: u32,
        result: Box<Result<CachedRun, ReferenceError>>,
    },
    Figures {
        index: usize,
        result: Option<(Figures, SmoothedMap)>,
    },
}

/// The tasks for the CPU workers: references first (they are long), figures in order,
/// the GPU loop held back while too many runs' heights wait.
struct Queue {
    state: Mutex<QueueState>,
    changed: Condvar,
}

struct QueueState {
    tasks: VecDeque<Task>,
    closed: bool,
    figures_waiting: usize,
}

impl Queue {
    fn new() -> Self {
        Self {
            state: Mutex::new(QueueState {
                tasks: VecDeque::new(),
                closed: false,
                figures_waiting: 0,
            }),
            changed: Condvar::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, QueueState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn push(&self, task: Task, most_waiting: usize) {
        let mut state = self.lock();
        match task {
            Task::Reference { .. } => {
                // After the references already queued, before any figures.
                let at = state
                    .tasks
                    .iter()
                    .position(|t| matches!(t, Task::Figures { .. }))
                    .unwrap_or(state.tasks.len());
                state.tasks.insert(at, task);
            }
            Task::Figures { .. } => {
                while state.figures_waiting >= most_waiting && !state.closed {
                    state = self.changed.wait(state).unwrap_or_else(|e| e.into_inner());
                }
                state.figures_waiting += 1;
                state.tasks.push_back(task);
            }
        }
        self.changed.notify_all();
    }

    fn pop(&self) -> Option<Task> {
        let mut state = self.lock();
        loop {
            if let Some(task) = state.tasks.pop_front() {
                if let Task::Figures { .. } = task {
                    state.figures_waiting -= 1;
                }
                self.changed.notify_all();
                return Some(task);
            }
            if state.closed {
                return None;
            }
            state = self.changed.wait(state).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// No more tasks; with `drop_waiting`, those not started are dropped.
    fn close(&self, drop_waiting: bool) {
        let mut state = self.lock();
        state.closed = true;
        if drop_waiting {
            state.tasks.clear();
            state.figures_waiting = 0;
        }
        self.changed.notify_all();
    }
}

fn work(task: Task) -> Done {
    match task {
        Task::Figures {
            index,
            after,
            terrain,
        } => Done::Figures {
            index,
            result: figures_of(&terrain.initial, &after, &terrain.units, &terrain.unit),
        },
        Task::Reference {
            key,
            job,
            seed,
            settings,
            terrain,
        } => {
            let result = (|| {
                let run = settings
                    .strategy()
                    .run_on_cpu(CpuEngine::Sequential, &settings, &terrain.initial)
                    .map_err(ReferenceError::Erosion)?;
                let (figures, map) =
                    figures_of(&terrain.initial, &run.cells, &terrain.units, &terrain.unit)
                        .ok_or(ReferenceError::ShapeChanged)?;
                Ok(CachedRun::new(
                    &key,
                    job,
                    seed,
                    &terrain.initial,
                    &Provenance::cpu(run.threads),
                    run.wall_time.as_secs_f64() * 1e3,
                    &figures,
                    &map,
                ))
            })();
            Done::Reference {
                key,
                seed,
                result: Box::new(result),
            }
        }
    }
}

/// Settings that differ from the defaults, as `key=value` joined by spaces.
pub fn settings_line(settings: &RunSettings) -> String {
    let defaults = table_of(&RunSettings::DEFAULT);
    table_of(settings)
        .iter()
        .filter(|(k, v)| defaults.get(*k) != Some(*v))
        .map(|(k, v)| match v {
            toml::Value::String(s) => format!("{k}={s}"),
            other => format!("{k}={other}"),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn seeded(settings: &RunSettings, seed: u32) -> Result<RunSettings, EquivalenceError> {
    let mut table = toml::Table::new();
    table.insert(SEED_KEY.into(), i64::from(seed).into());
    Ok(with(settings, &table)?)
}

/// Every run of a plan, and the reference runs written into the cache.
pub struct Runs {
    pub records: Vec<RunRecord>,
    pub provenance: Provenance,
    /// Sequential runs run now, and read from a cache.
    pub references_run: usize,
    pub references_cached: usize,
    /// The cache files written under the output folder.
    pub written: Vec<PathBuf>,
}

/// Runs `plan` on `ctx`, reading cached sequential runs from `caches` (folders of cache
/// files) and writing every one it uses into `out`'s cache folder; `progress` hears of
/// each run as it ends and each group's line.
pub fn run_plan(
    ctx: &Arc<Context>,
    plan: &Plan,
    caches: &[PathBuf],
    out: &Path,
    progress: Tell,
) -> Result<Runs, EquivalenceError> {
    let device = ctx.info();
    let provenance = Provenance::collect(device);
    let names = figure_names();
    let paper = Variant::paper();
    let groups: Vec<(&Variant, Role)> = std::iter::once((&paper, Role::Paper))
        .chain(plan.variants.iter().map(|v| (v, Role::Variant)))
        .collect();
    // Every group's settings, checked on the device, before any run.
    for c in &plan.configurations {
        for (variant, _) in &groups {
            let settings = seeded(&variant.over(&c.settings)?, plan.options.first_seed)?;
            let fail = |reason: String| EquivalenceError::Refused {
                configuration: c.label.clone(),
                variant: variant.label.clone(),
                reason,
            };
            settings
                .check(Some(device))
                .map_err(|e| fail(format!("{}: {}", e.key, e.reason)))?;
            if let Some(missing) = settings.missing_feature(settings.noise_map(), device) {
                return Err(fail(missing));
            }
        }
    }
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .saturating_sub(1)
        .max(1);
    let queue = Queue::new();
    let (send, receive) = mpsc::channel::<Done>();
    let cache_out = out.join(CACHE_FOLDER);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            let send = send.clone();
            let queue = &queue;
            scope.spawn(move || {
                while let Some(task) = queue.pop() {
                    if send.send(work(task)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(send);
        let result = gpu_runs(
            ctx,
            plan,
            &groups,
            &queue,
            threads * 2,
            caches,
            &names,
            &provenance,
            progress,
        );
        queue.close(result.is_err());
        let (mut records, mut references) = result?;
        // Every worker's results, once the queue is empty.
        let mut failures = Vec::new();
        let cpu_tasks = records.len() + references.values().filter(|r| r.1.is_none()).count();
        progress(Progress::Stage(
            "the figures and sequential references on the CPU".into(),
        ));
        for (finished, done) in receive.iter().enumerate() {
            progress(Progress::Done {
                done: finished + 1,
                total: cpu_tasks,
            });
            match done {
                Done::Figures { index, result } => match result {
                    Some((figures, map)) => {
                        records[index].figures = figures;
                        records[index].map = map;
                    }
                    None => failures.push(RunFailure::ShapeChanged {
                        group: records[index].group.clone(),
                        seed: records[index].seed,
                    }),
                },
                Done::Reference { key, seed, result } => match *result {
                    Ok(run) => {
                        if let Some(slot) = references.get_mut(&(key, seed)) {
                            slot.1 = Some(run);
                        }
                    }
                    Err(error) => failures.push(RunFailure::Reference { seed, error }),
                },
            }
        }
        if !failures.is_empty() {
            return Err(EquivalenceError::Failed(failures));
        }
        let (mut run_now, mut cached, mut written) = (0, 0, Vec::new());
        for ((key, seed), (configurations, run, was_cached)) in references {
            let run = run.ok_or_else(|| EquivalenceError::ReferenceMissing {
                job: key.0.clone(),
                seed,
            })?;
            written.push(run.write(&cache_out)?);
            match was_cached {
                true => cached += 1,
                false => run_now += 1,
            }
            let provenance: Provenance = Provenance::cpu(1);
            let device = run
                .provenance
                .get("device")
                .and_then(|d| d.as_str())
                .map_or(provenance.device.clone(), str::to_string);
            records.push(RunRecord {
                configurations,
                group: "sequential".into(),
                role: Role::Sequential,
                seed,
                job: key.0.clone(),
                device,
                driver: String::new(),
                commit: run
                    .provenance
                    .get("git_commit")
                    .and_then(|d| d.as_str())
                    .unwrap_or_default()
                    .to_string(),
                cached: was_cached,
                kernel: String::new(),
                dispatches: 0,
                gpu_ms: None,
                wall_ms: run.wall_ms,
                settings: String::new(),
                figures: run.figures(),
                map: run.map.clone(),
            });
        }
        Ok(Runs {
            records,
            provenance: provenance.clone(),
            references_run: run_now,
            references_cached: cached,
            written,
        })
    })
}

/// Each sequential job and seed: the configurations it serves, its run (once done or
/// read), and whether it was read from a cache.
type References = BTreeMap<(JobKey, u32), (Vec<String>, Option<CachedRun>, bool)>;

#[allow(clippy::too_many_arguments)]
fn gpu_runs(
    ctx: &Arc<Context>,
    plan: &Plan,
    groups: &[(&Variant, Role)],
    queue: &Queue,
    most_waiting: usize,
    caches: &[PathBuf],
    names: &[String],
    provenance: &Provenance,
    progress: Tell,
) -> Result<(Vec<RunRecord>, References), EquivalenceError> {
    let mut records = Vec::new();
    let gpu_runs = plan.configurations.len() * groups.len() * plan.options.seeds as usize;
    progress(Progress::Stage("runs on the GPU".into()));
    let mut references = References::new();
    for c in &plan.configurations {
        let reference = Variant::paper().over(&c.settings)?;
        let prepared = prepare_terrain(&TerrainSource::Noise, &reference.terrain(), Some(ctx))?;
        let strategy = reference.strategy();
        let terrain = Arc::new(Terrain {
            initial: initial_cells(&prepared.heights, strategy.arithmetic(&reference))?,
            units: prepared.units,
            unit: prepared.height_unit(),
        });
        // The sequential reference's jobs: read from a cache, or queued to run now.
        let mut job_of_seed = BTreeMap::new();
        for seed in plan.options.seeds() {
            let settings = seeded(&reference, seed)?;
            let (key, job) = JobKey::of(&settings, &terrain.initial);
            job_of_seed.insert(seed, key.clone());
            if seed >= plan.options.first_seed + plan.options.reference_seeds {
                continue;
            }
            if let Some(entry) = references.get_mut(&(key.clone(), seed)) {
                entry.0.push(c.label.clone());
                continue;
            }
            let found = caches
                .iter()
                .find_map(|dir| CachedRun::find(dir, &key, seed, names));
            let was_cached = found.is_some();
            if !was_cached {
                queue.push(
                    Task::Reference {
                        key: key.clone(),
                        job,
                        seed,
                        settings: Box::new(settings),
                        terrain: terrain.clone(),
                    },
                    most_waiting,
                );
            }
            references.insert((key, seed), (vec![c.label.clone()], found, was_cached));
        }
        for (variant, role) in groups {
            let settings = variant.over(&c.settings)?;
            let started = std::time::Instant::now();
            let mut kernel = String::new();
            for seed in plan.options.seeds() {
                let settings = seeded(&settings, seed)?;
                let mut prepared = strategy.prepare(ctx, &settings, &terrain.initial)?;
                let run = prepared.run_timed(true)?;
                let after = run.cells.ok_or(InvariantError::NoHeightsBack)?;
                kernel = prepared.kernel();
                records.push(RunRecord {
                    configurations: vec![c.label.clone()],
                    group: variant.label.clone(),
                    role: *role,
                    seed,
                    job: job_of_seed[&seed].0.clone(),
                    device: provenance.device.clone(),
                    driver: provenance.driver_info.clone(),
                    commit: provenance.git_commit.to_string(),
                    cached: false,
                    kernel: prepared.kernel(),
                    dispatches: prepared.dispatches(),
                    gpu_ms: run.gpu_time.map(|t| t.as_secs_f64() * 1e3),
                    wall_ms: run.wall_time.as_secs_f64() * 1e3,
                    settings: settings_line(&settings),
                    figures: Figures::default(),
                    map: SmoothedMap {
                        width: 0,
                        height: 0,
                        block: 0,
                        values: Vec::new(),
                    },
                });
                drop(prepared);
                progress(Progress::Done {
                    done: records.len(),
                    total: gpu_runs,
                });
                queue.push(
                    Task::Figures {
                        index: records.len() - 1,
                        after,
                        terrain: terrain.clone(),
                    },
                    most_waiting,
                );
            }
            let role = match role {
                Role::Paper => " (reference a)",
                _ => "",
            };
            progress(Progress::Note(format!(
                "{}: {}{role}, {} seeds on the GPU in {:.1} s ({kernel})",
                c.label,
                variant.label,
                plan.options.seeds,
                started.elapsed().as_secs_f64()
            )));
        }
    }
    let waiting = references.values().filter(|r| r.1.is_none()).count();
    if waiting > 0 {
        progress(Progress::Note(format!(
            "waiting for the figures and {waiting} sequential reference run(s) on the CPU"
        )));
    }
    Ok((records, references))
}
