//! A sweep's points on a heightmap file instead of noise: the keys `input`, `cell_size`,
//! `assume_cell_size` and `vertical_scale` (fixed or axes, as `erode`'s flags of the
//! same names), each file read and checked at load through the reader of
//! `erode --input`, once for every point that shares it.

use std::path::Path;
use std::sync::Arc;

use serde::de::DeserializeOwned;

use crate::erosion::settings::NoiseSettings;
use crate::erosion::RunSettings;
use crate::experiment::run::{prepare_terrain, InputError, InputUnits, TerrainSource};
use crate::terrain::image::CellSize;
use crate::terrain::units::{GridUnits, HeightUnit};
use crate::terrain::{Heightmap, MapInfo};

/// The keys of a heightmap input, with their unit and meaning, for docs/config.md.
pub const INPUT_KEYS: &[(&str, &str, &str)] = &[
    (
        "input",
        "path",
        "A heightmap to erode instead of noise (any file `erode --input` reads without --width and --height), relative to the config's folder; \
         a list of them as an axis. Its map's size comes from the file: the noise keys (size, seed, relief) are refused beside it",
    ),
    (
        "cell_size",
        "[metres, metres]",
        "Metres per cell east-west and north-south, over whatever the file says",
    ),
    (
        "assume_cell_size",
        "metres",
        "Square cells of this many metres, for a file that states no cell size in metres (no georeferencing, or a CRS \
         vkerode cannot measure); without it or cell_size such a file is refused: the cell size scales every height",
    ),
    (
        "vertical_scale",
        "ratio",
        "Vertical exaggeration applied to the input's elevations before erosion",
    ),
];

/// The input keys of a point's table, as written.
#[derive(Debug)]
struct InputKeys {
    input: Option<String>,
    cell_size: Option<[f32; 2]>,
    assume_cell_size: Option<f32>,
    vertical_scale: Option<f32>,
}

/// A refused key of a point's table (the key alone; the caller says where it is) and
/// why.
pub(super) type KeyRefusal = (&'static str, String);

fn is_input_key(key: &str) -> bool {
    INPUT_KEYS.iter().any(|(k, ..)| *k == key)
}

/// `table` without its input keys: the settings alone.
pub(super) fn without_input(table: &toml::Table) -> toml::Table {
    table
        .iter()
        .filter(|(key, _)| !is_input_key(key))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect()
}

impl InputKeys {
    /// Each key read on its own, so that a bad value is refused by its key.
    fn of(table: &toml::Table) -> Result<Self, KeyRefusal> {
        fn value<T: DeserializeOwned>(
            table: &toml::Table,
            key: &'static str,
        ) -> Result<Option<T>, KeyRefusal> {
            table
                .get(key)
                .map(|v| T::deserialize(v.clone()).map_err(|e| (key, e.to_string())))
                .transpose()
        }
        Ok(Self {
            input: value(table, "input")?,
            cell_size: value(table, "cell_size")?,
            assume_cell_size: value(table, "assume_cell_size")?,
            vertical_scale: value(table, "vertical_scale")?,
        })
    }

    fn units(&self) -> InputUnits {
        InputUnits {
            cell_size: self.cell_size.map(|[x, y]| CellSize { x, y }),
            assume_cell_size: self.assume_cell_size,
            vertical_scale: self
                .vertical_scale
                .unwrap_or(InputUnits::DEFAULT.vertical_scale),
        }
    }

    /// The keys with their values checked, before any file is read.
    fn checked(table: &toml::Table) -> Result<Self, KeyRefusal> {
        let keys = Self::of(table)?;
        keys.units().check().map_err(|e| (e.key, e.reason))?;
        Ok(keys)
    }
}

/// Why a table's input keys cannot be, if they cannot: their types and values alone.
pub(super) fn check_input_keys(table: &toml::Table) -> Result<(), KeyRefusal> {
    InputKeys::checked(table).map(|_| ())
}

/// The heightmap a point erodes, read and prepared once at load for every point that
/// shares it.
#[derive(PartialEq)]
pub struct PointInput {
    /// The `input` value as the config wrote it.
    pub written: String,
    /// [`TerrainSource::content_hash`] of the file.
    pub hash: String,
    /// The initial heights in kernel units (cells), missing cells filled.
    pub heights: Heightmap,
    pub map: MapInfo,
    /// What turned the file's heights into kernel units, and what its figures are in.
    pub units: GridUnits,
    pub height_unit: HeightUnit,
}

impl std::fmt::Debug for PointInput {
    /// Without its heights: a panic's message stays readable.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PointInput")
            .field("written", &self.written)
            .field("hash", &self.hash)
            .field("map", &self.map)
            .finish_non_exhaustive()
    }
}

/// The inputs read while a config loads, each file with each units once.
#[derive(Default)]
pub(super) struct InputLoader {
    loaded: Vec<(String, InputUnits, Arc<PointInput>)>,
}

impl InputLoader {
    /// The input of a point's `table` (settings and input keys), `None` for noise; its
    /// file is read relative to `config_dir` unless an earlier point read it.
    pub(super) fn point_input(
        &mut self,
        table: &toml::Table,
        config_dir: &Path,
    ) -> Result<Option<Arc<PointInput>>, KeyRefusal> {
        let keys = InputKeys::checked(table)?;
        let units = keys.units();
        let Some(written) = keys.input else {
            let unused = INPUT_KEYS.iter().find(|(k, ..)| table.contains_key(*k));
            return match unused {
                Some((key, ..)) => Err((
                    key,
                    "describes an `input` heightmap, and there is none: noise is in cells".into(),
                )),
                None => Ok(None),
            };
        };
        if let Some((key, _)) = NoiseSettings::UNITS
            .iter()
            .find(|(k, _)| table.contains_key(*k))
        {
            let spawns = match *key {
                "seed" => "; the droplets' spawn seed is droplet_seed",
                _ => "",
            };
            return Err((
                key,
                format!(
                    "sets the noise terrain, which input = {written:?} replaces: the map and its size come from the file{spawns}"
                ),
            ));
        }
        if let Some((.., found)) = self
            .loaded
            .iter()
            .find(|(w, u, _)| *w == written && *u == units)
        {
            return Ok(Some(Arc::clone(found)));
        }
        let refused = |reason: String| ("input", reason);
        let source =
            TerrainSource::read(&config_dir.join(&written), None, units).map_err(|e| match e {
                InputError::NoCellSize { .. } => refused(format!(
                    "{e}; give it with cell_size = [x, y], or assume square cells with assume_cell_size = METRES"
                )),
                e => refused(e.to_string()),
            })?;
        // The spec is for noise only; a file is read as it is.
        let prepared = prepare_terrain(&source, &RunSettings::DEFAULT.terrain(), None)
            .map_err(|e| refused(e.to_string()))?;
        let input = Arc::new(PointInput {
            hash: source.content_hash().unwrap_or_default(),
            written: written.clone(),
            map: MapInfo::of(&prepared.heights),
            units: prepared.units,
            height_unit: prepared.height_unit(),
            heights: prepared.heights,
        });
        self.loaded.push((written, units, Arc::clone(&input)));
        Ok(Some(input))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_input_key_is_a_field_and_no_setting() {
        let all: toml::Table = toml::from_str(
            "input = \"a.tif\"\ncell_size = [1, 2]\nassume_cell_size = 3\nvertical_scale = 2\n",
        )
        .unwrap();
        assert_eq!(all.len(), INPUT_KEYS.len());
        let keys = InputKeys::of(&all).unwrap();
        assert_eq!(keys.input.as_deref(), Some("a.tif"));
        assert_eq!(keys.cell_size, Some([1.0, 2.0]));
        assert_eq!(keys.assume_cell_size, Some(3.0));
        assert_eq!(keys.vertical_scale, Some(2.0));
        assert!(without_input(&all).is_empty());
        let settings = RunSettings::keys();
        assert!(INPUT_KEYS
            .iter()
            .all(|(k, ..)| !settings.contains(&k.to_string())));
    }
}
