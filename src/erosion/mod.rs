//! The droplet-erosion kernels' drivers, and a CPU reference of the same algorithm.

mod batches;
pub mod cache;
mod contention;
pub mod cpu;
mod gpu;
mod hash;
mod params;
pub mod peak;
pub mod pipes;
mod runner;
mod spawn;
mod variant;

pub use batches::{default_batch, plan_batches, plan_phased, Batch, DEFAULT_CELLS_PER_DROPLET};
pub use contention::Contention;
pub use gpu::{DropletKernel, FixedHeightfield};
pub use hash::{droplet_start, pcg_hash};
pub use params::{
    AtomicMode, DropletJob, KernelParams, Model, ParamError, Passes, Physics, Rounding,
};
pub use runner::{DropletRunner, GpuRun, RunMode};
pub use spawn::{Spawn, SpawnMode, TileOrder};
pub use variant::{DropletShader, KernelVariant, Lever, SpirvBuild};

use thiserror::Error;

use crate::gpu::GpuError;

/// The strategy: the paper's droplets with atomics, or the grid-centric virtual-pipe
/// shallow-water model (Mei et al. 2007).
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum Algorithm {
    #[default]
    Droplets,
    Pipes,
}

/// Bilinear splatting: every step of the paper's kernel issues four atomicAdds.
pub const ATOMICS_PER_STEP: u64 = 4;

#[derive(Debug, Error)]
pub enum ErosionError {
    #[error("workgroup size {requested} is not supported: this device allows 1 to {limit} invocations along x")]
    Workgroup { requested: u32, limit: u32 },
    #[error("this device does not support {0}")]
    Unsupported(&'static str),
    #[error("{0}")]
    Variant(String),
    #[error("the job needs kernel {needed}, not {built} (passes, stagger and tiled spawning each need their own build; the fast kernels run one pass)")]
    VariantMismatch { needed: String, built: String },
    #[error("the droplet batch must be at least 1")]
    Batch,
    #[error("the map is {width} x {height} cells; the droplet kernel needs at least {min} x {min}", min = crate::terrain::MIN_SIZE)]
    MapTooSmall { width: u32, height: u32 },
    #[error("a {width} x {height} map cannot hold {cells} cells (or is past 2^31 cells)")]
    MapShape {
        width: u32,
        height: u32,
        cells: usize,
    },
    #[error("the counted run (mass accounting) keeps four numbers per droplet, and this device's maxStorageBufferRange holds them for at most {limit} droplets; {droplets} asked for. Use fewer droplets per run")]
    CountedDroplets { droplets: u32, limit: u64 },
    #[error(transparent)]
    Param(#[from] ParamError),
    #[error(transparent)]
    PipesParam(#[from] pipes::PipesParamError),
    #[error(transparent)]
    Gpu(#[from] GpuError),
}

/// Work a run did: droplets started, steps taken, atomics issued.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct WorkCount {
    pub droplets: u64,
    pub steps: u64,
    pub atomics: u64,
}

impl WorkCount {
    pub fn new(droplets: u64, steps: u64) -> Self {
        Self {
            droplets,
            steps,
            atomics: steps * ATOMICS_PER_STEP,
        }
    }

    /// From the instrumented kernel's counts: each step issues four atomics.
    pub fn from_atomics(droplets: u64, atomics: u64) -> Self {
        Self {
            droplets,
            steps: atomics / ATOMICS_PER_STEP,
            atomics,
        }
    }
}
