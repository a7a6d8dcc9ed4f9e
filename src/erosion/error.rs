//! What goes wrong in a strategy: its settings, the device, the map.

use thiserror::Error;

use super::droplets::{CacheWindowError, Model, NoBuild, NoReplay, ParamError};
use super::keys::SettingError;
use crate::gpu::GpuError;
use crate::terrain::HeightmapError;

#[derive(Debug, Error)]
pub enum ErosionError {
    #[error("workgroup size {requested} is not supported: this device allows 1 to {limit} invocations along x")]
    Workgroup { requested: u32, limit: u32 },
    #[error("this device does not support {0}")]
    Unsupported(&'static str),
    #[error(transparent)]
    NoBuild(#[from] NoBuild),
    /// A module the build should have compiled (a gap between build.rs and the variants).
    #[error("{0} has no compiled module")]
    NoModule(String),
    #[error("{reserved} bytes of reserved and {cached} of cached shared memory are above this device's limit of {limit} bytes")]
    SharedMemory {
        reserved: u32,
        cached: u64,
        limit: u32,
    },
    #[error(
        "the job's tile of {job} cells is not the {built} the tile-cache kernel was built for"
    )]
    TileMismatch { job: u32, built: u32 },
    #[error("the job's fixed-point scale {job} is not the {built} the kernel was built with")]
    ScaleMismatch { job: f32, built: f32 },
    #[error("the job's {job:?} is not the {built:?} the kernel was built with")]
    ModelMismatch { job: Model, built: Model },
    #[error("{kernels} run on {heights} heights")]
    Heights {
        kernels: &'static str,
        heights: &'static str,
    },
    #[error("{model}'s CPU reference runs on one core: use --engine cpu-sequential")]
    SequentialOnly { model: &'static str },
    #[error(transparent)]
    NoReplay(#[from] NoReplay),
    #[error("recording the addresses of {droplets} droplets of {lifetime} steps needs {bytes} bytes, above this device's storage buffer range of {limit}: record fewer droplets")]
    RecordTooLarge {
        droplets: u32,
        lifetime: u32,
        bytes: u64,
        limit: u64,
    },
    #[error("the recording run kept no addresses")]
    NoRecord,
    #[error("the job needs kernel {needed}, not {built} (passes, stagger, tiled spawning and the corrected physics each need their own build; the fast kernels run one pass)")]
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
    /// A counted run found mass that the model must conserve lost or made.
    #[error("balance check: {0}")]
    Balance(String),
    #[error(transparent)]
    CacheWindow(#[from] CacheWindowError),
    #[error(transparent)]
    Param(#[from] ParamError),
    #[error(transparent)]
    Setting(#[from] SettingError),
    #[error(transparent)]
    Heightmap(#[from] HeightmapError),
    #[error(transparent)]
    Gpu(#[from] GpuError),
}
