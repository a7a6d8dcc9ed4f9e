//! `compare`'s noise threshold: how far a median may move between reruns of unchanged
//! code and still be called the same. Per device it is the spread measured between
//! committed reruns (results/rerun-noise.toml, built in); for a device without a record
//! it is [`DEFAULT_THRESHOLD`]; `--threshold` overrides both.

use serde::Deserialize;

/// The table of measured rerun spreads, as committed.
pub const RERUN_NOISE_FILE: &str = "results/rerun-noise.toml";
const RERUN_NOISE: &str = include_str!("../../../results/rerun-noise.toml");

/// The threshold on a device without a rerun record: above the largest spread of any
/// device that has one, since a device not measured has not shown that it is quieter.
pub const DEFAULT_THRESHOLD: f64 = 0.05;

/// The rerun spreads of results/rerun-noise.toml.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RerunNoise {
    pub device: Vec<DeviceNoise>,
}

/// One device's record.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceNoise {
    /// The device as points.csv's `device` column names it.
    pub device: String,
    /// The largest spread between its reruns, rounded up to a tenth of a percent.
    pub threshold_percent: f64,
    pub reruns: Vec<Reruns>,
}

/// Results folders of one experiment whose timed kernels are one code, measured on
/// different occasions.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reruns {
    pub what: String,
    /// Relative to the repository root.
    pub sets: Vec<String>,
}

impl RerunNoise {
    /// The table built into this vkerode (tests/compare.rs checks it parses and holds
    /// the spreads of its reruns).
    pub fn built_in() -> Self {
        toml::from_str(RERUN_NOISE).expect("results/rerun-noise.toml parses (tests/compare.rs)")
    }

    pub fn of(&self, device: &str) -> Option<&DeviceNoise> {
        self.device.iter().find(|d| d.device == device)
    }
}

/// A threshold as the table records it: the spread rounded up to a tenth of a percent,
/// so that every recorded rerun lies within it.
pub fn threshold_of_spread(spread: f64) -> f64 {
    // The small allowance keeps an exact 3.6% from rounding up to 3.7% through the
    // binary fraction.
    (spread * 1000.0 - 1e-9).ceil() / 1000.0
}

/// Where a comparison's threshold came from.
#[derive(Clone, Debug, PartialEq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ThresholdSource {
    /// `--threshold`.
    Given,
    /// The rerun record of these devices (the largest, where the sets ran on several).
    Reruns(Vec<String>),
    /// The default: these devices have no rerun record.
    Default(Vec<String>),
}

/// The relative change within which a ratio of medians counts as noise.
#[derive(Clone, Debug, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct Threshold {
    /// A share of 1: 0.036 is 3.6%.
    pub relative: f64,
    /// Where it came from.
    pub source: ThresholdSource,
}

impl Threshold {
    pub fn given(relative: f64) -> Self {
        Self {
            relative,
            source: ThresholdSource::Given,
        }
    }

    /// The threshold for sets measured on `devices`: the largest of their records where
    /// each has one, else the default.
    pub fn for_devices(devices: &[String]) -> Self {
        let table = RerunNoise::built_in();
        let unrecorded: Vec<String> = devices
            .iter()
            .filter(|d| table.of(d).is_none())
            .cloned()
            .collect();
        if !unrecorded.is_empty() || devices.is_empty() {
            return Self {
                relative: DEFAULT_THRESHOLD,
                source: ThresholdSource::Default(unrecorded),
            };
        }
        let relative = devices
            .iter()
            .filter_map(|d| table.of(d))
            .map(|d| d.threshold_percent / 100.0)
            .fold(0.0, f64::max);
        Self {
            relative,
            source: ThresholdSource::Reruns(devices.to_vec()),
        }
    }

    /// The threshold and where it came from, as one sentence.
    pub fn describe(&self) -> String {
        let percent = crate::readable_number(self.relative * 100.0);
        let quoted = |names: &[String]| {
            names
                .iter()
                .map(|n| format!("\"{n}\""))
                .collect::<Vec<_>>()
                .join(", ")
        };
        match &self.source {
            ThresholdSource::Given => format!("{percent}%, from --threshold"),
            ThresholdSource::Reruns(devices) => format!(
                "{percent}%, the largest spread measured between reruns on {} ({RERUN_NOISE_FILE})",
                quoted(devices)
            ),
            ThresholdSource::Default(devices) if devices.is_empty() => {
                format!("{percent}%, the default (the sets name no device)")
            }
            ThresholdSource::Default(devices) => format!(
                "{percent}%, the default: {RERUN_NOISE_FILE} has no rerun record of {}",
                quoted(devices)
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recorded_device_gets_its_spread_and_any_other_the_default() {
        let h200 = Threshold::for_devices(&["NVIDIA H200".into()]);
        let recorded = RerunNoise::built_in()
            .of("NVIDIA H200")
            .unwrap()
            .threshold_percent;
        assert_eq!(h200.relative, recorded / 100.0);
        assert!(
            h200.describe().contains(RERUN_NOISE_FILE),
            "{}",
            h200.describe()
        );
        let mixed = Threshold::for_devices(&["NVIDIA H200".into(), "llvmpipe".into()]);
        assert_eq!(mixed.relative, DEFAULT_THRESHOLD);
        assert_eq!(
            mixed.source,
            ThresholdSource::Default(vec!["llvmpipe".into()])
        );
        assert!(mixed.describe().contains("no rerun record of \"llvmpipe\""));
        assert_eq!(Threshold::given(0.02).describe(), "2%, from --threshold");
    }

    #[test]
    fn a_spread_rounds_up_to_a_tenth_of_a_percent() {
        assert_eq!(threshold_of_spread(0.0354), 0.036);
        assert_eq!(threshold_of_spread(0.036), 0.036);
        assert_eq!(threshold_of_spread(0.0001), 0.001);
    }
}
