//! The core every study runs on, in parts that depend only downward: one run of any
//! strategy (`run/`), a results folder (`results/`), sweeps of many points over one or
//! more devices (`sweep/`, which records into `results/`), and the reports made from
//! results (`report/`, which reads them and nothing else). The studies built on these
//! (equivalence, the strategies compared by dose, the paper's claims) live one layer up,
//! in `crate::studies`.

pub mod report;
pub mod results;
pub mod run;
pub mod sweep;

pub use run::{
    run_erosion, write_outcome, ChangeFigures, Engine, ErodeOutcome, ErodeReport, ErodeRequest,
    InputError, InputUnits, OutputOptions, Provenance, RunFigures, TerrainReport, TerrainSource,
    TimeSource,
};

use std::path::PathBuf;

use thiserror::Error;

/// A config problem: the file, the key and the reason.
#[derive(Debug, Error)]
#[error("{}: {key}: {reason}", file.display())]
pub struct ConfigError {
    pub file: PathBuf,
    pub key: String,
    pub reason: String,
}
