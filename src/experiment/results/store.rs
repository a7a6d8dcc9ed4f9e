//! A sweep's results folder: `points.csv` (one row per point), `samples.csv` (every
//! timed repetition) and `meta.json` (where they came from). Rows are appended and
//! flushed as each point completes; `--resume` skips completed points; shard folders
//! merge into one.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{self, File, OpenOptions};
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::csv_text::{read_points, read_records, CsvText};
use super::measurement::is_time;
use super::point_row::name as point_column;
use super::schema::{point_header, FailedRow, SampleRow, SCHEMA_VERSION, TIMED_CHANGE_SINCE};
use super::{csv_error, io_error, ResultsError, FAILED_CSV, META_JSON, POINTS_CSV, SAMPLES_CSV};
use crate::experiment::run::Provenance;
use crate::gpu::DeviceInfo;
use crate::probes::gpu_state::GpuState;
use crate::table::{header_of, Row};
use crate::terrain::files::write_atomically;
use crate::terrain::output::{
    check_replaceable, remove_dead_leftovers, resolved, FolderLock, OutputError, StagedFolder,
    MARKER,
};
use crate::PathIoError;

/// Where a results set came from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Meta {
    /// The version of the columns of points.csv; 1 for sets from before it was
    /// recorded (`schema.rs`).
    #[serde(default = "schema_1")]
    pub schema_version: u32,
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
    /// For a set merged with `--partial`: the sweep's points it lacks.
    #[serde(default)]
    pub missing_points: Vec<usize>,
    /// Whether the validation layer was on: it slows every dispatch.
    #[serde(default)]
    pub validation: bool,
    /// The command that made the set.
    #[serde(default)]
    pub command_line: String,
    /// The GPU's clocks policy, and its state when the sweep began, where NVML reads
    /// them (NVIDIA); empty elsewhere.
    #[serde(default)]
    pub clocks_policy: Option<String>,
    #[serde(default)]
    pub gpu_state_at_start: Option<GpuState>,
    /// Every device of the sweep, in worker order (`sweep --devices`); rows name theirs
    /// by `worker`. The fields above describe the first.
    #[serde(default)]
    pub devices: Vec<WorkerDevice>,
    /// `sweep --replicate`: every point ran on every device.
    #[serde(default)]
    pub replicate: bool,
}

fn schema_1() -> u32 {
    1
}

/// What a sweep's meta.json says of its config and the GPU's clocks.
pub struct SweepSource<'a> {
    pub experiment: &'a str,
    pub config_file: &'a Path,
    pub config_hash: String,
    pub config: serde_json::Value,
    pub shard: Option<String>,
    pub validation: bool,
    /// The clocks policy and the GPU's state at the start, where NVML reads them.
    pub clocks_policy: Option<String>,
    pub gpu_state_at_start: Option<GpuState>,
}

/// One device of a sweep and the worker that drove it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WorkerDevice {
    pub worker: usize,
    /// Its index in `vkerode devices`.
    pub index: usize,
    pub name: String,
    pub driver_version: String,
    /// As NVML writes it.
    pub uuid: String,
}

impl WorkerDevice {
    pub fn list(devices: &[&DeviceInfo]) -> Vec<Self> {
        devices
            .iter()
            .enumerate()
            .map(|(worker, d)| Self {
                worker,
                index: d.index,
                name: d.name.clone(),
                driver_version: d.driver_info.clone(),
                uuid: d.nvml_uuid(),
            })
            .collect()
    }

    /// What tells the devices apart where they differ in model or driver: `None` when
    /// all are alike.
    pub fn differences(devices: &[Self]) -> Option<String> {
        let first = devices.first()?;
        let alike = devices
            .iter()
            .all(|d| d.name == first.name && d.driver_version == first.driver_version);
        (!alike).then(|| {
            devices
                .iter()
                .map(|d| format!("[{}] {} (driver {})", d.worker, d.name, d.driver_version))
                .collect::<Vec<_>>()
                .join(", ")
        })
    }
}

impl Meta {
    /// The meta of a sweep of `source` over `devices` (one or more; the first fills
    /// the single device fields).
    pub fn new(source: SweepSource, devices: &[&DeviceInfo]) -> Self {
        let device = devices[0];
        let p = Provenance::collect(device);
        Self {
            schema_version: SCHEMA_VERSION,
            experiment: source.experiment.to_string(),
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
            config_file: source.config_file.display().to_string(),
            config_hash: source.config_hash,
            config: source.config,
            host: p.host,
            started_at: p.started_at,
            shard: source.shard,
            merged_from: Vec::new(),
            missing_points: Vec::new(),
            validation: source.validation,
            command_line: std::env::args().collect::<Vec<_>>().join(" "),
            clocks_policy: source.clocks_policy,
            gpu_state_at_start: source.gpu_state_at_start,
            devices: WorkerDevice::list(devices),
            replicate: false,
        }
    }

    /// Why a run described by `new` may not add to this set, if it may not: another
    /// config, device, driver, shard, or validation on one side only.
    /// Why a set of this meta cannot take this vkerode's rows: its rows hold another
    /// program's height change and landform.
    fn older_rows(&self) -> Option<String> {
        (self.schema_version < TIMED_CHANGE_SINCE).then(|| format!(
            "its rows take total_height_change, max_cell_change and the landform from the counted run (schema_version {}), this vkerode's from the first timed rerun (version {TIMED_CHANGE_SINCE} on): finish it with the vkerode that wrote it (merge takes older sets only among themselves), or pass --force to start afresh",
            self.schema_version
        ))
    }

    pub fn refuses_to_continue_with(&self, new: &Meta) -> Option<String> {
        if let Some(reason) = self.older_rows() {
            return Some(reason);
        }
        let differs = |what: &str, old: String, now: String| {
            (old != now).then(|| format!("was made with {what} {old}; this run has {now}"))
        };
        differs("config", self.config_hash.clone(), new.config_hash.clone())
            .map(
                |reason| match config_differences(&self.config, &new.config) {
                    entries if entries.is_empty() => reason,
                    entries => format!("{reason} (they differ in {})", entries.join(", ")),
                },
            )
            .or_else(|| differs("device", self.device.clone(), new.device.clone()))
            .or_else(|| {
                differs(
                    "driver",
                    self.driver_version.clone(),
                    new.driver_version.clone(),
                )
            })
            .or_else(|| {
                differs(
                    "shard",
                    format!("{:?}", self.shard),
                    format!("{:?}", new.shard),
                )
            })
            .or_else(|| {
                let on_off = |v: bool| if v { "on" } else { "off" }.to_string();
                differs(
                    "validation",
                    on_off(self.validation),
                    on_off(new.validation),
                )
            })
            .or_else(|| {
                // Sets from before `devices` existed were made on one device.
                let names = |m: &Meta| {
                    let listed: Vec<String> = m.devices.iter().map(|d| d.name.clone()).collect();
                    if listed.is_empty() {
                        format!("{} device(s): {}", 1, m.device)
                    } else {
                        format!("{} device(s): {}", listed.len(), listed.join(", "))
                    }
                };
                differs("devices", names(self), names(new))
            })
            .or_else(|| {
                differs(
                    "--replicate",
                    self.replicate.to_string(),
                    new.replicate.to_string(),
                )
            })
    }

    /// Why its config cannot be trusted, if it cannot: it no longer hashes to the hash
    /// it records (edited since). Sets from before schema 2 were hashed another way:
    /// theirs cannot be checked.
    fn edited_config(&self) -> Option<String> {
        let recorded = config_hash_of(&self.config);
        (self.schema_version >= 2 && recorded != self.config_hash).then(|| {
            format!(
                "its config hashes to {recorded}, not to the {} it records: it was edited, so its points cannot be trusted",
                self.config_hash
            )
        })
    }

    /// Why `point` on `worker` cannot be one of this sweep's rows, if it cannot.
    fn outside_the_sweep(&self, point: usize, worker: usize) -> Option<String> {
        let (count, workers) = (point_count(&self.config), self.devices.len().max(1));
        (point >= count || worker >= workers).then(|| {
            format!(
                "point {point} on worker {worker} is outside the sweep (points 0 to {}, workers 0 to {})",
                count.saturating_sub(1),
                workers - 1
            )
        })
    }

    /// Why the shard `other` may not be merged with this one, read from `first`, if it
    /// may not: rows of an older schema beside a newer one, a config edited since it was hashed, another
    /// config or experiment, device or `--replicate`.
    fn refuses_to_merge(&self, other: &Meta, first: &Path) -> Option<String> {
        // Sets from before schema 2 were hashed another way: their hash cannot be
        // checked, only their copies against each other.
        let replicate = |m: &Meta| if m.replicate { " (--replicate)" } else { "" };
        // Older sets alone merge onto the current columns; with a newer one they would
        // hold two programs' height changes under one column.
        let older = |m: &Meta| m.schema_version < TIMED_CHANGE_SINCE;
        if older(self) != older(other) {
            self.older_rows().or_else(|| other.older_rows())
        } else if let Some(edited) = other.edited_config() {
            Some(edited)
        } else if other.config_hash != self.config_hash || other.experiment != self.experiment {
            Some(format!(
                "config {} of experiment {:?} does not match {} of {:?} in {}",
                other.config_hash,
                other.experiment,
                self.config_hash,
                self.experiment,
                first.display()
            ))
        } else if other.config != self.config {
            Some(format!(
                "its config differs from that of {} though both record config {}: one was edited",
                first.display(),
                self.config_hash
            ))
        } else if other.device != self.device || other.replicate != self.replicate {
            Some(format!(
                "ran on {}{}, not {}{}",
                other.device,
                replicate(other),
                self.device,
                replicate(self)
            ))
        } else {
            None
        }
    }

    pub fn read(dir: &Path) -> Result<Self, ResultsError> {
        let path = dir.join(META_JSON);
        let text = crate::read_input_text(&path).map_err(io_error(&path))?;
        let meta: Self = serde_json::from_str(&text).map_err(|e| ResultsError::Mismatch {
            path: path.clone(),
            reason: format!("not a vkerode meta.json: {e}"),
        })?;
        // Relabelled as this version's, a newer set would be read by rules it does not
        // follow.
        if meta.schema_version > SCHEMA_VERSION {
            return Err(ResultsError::Mismatch {
                path,
                reason: format!(
                    "its schema_version {} is newer than this vkerode's {SCHEMA_VERSION}: read it with the vkerode that wrote it",
                    meta.schema_version
                ),
            });
        }
        Ok(meta)
    }

    pub fn write(&self, dir: &Path) -> Result<(), ResultsError> {
        let path = dir.join(META_JSON);
        write_atomically(&path, |out| {
            serde_json::to_writer_pretty(&mut *out, self).map_err(std::io::Error::other)
        })
        .map_err(|e| PathIoError::new(&path, e.source).into())
    }
}

/// A results folder open for appending.
pub struct ResultsWriter {
    dir: PathBuf,
    meta: Meta,
    points: csv::Writer<File>,
    samples: csv::Writer<File>,
    /// Opened at the first failure: a sweep without one writes no failed.csv.
    failed: Option<csv::Writer<File>>,
    /// (point, worker) of every recorded row.
    completed: BTreeSet<(usize, usize)>,
    /// What `--resume` mended, one line each: torn last rows it dropped (a kill or a
    /// full disk mid-write), files torn before their header was whole.
    pub repairs: Vec<String>,
    /// Declared last: released after the files above are flushed and closed.
    _lock: FolderLock,
}

/// The (point, worker) of every row of `table`, in its order.
fn recorded_rows(table: &CsvText, path: &Path) -> Result<Vec<(usize, usize)>, ResultsError> {
    let points = table.numbers(point_column::POINT, path)?;
    let workers = match table.column(point_column::WORKER) {
        Some(_) => table.numbers(point_column::WORKER, path)?,
        None => vec![0.0; points.len()],
    };
    let index = |value: f64, name: &str| match value >= 0.0 && value.fract() == 0.0 {
        true => Ok(value as usize),
        false => Err(ResultsError::Mismatch {
            path: path.to_path_buf(),
            reason: format!("{value} in column {name:?} is not an index"),
        }),
    };
    points
        .into_iter()
        .zip(workers)
        .map(|(p, w)| {
            Ok((
                index(p, point_column::POINT)?,
                index(w, point_column::WORKER)?,
            ))
        })
        .collect()
}

/// What a sweep does with a results set already in its folder.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Existing {
    /// Refuse it (the default): two runs' rows are never mixed by accident.
    Refuse,
    /// Continue it (`--resume`).
    Resume,
    /// Remove it and start afresh (`--force`); only a folder vkerode made.
    Replace,
}

/// Removes everything in `dir` but its marker, whose lock the caller holds.
fn clear_folder(dir: &Path) -> Result<(), ResultsError> {
    for entry in fs::read_dir(dir).map_err(io_error(dir))? {
        let path = entry.map_err(io_error(dir))?.path();
        if path.file_name().is_some_and(|n| n == MARKER) {
            continue;
        }
        let removed = match path.is_dir() {
            true => fs::remove_dir_all(&path),
            false => fs::remove_file(&path),
        };
        removed.map_err(io_error(&path))?;
    }
    Ok(())
}

impl ResultsWriter {
    /// Starts a new results set in `dir`, or continues one made by the same config on
    /// the same device (`Existing::Resume`; an older set's points.csv is first rewritten
    /// on the current columns), or replaces one (`Existing::Replace`). An existing set
    /// is otherwise an error.
    pub fn open(dir: &Path, meta: Meta, existing: Existing) -> Result<Self, ResultsError> {
        // Before the lock marks it: a folder vkerode did not make is never cleared, nor
        // written into (a later --force would clear it).
        check_replaceable(&resolved(dir)?, true).or_else(|e| match e {
            // A set from before the marker: its own points.csv says what it is.
            OutputError::NotOurs { .. }
                if existing != Existing::Replace && dir.join(POINTS_CSV).is_file() =>
            {
                Ok(())
            }
            e => Err(e),
        })?;
        let lock = FolderLock::take(dir)?;
        if existing == Existing::Replace {
            clear_folder(dir)?;
        }
        let resume = existing == Existing::Resume;
        remove_dead_leftovers(dir, None);
        let points_path = dir.join(POINTS_CSV);
        let samples_path = dir.join(SAMPLES_CSV);
        let exists = points_path.exists();
        let mut repairs = Vec::new();
        let mut completed = BTreeSet::new();
        if exists && !resume {
            return Err(ResultsError::Mismatch {
                path: points_path,
                reason: "results already exist here; pass --resume to continue them or --force to replace them".into(),
            });
        }
        if !exists && !is_empty(&samples_path)? {
            return Err(ResultsError::Mismatch {
                path: samples_path,
                reason: "has samples but the set has no points.csv to say which points they are of; pass --force to start the set afresh".into(),
            });
        }
        let meta = if exists {
            let old = Meta::read(dir)?;
            if let Some(reason) = old.refuses_to_continue_with(&meta) {
                return Err(ResultsError::Mismatch {
                    path: dir.join(META_JSON),
                    reason,
                });
            }
            // As merge checks a shard: a config edited since it was hashed.
            if let Some(reason) = old.edited_config() {
                return Err(ResultsError::Mismatch {
                    path: dir.join(META_JSON),
                    reason,
                });
            }
            for path in [&points_path, &samples_path] {
                repairs.extend(drop_torn_last_row(path)?);
            }
            // This schema's columns are exact (an older one is refused above).
            if !is_empty(&points_path)? && CsvText::read(&points_path)?.header != point_header() {
                return Err(ResultsError::Mismatch {
                    path: points_path,
                    reason: "its header is not the one this vkerode writes (a column renamed or dropped): refused rather than guessed at; restore it, or pass --force to start afresh".into(),
                });
            }
            // Everything read and checked before anything is rewritten. A file cut
            // before its header ended holds no row.
            let table = match is_empty(&points_path)? {
                true => CsvText {
                    header: point_header(),
                    rows: Vec::new(),
                },
                false => read_points(&points_path)?,
            };
            let mut table = table;
            let rows = recorded_rows(&table, &points_path)?;
            let mismatch = |reason: String| ResultsError::Mismatch {
                path: points_path.clone(),
                reason,
            };
            for (i, &(point, worker)) in rows.iter().enumerate() {
                if let Some(outside) = old.outside_the_sweep(point, worker) {
                    return Err(mismatch(format!("line {}: {outside}", i + 2)));
                }
                if rows[..i].contains(&(point, worker)) {
                    return Err(mismatch(format!(
                        "line {}: point {point} on worker {worker} is recorded twice",
                        i + 2
                    )));
                }
            }
            let mut samples = read_samples(&samples_path)?;
            if let Some(bad) = samples.iter().find(|s| !is_time(s.gpu_ms)) {
                return Err(ResultsError::Mismatch {
                    path: samples_path.clone(),
                    reason: format!(
                        "point {} repetition {}: gpu_ms is {}; a time is finite and above 0",
                        bad.point, bad.rep, bad.gpu_ms
                    ),
                });
            }
            // A row whose samples are not all there (a torn samples row dropped above)
            // records no point: both go, and the point is measured again.
            let mut counts: BTreeMap<(usize, usize), usize> = BTreeMap::new();
            for s in &samples {
                *counts.entry((s.point, s.worker)).or_default() += 1;
            }
            let wanted: Vec<Option<usize>> =
                table.point_rows().map(|row| row.reps_count()).collect();
            let mut kept = Vec::new();
            for ((row, key), want) in std::mem::take(&mut table.rows)
                .into_iter()
                .zip(rows)
                .zip(wanted)
            {
                let have = counts.get(&key).copied().unwrap_or(0);
                match want.is_none_or(|w| w == have) {
                    true => {
                        completed.insert(key);
                        kept.push(row);
                    }
                    false => repairs.push(format!(
                        "point {} on worker {} had {have} of its {} samples: it is measured again",
                        key.0,
                        key.1,
                        want.unwrap_or_default()
                    )),
                }
            }
            table.rows = kept;
            samples.retain(|r| completed.contains(&(r.point, r.worker)));
            table.write(&points_path)?;
            write_rows(&samples_path, &samples)?;
            old
        } else {
            meta.write(dir)?;
            meta
        };
        let points = append_csv(&points_path, &point_header())?;
        let samples = append_csv(&samples_path, &header_of::<SampleRow>())?;
        Ok(Self {
            dir: dir.to_path_buf(),
            meta,
            points,
            samples,
            failed: None,
            completed,
            repairs,
            _lock: lock,
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Whether some worker recorded `point`.
    pub fn is_complete(&self, point: usize) -> bool {
        self.completed.iter().any(|&(p, _)| p == point)
    }

    /// Whether `worker` recorded `point`.
    pub fn is_complete_on(&self, point: usize, worker: usize) -> bool {
        self.completed.contains(&(point, worker))
    }

    pub fn meta(&self) -> &Meta {
        &self.meta
    }

    /// Rewrites points.csv whole, atomically, with `change` applied to its table; the
    /// folder stays locked.
    pub fn rewrite_points(
        &mut self,
        change: impl FnOnce(&mut CsvText),
    ) -> Result<(), ResultsError> {
        let path = self.dir.join(POINTS_CSV);
        self.points.flush().map_err(io_error(&path))?;
        let mut table = read_points(&path)?;
        change(&mut table);
        table.write(&path)?;
        self.points = append_csv(&path, &point_header())?;
        Ok(())
    }

    /// Appends the point's samples, then its row (of [`point_header`]'s columns), each
    /// synced to disk.
    pub fn record(
        &mut self,
        (point, worker): (usize, usize),
        row: &Row,
        samples: &[SampleRow],
    ) -> Result<(), ResultsError> {
        let samples_path = self.dir.join(SAMPLES_CSV);
        let points_path = self.dir.join(POINTS_CSV);
        for sample in samples {
            self.samples
                .serialize(sample)
                .map_err(csv_error(&samples_path))?;
        }
        self.samples.flush().map_err(io_error(&samples_path))?;
        // On disk before the row that says they are complete.
        self.samples
            .get_ref()
            .sync_data()
            .map_err(io_error(&samples_path))?;
        self.points
            .write_record(&row.values)
            .map_err(csv_error(&points_path))?;
        self.points.flush().map_err(io_error(&points_path))?;
        self.points
            .get_ref()
            .sync_data()
            .map_err(io_error(&points_path))?;
        self.completed.insert((point, worker));
        Ok(())
    }

    /// Appends a failed point to failed.csv; it has no samples and no row.
    pub fn record_failure(&mut self, row: &FailedRow) -> Result<(), ResultsError> {
        let path = self.dir.join(FAILED_CSV);
        let writer = match &mut self.failed {
            Some(writer) => writer,
            None => self
                .failed
                .insert(append_csv(&path, &header_of::<FailedRow>())?),
        };
        writer.serialize(row).map_err(csv_error(&path))?;
        writer.flush().map_err(io_error(&path))
    }
}

impl ResultsWriter {
    /// Drops from failed.csv (and from meta.json's missing points, of a `--partial`
    /// merge) the points recorded since (`--resume`), and failed.csv once none is left:
    /// both list what is still missing.
    pub fn prune_missing(&mut self) -> Result<(), ResultsError> {
        let workers = self.meta.devices.len().max(1);
        let recorded = |point: usize| match self.meta.replicate {
            true => (0..workers).all(|w| self.is_complete_on(point, w)),
            false => self.is_complete(point),
        };
        let missing: Vec<usize> = self
            .meta
            .missing_points
            .iter()
            .copied()
            .filter(|&p| !recorded(p))
            .collect();
        if missing != self.meta.missing_points {
            self.meta.missing_points = missing;
            self.meta.write(&self.dir)?;
        }
        let path = self.dir.join(FAILED_CSV);
        if let Some(mut writer) = self.failed.take() {
            writer.flush().map_err(io_error(&path))?;
        }
        if !path.exists() {
            return Ok(());
        }
        let rows: Vec<FailedRow> = read_rows(&path)?;
        let count = rows.len();
        // A point of a replicate sweep is done on each worker; others, on any.
        let done = |r: &FailedRow| match self.meta.replicate {
            true => self.is_complete_on(r.point, r.worker),
            false => self.is_complete(r.point),
        };
        let left: Vec<FailedRow> = rows.into_iter().filter(|r| !done(r)).collect();
        match (left.is_empty(), left.len() == count) {
            (true, _) => std::fs::remove_file(&path).map_err(io_error(&path)),
            (false, true) => Ok(()),
            (false, false) => write_rows(&path, &left),
        }
    }
}

/// Cuts a last row that has no line end (the write was cut short) off `path`, and
/// says what it cut. Rows before it are left to the parser, which refuses a garbled
/// one.
fn drop_torn_last_row(path: &Path) -> Result<Option<String>, ResultsError> {
    let bytes = match crate::check_regular_file(path).and_then(|()| std::fs::read(path)) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        read => read.map_err(io_error(path))?,
    };
    let keep = whole_records_length(&bytes);
    if keep == bytes.len() {
        return Ok(None);
    }
    let torn: String = String::from_utf8_lossy(&bytes[keep..])
        .chars()
        .take(40)
        .collect();
    let what = if keep == 0 { "header" } else { "last row" };
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let repair = format!(
        "dropped a torn {what} of {name} ({} bytes: {torn:?})",
        bytes.len() - keep
    );
    let file = OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(io_error(path))?;
    file.set_len(keep as u64).map_err(io_error(path))?;
    file.sync_all().map_err(io_error(path))?;
    Ok(Some(repair))
}

/// How many leading bytes of a CSV file hold whole records, as the CSV parser sees them:
/// a record is whole when it ends in a line break outside quotes and has the header's
/// number of fields. Only the last can be torn (rows are appended); a line break in a
/// quoted value (an input's name) is not the end of its row.
fn whole_records_length(bytes: &[u8]) -> usize {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(bytes);
    let mut header_fields = None;
    let mut last = None;
    let mut record = csv::ByteRecord::new();
    while let Ok(true) = reader.read_byte_record(&mut record) {
        let start = record.position().map_or(0, |p| p.byte() as usize);
        let fields = *header_fields.get_or_insert(record.len());
        last = Some((start, record.len() == fields));
    }
    let Some((start, fields_whole)) = last else {
        return bytes.len();
    };
    let tail = &bytes[start..];
    let quotes_closed = tail.iter().filter(|&&b| b == b'"').count() % 2 == 0;
    match fields_whole && quotes_closed && tail.ends_with(b"\n") {
        true => bytes.len(),
        false => start,
    }
}

/// Whether the file at `path` is missing or empty; a FIFO or a folder there is neither,
/// and is refused as [`crate::check_regular_file`] says.
fn is_empty(path: &Path) -> Result<bool, ResultsError> {
    match crate::check_regular_file(path).and_then(|()| std::fs::metadata(path)) {
        Ok(m) => Ok(m.len() == 0),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(true),
        Err(e) => Err(io_error(path)(e)),
    }
}

/// A CSV opened for appending, with `header` written if it is new.
fn append_csv(path: &Path, header: &[String]) -> Result<csv::Writer<File>, ResultsError> {
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

/// The rows of a CSV of serde rows, read by column name; a file with other columns is
/// refused.
pub fn read_rows<R: Serialize + Default + DeserializeOwned>(
    path: &Path,
) -> Result<Vec<R>, ResultsError> {
    let expected = header_of::<R>();
    let (_, rows) = read_records(path, |header| match header == expected.as_slice() {
        true => Ok(()),
        false => Err(ResultsError::Mismatch {
            path: path.to_path_buf(),
            reason: "its columns are not those this vkerode writes".into(),
        }),
    })?;
    Ok(rows)
}

/// samples.csv by column name, whatever version wrote it, as typed rows
/// ([`SampleRow`] says what older files lack). A missing or empty file has no rows.
pub fn read_samples(path: &Path) -> Result<Vec<SampleRow>, ResultsError> {
    if is_empty(path)? {
        return Ok(Vec::new());
    }
    let (_, rows) = read_records(path, |_| Ok(()))?;
    Ok(rows)
}

fn write_rows<R: Serialize + Default>(path: &Path, rows: &[R]) -> Result<(), ResultsError> {
    write_atomically(path, |out| {
        let mut writer = csv::WriterBuilder::new()
            .has_headers(false)
            .from_writer(out);
        writer
            .write_record(header_of::<R>())
            .map_err(std::io::Error::other)?;
        for row in rows {
            writer.serialize(row).map_err(std::io::Error::other)?;
        }
        writer.flush()
    })
    .map_err(|e| io_error(path)(e.source))
}

/// FNV-1a of a config as vkerode understood it (its serde form), description aside:
/// equal for equal experiments, whatever the file's layout, comments or prose. The one
/// definition of `config_hash`, so a recorded config can be checked against its hash.
pub fn config_hash_of(config: &serde_json::Value) -> String {
    let mut measured = config.clone();
    if let Some(description) = measured.get_mut("description") {
        *description = serde_json::Value::String(String::new());
    }
    let canonical = serde_json::to_string(&measured).expect("a JSON value serializes");
    format!("{:016x}", crate::hash::fnv1a64(canonical.as_bytes()))
}

/// The entries two recorded configs differ in, two levels deep (`fixed.size`,
/// `input_hashes.dem.tif` where an input file changed), the description aside as
/// [`config_hash_of`] has it.
fn config_differences(old: &serde_json::Value, new: &serde_json::Value) -> Vec<String> {
    let entries = |v: &serde_json::Value| v.as_object().cloned().unwrap_or_default();
    let (old, new) = (entries(old), entries(new));
    let keys: BTreeSet<&String> = old
        .keys()
        .chain(new.keys())
        .filter(|k| *k != "description")
        .collect();
    let mut differences = Vec::new();
    for key in keys {
        let (a, b) = (old.get(key), new.get(key));
        match (
            a.and_then(serde_json::Value::as_object),
            b.and_then(serde_json::Value::as_object),
        ) {
            (Some(a), Some(b)) => {
                let inner: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
                differences.extend(
                    inner
                        .into_iter()
                        .filter(|k| a.get(*k) != b.get(*k))
                        .map(|k| format!("{key}.{k}")),
                );
            }
            _ if a != b => differences.push(key.clone()),
            _ => {}
        }
    }
    differences
}

/// The number of points of a recorded config: the product of its axes' lengths.
fn point_count(config: &serde_json::Value) -> usize {
    config["axes"].as_object().map_or(1, |axes| {
        axes.values()
            .map(|values| values.as_array().map_or(1, Vec::len))
            .product()
    })
}

/// Joins shard folders of one sweep into `out`, written whole (`replace`: over an
/// existing `out`), on the current columns. Refuses folders of different configs or
/// devices, a meta.json whose config is not the one its hash records, a folder without
/// its samples, point indices outside the sweep, a row that appears twice (a point, or
/// for `--replicate` sweeps a point on one worker) and, unless `partial`, a set that
/// misses points.
pub fn merge(
    inputs: &[PathBuf],
    out: &Path,
    partial: bool,
    replace: bool,
) -> Result<Merged, ResultsError> {
    let Some(first) = inputs.first() else {
        return Err(ResultsError::Mismatch {
            path: out.to_path_buf(),
            reason: "nothing to merge".into(),
        });
    };
    // The output first: a folder another process writes is refused before any reading.
    let staged = StagedFolder::begin(out, replace, inputs)?;
    let mut meta = Meta::read(first)?;
    let count = point_count(&meta.config);
    let workers = meta.devices.len().max(1);
    let mut points = CsvText {
        header: point_header(),
        rows: Vec::new(),
    };
    let mut samples = Vec::new();
    let mut seen = BTreeSet::new();
    let mut recorded = BTreeSet::new();
    for dir in inputs {
        let mismatch = |path: &Path, reason: String| ResultsError::Mismatch {
            path: path.to_path_buf(),
            reason,
        };
        let meta_path = dir.join(META_JSON);
        let other = Meta::read(dir)?;
        if let Some(reason) = meta.refuses_to_merge(&other, first) {
            return Err(mismatch(&meta_path, reason));
        }
        let path = dir.join(POINTS_CSV);
        let table = read_points(&path)?;
        let rows = recorded_rows(&table, &path)?;
        let samples_path = dir.join(SAMPLES_CSV);
        match crate::check_regular_file(&samples_path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(mismatch(
                    &samples_path,
                    "is missing: a folder is merged with its samples or not at all".into(),
                ))
            }
            checked => checked.map_err(io_error(&samples_path))?,
        }
        let mut sampled = BTreeSet::new();
        for sample in read_samples(&samples_path)? {
            sampled.insert((sample.point, sample.worker));
            samples.push(sample);
        }
        for (row, (point, worker)) in table.rows.into_iter().zip(rows) {
            if let Some(outside) = meta.outside_the_sweep(point, worker) {
                return Err(mismatch(&path, outside));
            }
            if !sampled.contains(&(point, worker)) {
                return Err(mismatch(
                    &samples_path,
                    format!("has no samples of point {point} on worker {worker}"),
                ));
            }
            // Replicate sweeps hold every point once per worker; others, once.
            let key = (point, if meta.replicate { worker } else { 0 });
            if !seen.insert(key) {
                return Err(mismatch(
                    &path,
                    format!("point {point} on worker {worker} is in the inputs twice"),
                ));
            }
            recorded.insert((point, worker));
            points.rows.push(row);
        }
    }
    // Samples of a point without its row: what a kill left between the two appends.
    // The row is what records a point, so they are dropped, and said to be.
    let mut orphans = BTreeSet::new();
    samples.retain(|s| {
        let kept = recorded.contains(&(s.point, s.worker));
        if !kept {
            orphans.insert(s.point);
        }
        kept
    });
    let warnings: Vec<String> = match orphans.is_empty() {
        true => Vec::new(),
        false => vec![format!(
            "dropped the samples of point(s) {orphans:?}, which have no row (a run killed between its samples and its row); a --resume of that shard measures them again"
        )],
    };
    let at = points
        .column(point_column::POINT)
        .expect("a column of the current schema");
    points
        .rows
        .sort_by_key(|row| row[at].parse::<usize>().unwrap_or(usize::MAX));
    let copies = if meta.replicate { workers } else { 1 };
    let missing: Vec<usize> = (0..count)
        .filter(|&p| (0..copies).any(|w| !seen.contains(&(p, w))))
        .collect();
    if !missing.is_empty() && !partial {
        return Err(ResultsError::Mismatch {
            path: out.to_path_buf(),
            reason: format!(
                "the inputs hold {} of the sweep's {count} points; missing: {missing:?}. Pass --partial to merge them anyway (meta.json then lists the missing points)",
                count - missing.len(),
            ),
        });
    }
    samples.sort_by_key(|r| (r.point, r.worker));
    points.write(&staged.path().join(POINTS_CSV))?;
    write_rows(&staged.path().join(SAMPLES_CSV), &samples)?;
    meta.shard = None;
    meta.missing_points = missing;
    meta.merged_from = inputs.iter().map(|p| p.display().to_string()).collect();
    meta.schema_version = SCHEMA_VERSION;
    meta.write(staged.path())?;
    staged.publish(Vec::new())?;
    Ok(Merged {
        points: points.rows.len(),
        warnings,
    })
}

/// What `merge` joined, and what it left out with a warning.
pub struct Merged {
    pub points: usize,
    pub warnings: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// samples.csv of each version committed under results/: before `outlier`, before
    /// `worker`, and now.
    #[test]
    fn samples_of_every_version_read_by_name() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let path = dir.join(SAMPLES_CSV);
        let read = |text: &str| {
            std::fs::write(&path, text).unwrap();
            read_samples(&path).unwrap()
        };
        let oldest = read("experiment,point,rep,gpu_ms,wall_ms\nwg,3,1,2.5,3.5\n");
        assert_eq!(
            oldest,
            [SampleRow {
                experiment: "wg".into(),
                point: 3,
                worker: 0,
                rep: 1,
                gpu_ms: 2.5,
                wall_ms: 3.5,
                outlier: false,
            }]
        );
        let marked = read("experiment,point,rep,gpu_ms,wall_ms,outlier\nwg,3,1,2.5,3.5,true\n");
        assert!(marked[0].outlier);
        let now =
            read("experiment,point,worker,rep,gpu_ms,wall_ms,outlier\nwg,3,2,1,2.5,3.5,false\n");
        assert_eq!((now[0].worker, now[0].outlier), (2, false));
        std::fs::write(&path, "experiment,point,gpu_ms,wall_ms\nwg,3,2.5,3.5\n").unwrap();
        assert!(read_samples(&path).is_err(), "a file without rep");
    }

    /// A row torn by a full disk (SIGXFSZ) just after the line break inside an input's
    /// quoted name: cut at the row's start, where the CSV parser sees it begin.
    #[test]
    fn a_torn_row_is_cut_where_the_csv_parser_sees_it_begin() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let path = dir.join("points.csv");
        let whole = "point,input,gpu_ms\n0,\"a\nb.tif\",1.5\n";
        for torn in ["1,\"c\n", "1,\"c\nd.tif\",", "1,\"c\nd.tif\",2.5", "1"] {
            std::fs::write(&path, format!("{whole}{torn}")).unwrap();
            let repair = drop_torn_last_row(&path).unwrap();
            assert!(repair.is_some_and(|r| r.contains("last row")), "{torn:?}");
            assert_eq!(std::fs::read_to_string(&path).unwrap(), whole, "{torn:?}");
        }
        std::fs::write(&path, whole).unwrap();
        assert_eq!(
            drop_torn_last_row(&path).unwrap(),
            None,
            "a whole file is kept"
        );
        std::fs::write(&path, "point,inp").unwrap();
        assert!(drop_torn_last_row(&path)
            .unwrap()
            .is_some_and(|r| r.contains("header")));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "");
    }

    /// Every committed meta.json of schema 2 or later hashes its config to the hash it
    /// records: the one definition matches the sets made before it, so they still merge
    /// and resume.
    #[test]
    fn committed_configs_hash_to_their_recorded_hash() {
        fn metas(dir: &Path, out: &mut Vec<PathBuf>) {
            for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    metas(&path, out);
                } else if path.file_name().is_some_and(|n| n == META_JSON) {
                    out.push(path);
                }
            }
        }
        let mut found = Vec::new();
        metas(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("results"),
            &mut found,
        );
        assert!(found.len() > 10, "{found:?}");
        let checked = found
            .iter()
            .filter(|p| {
                std::fs::read_to_string(p).is_ok_and(|t| t.contains("\"schema_version\": 2"))
            })
            .count();
        assert!(checked > 3, "{checked} sets of schema 2");
        let wrong: Vec<String> = found
            .iter()
            .filter_map(|path| {
                let meta: Meta = serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
                if meta.schema_version < 2 {
                    return None;
                }
                let hash = config_hash_of(&meta.config);
                (hash != meta.config_hash).then(|| format!("{}: {hash}", path.display()))
            })
            .collect();
        assert!(wrong.is_empty(), "{wrong:#?}");
    }
}
