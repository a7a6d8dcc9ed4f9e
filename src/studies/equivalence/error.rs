//! What can stop an equivalence run.

use thiserror::Error;

use super::plan::PlanError;
use crate::erosion::{ErosionError, TableError};
use crate::experiment::run::{InvariantError, RunError};
use crate::experiment::ConfigError;
use crate::terrain::files::WriteError;

#[derive(Debug, Error)]
pub enum EquivalenceError {
    #[error(transparent)]
    Plan(#[from] PlanError),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Run(#[from] RunError),
    #[error(transparent)]
    Erosion(#[from] ErosionError),
    #[error(transparent)]
    Write(#[from] WriteError),
    #[error(transparent)]
    Invariant(#[from] InvariantError),
    /// A variant's settings over a configuration's: refused by the plan's check before
    /// any run, so only a bug gets here.
    #[error(transparent)]
    Settings(#[from] TableError),
    /// A group the device refuses: a setting past its limits, or a feature it lacks.
    #[error("{configuration} ({variant}): {reason}")]
    Refused {
        configuration: String,
        variant: String,
        reason: String,
    },
    /// Runs that failed on the CPU workers, each named.
    #[error("{}", failures_line(.0))]
    Failed(Vec<RunFailure>),
    /// `job`: the reference's job key.
    #[error("the sequential reference of {job} seed {seed} did not run")]
    ReferenceMissing { job: String, seed: u32 },
}

/// A run that failed on a CPU worker: its figures, or a sequential reference.
#[derive(Debug, Error)]
pub enum RunFailure {
    #[error("{group} seed {seed}: the run changed the map's shape")]
    ShapeChanged { group: String, seed: u32 },
    #[error("the sequential reference, seed {seed}: {error}")]
    Reference { seed: u32, error: ReferenceError },
}

/// Why a sequential reference run failed.
#[derive(Debug, Error)]
pub enum ReferenceError {
    /// With its causes, on one line.
    #[error("{}", crate::error_chain(.0))]
    Erosion(ErosionError),
    #[error("the reference changed the map's shape")]
    ShapeChanged,
}

fn failures_line(failures: &[RunFailure]) -> String {
    let lines: Vec<String> = failures.iter().map(ToString::to_string).collect();
    lines.join("; ")
}
