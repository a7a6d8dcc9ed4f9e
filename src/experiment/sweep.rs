//! Running a sweep: every point of an experiment, measured and recorded as it
//! completes.

use std::path::PathBuf;
use std::str::FromStr;
use std::sync::{Arc, Mutex};

use super::config::{Experiment, Point};
use super::gpu_state::GpuMonitor;
use super::measure::{measure, measure_runs};
use super::peak::Ceilings;
use super::pipes::BandwidthShare;
use super::provenance::device_slug;
use super::rows::GridFigures;
use std::collections::BTreeMap;

use super::results::{
    read_points, Meta, PointOutcome, PointRow, ResultsWriter, WorkerDevice, POINTS_CSV,
};
use super::rows::FailedRow;
use super::stability::{baseline, judge, ChangeSpread};
use super::workers::{WorkQueues, WorkerPool};
use super::ExperimentError;
use crate::erosion::pipes::PipesKernel;
use crate::erosion::{
    Algorithm, DropletJob, DropletKernel, FixedHeightfield, KernelParams, RunMode, WorkCount,
};
use crate::gpu::{Context, DeviceInfo};
use crate::terrain::metrics::Landform;
use crate::terrain::{generate_on_gpu, Heightmap, TerrainSpec};

/// Every n-th point, starting at the i-th: one of n parts of a sweep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl Shard {
    pub fn includes(&self, point: usize) -> bool {
        point % self.count == self.index
    }
}

impl FromStr for Shard {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        let parsed = text
            .split_once('/')
            .and_then(|(i, n)| Some((i.trim().parse().ok()?, n.trim().parse().ok()?)));
        match parsed {
            Some((index, count)) if count > 0 && index < count => Ok(Shard { index, count }),
            _ => Err(format!("{text:?} is not a shard \"i/n\" with 0 <= i < n")),
        }
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

pub struct SweepOptions {
    /// Results go to `<root>/<experiment>/<device-slug>[/shard-i-of-n]`.
    pub results_root: PathBuf,
    pub resume: bool,
    pub shard: Option<Shard>,
    pub quiet: bool,
    /// Lock the SM clock at this many MHz for the sweep (NVIDIA, through NVML).
    pub lock_sm_mhz: Option<u32>,
    pub on_point_error: OnPointError,
    /// Every point on every device (`--replicate`), not each on the next free one.
    pub replicate: bool,
}

/// What a sweep does when the GPU fails a point; a lost device stops it either way.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum OnPointError {
    /// Record the failure in failed.csv and go on with the next point.
    Skip,
    /// Record the failure and stop.
    Stop,
}

pub struct SweepSummary {
    pub dir: PathBuf,
    /// Points measured and recorded by this run.
    pub measured: usize,
    /// Points recorded by an earlier run (`--resume`).
    pub skipped: usize,
    /// Points the GPU failed in this run, as recorded in failed.csv.
    pub failed: Vec<FailedRow>,
    /// Why the sweep stopped before its last point, if it did.
    pub stopped: Option<String>,
}

/// The initial terrain of the last point, its landform and the baseline of the last
/// job on it, reused while points share them.
pub(super) struct TerrainCache {
    spec: Option<TerrainSpec>,
    heights: Option<Heightmap>,
    key: Option<(TerrainSpec, u32)>,
    fixed: Vec<i32>,
    landform: Landform,
    baseline: Option<((u32, u32, KernelParams), ChangeSpread)>,
}

impl TerrainCache {
    pub(super) fn new() -> Self {
        Self {
            spec: None,
            heights: None,
            key: None,
            fixed: Vec::new(),
            landform: Landform::default(),
            baseline: None,
        }
    }

    /// The terrain of `spec` in height units, and its landform.
    fn heights(
        &mut self,
        ctx: &Arc<Context>,
        spec: TerrainSpec,
    ) -> Result<&Heightmap, ExperimentError> {
        if self.spec != Some(spec) || self.heights.is_none() {
            let heights = generate_on_gpu(ctx, &spec)?;
            self.landform = Landform::of(&heights);
            self.heights = Some(heights);
            self.spec = Some(spec);
            self.key = None;
        }
        Ok(self.heights.as_ref().expect("generated above"))
    }

    /// The terrain of `spec` in the droplet kernel's fixed point, and its landform.
    fn get(
        &mut self,
        ctx: &Arc<Context>,
        spec: TerrainSpec,
        scale: f32,
    ) -> Result<&[i32], ExperimentError> {
        let key = (spec, scale.to_bits());
        if self.key != Some(key) {
            self.fixed = self.heights(ctx, spec)?.to_fixed(scale)?;
            let (w, h) = (spec.width as usize, spec.height as usize);
            self.landform = Landform::of(&Heightmap::from_fixed(w, h, &self.fixed, scale)?);
            self.baseline = None;
            self.key = Some(key);
        }
        Ok(&self.fixed)
    }

    /// The baseline of `job` on the terrain last returned by `get`.
    fn baseline(&mut self, spec: &TerrainSpec, job: &DropletJob) -> ChangeSpread {
        let key = (job.droplets, job.seed, job.params);
        match &self.baseline {
            Some((k, spread)) if *k == key => *spread,
            _ => {
                let (w, h) = (spec.width as usize, spec.height as usize);
                let spread = baseline(&self.fixed, w, h, job);
                self.baseline = Some((key, spread));
                spread
            }
        }
    }
}

pub fn results_dir(experiment: &Experiment, device_name: &str, options: &SweepOptions) -> PathBuf {
    let mut dir = options
        .results_root
        .join(&experiment.config.name)
        .join(device_slug(device_name));
    if let Some(shard) = options.shard {
        dir = dir.join(format!("shard-{}-of-{}", shard.index, shard.count));
    }
    dir
}

pub fn run_sweep(
    contexts: &[Arc<Context>],
    experiment: &Experiment,
    options: &SweepOptions,
) -> Result<SweepSummary, ExperimentError> {
    let Some(first) = contexts.first() else {
        return Err(ExperimentError::Clocks("a sweep needs a device".into()));
    };
    let infos: Vec<&DeviceInfo> = contexts.iter().map(|c| c.info()).collect();
    let dir = results_dir(experiment, &first.info().name, options);
    let mut monitors: Vec<Option<GpuMonitor>> =
        infos.iter().map(|i| GpuMonitor::for_device(i)).collect();
    if let Some(mhz) = options.lock_sm_mhz {
        for (monitor, info) in monitors.iter_mut().zip(&infos) {
            let Some(monitor) = monitor.as_mut() else {
                return Err(ExperimentError::Clocks(format!(
                    "--lock-sm-clock needs NVML, which does not know {}",
                    info.name
                )));
            };
            monitor
                .lock_sm_clock(mhz)
                .map_err(ExperimentError::Clocks)?;
        }
    }
    let mut meta = Meta::new(
        experiment,
        &infos,
        options.shard.map(|s| s.to_string()),
        first.validation_messages().is_some(),
        monitors[0].as_ref(),
    );
    meta.replicate = options.replicate;
    let writer = ResultsWriter::open(&dir, meta, options.resume)?;
    if let Some(torn) = &writer.torn_row {
        eprintln!(
            "note: dropped a torn last row of points.csv ({} bytes: {:?}); its point runs again",
            torn.len(),
            torn.chars().take(40).collect::<String>()
        );
    }
    if let Some(list) = WorkerDevice::differences(&writer.meta().devices) {
        eprintln!("note: the devices differ (model or driver); each row names its own: {list}");
    }
    let mine: Vec<&Point> = experiment
        .points
        .iter()
        .filter(|p| options.shard.is_none_or(|s| s.includes(p.index)))
        .collect();
    let work = WorkQueues::new(&mine, contexts.len(), options.replicate, &writer);
    let pool = WorkerPool::new(writer, &experiment.config.name, &work, contexts, options);
    std::thread::scope(|scope| {
        let workers: Vec<_> = contexts
            .iter()
            .zip(&monitors)
            .enumerate()
            .map(|(worker, (ctx, monitor))| {
                let pool = &pool;
                let point_context = PointContext {
                    ctx,
                    experiment,
                    monitor: monitor.as_ref(),
                    worker,
                };
                scope.spawn(move || pool.run_worker(&point_context, options.on_point_error))
            })
            .collect();
        workers
            .into_iter()
            .map(|w| {
                w.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect::<Result<Vec<()>, ExperimentError>>()
    })?;
    let mut summary = pool.finish(dir, mine.len() * work.copies())?;
    if options.replicate {
        summary.fill_device_spread()?;
    }
    Ok(summary.summary)
}

/// What every point of a sweep is measured with.
pub(super) struct PointContext<'a> {
    pub(super) ctx: &'a Arc<Context>,
    pub(super) experiment: &'a Experiment,
    pub(super) monitor: Option<&'a GpuMonitor>,
    /// Its position in `--devices`.
    pub(super) worker: usize,
}

impl PointContext<'_> {
    /// Measures one point (timed repetitions between two reads of the GPU's state, an
    /// instrumented run, two reruns) and records its samples and row.
    pub(super) fn measure(
        &self,
        point: &Point,
        terrain: &mut TerrainCache,
        ceilings: &mut Ceilings,
        writer: &Mutex<ResultsWriter>,
    ) -> Result<(), ExperimentError> {
        let (ctx, experiment) = (self.ctx, self.experiment);
        let s = &point.settings;
        if s.algorithm == Algorithm::Pipes {
            return self.measure_grid(point, terrain, ceilings, writer);
        }
        let spec = s.terrain();
        let job = s.job();
        terrain.get(ctx, spec, s.scale)?;
        let cells = terrain.fixed.as_slice();
        let map = FixedHeightfield::new(spec.width, spec.height, cells);
        let batch = s.droplets_per_dispatch(cells.len() as u64);
        let kernel = DropletKernel::for_params(ctx, s.workgroup, &job.params, s.kernel_variant())?;
        let mut runner = kernel.prepare(&map)?;
        let gpu_before = self.monitor.and_then(GpuMonitor::read);
        let measurement = measure(&mut runner, &job, batch, &experiment.config.measure)?;
        let gpu_after = self.monitor.and_then(GpuMonitor::read);
        let counted = runner.execute(&job, batch, RunMode::COUNTED)?;
        let first = runner.execute(&job, batch, RunMode::TIMED)?;
        let second = runner.execute(&job, batch, RunMode::TIMED)?;
        let (rerun_cells_differing, rerun_max_fixed) = differences(&first.cells, &second.cells);
        // The CPU's share last: the GPU work above runs without pauses.
        let base = terrain.baseline(&spec, &job);
        let cells = terrain.fixed.as_slice();
        let [counted_change, first_change, second_change] =
            [&counted, &first, &second].map(|run| ChangeSpread::between(cells, &run.cells));
        let outcome = PointOutcome {
            point,
            worker: self.worker,
            device: ctx.info(),
            kernel: s.kernel_variant().module_name(),
            measurement: &measurement,
            work: counted.work.unwrap_or_default(),
            dispatches: counted.dispatches,
            batch,
            compiler_statistics: kernel.statistics(),
            peak_walk_steps_per_s: ceilings.walk(s.size)?,
            total_height_change: counted_change.total / f64::from(s.scale),
            max_cell_change: counted_change.max / f64::from(s.scale),
            stability: Some(judge(&[counted_change, first_change, second_change], &base)),
            grid: None,
            landform: (
                terrain.landform,
                Landform::of(&Heightmap::from_fixed(
                    spec.width as usize,
                    spec.height as usize,
                    &counted.cells,
                    s.scale,
                )?),
            ),
            contention: counted.contention.unwrap_or_default(),
            rerun_cells_differing,
            rerun_max_difference: rerun_max_fixed as f64 / f64::from(s.scale),
            gpu_before,
            gpu_after,
        };
        record(writer, &outcome)
    }
}

impl PointContext<'_> {
    /// Measures one grid point: timed repetitions, then the counted run with its
    /// balance checks, whose state must equal the timed runs' (the grid has no atomics).
    fn measure_grid(
        &self,
        point: &Point,
        terrain: &mut TerrainCache,
        ceilings: &mut Ceilings,
        writer: &Mutex<ResultsWriter>,
    ) -> Result<(), ExperimentError> {
        let (ctx, s) = (self.ctx, &point.settings);
        let heights = terrain.heights(ctx, s.terrain())?;
        let (w, h) = (heights.width(), heights.height());
        let kernel = PipesKernel::new(ctx, s.pipes_variant(), &s.pipes_params())?;
        let mut runner = kernel.prepare(w, h, heights.data(), None)?;
        let steps = s.pipes_steps;
        let gpu_before = self.monitor.and_then(GpuMonitor::read);
        let measurement = measure_runs(&self.experiment.config.measure, || runner.run(steps))?;
        let gpu_after = self.monitor.and_then(GpuMonitor::read);
        let timed = runner.read_terrain()?;
        // The rerun to compare with: the counted run, or without one a timed run more
        // (reading the same state twice would compare nothing).
        let checks = match s.pipes_check_every {
            0 => {
                runner.run(steps)?;
                Vec::new()
            }
            every => runner.run_checked(steps, every)?,
        };
        let rerun = runner.read_terrain()?;
        let (rerun_cells_differing, rerun_max_difference) = float_differences(&timed, &rerun);
        let after = Heightmap::new(w, h, timed)?;
        let changes = heights
            .data()
            .iter()
            .zip(after.data())
            .map(|(b, a)| f64::from(a - b));
        let (total_change, max_change) =
            changes.fold((0.0, 0.0f64), |(sum, max), d| (sum + d, max.max(d.abs())));
        let work = WorkCount::new(0, (w * h) as u64 * u64::from(steps));
        let rate = work.steps as f64 / (measurement.gpu_ms.median / 1e3);
        let ceiling = ceilings.copy()?;
        let outcome = PointOutcome {
            point,
            worker: self.worker,
            device: ctx.info(),
            kernel: kernel.module_name(),
            measurement: &measurement,
            work,
            dispatches: kernel.variant().dispatches(steps),
            batch: 0,
            compiler_statistics: kernel.statistics(),
            peak_walk_steps_per_s: None,
            total_height_change: total_change,
            max_cell_change: max_change,
            stability: None,
            grid: Some(GridFigures {
                bandwidth: BandwidthShare::of(
                    &kernel.variant(),
                    kernel.params().advection,
                    rate,
                    ceiling,
                ),
                last_check: checks.last().copied(),
            }),
            landform: (terrain.landform, Landform::of(&after)),
            contention: Default::default(),
            rerun_cells_differing,
            rerun_max_difference,
            gpu_before,
            gpu_after,
        };
        record(writer, &outcome)
    }
}

/// Records a point's row and samples; the writer stays usable if a worker panicked.
fn record(writer: &Mutex<ResultsWriter>, outcome: &PointOutcome) -> Result<(), ExperimentError> {
    let mut writer = writer.lock().unwrap_or_else(|e| e.into_inner());
    Ok(writer.record(outcome)?)
}

/// Cells that differ between two float maps, and the largest difference.
fn float_differences(a: &[f32], b: &[f32]) -> (usize, f64) {
    a.iter().zip(b).fold((0, 0.0), |(n, max), (x, y)| {
        let d = f64::from((x - y).abs());
        (n + usize::from(x != y), max.max(d))
    })
}

/// `sweep --dry-run`: every point with its effective settings, the buffers it needs
/// against the device's limits, and an estimate of its time where earlier results of the
/// same config on this device exist. No GPU work.
pub fn dry_run(experiment: &Experiment, device: &DeviceInfo, options: &SweepOptions) -> String {
    let dir = results_dir(experiment, &device.name, options);
    let earlier: BTreeMap<usize, PointRow> = Meta::read(&dir)
        .ok()
        .filter(|meta| meta.config_hash == experiment.config_hash())
        .and_then(|_| read_points(&dir.join(POINTS_CSV)).ok())
        .map(|rows| rows.into_iter().map(|r| (r.point, r)).collect())
        .unwrap_or_default();
    let limit = device.max_storage_buffer_range;
    let mut out = format!(
        "{}: {} points on {} (maxStorageBufferRange {limit} bytes)\n",
        experiment.config.name,
        experiment.points.len(),
        device.name
    );
    let mut total_s = 0.0;
    for point in &experiment.points {
        let s = &point.settings;
        let cells = u64::from(s.size).pow(2);
        let heights = cells * 4;
        let per_droplet = u64::from(s.droplets) * 4;
        let batch = s.droplets_per_dispatch(cells);
        let fits = if s.algorithm == Algorithm::Pipes || (heights <= limit && per_droplet <= limit)
        {
            "fits"
        } else {
            "PAST THE LIMIT"
        };
        let estimate = match earlier.get(&point.index) {
            Some(row) => {
                // Warm-up, the repetitions, then the counted run and two reruns.
                let runs = (experiment.config.measure.warmup as usize + row.reps + 3) as f64;
                let seconds = runs * row.wall_ms_median / 1e3;
                total_s += seconds;
                format!("about {seconds:.1} s (earlier run)")
            }
            None => "no earlier results".into(),
        };
        let axes: Vec<String> = point.axes.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let axes = if axes.is_empty() {
            "(no axes)".into()
        } else {
            axes.join(" ")
        };
        let work = match s.algorithm {
            Algorithm::Droplets => format!(
                "{} droplets, {} per dispatch, kernel {}; heights {heights} bytes, per-droplet {per_droplet} bytes: {fits}",
                s.droplets,
                batch,
                s.kernel_variant().module_name(),
            ),
            Algorithm::Pipes => format!(
                "{} steps of the grid ({}), fields reached by address",
                s.pipes_steps,
                s.pipes_variant()
            ),
        };
        out += &format!(
            "  [{}] {axes}: {}x{} map, {work}; {estimate}{}\n",
            point.index,
            s.size,
            s.size,
            point
                .unsupported
                .as_ref()
                .map(|r| format!(" (skipped: {r})"))
                .unwrap_or_default(),
        );
    }
    if !earlier.is_empty() {
        out += &format!("estimated time of the points with earlier results: {total_s:.0} s\n");
    }
    out
}

/// Cells that differ between two runs, and the largest difference, in fixed point.
fn differences(a: &[i32], b: &[i32]) -> (usize, i64) {
    a.iter().zip(b).fold((0, 0), |(count, largest), (&x, &y)| {
        let d = (i64::from(x) - i64::from(y)).abs();
        (count + usize::from(d != 0), largest.max(d))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reruns_count_differing_cells_and_the_largest_gap() {
        assert_eq!(differences(&[1, 2, 3], &[1, 5, 2]), (2, 3));
        assert_eq!(differences(&[7, 7], &[7, 7]), (0, 0));
    }
}
