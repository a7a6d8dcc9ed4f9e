//! What can stop an equivalence run.

use thiserror::Error;

use super::plan::PlanError;
use crate::erosion::ErosionError;
use crate::experiment::{ConfigError, ExperimentError};
use crate::terrain::files::WriteError;

#[derive(Debug, Error)]
pub enum EquivalenceError {
    #[error(transparent)]
    Plan(#[from] PlanError),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Experiment(#[from] ExperimentError),
    #[error(transparent)]
    Erosion(#[from] ErosionError),
    #[error(transparent)]
    Write(#[from] WriteError),
    /// A run broke an invariant, or a group could not run on the device.
    #[error("{0}")]
    Run(String),
}
