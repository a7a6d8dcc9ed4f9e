//! Where a result came from: device, driver, vkerode build and commit, host and time.

use serde::Serialize;

use crate::gpu::DeviceInfo;

#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct Provenance {
    pub vkerode_version: &'static str,
    /// Commit the binary was built from, with "-dirty" if the tree had changes.
    pub git_commit: &'static str,
    pub device: String,
    pub device_type: String,
    pub driver: String,
    pub driver_info: String,
    pub api_version: String,
    pub host: String,
    /// UTC, RFC 3339.
    pub started_at: String,
}

impl Provenance {
    pub fn collect(device: &DeviceInfo) -> Self {
        Self {
            device: device.name.clone(),
            device_type: device.device_type.clone(),
            driver: device.driver_name.clone(),
            driver_info: device.driver_info.clone(),
            api_version: device.api_version.clone(),
            ..Self::build_and_host()
        }
    }

    /// For runs of the CPU reference on `threads` threads: the device is the host's CPU.
    pub fn cpu(threads: usize) -> Self {
        let plural = if threads == 1 { "" } else { "s" };
        Self {
            device: format!("CPU reference, {threads} thread{plural}"),
            device_type: "CPU".into(),
            ..Self::build_and_host()
        }
    }

    fn build_and_host() -> Self {
        Self {
            vkerode_version: env!("CARGO_PKG_VERSION"),
            git_commit: env!("VKERODE_GIT_COMMIT"),
            device: String::new(),
            device_type: String::new(),
            driver: String::new(),
            driver_info: String::new(),
            api_version: String::new(),
            host: crate::host_name(),
            started_at: utc_now_rfc3339(),
        }
    }
}

fn utc_now_rfc3339() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    rfc3339(secs)
}

/// Seconds since the Unix epoch as "YYYY-MM-DDTHH:MM:SSZ" (Howard Hinnant's
/// days-to-civil algorithm).
fn rfc3339(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn epoch_seconds_format_as_utc_dates() {
        assert_eq!(super::rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(super::rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(super::rfc3339(1_795_996_799), "2026-11-29T23:59:59Z");
    }
}
