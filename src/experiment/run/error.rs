//! What can stop one run: its terrain, its strategy, its device or its files.

use thiserror::Error;

use super::InvariantError;
use crate::erosion::{ErosionError, SettingError};
use crate::gpu::GpuError;
use crate::probes::ProbeError;
use crate::terrain::files::WriteError;
use crate::terrain::formats::FormatError;
use crate::terrain::output::OutputError;
use crate::terrain::{HeightmapError, TerrainError};
use crate::PathIoError;

#[derive(Debug, Error)]
pub enum RunError {
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
    Setting(#[from] SettingError),
    #[error(transparent)]
    Probe(#[from] ProbeError),
    #[error(transparent)]
    Invariant(#[from] InvariantError),
    #[error("the GPU engine needs a Vulkan device")]
    NoDeviceForGpuEngine,
    #[error(transparent)]
    Io(#[from] PathIoError),
}

impl RunError {
    /// The device's failure behind this error, if it is one.
    pub fn gpu_failure(&self) -> Option<&GpuError> {
        match self {
            Self::Gpu(e)
            | Self::Erosion(ErosionError::Gpu(e))
            | Self::Terrain(TerrainError::Gpu(e))
            | Self::Probe(ProbeError::Gpu(e)) => Some(e),
            _ => None,
        }
    }
}
