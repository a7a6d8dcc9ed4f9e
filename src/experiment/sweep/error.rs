//! Why a sweep did not start or stopped, and which failures end only a point.

use crate::experiment::results::ResultsError;
use crate::experiment::run::RunError;
use crate::gpu::GpuError;
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
    /// A point's run: its device's failure ends only the point ([`Self::gpu_failure`]),
    /// any other the sweep.
    #[error(transparent)]
    Run(#[from] RunError),
    #[error(transparent)]
    Results(#[from] ResultsError),
}

impl SweepError {
    /// The device's failure behind this error, if it is one.
    pub fn gpu_failure(&self) -> Option<&GpuError> {
        match self {
            Self::Run(run) => run.gpu_failure(),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::erosion::ErosionError;
    use crate::probes::ProbeError;
    use crate::terrain::TerrainError;

    fn lost() -> GpuError {
        GpuError::DeviceLost {
            call: "vkQueueSubmit",
        }
    }

    /// The device's failure ends the point wherever in the run it came from; the
    /// sweep's own files and settings end the sweep.
    #[test]
    fn a_device_failure_at_any_depth_of_a_run_ends_only_the_point() {
        let from_the_device = [
            RunError::Gpu(lost()),
            RunError::Erosion(ErosionError::Gpu(lost())),
            RunError::Terrain(TerrainError::Gpu(lost())),
            RunError::Probe(ProbeError::Gpu(lost())),
        ];
        for run in from_the_device {
            let error = SweepError::Run(run);
            assert!(
                error.gpu_failure().is_some_and(GpuError::is_device_lost),
                "{error:?}"
            );
        }
        let its_own = [
            SweepError::Run(RunError::NoDeviceForGpuEngine),
            SweepError::Results(ResultsError::Mismatch {
                path: "points.csv".into(),
                reason: "a column short".into(),
            }),
            SweepError::NoDevice,
        ];
        for error in its_own {
            assert!(error.gpu_failure().is_none(), "{error:?}");
        }
    }
}
