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

use crate::erosion::{ErosionError, SettingError};
use crate::gpu::GpuError;
use crate::probes::ProbeError;
use crate::terrain::files::WriteError;
use crate::terrain::formats::FormatError;
use crate::terrain::output::OutputError;
use crate::terrain::{HeightmapError, TerrainError};

/// A config problem: the file, the key and the reason.
#[derive(Debug, Error)]
#[error("{}: {key}: {reason}", file.display())]
pub struct ConfigError {
    pub file: PathBuf,
    pub key: String,
    pub reason: String,
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
    Gpu(#[from] GpuError),
    #[error(transparent)]
    Write(#[from] WriteError),
    #[error(transparent)]
    Format(#[from] FormatError),
    #[error(transparent)]
    Output(#[from] OutputError),
    #[error(transparent)]
    Results(#[from] results::ResultsError),
    #[error(transparent)]
    Setting(#[from] SettingError),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Probe(#[from] ProbeError),
    #[error(transparent)]
    Plot(#[from] report::plot::PlotError),
    #[error(transparent)]
    Html(#[from] report::HtmlError),
    #[error(transparent)]
    Sweep(#[from] sweep::SweepError),
    #[error(transparent)]
    Invariant(#[from] run::InvariantError),
    #[error("the GPU engine needs a Vulkan device")]
    NoDeviceForGpuEngine,
    #[error("{}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}
