//! What a settings key is, for every strategy's settings: the error that names it, the
//! switch values configs spell, and a settings struct's keys and columns (from its
//! flags: their ids, help and choices).

use crate::table::Column;

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

/// The columns of a settings struct in points.csv: each key with its unit (from
/// `units`) and its flag's help as the meaning.
pub fn columns_of<T: clap::Args>(units: &[(&str, &str)]) -> Vec<Column> {
    T::augment_args(clap::Command::new("columns"))
        .get_arguments()
        .filter(|a| a.get_id() != "help")
        .map(|a| {
            let key = a.get_id().as_str();
            let choices: Vec<String> = a
                .get_possible_values()
                .iter()
                .filter(|v| !v.is_hide_set())
                .map(|v| v.get_name().to_string())
                .collect();
            let unit = match units.iter().find(|(k, _)| *k == key) {
                Some((_, "choice")) => format!("one of {}", choices.join(", ")),
                Some((_, unit)) => unit.to_string(),
                None => String::new(),
            };
            let help = a.get_help().map(|h| h.to_string()).unwrap_or_default();
            Column::new(key, unit, help)
        })
        .collect()
}

/// The keys of a settings struct: its flags' ids, which are its field names.
pub fn keys_of<T: clap::Args>() -> Vec<String> {
    T::augment_args(clap::Command::new("keys"))
        .get_arguments()
        .map(|a| a.get_id().to_string())
        .filter(|id| id != "help")
        .collect()
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
