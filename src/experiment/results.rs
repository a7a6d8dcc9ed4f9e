//! A sweep's results folder: `points.csv` (one row per point), `samples.csv` (every
//! timed repetition) and `meta.json` (where they came from). Rows are appended and
//! flushed as each point completes; `--resume` skips completed points; shard folders
//! merge into one.

use std::collections::BTreeSet;
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::config::{Experiment, Point};
use super::measure::Measurement;
use super::provenance::Provenance;
use crate::erosion::{Contention, WorkCount};
use crate::gpu::{statistics_summary, CompilerStatistic, DeviceInfo};
use crate::terrain::files::write_atomically;

pub const POINTS_CSV: &str = "points.csv";
pub const SAMPLES_CSV: &str = "samples.csv";
pub const META_JSON: &str = "meta.json";

/// The columns of points.csv, in order: identification, the point's settings (every
/// axis is one of them), then its figures.
pub const POINT_COLUMNS: &[&str] = &[
    "experiment",
    "device",
    "driver",
    "commit",
    "point",
    "size",
    "seed",
    "relief",
    "droplets",
    "droplet_seed",
    "lifetime",
    "inertia",
    "capacity",
    "erosion",
    "deposition",
    "evaporation",
    "scale",
    "workgroup",
    "batch",
    "batches",
    "variant",
    "atomics",
    "spawn",
    "tile",
    "tile_order",
    "phases",
    "passes",
    "stagger",
    "spirv",
    "shared_kib",
    "lever",
    "kernel",
    "compiler_stats",
    "dispatches",
    "reps",
    "stop_reason",
    "gpu_ms_median",
    "gpu_ms_min",
    "gpu_ms_max",
    "gpu_ms_q1",
    "gpu_ms_q3",
    "gpu_ms_rel_iqr",
    "wall_ms_median",
    "steps",
    "atomic_adds",
    "droplets_per_s",
    "steps_per_s",
    "steps_per_s_q1",
    "steps_per_s_q3",
    "atomics_per_s",
    "peak_walk_steps_per_s",
    "percent_of_peak",
    "total_height_change",
    "max_cell_change",
    "in_flight_per_cell",
    "unstable",
    "hits_max",
    "hits_p99",
    "hottest_1pct_share",
    "subgroup_conflicts_per_1000",
    "zero_add_share",
    "mass_intended",
    "mass_applied",
    "mass_received",
    "mass_truncated",
    "mass_lost",
    "rerun_cells_differing",
    "rerun_max_difference",
];

pub const SAMPLE_COLUMNS: &[&str] = &["experiment", "point", "rep", "gpu_ms", "wall_ms"];

#[derive(Debug, Error)]
pub enum ResultsError {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: {source}", path.display())]
    Csv {
        path: PathBuf,
        #[source]
        source: csv::Error,
    },
    #[error("{}: {reason}", path.display())]
    Mismatch { path: PathBuf, reason: String },
}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> ResultsError + '_ {
    move |source| ResultsError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn csv_error(path: &Path) -> impl FnOnce(csv::Error) -> ResultsError + '_ {
    move |source| ResultsError::Csv {
        path: path.to_path_buf(),
        source,
    }
}

/// Where a results set came from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Meta {
    pub experiment: String,
    pub device: String,
    pub device_type: String,
    pub vendor_id: u32,
    pub device_id: u32,
    pub driver: String,
    pub driver_version: String,
    pub driver_version_raw: u32,
    pub api_version: String,
    pub subgroup_size: u32,
    pub timestamp_period_ns: f32,
    pub vkerode_version: String,
    pub git_commit: String,
    pub config_file: String,
    pub config_hash: String,
    pub config: serde_json::Value,
    pub host: String,
    pub started_at: String,
    /// "i/n" for a shard; absent for a whole sweep.
    #[serde(default)]
    pub shard: Option<String>,
    /// For a merged set: the folders it was merged from.
    #[serde(default)]
    pub merged_from: Vec<String>,
}

impl Meta {
    pub fn new(experiment: &Experiment, device: &DeviceInfo, shard: Option<String>) -> Self {
        let p = Provenance::collect(device);
        Self {
            experiment: experiment.config.name.clone(),
            device: device.name.clone(),
            device_type: device.device_type.clone(),
            vendor_id: device.vendor_id,
            device_id: device.device_id,
            driver: device.driver_name.clone(),
            driver_version: device.driver_info.clone(),
            driver_version_raw: device.driver_version_raw,
            api_version: device.api_version.clone(),
            subgroup_size: device.subgroup_size,
            timestamp_period_ns: device.timestamp_period_ns,
            vkerode_version: p.vkerode_version.into(),
            git_commit: p.git_commit.into(),
            config_file: experiment.file.display().to_string(),
            config_hash: experiment.config_hash(),
            config: serde_json::to_value(&experiment.config).expect("config serializes"),
            host: p.host,
            started_at: p.started_at,
            shard,
            merged_from: Vec::new(),
        }
    }

    pub fn read(dir: &Path) -> Result<Self, ResultsError> {
        let path = dir.join(META_JSON);
        let text = std::fs::read_to_string(&path).map_err(io_error(&path))?;
        serde_json::from_str(&text).map_err(|e| ResultsError::Mismatch {
            path: path.clone(),
            reason: format!("not a vkerode meta.json: {e}"),
        })
    }

    pub fn write(&self, dir: &Path) -> Result<(), ResultsError> {
        let path = dir.join(META_JSON);
        write_atomically(&path, |out| {
            serde_json::to_writer_pretty(&mut *out, self).map_err(std::io::Error::other)
        })
        .map_err(|e| ResultsError::Io {
            path: path.clone(),
            source: e.source,
        })
    }
}

/// The figures of one measured point.
pub struct PointOutcome<'a> {
    pub point: &'a Point,
    pub measurement: &'a Measurement,
    pub work: WorkCount,
    pub dispatches: usize,
    pub batch: u32,
    /// The timed pipeline's compiler statistics; empty where the driver has none.
    pub compiler_statistics: &'a [CompilerStatistic],
    /// Droplet-shaped walk steps/s at this map size, if measured.
    pub peak_walk_steps_per_s: Option<f64>,
    pub total_height_change: f64,
    /// The largest change of one cell, in height units (instrumented run).
    pub max_cell_change: f64,
    pub contention: Contention,
    /// Heights hit the int32 limits or moved by more than the terrain's relief.
    pub unstable: bool,
    /// Two runs of the same job: cells that differ, and the largest difference in
    /// height units.
    pub rerun_cells_differing: usize,
    pub rerun_max_difference: f64,
}

impl PointOutcome<'_> {
    fn row(&self, meta: &Meta) -> Vec<String> {
        let s = &self.point.settings;
        let m = self.measurement;
        let c = &self.contention;
        let per_s = |count: u64, ms: f64| count as f64 / (ms / 1e3);
        let steps_per_s = per_s(self.work.steps, m.gpu_ms.median);
        let opt = |v: Option<f64>| v.map(|v| format!("{v}")).unwrap_or_default();
        vec![
            meta.experiment.clone(),
            meta.device.clone(),
            meta.driver_version.clone(),
            meta.git_commit.clone(),
            self.point.index.to_string(),
            s.size.to_string(),
            s.seed.to_string(),
            s.terrain().relief.to_string(),
            s.droplets.to_string(),
            s.job().seed.to_string(),
            s.lifetime.to_string(),
            s.inertia.to_string(),
            s.capacity.to_string(),
            s.erosion.to_string(),
            s.deposition.to_string(),
            s.evaporation.to_string(),
            s.scale.to_string(),
            s.workgroup.to_string(),
            self.batch.to_string(),
            s.droplets.div_ceil(self.batch).to_string(),
            label(&s.variant),
            s.atomic_mode().as_str().to_string(),
            label(&s.spawn),
            s.tile.to_string(),
            label(&s.tile_order),
            s.phases.to_string(),
            s.passes.to_string(),
            label(&s.stagger),
            label(&s.spirv),
            s.shared_kib.to_string(),
            label(&s.lever),
            s.kernel_variant().module_name(),
            statistics_summary(self.compiler_statistics),
            self.dispatches.to_string(),
            m.samples.len().to_string(),
            m.stop.as_str().to_string(),
            m.gpu_ms.median.to_string(),
            m.gpu_ms.min.to_string(),
            m.gpu_ms.max.to_string(),
            m.gpu_ms.q1.to_string(),
            m.gpu_ms.q3.to_string(),
            m.gpu_ms.rel_iqr().to_string(),
            m.wall_ms.median.to_string(),
            self.work.steps.to_string(),
            self.work.atomics.to_string(),
            per_s(self.work.droplets, m.gpu_ms.median).to_string(),
            steps_per_s.to_string(),
            // Longer times mean lower rates: q3 of the time gives q1 of the rate.
            per_s(self.work.steps, m.gpu_ms.q3).to_string(),
            per_s(self.work.steps, m.gpu_ms.q1).to_string(),
            per_s(self.work.atomics, m.gpu_ms.median).to_string(),
            opt(self.peak_walk_steps_per_s),
            opt(self
                .peak_walk_steps_per_s
                .map(|peak| 100.0 * steps_per_s / peak)),
            self.total_height_change.to_string(),
            self.max_cell_change.to_string(),
            (f64::from(self.batch.min(s.droplets)) / f64::from(s.size).powi(2)).to_string(),
            self.unstable.to_string(),
            c.hits_max.to_string(),
            c.hits_p99.to_string(),
            c.hottest_1pct_share.to_string(),
            c.subgroup_conflicts_per_1000.to_string(),
            c.zero_add_share.to_string(),
            c.mass_intended.to_string(),
            c.mass_applied.to_string(),
            c.mass_received.to_string(),
            c.mass_truncated.to_string(),
            c.mass_lost.to_string(),
            self.rerun_cells_differing.to_string(),
            self.rerun_max_difference.to_string(),
        ]
    }
}

/// How serde names a unit enum variant ("global", "morton", ...).
fn label<T: Serialize>(value: &T) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// A results folder open for appending.
pub struct ResultsWriter {
    dir: PathBuf,
    meta: Meta,
    points: csv::Writer<File>,
    samples: csv::Writer<File>,
    completed: BTreeSet<usize>,
}

impl ResultsWriter {
    /// Starts a new results set in `dir`, or with `resume` continues one made by the
    /// same config on the same device. Without `resume`, an existing set is an error.
    pub fn open(dir: &Path, meta: Meta, resume: bool) -> Result<Self, ResultsError> {
        let points_path = dir.join(POINTS_CSV);
        let samples_path = dir.join(SAMPLES_CSV);
        let exists = points_path.exists();
        let mut completed = BTreeSet::new();
        if exists && !resume {
            return Err(ResultsError::Mismatch {
                path: points_path,
                reason: "results already exist here; pass --resume to continue them or remove the folder".into(),
            });
        }
        std::fs::create_dir_all(dir).map_err(io_error(dir))?;
        let meta = if exists {
            let old = Meta::read(dir)?;
            if old.config_hash != meta.config_hash
                || old.device != meta.device
                || old.shard != meta.shard
            {
                return Err(ResultsError::Mismatch {
                    path: dir.join(META_JSON),
                    reason: format!(
                        "was made by config {} on {} (shard {:?}); this run is config {} on {} (shard {:?})",
                        old.config_hash, old.device, old.shard, meta.config_hash, meta.device, meta.shard
                    ),
                });
            }
            completed = read_points(&points_path)?.iter().map(|r| r.point).collect();
            drop_samples_except(&samples_path, &completed)?;
            old
        } else {
            meta.write(dir)?;
            meta
        };
        let points = append_csv(&points_path, POINT_COLUMNS)?;
        let samples = append_csv(&samples_path, SAMPLE_COLUMNS)?;
        Ok(Self {
            dir: dir.to_path_buf(),
            meta,
            points,
            samples,
            completed,
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn is_complete(&self, point: usize) -> bool {
        self.completed.contains(&point)
    }

    /// Appends the point's samples, then its row, and flushes both.
    pub fn record(&mut self, outcome: &PointOutcome) -> Result<(), ResultsError> {
        let samples_path = self.dir.join(SAMPLES_CSV);
        let points_path = self.dir.join(POINTS_CSV);
        for (rep, sample) in outcome.measurement.samples.iter().enumerate() {
            self.samples
                .write_record([
                    self.meta.experiment.clone(),
                    outcome.point.index.to_string(),
                    rep.to_string(),
                    sample.gpu_ms.to_string(),
                    sample.wall_ms.to_string(),
                ])
                .map_err(csv_error(&samples_path))?;
        }
        self.samples.flush().map_err(io_error(&samples_path))?;
        self.points
            .write_record(outcome.row(&self.meta))
            .map_err(csv_error(&points_path))?;
        self.points.flush().map_err(io_error(&points_path))?;
        self.completed.insert(outcome.point.index);
        Ok(())
    }
}

/// A CSV opened for appending, with its header written if it is new.
fn append_csv(path: &Path, header: &[&str]) -> Result<csv::Writer<File>, ResultsError> {
    let is_new = std::fs::metadata(path)
        .map(|m| m.len() == 0)
        .unwrap_or(true);
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(io_error(path))?;
    let mut writer = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(file);
    if is_new {
        writer.write_record(header).map_err(csv_error(path))?;
        writer.flush().map_err(io_error(path))?;
    }
    Ok(writer)
}

/// One row of points.csv, kept whole, with its point index parsed.
#[derive(Clone, Debug)]
pub struct PointRecord {
    pub point: usize,
    pub record: csv::StringRecord,
}

pub fn read_points(path: &Path) -> Result<Vec<PointRecord>, ResultsError> {
    let mut reader = csv::Reader::from_path(path).map_err(csv_error(path))?;
    let headers = reader.headers().map_err(csv_error(path))?.clone();
    if headers.iter().collect::<Vec<_>>() != POINT_COLUMNS {
        return Err(ResultsError::Mismatch {
            path: path.to_path_buf(),
            reason: "its columns are not those of this vkerode's points.csv".into(),
        });
    }
    let mut rows = Vec::new();
    for record in reader.records() {
        let record = record.map_err(csv_error(path))?;
        let point =
            record
                .get(4)
                .and_then(|p| p.parse().ok())
                .ok_or_else(|| ResultsError::Mismatch {
                    path: path.to_path_buf(),
                    reason: format!(
                        "row {:?} has no point index",
                        record.position().map(|p| p.line())
                    ),
                })?;
        rows.push(PointRecord { point, record });
    }
    Ok(rows)
}

fn read_samples(path: &Path) -> Result<Vec<csv::StringRecord>, ResultsError> {
    if !path.exists() {
        return Ok(Vec::new());
    }
    let mut reader = csv::Reader::from_path(path).map_err(csv_error(path))?;
    reader
        .records()
        .collect::<Result<_, _>>()
        .map_err(csv_error(path))
}

fn sample_point(record: &csv::StringRecord) -> Option<usize> {
    record.get(1)?.parse().ok()
}

/// Rewrites samples.csv without the samples of points that never completed (a sweep
/// interrupted between a point's samples and its row).
fn drop_samples_except(path: &Path, completed: &BTreeSet<usize>) -> Result<(), ResultsError> {
    let kept: Vec<_> = read_samples(path)?
        .into_iter()
        .filter(|r| sample_point(r).is_some_and(|p| completed.contains(&p)))
        .collect();
    write_csv(path, SAMPLE_COLUMNS, &kept)
}

fn write_csv(path: &Path, header: &[&str], rows: &[csv::StringRecord]) -> Result<(), ResultsError> {
    write_atomically(path, |out| {
        let mut writer = csv::Writer::from_writer(out);
        writer.write_record(header).map_err(std::io::Error::other)?;
        for row in rows {
            writer.write_record(row).map_err(std::io::Error::other)?;
        }
        writer.flush()
    })
    .map_err(|e| ResultsError::Io {
        path: path.to_path_buf(),
        source: e.source,
    })
}

/// Joins shard folders of one sweep into `out`. Refuses folders of different configs
/// or devices, and points that appear twice.
pub fn merge(inputs: &[PathBuf], out: &Path) -> Result<usize, ResultsError> {
    let Some(first) = inputs.first() else {
        return Err(ResultsError::Mismatch {
            path: out.to_path_buf(),
            reason: "nothing to merge".into(),
        });
    };
    let mut meta = Meta::read(first)?;
    let mut points: Vec<PointRecord> = Vec::new();
    let mut samples = Vec::new();
    let mut seen = BTreeSet::new();
    for dir in inputs {
        let other = Meta::read(dir)?;
        if other.config_hash != meta.config_hash || other.experiment != meta.experiment {
            return Err(ResultsError::Mismatch {
                path: dir.join(META_JSON),
                reason: format!(
                    "config {} of experiment {:?} does not match {} of {:?} in {}",
                    other.config_hash,
                    other.experiment,
                    meta.config_hash,
                    meta.experiment,
                    first.display()
                ),
            });
        }
        if other.device != meta.device {
            return Err(ResultsError::Mismatch {
                path: dir.join(META_JSON),
                reason: format!("ran on {}, not {}", other.device, meta.device),
            });
        }
        for row in read_points(&dir.join(POINTS_CSV))? {
            if !seen.insert(row.point) {
                return Err(ResultsError::Mismatch {
                    path: dir.join(POINTS_CSV),
                    reason: format!("point {} is in more than one input", row.point),
                });
            }
            points.push(row);
        }
        samples.extend(read_samples(&dir.join(SAMPLES_CSV))?);
    }
    points.sort_by_key(|r| r.point);
    samples.sort_by_key(|r| sample_point(r).unwrap_or(usize::MAX));
    std::fs::create_dir_all(out).map_err(io_error(out))?;
    let rows: Vec<_> = points.into_iter().map(|r| r.record).collect();
    write_csv(&out.join(POINTS_CSV), POINT_COLUMNS, &rows)?;
    write_csv(&out.join(SAMPLES_CSV), SAMPLE_COLUMNS, &samples)?;
    meta.shard = None;
    meta.merged_from = inputs.iter().map(|p| p.display().to_string()).collect();
    meta.write(out)?;
    Ok(rows.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn column_names_are_unique() {
        let mut names: Vec<&str> = POINT_COLUMNS.to_vec();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), POINT_COLUMNS.len());
    }
}
