//! Running erosion as an experiment: requests, figures, provenance and output files.

pub mod compare;
pub mod config;
mod erode;
mod figures;
pub mod gpu_state;
pub mod kernels;
pub mod measure;
pub mod peak;
pub mod pipes;
pub mod plot;
mod provenance;
pub mod results;
mod rows;
pub mod settings;
pub mod stability;
pub mod strategies;
pub mod sweep;
mod workers;

pub use erode::{
    run_erosion, write_outcome, Engine, ErodeOutcome, ErodeReport, ErodeRequest, OutputOptions,
    TerrainReport, TerrainSource,
};
pub use figures::{ChangeFigures, RunFigures, TimeSource};
pub use provenance::{device_slug, Provenance};

use std::path::PathBuf;

use thiserror::Error;

use crate::erosion::{ErosionError, ParamError};
use crate::gpu::GpuError;
use crate::terrain::files::WriteError;
use crate::terrain::formats::FormatError;
use crate::terrain::{HeightmapError, TerrainError};

/// An error and its sources, one after another, as a line for a file or a warning.
pub fn error_chain(error: &dyn std::error::Error) -> String {
    let mut line = error.to_string();
    let mut source = error.source();
    while let Some(e) = source {
        line.push_str(&format!(": {e}"));
        source = e.source();
    }
    line
}

#[derive(Debug, Error)]
pub enum ExperimentError {
    #[error(transparent)]
    Erosion(#[from] ErosionError),
    #[error(transparent)]
    Terrain(#[from] TerrainError),
    #[error(transparent)]
    Heightmap(#[from] HeightmapError),
    #[error(transparent)]
    Param(#[from] ParamError),
    #[error(transparent)]
    Gpu(#[from] GpuError),
    #[error(transparent)]
    Write(#[from] WriteError),
    #[error(transparent)]
    Format(#[from] FormatError),
    #[error(transparent)]
    Results(#[from] results::ResultsError),
    #[error(transparent)]
    Setting(#[from] settings::SettingError),
    #[error("{0}")]
    Clocks(String),
    /// A counted run found mass that the model must conserve lost or made.
    #[error("balance check: {0}")]
    Balance(String),
    #[error("the GPU engine needs a Vulkan device")]
    NoDeviceForGpuEngine,
    #[error("{}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}
