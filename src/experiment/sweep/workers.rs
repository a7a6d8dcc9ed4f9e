//! A sweep's workers: one per device of `sweep --devices`, each with its own Vulkan
//! context, taking points from a shared queue (the next free worker gets the next point,
//! since points differ in cost) or, with `--replicate`, each running every point. Rows
//! go to one results folder through one writer.

use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::config::Point;
use super::options::{OnPointError, SweepOptions, SweepSummary, Verbosity};
use super::point::{
    writer_commit, FinishedPoint, LandformCache, MeasuredPoint, PointContext, TerrainCache,
};
use super::SweepError;
use crate::experiment::results::{point_column, CsvText, FailedRow, ResultsWriter, StageTimes};
use crate::experiment::run::RunError;
use crate::gpu::{Context, DeviceInfo};
use crate::probes::ceilings::Ceilings;

/// The points left to measure: one queue all workers share, or with `--replicate` one
/// per worker holding every point it has not recorded yet.
pub(super) struct WorkQueues<'p> {
    queues: Vec<Mutex<VecDeque<&'p Point>>>,
    replicate: bool,
}

impl<'p> WorkQueues<'p> {
    pub(super) fn new(
        points: &[&'p Point],
        workers: usize,
        replicate: bool,
        writer: &ResultsWriter,
    ) -> Self {
        let queue = |done: &dyn Fn(usize) -> bool| {
            Mutex::new(points.iter().copied().filter(|p| !done(p.index)).collect())
        };
        let queues = if replicate {
            (0..workers)
                .map(|w| queue(&|p| writer.is_complete_on(p, w)))
                .collect()
        } else {
            vec![queue(&|p| writer.is_complete(p))]
        };
        Self { queues, replicate }
    }

    /// How many times the sweep measures each point.
    pub(super) fn copies(&self) -> usize {
        if self.replicate {
            self.queues.len()
        } else {
            1
        }
    }

    fn pending(&self) -> usize {
        self.queues.iter().map(|q| lock(q).len()).sum()
    }

    fn next(&self, worker: usize) -> Option<&'p Point> {
        let queue = if self.replicate {
            &self.queues[worker]
        } else {
            &self.queues[0]
        };
        lock(queue).pop_front()
    }
}

/// A lock that stays usable after a worker panicked while holding it.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// What the workers share: the writer, the queues, the progress lines and the tally.
pub(super) struct WorkerPool<'a, 'p> {
    writer: Mutex<ResultsWriter>,
    work: &'a WorkQueues<'p>,
    progress: Progress,
    measured: AtomicUsize,
    /// Points the device cannot run, skipped with a note.
    unsupported: AtomicUsize,
    failed: Mutex<Vec<FailedRow>>,
    /// Why the sweep stopped early, if it did (a worker whose device is lost stops
    /// alone while others are left).
    stopped: Mutex<Option<String>>,
    stop_all: AtomicBool,
    time_spent: Mutex<TimeSpent>,
}

/// The most cells of a map whose point's CPU share runs beside the GPU's next point:
/// 8192² (four maps of 256 MiB a point). Past 4096² no landform is computed
/// ([`crate::terrain::metrics::LANDFORM_MAX_CELLS`]), so what waits is the judgement
/// and the changes, short beside holding another point's maps.
const POOLED_MAX_CELLS: u64 = 1 << 26;

/// Threads for the CPU shares of a GPU's points: every core but the one that drives
/// the GPU, at most 8 (each holds one point's maps and its landform's working set,
/// about 1.5 GiB at 4096²); none on a CPU device. [`CPU_SHARE_THREADS_VARIABLE`] sets
/// the count instead (0: each point's CPU share in turn).
fn cpu_share_threads(device: &DeviceInfo) -> usize {
    let set = std::env::var(CPU_SHARE_THREADS_VARIABLE).ok();
    if let Some(threads) = set.and_then(|v| v.trim().parse::<usize>().ok()) {
        return threads.min(64);
    }
    match device.is_cpu() {
        true => 0,
        false => std::thread::available_parallelism()
            .map_or(1, |n| n.get().saturating_sub(1))
            .clamp(1, 8),
    }
}

/// The environment variable that sets how many threads finish a sweep's points beside
/// the GPU (a whole number, at most 64; anything else leaves the default): so that the
/// tests run the threads on lavapipe, where by default none runs.
pub const CPU_SHARE_THREADS_VARIABLE: &str = "VKERODE_CPU_SHARE_THREADS";

/// Finished points waiting for their turn to be recorded: each is inserted under its
/// turn (0, 1, ...), and taken once every earlier turn has been.
struct InOrder<T> {
    next: usize,
    finished: BTreeMap<usize, T>,
}

impl<T> Default for InOrder<T> {
    fn default() -> Self {
        Self {
            next: 0,
            finished: BTreeMap::new(),
        }
    }
}

impl<T> InOrder<T> {
    fn take_next(&mut self) -> Option<T> {
        let next = self.finished.remove(&self.next)?;
        self.next += 1;
        Some(next)
    }
}

/// A point's turn's outcome: its row's makings, or why it has none.
type PointOutcome<'p> = (&'p Point, Result<FinishedPoint, RunError>);

/// Whether a worker goes on to its next point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Flow {
    Next,
    Stop,
}

/// The recorded points' GPU time and stage times, added up.
#[derive(Default)]
struct TimeSpent {
    gpu_s: f64,
    stages: Vec<(&'static str, f64)>,
}

impl TimeSpent {
    fn add(&mut self, point: &StageTimes, record_s: f64) {
        self.gpu_s += point.point_gpu_s;
        let stages = point.stages().into_iter().chain([("record", record_s)]);
        if self.stages.is_empty() {
            self.stages = stages.collect();
        } else {
            for ((_, total), (_, seconds)) in self.stages.iter_mut().zip(stages) {
                *total += seconds;
            }
        }
    }
}

/// The progress display: one line per worker above a bar of all points.
struct Progress {
    _lines: MultiProgress,
    total: ProgressBar,
    workers: Vec<ProgressBar>,
    verbosity: Verbosity,
}

impl Progress {
    fn new(name: &str, points: usize, devices: &[String], verbosity: Verbosity) -> Self {
        let lines = MultiProgress::new();
        if verbosity == Verbosity::Quiet {
            lines.set_draw_target(ProgressDrawTarget::hidden());
        }
        let workers: Vec<ProgressBar> = devices
            .iter()
            .enumerate()
            .map(|(w, device)| {
                let line = ProgressBar::new_spinner();
                // The point's time moves while it is measured, so the screen does too.
                line.set_style(
                    ProgressStyle::with_template("  {prefix} {msg}, {elapsed} so far")
                        .expect("static template"),
                );
                line.set_prefix(format!("[{w}] {device}:"));
                line.set_message("starting");
                // Added once its message is set: no frame is drawn without it.
                lines.add(line)
            })
            .collect();
        let total = lines.add(ProgressBar::new(points as u64));
        total.set_style(crate::progress::bar_style(
            "{prefix} [{bar:30}] {pos}/{len} points, {elapsed} so far, ETA {left}",
            crate::progress::time_left,
        ));
        total.set_prefix(name.to_string());
        for bar in workers.iter().chain([&total]) {
            if !bar.is_hidden() {
                bar.enable_steady_tick(std::time::Duration::from_millis(250));
            }
        }
        Self {
            _lines: lines,
            total,
            workers,
            verbosity,
        }
    }

    /// A warning or a failure: above the bars, or on stderr where they are hidden
    /// (--quiet, or no terminal), where indicatif would drop it.
    fn say(&self, line: String) {
        match self.total.is_hidden() {
            true => eprintln!("{line}"),
            false => self.total.println(line),
        }
    }

    /// A note, which --quiet leaves out.
    fn note(&self, line: String) {
        if self.verbosity != Verbosity::Quiet {
            self.say(line);
        }
    }

    /// A detail only --verbose prints.
    fn detail(&self, line: String) {
        if self.verbosity == Verbosity::Verbose {
            self.say(line);
        }
    }
}

impl<'a, 'p> WorkerPool<'a, 'p> {
    pub(super) fn new(
        writer: ResultsWriter,
        name: &str,
        work: &'a WorkQueues<'p>,
        contexts: &[Arc<Context>],
        options: &SweepOptions,
    ) -> Self {
        let devices: Vec<String> = contexts.iter().map(|c| c.info().name.clone()).collect();
        Self {
            writer: Mutex::new(writer),
            progress: Progress::new(name, work.pending(), &devices, options.verbosity),
            work,
            measured: AtomicUsize::new(0),
            unsupported: AtomicUsize::new(0),
            failed: Mutex::new(Vec::new()),
            stopped: Mutex::new(None),
            stop_all: AtomicBool::new(false),
            time_spent: Mutex::new(TimeSpent::default()),
        }
    }

    /// One worker's loop: the next point until none is left, the sweep stops, or its
    /// device is lost (its failed point is recorded, and the others go on). On a GPU
    /// the points' CPU shares run on other cores while the GPU measures the next
    /// points ([`cpu_share_threads`]); on a CPU device they would take the device's own
    /// cores from the measurement, so each runs in turn. Rows are recorded in the order
    /// the points were measured.
    pub(super) fn run_worker(
        &self,
        point_context: &PointContext,
        on_error: OnPointError,
    ) -> Result<(), SweepError> {
        let commit = writer_commit(&self.writer);
        let landforms = LandformCache::default();
        let in_order: Mutex<InOrder<PointOutcome>> = Mutex::new(InOrder::default());
        let fatal: Mutex<Option<SweepError>> = Mutex::new(None);
        let worker_stopped = AtomicBool::new(false);
        // Finishes point number `turn` of this worker, then records every finished
        // point whose turn has come.
        let finish = |turn: usize, measured: MeasuredPoint<'p>| {
            let point = measured.point;
            let finished = point_context.finish(measured, &landforms, &commit);
            let mut in_order = lock(&in_order);
            in_order.finished.insert(turn, (point, finished));
            while let Some((point, finished)) = in_order.take_next() {
                if lock(&fatal).is_some() {
                    continue;
                }
                match self.record_point(point_context, point, finished, on_error) {
                    Ok(Flow::Next) => {}
                    Ok(Flow::Stop) => worker_stopped.store(true, Ordering::Relaxed),
                    Err(error) => {
                        worker_stopped.store(true, Ordering::Relaxed);
                        lock(&fatal).get_or_insert(error);
                    }
                }
            }
        };
        let threads = cpu_share_threads(point_context.ctx.info());
        let (hand, handed) = std::sync::mpsc::sync_channel::<(usize, MeasuredPoint)>(0);
        let handed = Mutex::new(handed);
        let measured = std::thread::scope(|scope| {
            for _ in 0..threads {
                scope.spawn(|| {
                    // One thread at a time waits for the next point, holding the lock;
                    // it lets go before finishing the point (a guard in the `while let`
                    // would live through the body and finish the points one by one).
                    loop {
                        let next = lock(&handed).recv();
                        let Ok((turn, measured)) = next else { break };
                        finish(turn, measured);
                    }
                });
            }
            let mut turns = 0..;
            let measured =
                self.measure_points(point_context, on_error, &worker_stopped, |measured| {
                    let turn = turns.next().expect("an endless range");
                    // A large map's CPU share runs here, in turn: its maps are too many bytes
                    // to hold a second point's beside them.
                    if threads == 0 || measured.cells() > POOLED_MAX_CELLS {
                        finish(turn, measured);
                    } else if let Err(returned) = hand.send((turn, measured)) {
                        finish(turn, returned.0 .1);
                    }
                });
            drop(hand);
            measured
        });
        if let Some(error) = fatal.into_inner().unwrap_or_else(|e| e.into_inner()) {
            return Err(error);
        }
        measured?;
        let line = &self.progress.workers[point_context.worker];
        if !worker_stopped.load(Ordering::Relaxed) {
            line.set_message("done");
        }
        Ok(())
    }

    /// The GPU's share of each point, handed to `finish` as it is measured.
    fn measure_points(
        &self,
        point_context: &PointContext,
        on_error: OnPointError,
        worker_stopped: &AtomicBool,
        mut finish: impl FnMut(MeasuredPoint<'p>),
    ) -> Result<(), SweepError> {
        let worker = point_context.worker;
        let line = &self.progress.workers[worker];
        let mut terrain = TerrainCache::default();
        let mut ceilings = Ceilings::new(point_context.ctx);
        while !self.stop_all.load(Ordering::Relaxed) && !worker_stopped.load(Ordering::Relaxed) {
            let Some(point) = self.work.next(worker) else {
                break;
            };
            if let Some(reason) = &point.unsupported {
                self.progress
                    .note(format!("note: skipping point {}: {reason}", point.index));
                self.progress.total.inc(1);
                self.unsupported.fetch_add(1, Ordering::Relaxed);
                continue;
            }
            line.reset_elapsed();
            line.set_message(format!("point {}: {}", point.index, point.label()));
            let measured = point_context.measure_on_gpu(point, &mut terrain, &mut ceilings);
            if let Some(warning) = ceilings.warning.take() {
                self.progress.say(format!("warning: {warning}"));
            }
            match measured {
                Ok(measured) => finish(measured),
                Err(error) => {
                    if self.failed(point_context, point, error.into(), on_error)? == Flow::Stop {
                        worker_stopped.store(true, Ordering::Relaxed);
                    }
                }
            }
        }
        Ok(())
    }

    /// A finished point's row recorded, or its failure.
    fn record_point(
        &self,
        point_context: &PointContext,
        point: &Point,
        finished: Result<FinishedPoint, RunError>,
        on_error: OnPointError,
    ) -> Result<Flow, SweepError> {
        let recorded = finished.map_err(SweepError::from).and_then(|finished| {
            let started = std::time::Instant::now();
            point_context.record(point, &finished, &self.writer)?;
            Ok((finished, started.elapsed().as_secs_f64()))
        });
        let (finished, record_s) = match recorded {
            Ok(done) => done,
            Err(error) => return self.failed(point_context, point, error, on_error),
        };
        self.progress.total.inc(1);
        self.progress.detail(format!(
            "point {} ({}) on worker {}: {}",
            point.index,
            point.label(),
            point_context.worker,
            finished.line
        ));
        self.measured.fetch_add(1, Ordering::Relaxed);
        lock(&self.time_spent).add(&finished.stages, record_s);
        Ok(Flow::Next)
    }

    /// A point that failed: recorded in failed.csv where its device failed (the sweep
    /// goes on, or this worker stops where the device is lost), else the sweep's end.
    fn failed(
        &self,
        point_context: &PointContext,
        point: &Point,
        error: SweepError,
        on_error: OnPointError,
    ) -> Result<Flow, SweepError> {
        let worker = point_context.worker;
        let label = point.label();
        self.progress.total.inc(1);
        let Some(gpu) = error.gpu_failure() else {
            self.stop_all.store(true, Ordering::Relaxed);
            return Err(error);
        };
        let row = FailedRow {
            experiment: point_context.experiment.config.name.clone(),
            point: point.index,
            worker,
            settings: label.clone(),
            error: crate::error_chain(&error),
            device_lost: gpu.is_device_lost(),
        };
        lock(&self.writer).record_failure(&row)?;
        self.progress.say(format!(
            "point {} ({label}) failed on worker {worker}: {}",
            point.index, row.error
        ));
        let stop_device = row.device_lost;
        let stop_sweep =
            on_error == OnPointError::Stop || (stop_device && self.progress.workers.len() == 1);
        if stop_sweep {
            let why = format!(
                "point {} ({label}) on worker {worker}: {}",
                point.index, row.error
            );
            lock(&self.stopped).get_or_insert(why);
        }
        lock(&self.failed).push(row);
        if stop_sweep {
            self.stop_all.store(true, Ordering::Relaxed);
        }
        if stop_device {
            self.progress.workers[worker].set_message("stopped: its device was lost");
            return Ok(Flow::Stop);
        }
        Ok(Flow::Next)
    }

    /// The tally, once every worker is done (`mine`: the point measurements this run
    /// was given, recorded earlier or not), with the writer to fill in what needs all
    /// of them.
    pub(super) fn finish(self, dir: PathBuf, mine: usize) -> Result<Finished, SweepError> {
        self.progress.total.finish_and_clear();
        for line in &self.progress.workers {
            line.finish_and_clear();
        }
        let measured = self.measured.into_inner();
        let unsupported = self.unsupported.into_inner();
        let pending = self.work.pending();
        let failed = self.failed.into_inner().unwrap_or_else(|e| e.into_inner());
        let spent = self
            .time_spent
            .into_inner()
            .unwrap_or_else(|e| e.into_inner());
        Ok(Finished {
            summary: SweepSummary {
                dir,
                measured,
                skipped: mine.saturating_sub(measured + unsupported + failed.len() + pending),
                failed,
                never_ran: pending,
                stopped: self.stopped.into_inner().unwrap_or_else(|e| e.into_inner()),
                gpu_s: spent.gpu_s,
                stages_s: spent.stages,
                wall_s: 0.0,
            },
            writer: self.writer.into_inner().unwrap_or_else(|e| e.into_inner()),
        })
    }
}

/// A finished sweep: its summary, and its writer still holding the folder.
pub(super) struct Finished {
    pub(super) summary: SweepSummary,
    writer: ResultsWriter,
}

impl Finished {
    /// failed.csv and meta.json's missing points without the points recorded since.
    pub(super) fn prune_missing(&mut self) -> Result<(), SweepError> {
        Ok(self.writer.prune_missing()?)
    }

    /// `--replicate`: each point's spread of the median GPU time over the devices, in
    /// every row of a point that every device has measured.
    pub(super) fn fill_device_spread(&mut self) -> Result<(), SweepError> {
        let devices = self.writer.meta().devices.len().max(1);
        self.writer
            .rewrite_points(|table| fill_device_spread(table, devices))?;
        Ok(())
    }
}

/// Fills `device_spread_percent` of the rows of each point measured by all `devices`:
/// (largest - smallest) / mean of their median GPU times, in percent.
pub fn fill_device_spread(table: &mut CsvText, devices: usize) {
    let (Some(point), Some(median), Some(spread)) = (
        table.column(point_column::POINT),
        table.column(point_column::GPU_MS_MEDIAN),
        table.column(point_column::DEVICE_SPREAD_PERCENT),
    ) else {
        return;
    };
    let mut medians: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for row in &table.rows {
        if let Ok(t) = row[median].parse::<f64>() {
            medians.entry(row[point].clone()).or_default().push(t);
        }
    }
    for row in &mut table.rows {
        let times = &medians[&row[point]];
        if devices < 2 || times.len() < devices {
            continue;
        }
        let (low, high) = times.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &t| {
            (lo.min(t), hi.max(t))
        });
        let mean = crate::stats::Moments::of(times).mean;
        row[spread] = (100.0 * (high - low) / mean).to_string();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::results::point_header;

    #[test]
    fn finished_points_are_taken_in_their_turns_whatever_order_they_finish_in() {
        let mut in_order = InOrder::default();
        in_order.finished.insert(2, "c");
        in_order.finished.insert(1, "b");
        assert_eq!(in_order.take_next(), None, "turn 0 is not in yet");
        in_order.finished.insert(0, "a");
        let taken: Vec<&str> = std::iter::from_fn(|| in_order.take_next()).collect();
        assert_eq!(taken, ["a", "b", "c"]);
        in_order.finished.insert(4, "e");
        assert_eq!(in_order.take_next(), None, "turn 3 is not in yet");
    }

    #[test]
    fn the_spread_is_over_the_devices_of_each_point_and_waits_for_all_of_them() {
        let header = point_header();
        let at = |name: &str| header.iter().position(|h| h == name).unwrap();
        let row = |point: &str, worker: &str, gpu_ms_median: &str| {
            let mut row = vec![String::new(); header.len()];
            row[at("point")] = point.into();
            row[at("worker")] = worker.into();
            row[at("gpu_ms_median")] = gpu_ms_median.into();
            row
        };
        let mut table = CsvText {
            header: header.clone(),
            rows: vec![row("0", "0", "9"), row("0", "1", "11"), row("1", "0", "5")],
        };
        fill_device_spread(&mut table, 2);
        assert_eq!(table.get(0, "device_spread_percent"), Some("20"));
        assert_eq!(table.get(1, "device_spread_percent"), Some("20"));
        assert_eq!(
            table.get(2, "device_spread_percent"),
            Some(""),
            "one device so far"
        );
    }
}
