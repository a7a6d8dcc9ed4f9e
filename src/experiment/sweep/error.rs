//! Why a sweep did not start, or stopped: its own failures, apart from a point's.

use crate::probes::gpu_state::ClockLockError;

/// Why a sweep did not start, or stopped before its last point.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    #[error("a sweep needs a device")]
    NoDevice,
    /// `--lock-sm-clock` on a device NVML does not know.
    #[error("--lock-sm-clock needs NVML, which does not know {device}")]
    NoNvml { device: String },
    /// Not its source: its message already ends with NVML's answer, which `{:#}` would
    /// print twice.
    #[error("{0}")]
    ClockLock(ClockLockError),
    /// `why`: the sweep's reason to stop, or its first failed point.
    #[error("the {name} sweep stopped: {why}")]
    Stopped { name: String, why: String },
}
