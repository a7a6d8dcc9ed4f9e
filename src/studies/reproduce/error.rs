//! What can stop a reproduction, or the judging again of one.

use thiserror::Error;

use crate::experiment::report::HtmlError;
use crate::experiment::results::ResultsError;
use crate::experiment::sweep::SweepError;
use crate::experiment::ConfigError;
use crate::studies::strategy_comparison::ComparisonError;
use crate::terrain::files::WriteError;
use crate::{readable_number, PathIoError};

#[derive(Debug, Error)]
pub enum ReproduceError {
    /// A budget the suite cannot keep, refused before any work.
    #[error(
        "a budget of {} s is below the suite's floor of {} s (its calibration at 64² and the end it keeps); give --budget {}s or more",
        readable_number(*budget_s),
        readable_number(*floor_s),
        readable_number(*floor_s)
    )]
    BudgetBelowFloor { budget_s: f64, floor_s: f64 },
    /// A step's generated config, refused: a gap between the suite and the configs.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A sweep step.
    #[error(transparent)]
    Sweep(#[from] SweepError),
    /// The grid step.
    #[error(transparent)]
    Grid(#[from] ComparisonError),
    /// The steps' files, read back to judge.
    #[error(transparent)]
    Results(#[from] ResultsError),
    #[error(transparent)]
    Html(#[from] HtmlError),
    #[error(transparent)]
    Write(#[from] WriteError),
    #[error(transparent)]
    Io(#[from] PathIoError),
}
