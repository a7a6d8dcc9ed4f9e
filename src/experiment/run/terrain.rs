//! Where a run's terrain comes from: erosion noise, or a heightmap file with its units,
//! georeferencing and missing cells; and the terrain ready for a strategy.

use std::path::PathBuf;
use std::sync::Arc;

use serde::Serialize;

use super::super::ExperimentError;
use crate::gpu::Context;
use crate::terrain::formats::{Dem, GeoTags};
use crate::terrain::nodata::fill_missing;
use crate::terrain::units::{metres_per_vertical_unit, CellSizeSource, GridUnits, HeightUnit};
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

/// The terrain as `run.json` records it.
#[derive(Clone, Debug, Serialize)]
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
    /// Metres in one of its heights' units: 0.3048 for a DEM in feet, else 1.
    pub metres_per_height_unit: f32,
    /// The input's nodata value, reused on export.
    pub nodata: Option<f32>,
    /// The input's georeferencing, kept in every TIFF written.
    pub geo: Option<GeoTags>,
    pub report: TerrainReport,
}

impl PreparedTerrain {
    /// The unit reports give heights in.
    pub fn height_unit(&self) -> HeightUnit {
        let metres = HeightUnit::new(&self.export_units, &self.units);
        HeightUnit {
            per_kernel_unit: metres.per_kernel_unit / f64::from(self.metres_per_height_unit),
            ..metres
        }
    }

    /// Kernel heights back in the input's units.
    pub fn from_kernel(&self, height: f32) -> f32 {
        self.units.from_kernel(height) / self.metres_per_height_unit
    }
}

pub fn prepare_terrain(
    source: &TerrainSource,
    spec: &TerrainSpec,
    gpu: Option<&Arc<Context>>,
) -> Result<PreparedTerrain, ExperimentError> {
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
                metres_per_height_unit: 1.0,
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
            let export_units = match dem.units.as_str() {
                "" => "m".into(),
                named => named.into(),
            };
            let metres = metres_per_vertical_unit(&dem.units);
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
                metres_per_height_unit: metres,
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
        let units = GridUnits {
            cell_size: CellSize { x: 30.0, y: 30.0 },
            vertical_scale: 1.0,
        };
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
