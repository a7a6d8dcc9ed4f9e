//! Where a run's terrain comes from: erosion noise, or a heightmap file with its units,
//! georeferencing and missing cells; and the terrain ready for a strategy.

use std::path::PathBuf;
use std::sync::Arc;

use serde::Serialize;

use super::super::ExperimentError;
use crate::gpu::Context;
use crate::terrain::formats::{Dem, GeoTags};
use crate::terrain::nodata::fill_missing;
use crate::terrain::units::{CellSizeSource, GridUnits, HeightUnit};
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
            // its heights are too, unless the file names its own unit.
            let export_units = match dem.units.as_str() {
                "" => "m".into(),
                named => named.into(),
            };
            Ok(PreparedTerrain {
                heights: elevations.map(|e| units.to_kernel(e)),
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
