//! Running a sweep: every point of an experiment, measured (`point.rs`) by one or more
//! workers (`workers.rs`) and recorded as it completes; and `--dry-run`, which lists
//! what a sweep would do.

pub mod config;
mod error;
pub mod input;
mod measure;
mod options;
mod point;
mod workers;

pub use error::SweepError;
pub use measure::{measure_runs, should_stop};
pub use options::{
    parse_out, OnPointError, OptionError, Shard, SweepOptions, SweepSummary, Verbosity, DEFAULT_OUT,
};
pub use workers::CPU_SHARE_THREADS_VARIABLE;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use config::{Experiment, Point};
use point::PointContext;
use workers::{WorkQueues, WorkerPool};

use super::results::{read_points, Meta, ResultsWriter, SweepSource, WorkerDevice, POINTS_CSV};
use crate::gpu::{Context, DeviceInfo};
use crate::probes::gpu_state::GpuMonitor;
use crate::terrain::output::slug;

/// Where a sweep's results go: `--out` with its `{experiment}` and `{device}` filled in
/// (in any component of the path), then `shard-i-of-n` for a shard.
pub fn results_dir(experiment: &Experiment, device_name: &str, options: &SweepOptions) -> PathBuf {
    let device = slug(device_name);
    let fill = |part: &std::ffi::OsStr| -> PathBuf {
        match part.to_str() {
            Some(text) => text
                .replace("{experiment}", &experiment.config.name)
                .replace("{device}", &device)
                .into(),
            None => part.into(),
        }
    };
    let mut dir: PathBuf = options.out.iter().map(fill).collect();
    if let Some(shard) = options.shard {
        dir = dir.join(format!("shard-{}-of-{}", shard.index, shard.count));
    }
    dir
}

pub fn run_sweep(
    contexts: &[Arc<Context>],
    experiment: &Experiment,
    options: &SweepOptions,
) -> Result<SweepSummary, SweepError> {
    let started = std::time::Instant::now();
    let Some(first) = contexts.first() else {
        return Err(SweepError::NoDevice);
    };
    let infos: Vec<&DeviceInfo> = contexts.iter().map(|c| c.info()).collect();
    let dir = results_dir(experiment, &first.info().name, options);
    let mut monitors: Vec<Option<GpuMonitor>> =
        infos.iter().map(|i| GpuMonitor::for_device(i)).collect();
    if let Some(mhz) = options.lock_sm_mhz {
        for (monitor, info) in monitors.iter_mut().zip(&infos) {
            let Some(monitor) = monitor.as_mut() else {
                return Err(SweepError::NoNvml {
                    device: info.name.clone(),
                });
            };
            monitor.lock_sm_clock(mhz).map_err(SweepError::ClockLock)?;
        }
    }
    let source = SweepSource {
        experiment: &experiment.config.name,
        config_file: &experiment.file,
        config_hash: experiment.config_hash(),
        config: serde_json::to_value(&experiment.config).expect("config serializes"),
        shard: options.shard.map(|s| s.to_string()),
        validation: first.validation_messages().is_some(),
        clocks_policy: monitors[0].as_ref().map(GpuMonitor::clocks_policy),
        gpu_state_at_start: monitors[0].as_ref().and_then(GpuMonitor::read),
    };
    let mut meta = Meta::new(source, &infos);
    meta.replicate = options.replicate;
    let writer = ResultsWriter::open(&dir, meta, options.existing)?;
    for repair in &writer.repairs {
        eprintln!("note: {repair}; the points it lacks run again");
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
            .collect::<Result<Vec<()>, SweepError>>()
    })?;
    let mut summary = pool.finish(dir, mine.len() * work.copies())?;
    if options.replicate {
        summary.fill_device_spread()?;
    }
    summary.prune_missing()?;
    summary.summary.wall_s = started.elapsed().as_secs_f64();
    Ok(summary.summary)
}

/// `sweep --dry-run`: every point with its effective settings, the buffers it needs
/// against the device's limits, and an estimate of its time where earlier results of the
/// same config on this device exist. No GPU work.
pub fn dry_run(experiment: &Experiment, device: &DeviceInfo, options: &SweepOptions) -> String {
    let dir = results_dir(experiment, &device.name, options);
    // Earlier rows of the same config: (reps, median wall ms) by point.
    let earlier: BTreeMap<usize, (f64, f64)> = Meta::read(&dir)
        .ok()
        .filter(|meta| meta.config_hash == experiment.config_hash())
        .and_then(|_| read_points(&dir.join(POINTS_CSV)).ok())
        .map(|table| {
            table
                .point_rows()
                .filter_map(|row| {
                    let point = row.point()? as usize;
                    Some((point, (row.reps()?, row.wall_ms_median()?)))
                })
                .collect()
        })
        .unwrap_or_default();
    let mut out = format!(
        "{}: {} points on {}\n",
        experiment.config.name,
        experiment.points.len(),
        device.name
    );
    let mut total_s = 0.0;
    for point in &experiment.points {
        let s = &point.settings;
        let estimate = match earlier.get(&point.index) {
            Some(&(reps, wall_ms)) => {
                // Warm-up, the repetitions, then the counted run and two reruns.
                let runs = f64::from(experiment.config.measure.warmup) + reps + 3.0;
                let seconds = runs * wall_ms / 1e3;
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
        let map = point.map();
        let work = s.strategy().plan(s, map, device);
        let input = point
            .input
            .as_ref()
            .map(|input| format!(" of {}", input.written))
            .unwrap_or_default();
        out += &format!(
            "  [{}] {axes}: {}x{} map{input}, {work}; {estimate}{}\n",
            point.index,
            map.width,
            map.height,
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
