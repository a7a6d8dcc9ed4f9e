//! Which strategy runs what: [`ALL_STRATEGIES`] and [`Algorithm::strategy`], made from
//! the registry's list (`registry.rs`), and the rules of a run's settings, which are its
//! strategy's.

use super::algorithm::Algorithm;
use super::keys::SettingError;
use super::registry::strategy_list;
use super::settings::RunSettings;
use super::strategy::Strategy;
use crate::gpu::DeviceInfo;
use crate::terrain::MapInfo;

/// The list of strategies and the [`Algorithm`] methods that name and run each.
macro_rules! strategies_of {
    ($($(#[$attr:meta])* $variant:ident in $folder:ident with $settings:ident;)*) => {
        /// Every strategy, in the order results list them.
        pub static ALL_STRATEGIES: &[&dyn Strategy] = &[$(&crate::erosion::$folder::$variant),*];

        impl Algorithm {
            /// As configs and results spell it.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Algorithm::$variant => stringify!($folder),)*
                }
            }

            /// The strategy that runs it.
            pub fn strategy(self) -> &'static dyn Strategy {
                match self {
                    $(Algorithm::$variant => &crate::erosion::$folder::$variant,)*
                }
            }
        }
    };
}
strategy_list!(strategies_of);

/// The most units of work (droplet-steps, cell-steps) one run may do unless asked for
/// more: a run past it is far more often a typo than a plan.
pub const MAX_RUN_WORK: u64 = 1_000_000_000_000;

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

    /// Refuses a run that could do more than [`MAX_RUN_WORK`] units of work on `map`,
    /// unless `allow_long`: its length is known before it starts.
    pub fn check_run_length(&self, map: MapInfo, allow_long: bool) -> Result<(), SettingError> {
        let strategy = self.strategy();
        let work = strategy.work_bound(self, map);
        if allow_long || work <= MAX_RUN_WORK {
            return Ok(());
        }
        Err(SettingError::new(
            strategy.dose_key(),
            format!(
                "{} makes up to {work:.2e} {} on a {}x{} map, past the {MAX_RUN_WORK:.0e} one run may do (about 100 s at 10 G/s, a large GPU's rate; days on a CPU device); lower it, or pass --allow-long-runs",
                strategy.dose(self),
                strategy.unit().name(),
                map.width,
                map.height
            ),
        ))
    }

    /// The strategy whose own setting `key` is; `None` for the terrain's keys, the
    /// strategy's choice and unknown keys.
    pub fn owner_of(key: &str) -> Option<Algorithm> {
        owned(key).map(|(owner, _)| owner.algorithm())
    }

    /// Refuses a key of `given` (the settings a user set) that this run would ignore:
    /// one of another strategy's, or, on the CPU (`on_cpu`), one only the GPU kernels use.
    pub fn check_given<S: AsRef<str>>(
        &self,
        given: &[S],
        on_cpu: bool,
    ) -> Result<(), SettingError> {
        let name = self.algorithm.as_str();
        for (owner, key) in given.iter().filter_map(|k| owned(k.as_ref())) {
            if owner.algorithm() != self.algorithm {
                return Err(SettingError::new(
                    key,
                    format!(
                        "a setting of {}, which algorithm {name} ignores",
                        owner.algorithm().as_str()
                    ),
                ));
            }
            if on_cpu && owner.gpu_only_keys().contains(&key) {
                return Err(SettingError::new(
                    key,
                    format!(
                        "a setting of the {name} GPU kernels only, which the CPU reference ignores"
                    ),
                ));
            }
        }
        Ok(())
    }

    /// What the device lacks to run these settings on `map`, if anything.
    pub fn missing_feature(&self, map: MapInfo, device: &DeviceInfo) -> Option<String> {
        self.strategy().missing_feature(self, map, device)
    }
}

/// The strategy that owns `key`, with the key as it spells it.
fn owned(key: &str) -> Option<(&'static dyn Strategy, &'static str)> {
    ALL_STRATEGIES.iter().find_map(|&s| {
        let (own, _) = s.settings_units().iter().find(|(k, _)| *k == key)?;
        Some((s, *own))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::ValueEnum;

    #[test]
    fn every_algorithm_is_listed_once_and_runs_its_own_strategy() {
        let listed: Vec<Algorithm> = ALL_STRATEGIES.iter().map(|s| s.algorithm()).collect();
        assert_eq!(listed, Algorithm::value_variants());
        for &a in Algorithm::value_variants() {
            assert_eq!(a.strategy().algorithm(), a);
            let spelled = serde_json::to_value(a).unwrap();
            assert_eq!(spelled, a.as_str());
        }
    }

    #[test]
    fn each_key_has_one_owner_and_gpu_only_keys_are_their_strategys_own() {
        for s in ALL_STRATEGIES.iter() {
            for (key, _) in s.settings_units() {
                assert_eq!(RunSettings::owner_of(key), Some(s.algorithm()), "{key}");
            }
            for key in s.gpu_only_keys() {
                assert_eq!(RunSettings::owner_of(key), Some(s.algorithm()), "{key}");
            }
        }
        assert_eq!(RunSettings::owner_of("size"), None);
    }

    #[test]
    fn a_setting_the_run_would_ignore_is_refused_by_key() {
        let pipes = RunSettings {
            algorithm: Algorithm::Pipes,
            ..RunSettings::DEFAULT
        };
        let error = pipes.check_given(&["size", "variant"], false).unwrap_err();
        assert_eq!(error.key, "variant");
        assert!(error.reason.contains("droplets"), "{error}");
        assert!(pipes.check_given(&["size", "pipes_fusion"], false).is_ok());
        let error = pipes.check_given(&["pipes_fusion"], true).unwrap_err();
        assert_eq!(error.key, "pipes_fusion");
        assert!(RunSettings::DEFAULT
            .check_given(&["droplets", "physics"], true)
            .is_ok());
        let error = RunSettings::DEFAULT
            .check_given(&["lever"], true)
            .unwrap_err();
        assert_eq!(error.key, "lever");
    }
}
