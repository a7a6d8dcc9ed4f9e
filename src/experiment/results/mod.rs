//! A sweep's results folder: `points.csv` (one row per point, `schema.rs`),
//! `samples.csv` (every timed repetition), `failed.csv` and `meta.json` (where they
//! came from, `store.rs`). Rows are appended and flushed as each point completes;
//! `--resume` skips completed points; shard folders merge into one; older files are
//! read on the current columns (`csv_text.rs`, a file as `CsvText`).

pub mod columns;
mod csv_text;
mod measurement;
mod point_row;
mod schema;
mod store;

pub use csv_text::{read_points, read_records, CsvText};
pub use measurement::{is_time, Measurement, Sample, StopReason, WarmUp};
pub use point_row::{name as point_column, PointRow};
pub use schema::{
    input_columns, owner_of, point_columns, point_header, point_row, FailedRow, InputRecord,
    PointValues, SampleRow, StageTimes, SCHEMA_VERSION,
};
pub use store::{
    config_hash_of, merge, read_rows, read_samples, Existing, Merged, Meta, ResultsWriter,
    SweepSource, WorkerDevice,
};

use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::terrain::output::{OutputError, MARKER};
use crate::PathIoError;

pub const POINTS_CSV: &str = "points.csv";
pub const SAMPLES_CSV: &str = "samples.csv";
pub const FAILED_CSV: &str = "failed.csv";
pub const META_JSON: &str = "meta.json";

/// A results set's file `name`: in the folder `set`, or beside `set` where it names a
/// points.csv file (`set` itself, for points.csv).
pub fn set_file(set: &Path, name: &str) -> PathBuf {
    if set.is_dir() {
        set.join(name)
    } else if name == POINTS_CSV {
        set.to_path_buf()
    } else {
        crate::terrain::files::parent_of(set).join(name)
    }
}

/// The files of the results set `set` (its folder, or its points.csv), there or not: a
/// command's output file may be none of them.
pub fn set_files(set: &Path) -> Vec<PathBuf> {
    [POINTS_CSV, SAMPLES_CSV, FAILED_CSV, META_JSON, MARKER]
        .iter()
        .map(|name| set_file(set, name))
        .collect()
}

#[derive(Debug, Error)]
pub enum ResultsError {
    #[error(transparent)]
    Io(#[from] PathIoError),
    #[error("{}", path.display())]
    Csv {
        path: PathBuf,
        #[source]
        source: csv::Error,
    },
    #[error("{}: {reason}", path.display())]
    Mismatch { path: PathBuf, reason: String },
    #[error(transparent)]
    Output(#[from] OutputError),
}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> ResultsError + '_ {
    move |source| PathIoError::new(path, source).into()
}

fn csv_error(path: &Path) -> impl FnOnce(csv::Error) -> ResultsError + '_ {
    move |source| ResultsError::Csv {
        path: path.to_path_buf(),
        source,
    }
}
