//! The strategies vkerode runs: one line each. A new strategy is its folder, its lines
//! here and in [`Algorithm`], and its settings field in [`RunSettings`].

use super::algorithm::Algorithm;
use super::keys::SettingError;
use super::settings::RunSettings;
use super::strategy::Strategy;
use super::{droplets, pipes, thermal};
use crate::gpu::DeviceInfo;
use crate::terrain::MapInfo;

/// Every strategy, in the order results list them.
pub static STRATEGIES: [&dyn Strategy; 3] = [&droplets::Droplets, &pipes::Pipes, &thermal::Thermal];

impl Algorithm {
    /// As configs and results spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Algorithm::Droplets => "droplets",
            Algorithm::Pipes => "pipes",
            Algorithm::Thermal => "thermal",
        }
    }

    /// The strategy that runs it.
    pub fn strategy(self) -> &'static dyn Strategy {
        match self {
            Algorithm::Droplets => &droplets::Droplets,
            Algorithm::Pipes => &pipes::Pipes,
            Algorithm::Thermal => &thermal::Thermal,
        }
    }
}

/// The rules of a run's settings are its strategy's.
impl RunSettings {
    /// The strategy these settings run.
    pub fn strategy(&self) -> &'static dyn Strategy {
        self.algorithm.strategy()
    }

    /// Every rule, for the noise terrain; with a device, also its limits. A run on a
    /// heightmap file checks [`RunSettings::check_job`] first, and
    /// [`RunSettings::check_map`] once the file is read.
    pub fn check(&self, device: Option<&DeviceInfo>) -> Result<(), SettingError> {
        self.terrain()
            .validate()
            .map_err(|e| SettingError::new(e.key(), e.to_string()))?;
        self.check_map(self.noise_map(), device)
    }

    /// The rules that do not depend on the map.
    pub fn check_job(&self, device: Option<&DeviceInfo>) -> Result<(), SettingError> {
        self.strategy().check(self, None, device)
    }

    /// Every rule, on `map`.
    pub fn check_map(&self, map: MapInfo, device: Option<&DeviceInfo>) -> Result<(), SettingError> {
        self.strategy().check(self, Some(map), device)
    }

    /// What the device lacks to run these settings on their noise map, if anything.
    pub fn missing_feature(&self, device: &DeviceInfo) -> Option<String> {
        self.strategy()
            .missing_feature(self, self.noise_map(), device)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::ValueEnum;

    #[test]
    fn every_algorithm_is_listed_once_and_runs_its_own_strategy() {
        let listed: Vec<Algorithm> = STRATEGIES.iter().map(|s| s.algorithm()).collect();
        assert_eq!(listed, Algorithm::value_variants());
        for &a in Algorithm::value_variants() {
            assert_eq!(a.strategy().algorithm(), a);
            let spelled = serde_json::to_value(a).unwrap();
            assert_eq!(spelled, a.as_str());
        }
    }
}
