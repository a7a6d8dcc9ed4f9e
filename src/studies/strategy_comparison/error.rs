//! What can stop the strategies' comparison once its config has loaded.

use thiserror::Error;

use crate::erosion::ErosionError;
use crate::experiment::report::plot::PlotError;
use crate::experiment::run::RunError;
use crate::terrain::files::WriteError;
use crate::PathIoError;

#[derive(Debug, Error)]
pub enum ComparisonError {
    /// One run of a strategy on a terrain.
    #[error(transparent)]
    Run(#[from] RunError),
    /// Its cost, timed again after the run.
    #[error(transparent)]
    Erosion(#[from] ErosionError),
    #[error("this device does not support GPU timestamps, which the cost axis needs")]
    NoTimestamps,
    #[error(transparent)]
    Plot(#[from] PlotError),
    #[error(transparent)]
    Write(#[from] WriteError),
    #[error(transparent)]
    Io(#[from] PathIoError),
}
