//! Where a run's terrain comes from: erosion noise, or a heightmap file with its units,
//! georeferencing and missing cells; and the terrain ready for a strategy.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;
use thiserror::Error;

use super::RunError;
use crate::erosion::SettingError;
use crate::gpu::Context;
use crate::hash::fnv1a64;
use crate::terrain::formats::{read_dem, Dem, FormatError, GeoTags};
use crate::terrain::image::CellSize;
use crate::terrain::nodata::fill_missing;
use crate::terrain::units::{
    dem_height_unit, metres_per_vertical_unit, CellSizeSource, GridUnits, HeightUnit,
};
use crate::terrain::{generate_on_cpu, generate_on_gpu, Heightmap, TerrainSpec};

/// Where the terrain comes from.
#[derive(Clone, Debug)]
pub enum TerrainSource {
    /// Erosion noise of the settings' size, seed and relief, generated on the run's
    /// device (or the CPU for CPU engines).
    Noise,
    /// A heightmap file, as read, with the units that turn it into kernel heights.
    File {
        path: PathBuf,
        dem: Box<Dem>,
        units: GridUnits,
        cell_size_source: CellSizeSource,
    },
}

/// What turns a heightmap's elevations into kernel heights, as the user states it:
/// `erode --cell-size`, `--assume-cell-size` and `--vertical-scale`, a sweep's keys
/// of the same names, a strategies terrain's `cell_size`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct InputUnits {
    /// Metres per cell east-west and north-south, over whatever the file says.
    pub cell_size: Option<CellSize>,
    /// Square cells of this many metres, for a file that states no cell size.
    pub assume_cell_size: Option<f32>,
    /// Multiplies the elevations before erosion (vertical exaggeration).
    pub vertical_scale: f32,
}

impl InputUnits {
    /// The file's cell size, its elevations as they are.
    pub const DEFAULT: InputUnits = InputUnits {
        cell_size: None,
        assume_cell_size: None,
        vertical_scale: 1.0,
    };

    /// Why these fit no file, if they do not; the key is the setting's config key
    /// (the flag with dashes).
    pub fn check(&self) -> Result<(), SettingError> {
        if let Some(cell_size) = self.cell_size {
            cell_size
                .check()
                .map_err(|e| SettingError::new("cell_size", e.to_string()))?;
            if self.assume_cell_size.is_some() {
                return Err(SettingError::new(
                    "assume_cell_size",
                    "is for a file that states no cell size, and cell_size is stated over the file's: give one of them",
                ));
            }
        }
        if let Some(side) = self.assume_cell_size {
            CellSize::check_side(side)
                .map_err(|e| SettingError::new("assume_cell_size", e.to_string()))?;
        }
        let scale = self.vertical_scale;
        if !(scale.is_finite() && scale > 0.0) {
            return Err(SettingError::new(
                "vertical_scale",
                format!("must be a positive number, got {scale}"),
            ));
        }
        Ok(())
    }
}

/// Why a heightmap cannot be a run's terrain.
#[derive(Debug, Error)]
pub enum InputError {
    #[error(transparent)]
    Format(#[from] FormatError),
    #[error(transparent)]
    Units(#[from] SettingError),
    /// Callers add how their users state one (flags or keys).
    #[error("{}: states no cell size in metres ({why})", path.display())]
    NoCellSize { path: PathBuf, why: &'static str },
}

impl TerrainSource {
    /// `path` read as a heightmap (`raw_size`: the cells of a headerless raw file), with
    /// its cell size from `units`, the file, or the assumption, in that order. The one
    /// way `erode --input`, strategies and sweeps turn a file into a terrain.
    pub fn read(
        path: &Path,
        raw_size: Option<(usize, usize)>,
        units: InputUnits,
    ) -> Result<Self, InputError> {
        units.check()?;
        let dem = read_dem(path, raw_size)?;
        let (cell_size, cell_size_source) =
            match (dem.cell_size_from(units.cell_size), units.assume_cell_size) {
                (Some(found), _) => found,
                (None, Some(side)) => (CellSize { x: side, y: side }, CellSizeSource::Assumed),
                (None, None) => {
                    return Err(InputError::NoCellSize {
                        path: path.to_path_buf(),
                        why: dem.why_no_cell_size(),
                    })
                }
            };
        Ok(TerrainSource::File {
            path: path.to_path_buf(),
            dem: Box::new(dem),
            units: GridUnits::metres(cell_size, units.vertical_scale),
            cell_size_source,
        })
    }

    /// A file's content as a run uses it, hashed (FNV-1a, hex): its shape, elevations
    /// and the cell size it states. `None` for noise, which its settings describe.
    pub fn content_hash(&self) -> Option<String> {
        let TerrainSource::File { dem, .. } = self else {
            return None;
        };
        let heights = &dem.heights;
        let elevations = fnv1a64(bytemuck::cast_slice(heights.data()));
        let stated = dem.cell_size.map(|c| (c.x.to_bits(), c.y.to_bits()));
        let canonical = format!(
            "{}x{} {elevations:016x} {stated:?}",
            heights.width(),
            heights.height()
        );
        Some(format!("{:016x}", fnv1a64(canonical.as_bytes())))
    }
}

/// The terrain as `run.json` records it.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
#[serde(tag = "source", rename_all = "kebab-case")]
pub enum TerrainReport {
    Noise(TerrainSpec),
    File {
        path: PathBuf,
        width: usize,
        height: usize,
        /// Cells with no data (nodata or NaN), filled before erosion.
        missing_cells: usize,
        units: GridUnits,
        cell_size_source: CellSizeSource,
        /// Whether the file was a GeoTIFF whose georeferencing the TIFF outputs keep.
        georeferenced: bool,
    },
}

/// Initial kernel heights, missing-cell mask and what the report says of them.
pub struct PreparedTerrain {
    /// In kernel height units (cells).
    pub heights: Heightmap,
    /// Cells the input had no data for; filled for the kernel, nodata again on export.
    pub missing: Vec<bool>,
    pub units: GridUnits,
    /// The map's vertical unit, as exports label it: "m" for a DEM (or the unit its
    /// file names), "cells" for generated terrain.
    pub export_units: String,
    /// The input's nodata value, reused on export.
    pub nodata: Option<f32>,
    /// The input's georeferencing, kept in every TIFF written.
    pub geo: Option<GeoTags>,
    pub report: TerrainReport,
}

impl PreparedTerrain {
    /// The unit reports give heights in.
    pub fn height_unit(&self) -> HeightUnit {
        HeightUnit::new(&self.export_units, &self.units)
    }

    /// Kernel heights back in the input's units.
    pub fn from_kernel(&self, height: f32) -> f32 {
        self.units.from_kernel(height) / metres_per_vertical_unit(&self.export_units)
    }
}

pub fn prepare_terrain(
    source: &TerrainSource,
    spec: &TerrainSpec,
    gpu: Option<&Arc<Context>>,
) -> Result<PreparedTerrain, RunError> {
    match source {
        TerrainSource::Noise => {
            let heights = match gpu {
                Some(ctx) => generate_on_gpu(ctx, spec)?,
                None => generate_on_cpu(spec)?,
            };
            Ok(PreparedTerrain {
                missing: vec![false; heights.data().len()],
                heights,
                units: GridUnits::default(),
                export_units: "cells".into(),
                nodata: None,
                geo: None,
                report: TerrainReport::Noise(*spec),
            })
        }
        TerrainSource::File {
            path,
            dem,
            units,
            cell_size_source,
        } => {
            let mut elevations = dem.heights.clone();
            let missing = fill_missing(&mut elevations);
            // Every file's cell size is in metres by now (stated, read or assumed), so
            // its heights are too, unless the file names its own unit (feet are turned
            // into metres for the kernel, and back on export).
            let export_units = dem_height_unit(&dem.units).to_string();
            let metres = metres_per_vertical_unit(&export_units);
            Ok(PreparedTerrain {
                heights: elevations.map(|e| units.to_kernel(e * metres)),
                report: TerrainReport::File {
                    path: path.clone(),
                    width: dem.heights.width(),
                    height: dem.heights.height(),
                    missing_cells: missing.iter().filter(|&&m| m).count(),
                    units: *units,
                    cell_size_source: *cell_size_source,
                    georeferenced: dem.geo.is_some(),
                },
                geo: match cell_size_source {
                    CellSizeSource::Flag => Some(dem.geo_with_cell_size(units.cell_size)),
                    _ => dem.geo.clone(),
                },
                missing,
                units: *units,
                export_units,
                nodata: dem.nodata,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terrain::image::CellSize;

    #[test]
    fn a_dem_in_feet_reaches_the_kernel_in_metres_and_reports_and_exports_in_feet() {
        let feet = [1000.0f32, 1200.0, 1100.0, 1300.0];
        let dem = Dem {
            heights: Heightmap::new(2, 2, feet.to_vec()).unwrap(),
            nodata: None,
            units: "ft".into(),
            cell_size: None,
            geo: None,
        };
        let units = GridUnits::metres(CellSize { x: 30.0, y: 30.0 }, 1.0);
        let source = TerrainSource::File {
            path: "dem.tif".into(),
            dem: Box::new(dem),
            units,
            cell_size_source: CellSizeSource::Flag,
        };
        // A file's terrain ignores the noise's spec.
        let spec = TerrainSpec {
            width: 2,
            height: 2,
            seed: 0,
            relief: 1.0,
        };
        let terrain = prepare_terrain(&source, &spec, None).unwrap();
        for (&kernel, &ft) in terrain.heights.data().iter().zip(&feet) {
            assert!(
                (kernel - ft * 0.3048 / 30.0).abs() < 1e-5,
                "{kernel} for {ft} ft"
            );
            assert!((terrain.from_kernel(kernel) - ft).abs() < 1e-3);
        }
        let unit = terrain.height_unit();
        assert_eq!(unit.name, "ft");
        assert!(
            (unit.of(1.0) / (30.0 / 0.3048) - 1.0).abs() < 1e-6,
            "{unit:?}"
        );
    }
}
