//! Everything one run is made of, written once: `vkerode erode` takes it as flags
//! (`--tile-order`), experiment configs as keys (`tile_order`, fixed or as an axis).
//! The terrain's settings are here; each strategy's own are in its folder
//! (`droplets/settings.rs`, ...), flattened into one set of keys. Defaults come from
//! each struct's `DEFAULT`, rules from the strategy's `check`.

use serde::{Deserialize, Serialize};

use super::droplets::DropletSettings;
use super::pipes::PipesSettings;
use super::registry::Algorithm;
use super::strategy::{MapInfo, Strategy};
use super::thermal::ThermalSettings;
use crate::gpu::DeviceInfo;
use crate::table::Column;
use crate::terrain::{TerrainSpec, DEFAULT_RELIEF_PER_SIDE};

/// The settings of one run. Every field is an `erode` flag and a config key.
#[derive(Clone, Debug, PartialEq, Serialize, clap::Args)]
pub struct RunSettings {
    /// The strategy: the paper's droplets, the grid-centric virtual-pipe shallow-water
    /// model (Mei et al. 2007; its settings are the pipes_* ones), or thermal erosion
    /// (its settings are the thermal_* ones).
    #[arg(long, value_enum, default_value_t = Self::DEFAULT.algorithm)]
    pub algorithm: Algorithm,
    /// Side of the square erosion-noise map, in cells.
    #[arg(long, default_value_t = Self::DEFAULT.size)]
    pub size: u32,
    /// Terrain seed; 0 is the seed shader's own window of the noise.
    #[arg(long, default_value_t = Self::DEFAULT.seed)]
    pub seed: u32,
    /// Relief in height units (one unit is one cell's width): noise heights in [0, 1]
    /// are multiplied by it. Default: 2 x size, which gives a mean slope of about one
    /// per cell.
    #[arg(long)]
    pub relief: Option<f32>,
    #[command(flatten, next_help_heading = "Droplets (algorithm = droplets)")]
    #[serde(flatten)]
    pub droplets: DropletSettings,
    #[command(flatten, next_help_heading = "Virtual pipes (algorithm = pipes)")]
    #[serde(flatten)]
    pub pipes: PipesSettings,
    #[command(flatten, next_help_heading = "Thermal erosion (algorithm = thermal)")]
    #[serde(flatten)]
    pub thermal: ThermalSettings,
}

impl Default for RunSettings {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// A setting that breaks a rule: its key (the config key; the flag is `--key` with
/// dashes) and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("setting {key}: {reason}")]
pub struct SettingError {
    pub key: &'static str,
    pub reason: String,
}

impl SettingError {
    pub fn new(key: &'static str, reason: impl Into<String>) -> Self {
        Self {
            key,
            reason: reason.into(),
        }
    }

    /// The flag that sets the key, e.g. `--tile-order`.
    pub fn flag(&self) -> String {
        format!("--{}", self.key.replace('_', "-"))
    }
}

/// The terrain's keys, deserialized on their own.
#[derive(Deserialize)]
#[serde(default, deny_unknown_fields)]
struct TerrainKeys {
    algorithm: Algorithm,
    size: u32,
    seed: u32,
    relief: Option<f32>,
}

impl Default for TerrainKeys {
    fn default() -> Self {
        let d = RunSettings::DEFAULT;
        Self {
            algorithm: d.algorithm,
            size: d.size,
            seed: d.seed,
            relief: d.relief,
        }
    }
}

/// The columns of a settings struct in points.csv: each key with its unit (from
/// `units`) and its flag's help as the meaning.
pub fn columns_of<T: clap::Args>(units: &[(&str, &str)]) -> Vec<Column> {
    T::augment_args(clap::Command::new("columns"))
        .get_arguments()
        .filter(|a| a.get_id() != "help")
        .map(|a| {
            let key = a.get_id().as_str();
            let unit = units.iter().find(|(k, _)| *k == key).map_or("", |(_, u)| u);
            let help = a.get_help().map(|h| h.to_string()).unwrap_or_default();
            Column::new(key, unit, help)
        })
        .collect()
}

/// The keys of a settings struct: its flags' ids, which are its field names.
fn keys_of<T: clap::Args>() -> Vec<String> {
    T::augment_args(clap::Command::new("keys"))
        .get_arguments()
        .map(|a| a.get_id().to_string())
        .filter(|id| id != "help")
        .collect()
}

impl RunSettings {
    pub const DEFAULT: RunSettings = RunSettings {
        algorithm: Algorithm::Droplets,
        size: 512,
        seed: 1,
        relief: None,
        droplets: DropletSettings::DEFAULT,
        pipes: PipesSettings::DEFAULT,
        thermal: ThermalSettings::DEFAULT,
    };

    /// The unit of each of the terrain's keys, for the config reference.
    pub const UNITS: &'static [(&'static str, &'static str)] = &[
        ("algorithm", "choice"),
        ("size", "cells"),
        ("seed", "seed"),
        ("relief", "height units"),
    ];

    /// Every config key, in the order of the flags.
    pub fn keys() -> Vec<String> {
        keys_of::<Self>()
    }

    /// Every key with its unit: the terrain's, then each strategy's.
    pub fn units() -> Vec<(&'static str, &'static str)> {
        [
            Self::UNITS,
            DropletSettings::UNITS,
            PipesSettings::UNITS,
            ThermalSettings::UNITS,
        ]
        .concat()
    }

    /// The settings of a config table: each key goes to the struct that owns it, so
    /// that an unknown key and a bad value are refused by name.
    pub fn from_table(table: &toml::Table) -> Result<Self, String> {
        let strategies = [
            keys_of::<DropletSettings>(),
            keys_of::<PipesSettings>(),
            keys_of::<ThermalSettings>(),
        ];
        let terrain: Vec<String> = Self::keys()
            .into_iter()
            .filter(|k| !strategies.iter().any(|keys| keys.contains(k)))
            .collect();
        let owners: Vec<Vec<String>> = std::iter::once(terrain).chain(strategies).collect();
        let mut parts = vec![toml::Table::new(); owners.len()];
        for (key, value) in table {
            let Some(owner) = owners.iter().position(|keys| keys.contains(key)) else {
                let all: Vec<String> = owners.concat().iter().map(|k| format!("`{k}`")).collect();
                return Err(format!(
                    "unknown field `{key}`, expected one of {}",
                    all.join(", ")
                ));
            };
            parts[owner].insert(key.clone(), value.clone());
        }
        fn part<T: serde::de::DeserializeOwned>(table: toml::Table) -> Result<T, String> {
            T::deserialize(toml::Value::Table(table))
                .map_err(|e| e.to_string().trim().replace('\n', " "))
        }
        let mut parts = parts.into_iter();
        let mut next = || parts.next().expect("one part per owner");
        let terrain: TerrainKeys = part(next())?;
        Ok(Self {
            algorithm: terrain.algorithm,
            size: terrain.size,
            seed: terrain.seed,
            relief: terrain.relief,
            droplets: part(next())?,
            pipes: part(next())?,
            thermal: part(next())?,
        })
    }

    /// The strategy these settings run.
    pub fn strategy(&self) -> &'static dyn Strategy {
        self.algorithm.strategy()
    }

    /// The erosion-noise terrain of these settings.
    pub fn terrain(&self) -> TerrainSpec {
        TerrainSpec {
            relief: self
                .relief
                .unwrap_or(DEFAULT_RELIEF_PER_SIDE * self.size as f32),
            ..TerrainSpec::square(self.size, self.seed)
        }
    }

    /// The noise map of these settings: its shape, and its heights' bound (the relief).
    pub fn noise_map(&self) -> MapInfo {
        MapInfo {
            width: self.size,
            height: self.size,
            highest: self.terrain().relief,
        }
    }

    /// Every rule, for the noise terrain; with a device, also its limits. A run on a
    /// heightmap file checks [`RunSettings::check_job`] first, and
    /// [`RunSettings::check_map`] once the file is read.
    pub fn check(&self, device: Option<&DeviceInfo>) -> Result<(), SettingError> {
        self.terrain()
            .validate()
            .map_err(|e| SettingError::new("size", e.to_string()))?;
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

impl<'de> Deserialize<'de> for RunSettings {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let table = toml::Table::deserialize(deserializer)?;
        Self::from_table(&table).map_err(serde::de::Error::custom)
    }
}

/// A config switch: `"on"` / `"off"`, or `true` / `false`.
pub(crate) mod switch {
    use serde::{Deserializer, Serializer};

    pub fn serialize<S: Serializer>(on: &bool, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(if *on { "on" } else { "off" })
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<bool, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = bool;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("\"on\", \"off\", true or false")
            }
            fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<bool, E> {
                Ok(v)
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<bool, E> {
                match v {
                    "on" => Ok(true),
                    "off" => Ok(false),
                    _ => Err(E::invalid_value(serde::de::Unexpected::Str(v), &self)),
                }
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::erosion::droplets::{DropletShader, SpawnMode, TileOrder};
    use clap::Parser;

    #[derive(Parser)]
    struct Flags {
        #[command(flatten)]
        settings: RunSettings,
    }

    #[test]
    fn flags_and_config_keys_have_the_same_defaults() {
        let flags = Flags::parse_from(["vkerode"]).settings;
        let keys: RunSettings = toml::from_str("").unwrap();
        assert_eq!(flags, RunSettings::DEFAULT);
        assert_eq!(keys, RunSettings::DEFAULT);
    }

    #[test]
    fn a_flag_and_its_key_set_the_same_job() {
        let flags = Flags::parse_from([
            "vkerode",
            "--tile-order",
            "morton",
            "--spawn",
            "tiled",
            "--phases",
            "4",
            "--stagger",
            "--passes",
            "3",
            "--pipes-steps",
            "7",
        ])
        .settings;
        let keys: RunSettings = toml::from_str(
            "tile_order = \"morton\"\nspawn = \"tiled\"\nphases = 4\nstagger = \"on\"\npasses = 3\npipes_steps = 7\n",
        )
        .unwrap();
        assert_eq!(flags, keys);
        assert_eq!(
            flags.droplets.job(flags.seed).spawn.order,
            TileOrder::Morton
        );
        assert_eq!(keys.pipes.pipes_steps, 7);
    }

    #[test]
    fn an_unknown_key_and_a_bad_value_are_refused_by_name() {
        let refused = |text: &str| toml::from_str::<RunSettings>(text).unwrap_err().to_string();
        assert!(refused("work_group = 64").contains("unknown field `work_group`"));
        assert!(refused("stagger = \"sometimes\"").contains("`stagger`"));
        assert!(refused("pipes_steps = -1").contains("`pipes_steps`"));
        assert!(refused("size = \"big\"").contains("`size`"));
    }

    #[test]
    fn every_key_has_a_unit() {
        let units: Vec<&str> = RunSettings::units().iter().map(|(k, _)| *k).collect();
        assert_eq!(RunSettings::keys(), units);
    }

    fn droplets(settings: DropletSettings) -> RunSettings {
        RunSettings {
            droplets: settings,
            ..RunSettings::DEFAULT
        }
    }

    #[test]
    fn tiles_too_large_for_their_colours_are_refused() {
        let tiled = DropletSettings {
            spawn: SpawnMode::Tiled,
            tile: 64,
            phases: 4,
            ..DropletSettings::DEFAULT
        };
        let settings = RunSettings {
            size: 64,
            ..droplets(tiled.clone())
        };
        let error = settings.check(None).unwrap_err();
        assert_eq!(error.key, "tile");
        assert_eq!(error.flag(), "--tile");
        let with = |d: DropletSettings| RunSettings {
            size: 64,
            ..droplets(d)
        };
        assert!(with(DropletSettings {
            phases: 1,
            ..tiled.clone()
        })
        .check(None)
        .is_ok());
        assert!(with(DropletSettings { tile: 32, ..tiled })
            .check(None)
            .is_ok());
    }

    #[test]
    fn the_paper_kernel_becomes_the_passes_kernel_and_fast_ones_refuse_passes() {
        let passes = DropletSettings {
            passes: 3,
            ..DropletSettings::DEFAULT
        };
        assert_eq!(passes.kernel_variant().shader, DropletShader::Passes);
        let fast = droplets(DropletSettings {
            variant: DropletShader::Fast,
            ..passes
        });
        assert_eq!(fast.check(None).unwrap_err().key, "variant");
    }
}
