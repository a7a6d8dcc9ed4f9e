//! The GPU's state around each measured point, through NVML on NVIDIA devices: SM and
//! memory clocks, temperature, power and throttle reasons, and the hardware counters of
//! NVML's GPU performance monitoring (GPM, Hopper and newer) over a window of runs.
//! Elsewhere (lavapipe, other vendors, older NVIDIA GPUs) there is no monitor or no GPM
//! and the figures are left empty, never zero.

use std::time::{Duration, Instant};

use nvml_wrapper::bitmasks::device::ThrottleReasons;
use nvml_wrapper::enum_wrappers::device::{Clock, TemperatureSensor};
use nvml_wrapper::enums::device::GpuLockedClocksSetting;
use nvml_wrapper::enums::gpm::GpmMetricId;
use nvml_wrapper::{Device, Nvml};
use serde::{Deserialize, Serialize};

use crate::gpu::DeviceInfo;

/// What NVML says of the GPU at one moment.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GpuState {
    pub sm_mhz: u32,
    pub memory_mhz: u32,
    pub temperature_c: u32,
    pub power_w: f64,
    /// NVML's clocks-throttle-reason bits.
    pub throttle: u64,
}

impl GpuState {
    /// The throttle reasons that slow a busy GPU: all but idle and the applications
    /// clocks setting, which are the normal state of a GPU that waits.
    pub fn slowing_reasons(&self) -> Vec<&'static str> {
        let reasons = ThrottleReasons::from_bits_truncate(self.throttle);
        [
            (ThrottleReasons::SW_POWER_CAP, "sw-power-cap"),
            (ThrottleReasons::HW_SLOWDOWN, "hw-slowdown"),
            (ThrottleReasons::SYNC_BOOST, "sync-boost"),
            (ThrottleReasons::SW_THERMAL_SLOWDOWN, "sw-thermal"),
            (ThrottleReasons::HW_THERMAL_SLOWDOWN, "hw-thermal"),
            (ThrottleReasons::HW_POWER_BRAKE_SLOWDOWN, "hw-power-brake"),
        ]
        .into_iter()
        .filter(|(bit, _)| reasons.contains(*bit))
        .map(|(_, name)| name)
        .collect()
    }

    /// The slowing reasons '+'-joined, or `none`, so that a GPU that reported none is not
    /// mistaken for one without NVML.
    pub fn slowing_reasons_text(&self) -> String {
        let reasons = self.slowing_reasons();
        if reasons.is_empty() {
            "none".to_owned()
        } else {
            reasons.join("+")
        }
    }
}

/// Whether a point ran on a slowed GPU: its SM clock fell by more than 5% from before
/// the point to after it, or a slowing throttle reason was set after it.
pub fn slowed(before: &GpuState, after: &GpuState) -> bool {
    f64::from(after.sm_mhz) < 0.95 * f64::from(before.sm_mhz) || !after.slowing_reasons().is_empty()
}

/// NVML GPM's counters over a window of back-to-back runs, as percentages of the
/// window's wall time, so diluted by whatever idle the window holds: `busy_percent`
/// says how much of it the GPU spent in the runs.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GpmCounters {
    /// Warps resident against the SMs' maximum, averaged over the SMs.
    pub sm_occupancy_percent: f64,
    /// Time each SM had at least one warp, averaged over the SMs.
    pub sm_util_percent: f64,
    /// Time the SMs issued integer instructions.
    pub integer_util_percent: f64,
    /// Time the SMs issued FP32 instructions.
    pub fp32_util_percent: f64,
    /// DRAM bandwidth used against its peak.
    pub dram_bandwidth_percent: f64,
    /// Wall time between the two samples.
    pub window_ms: f64,
    /// GPU time of the runs' dispatches against the window (the rest is the host between
    /// submissions and each run's upload of the map).
    pub busy_percent: f64,
}

/// Wall time a GPM window spans at least: NVML computes its metrics from counters
/// sampled at each end, and windows much shorter than 100 ms read noisy. The GPU.md
/// measurements used 0.5 s, which was a third of a 4096² sweep point's wall time.
pub const GPM_WINDOW: Duration = Duration::from_millis(100);

const GPM_METRICS: [GpmMetricId; 5] = [
    GpmMetricId::SmOccupancy,
    GpmMetricId::SmUtil,
    GpmMetricId::IntegerUtil,
    GpmMetricId::Fp32Util,
    GpmMetricId::DramBwUtil,
];

/// NVML, bound to the Vulkan device by its UUID.
pub struct GpuMonitor {
    nvml: Nvml,
    uuid: String,
    locked: bool,
}

impl GpuMonitor {
    /// The monitor of `device`, or `None` where NVML is absent or does not know it.
    pub fn for_device(device: &DeviceInfo) -> Option<Self> {
        let nvml = Nvml::init().ok()?;
        let uuid = device.nvml_uuid();
        nvml.device_by_uuid(uuid.as_str()).ok()?;
        Some(Self {
            nvml,
            uuid,
            locked: false,
        })
    }

    fn device(&self) -> Option<Device<'_>> {
        self.nvml.device_by_uuid(self.uuid.as_str()).ok()
    }

    pub fn read(&self) -> Option<GpuState> {
        let device = self.device()?;
        Some(GpuState {
            sm_mhz: device.clock_info(Clock::SM).ok()?,
            memory_mhz: device.clock_info(Clock::Memory).ok()?,
            temperature_c: device.temperature(TemperatureSensor::Gpu).ok()?,
            power_w: f64::from(device.power_usage().ok()?) / 1e3,
            throttle: device.current_throttle_reasons().ok()?.bits(),
        })
    }

    /// GPM's counters over back-to-back calls of `run` (which returns the GPU time of one
    /// run) for at least [`GPM_WINDOW`]: `Ok(None)`, running nothing, where the GPU has
    /// no GPM; `Ok(None)` too if NVML refuses a sample or a metric, so that no counter
    /// is ever made up.
    pub fn gpm_window<E>(
        &self,
        mut run: impl FnMut() -> Result<Duration, E>,
    ) -> Result<Option<GpmCounters>, E> {
        let Some(device) = self.device().filter(|d| d.gpm_support().unwrap_or(false)) else {
            return Ok(None);
        };
        let started = Instant::now();
        let Ok(first) = device.gpm_sample() else {
            return Ok(None);
        };
        let mut busy = Duration::ZERO;
        while started.elapsed() < GPM_WINDOW {
            busy += run()?;
        }
        let Ok(second) = device.gpm_sample() else {
            return Ok(None);
        };
        let window = started.elapsed();
        let Ok(results) =
            nvml_wrapper::gpm::gpm_metrics_get(&self.nvml, &first, &second, &GPM_METRICS)
        else {
            return Ok(None);
        };
        let values: Option<Vec<f64>> = results
            .into_iter()
            .map(|r| r.ok().map(|m| m.value))
            .collect();
        let Some([occupancy, sm, integer, fp32, dram]) =
            values.and_then(|v| <[f64; 5]>::try_from(v).ok())
        else {
            return Ok(None);
        };
        Ok(Some(GpmCounters {
            sm_occupancy_percent: occupancy,
            sm_util_percent: sm,
            integer_util_percent: integer,
            fp32_util_percent: fp32,
            dram_bandwidth_percent: dram,
            window_ms: window.as_secs_f64() * 1e3,
            busy_percent: 100.0 * busy.as_secs_f64() / window.as_secs_f64(),
        }))
    }

    /// The SM clock's maximum in MHz (its fastest, so its shortest cycle).
    pub fn max_sm_mhz(&self) -> Option<u32> {
        self.device()?.max_clock_info(Clock::SM).ok()
    }

    /// How the clocks are governed: locked by vkerode, or boost up to the maximum, with
    /// the applications clock where the driver reports one.
    pub fn clocks_policy(&self) -> String {
        let Some(device) = self.device() else {
            return "unknown".into();
        };
        let max = device.max_clock_info(Clock::SM).ok();
        let application = device.applications_clock(Clock::SM).ok();
        let describe = |v: Option<u32>| v.map_or("unknown".into(), |mhz| format!("{mhz} MHz"));
        if self.locked {
            format!("SM clock locked by vkerode; max {}", describe(max))
        } else {
            format!(
                "driver default (boost); SM max {}, applications clock {}",
                describe(max),
                describe(application)
            )
        }
    }

    /// Locks the SM clock to `mhz` until the monitor drops (needs root or the driver's
    /// permission; the error says what NVML answered).
    pub fn lock_sm_clock(&mut self, mhz: u32) -> Result<(), ClockLockError> {
        let mut device = self.device().ok_or(ClockLockError::DeviceGone)?;
        device
            .set_gpu_locked_clocks(GpuLockedClocksSetting::Numeric {
                min_clock_mhz: mhz,
                max_clock_mhz: mhz,
            })
            .map_err(|source| ClockLockError::Refused { mhz, source })?;
        self.locked = true;
        Ok(())
    }
}

/// Why [`GpuMonitor::lock_sm_clock`] did not lock the clock.
#[derive(Debug, thiserror::Error)]
pub enum ClockLockError {
    #[error("the device is gone from NVML")]
    DeviceGone,
    #[error("NVML refused to lock the SM clock at {mhz} MHz: {source}")]
    Refused {
        mhz: u32,
        source: nvml_wrapper::error::NvmlError,
    },
}

impl Drop for GpuMonitor {
    fn drop(&mut self) {
        if self.locked {
            if let Some(mut device) = self.device() {
                // Nothing better to do if the reset fails: the driver resets on reboot.
                let _ = device.reset_gpu_locked_clocks();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(sm_mhz: u32, throttle: u64) -> GpuState {
        GpuState {
            sm_mhz,
            memory_mhz: 2619,
            temperature_c: 40,
            power_w: 300.0,
            throttle,
        }
    }

    #[test]
    fn a_clock_drop_or_a_slowing_reason_flags_the_point_and_idle_does_not() {
        let idle = ThrottleReasons::GPU_IDLE.bits();
        assert!(!slowed(&state(1980, idle), &state(1980, idle)));
        assert!(slowed(&state(1980, 0), &state(1700, 0)));
        let thermal = ThrottleReasons::SW_THERMAL_SLOWDOWN.bits();
        assert!(slowed(&state(1980, 0), &state(1980, thermal)));
        assert_eq!(
            state(1980, thermal | idle).slowing_reasons(),
            ["sw-thermal"]
        );
        assert_eq!(state(1980, idle).slowing_reasons_text(), "none");
        assert_eq!(
            state(1980, thermal | ThrottleReasons::HW_SLOWDOWN.bits()).slowing_reasons_text(),
            "hw-slowdown+sw-thermal"
        );
    }
}
