//! Everything one run is made of, written once: `vkerode erode` takes it as flags
//! (`--tile-order`), experiment configs as keys (`tile_order`, fixed or as an axis).
//! The terrain's settings are here; each strategy's own are in its folder
//! (`droplets/settings.rs`, ...), flattened into one set of keys. Defaults come from
//! each struct's `DEFAULT`, rules from the strategy's `check`.

use serde::{Deserialize, Serialize};

use super::algorithm::Algorithm;
use super::keys::keys_of;
use super::registry::strategy_list;
use crate::terrain::{MapInfo, TerrainSpec, DEFAULT_RELIEF_PER_SIDE};

/// [`RunSettings`] with a field for each strategy of the registry's list, and what is
/// written field by field: the defaults, each strategy's keys and its part of a config
/// table.
macro_rules! run_settings_of {
    ($($(#[$attr:meta])* $variant:ident in $folder:ident with $settings:ident;)*) => {
        /// The settings of one run. Every field is an `erode` flag and a config key.
        #[derive(Clone, Debug, PartialEq, Serialize, clap::Args)]
        pub struct RunSettings {
            // Its help names every strategy (choice_help).
            #[arg(long, value_enum, default_value_t = Self::DEFAULT.algorithm, help = choice_help(&[$(crate::erosion::$folder::$settings::CHOICE),*]))]
            pub algorithm: Algorithm,
            #[command(flatten)]
            #[serde(flatten)]
            pub noise: NoiseSettings,
            $(
                #[command(flatten, next_help_heading = crate::erosion::$folder::$settings::HEADING)]
                #[serde(flatten)]
                pub $folder: crate::erosion::$folder::$settings,
            )*
        }

        $(
            impl StrategySettings for crate::erosion::$folder::$settings {
                fn of(run: &RunSettings) -> &Self {
                    &run.$folder
                }

                fn of_mut(run: &mut RunSettings) -> &mut Self {
                    &mut run.$folder
                }
            }
        )*

        impl RunSettings {
            pub const DEFAULT: RunSettings = RunSettings {
                algorithm: Algorithm::Droplets,
                noise: NoiseSettings::DEFAULT,
                $($folder: crate::erosion::$folder::$settings::DEFAULT,)*
            };

            /// Each strategy's keys with their units, in the registry's order.
            const STRATEGY_UNITS: &'static [&'static [(&'static str, &'static str)]] =
                &[$(crate::erosion::$folder::$settings::UNITS),*];

            /// Each strategy's keys, in the registry's order.
            fn strategy_sections() -> Vec<Vec<String>> {
                vec![$(keys_of::<crate::erosion::$folder::$settings>()),*]
            }

            /// The settings of `algorithm`, the terrain's table and each strategy's
            /// table (in the registry's order), each deserialized on its own.
            fn from_parts(
                algorithm: Algorithm,
                noise: toml::Table,
                mut strategies: impl Iterator<Item = toml::Table>,
            ) -> Result<Self, TableError> {
                let mut next = || strategies.next().expect("one part per strategy");
                Ok(Self {
                    algorithm,
                    noise: part(noise)?,
                    $($folder: part(next())?,)*
                })
            }
        }
    };
}
strategy_list!(run_settings_of);

/// A strategy's settings struct as its part of [`RunSettings`] (the registry's list
/// implements it for each).
pub trait StrategySettings: Sized {
    fn of(run: &RunSettings) -> &Self;
    fn of_mut(run: &mut RunSettings) -> &mut Self;
}

/// The help of the `algorithm` setting: each strategy's `CHOICE`, in a sentence with no
/// closing period (as clap writes a one-line doc comment).
fn choice_help(choices: &[&str]) -> String {
    let listed = match choices {
        [] => String::new(),
        [one] => one.to_string(),
        [rest @ .., last] => format!("{}, or {last}", rest.join(", ")),
    };
    format!("The strategy: {listed}")
}

/// A config table's part, deserialized into the struct that owns its keys.
fn part<T: serde::de::DeserializeOwned>(table: toml::Table) -> Result<T, TableError> {
    T::deserialize(toml::Value::Table(table)).map_err(TableError::Value)
}

/// Why a config table is no [`RunSettings`]: a key no setting has, or a value its
/// setting does not take.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TableError {
    #[error("unknown field `{key}`, expected one of {}", quoted(expected))]
    UnknownKey { key: String, expected: Vec<String> },
    /// serde's words, on one line.
    #[error("{}", .0.to_string().trim().replace('\n', " "))]
    Value(toml::de::Error),
}

/// `a`, `b`: the keys as serde lists them.
fn quoted(keys: &[String]) -> String {
    let quoted: Vec<String> = keys.iter().map(|k| format!("`{k}`")).collect();
    quoted.join(", ")
}

impl Default for RunSettings {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// The erosion-noise terrain of a run without `--input` (and of `vkerode terrain`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, clap::Args)]
#[serde(default, deny_unknown_fields)]
pub struct NoiseSettings {
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
}

impl Default for NoiseSettings {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl NoiseSettings {
    pub const DEFAULT: NoiseSettings = NoiseSettings {
        size: 512,
        seed: 1,
        relief: None,
    };

    /// The unit of each key, for the config reference.
    pub const UNITS: &'static [(&'static str, &'static str)] = &[
        ("size", "cells"),
        ("seed", "seed"),
        ("relief", "height units"),
    ];

    /// The terrain these settings generate.
    pub fn spec(&self) -> TerrainSpec {
        TerrainSpec {
            relief: self
                .relief
                .unwrap_or(DEFAULT_RELIEF_PER_SIDE * self.size as f32),
            ..TerrainSpec::square(self.size, self.seed)
        }
    }
}

/// The strategy's key, deserialized on its own.
#[derive(Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct ChoiceKeys {
    algorithm: Algorithm,
}

impl RunSettings {
    /// The unit of the strategy's key, for the config reference.
    pub const UNITS: &'static [(&'static str, &'static str)] = &[("algorithm", "choice")];

    /// Every config key, in the order of the flags.
    pub fn keys() -> Vec<String> {
        keys_of::<Self>()
    }

    /// Every key with its unit: the terrain's, then each strategy's.
    pub fn units() -> Vec<(&'static str, &'static str)> {
        [Self::UNITS, NoiseSettings::UNITS]
            .into_iter()
            .chain(Self::STRATEGY_UNITS.iter().copied())
            .flatten()
            .copied()
            .collect()
    }

    /// The settings of a config table: each key goes to the struct that owns it, so
    /// that an unknown key and a bad value are refused by name.
    pub fn from_table(table: &toml::Table) -> Result<Self, TableError> {
        let sections: Vec<Vec<String>> = std::iter::once(keys_of::<NoiseSettings>())
            .chain(Self::strategy_sections())
            .collect();
        // The keys of no section's struct: the strategy's.
        let choice: Vec<String> = Self::keys()
            .into_iter()
            .filter(|k| !sections.iter().any(|keys| keys.contains(k)))
            .collect();
        let owners: Vec<Vec<String>> = std::iter::once(choice).chain(sections).collect();
        let mut parts = vec![toml::Table::new(); owners.len()];
        for (key, value) in table {
            let Some(owner) = owners.iter().position(|keys| keys.contains(key)) else {
                return Err(TableError::UnknownKey {
                    key: key.clone(),
                    expected: owners.concat(),
                });
            };
            parts[owner].insert(key.clone(), value.clone());
        }
        let mut parts = parts.into_iter();
        let mut next = || parts.next().expect("one part per owner");
        let choice: ChoiceKeys = part(next())?;
        let noise = next();
        Self::from_parts(choice.algorithm, noise, parts)
    }

    /// The erosion-noise terrain of these settings.
    pub fn terrain(&self) -> TerrainSpec {
        self.noise.spec()
    }

    /// The noise map of these settings: its shape, and its heights' bound (the relief;
    /// noise heights lie in [0, relief]).
    pub fn noise_map(&self) -> MapInfo {
        let relief = self.terrain().relief;
        MapInfo {
            width: self.noise.size,
            height: self.noise.size,
            highest: relief,
            relief,
        }
    }
}

impl<'de> Deserialize<'de> for RunSettings {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let table = toml::Table::deserialize(deserializer)?;
        Self::from_table(&table).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
impl RunSettings {
    /// The settings these flags give (the program name left out), as `erode` parses its
    /// settings' flags.
    pub(crate) fn from_flags(flags: &[&str]) -> RunSettings {
        #[derive(clap::Parser)]
        struct Flags {
            #[command(flatten)]
            settings: RunSettings,
        }
        let program = std::iter::once("vkerode");
        <Flags as clap::Parser>::parse_from(program.chain(flags.iter().copied())).settings
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::erosion::droplets::{DropletSettings, DropletShader, SpawnMode, TileOrder};

    #[test]
    fn flags_and_config_keys_have_the_same_defaults() {
        let flags = RunSettings::from_flags(&[]);
        let keys: RunSettings = toml::from_str("").unwrap();
        assert_eq!(flags, RunSettings::DEFAULT);
        assert_eq!(keys, RunSettings::DEFAULT);
    }

    #[test]
    fn a_flag_and_its_key_set_the_same_job() {
        let flags = RunSettings::from_flags(&[
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
        ]);
        let keys: RunSettings = toml::from_str(
            "tile_order = \"morton\"\nspawn = \"tiled\"\nphases = 4\nstagger = \"on\"\npasses = 3\npipes_steps = 7\n",
        )
        .unwrap();
        assert_eq!(flags, keys);
        assert_eq!(
            flags.droplets.job(flags.noise.seed).spawn.order,
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
        let small = NoiseSettings {
            size: 64,
            ..NoiseSettings::DEFAULT
        };
        let settings = RunSettings {
            noise: small,
            ..droplets(tiled.clone())
        };
        let error = settings.check(None).unwrap_err();
        assert_eq!(error.key, "tile");
        assert_eq!(error.flag(), "--tile");
        let with = |d: DropletSettings| RunSettings {
            noise: small,
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
