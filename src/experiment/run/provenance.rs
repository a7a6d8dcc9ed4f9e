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

/// Seconds since the Unix epoch as "YYYY-MM-DDTHH:MM:SSZ" (empty past the year 9999).
fn rfc3339(secs: u64) -> String {
    i64::try_from(secs)
        .ok()
        .and_then(|secs| jiff::Timestamp::from_second(secs).ok())
        .map_or_else(String::new, |t| t.to_string())
}

#[cfg(test)]
mod tests {
    #[test]
    fn epoch_seconds_format_as_utc_dates() {
        assert_eq!(super::rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(super::rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(super::rfc3339(1_795_996_799), "2026-11-29T23:59:59Z");
    }

    /// Every started_at the committed results hold is written as rfc3339 writes it.
    #[test]
    fn committed_start_times_are_written_as_rfc3339_writes_them() {
        fn walk(dir: &std::path::Path, found: &mut Vec<String>) {
            for entry in std::fs::read_dir(dir).unwrap().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    walk(&path, found);
                } else if path.file_name().is_some_and(|n| n == "meta.json") {
                    let text = std::fs::read_to_string(&path).unwrap();
                    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
                    let started = &json["started_at"];
                    if let Some(started) = started.as_str() {
                        found.push(started.to_string());
                    }
                }
            }
        }
        let mut found = Vec::new();
        walk(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("results"),
            &mut found,
        );
        assert!(found.len() > 50, "{} start times", found.len());
        for started in found {
            let secs: jiff::Timestamp = started.parse().unwrap();
            let secs = u64::try_from(secs.as_second()).unwrap();
            assert_eq!(super::rfc3339(secs), started);
        }
    }
}
