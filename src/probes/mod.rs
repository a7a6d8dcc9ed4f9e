//! Device probes: the ceilings a strategy's rate is held against (random-address and
//! droplet-shaped atomic rates, the streaming copy's bandwidth), the cache
//! microbenchmark, and the driver's compiler statistics of the droplet kernels. None of
//! them does erosion arithmetic.

pub mod atomic;
pub mod cache;
pub mod ceilings;
pub mod gpu_state;
pub mod kernels;

use thiserror::Error;

use crate::erosion::ErosionError;
use crate::gpu::GpuError;
use crate::terrain::files::WriteError;
use crate::PathIoError;

#[derive(Debug, Error)]
pub enum ProbeError {
    #[error("workgroup size {requested} is not supported: this device allows 1 to {limit} invocations along x")]
    Workgroup { requested: u32, limit: u32 },
    #[error("{0}")]
    Probe(String),
    #[error(transparent)]
    Gpu(#[from] GpuError),
    #[error(transparent)]
    Erosion(#[from] ErosionError),
    #[error(transparent)]
    Write(#[from] WriteError),
    #[error(transparent)]
    Io(#[from] PathIoError),
}
