//! The JSON written beside PNG16, raw and r16 heightmaps: what their pixels mean, and
//! where they lie.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::dem::{sidecar_path, Dem, FormatError};
use super::geotiff::GeoTags;
use crate::hash::fnv1a64;
use crate::terrain::files::write_atomically;
use crate::terrain::heightmap::Heightmap;
use crate::terrain::image::{CellSize, CellSizeError};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sidecar {
    pub width: usize,
    pub height: usize,
    /// "png16", "raw-f32le" or "r16".
    pub format: String,
    /// The heights' unit: "m" for a DEM eroded in metres, "cells" for generated
    /// terrain, the source's own where it names one; empty where the source did not say.
    pub units: String,
    /// Grid spacing [x, y], in the units of the heights' horizontal grid.
    #[serde(default)]
    pub cell_size: Option<[f32; 2]>,
    /// png16: heights of the lowest and highest valid pixel values.
    #[serde(default)]
    pub min: Option<f32>,
    #[serde(default)]
    pub max: Option<f32>,
    /// png16: the pixel value that marks missing cells.
    #[serde(default)]
    pub nodata_pixel: Option<u16>,
    /// raw: the value that marks missing cells (absent: NaN marks them).
    #[serde(default)]
    pub nodata: Option<f32>,
    /// The CRS as GDAL is told it ("EPSG:32614"), where the georeferencing names one
    /// by code: for people and other tools, written from `geotiff`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crs: Option<String>,
    /// GDAL's geotransform (the corner of cell (0, 0), x and y per column and per row),
    /// written from `geotiff` like `crs`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub geotransform: Option<[f64; 6]>,
    /// The GeoTIFF tags of the source's georeferencing, verbatim: what vkerode reads
    /// back, so that a TIFF made from this file lies where its source did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub geotiff: Option<GeoTags>,
    /// FNV-1a 64 of the data file this sidecar was written with (hex), so that a sidecar
    /// beside another version of its file is refused; absent in older sidecars.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_fnv1a64: Option<String>,
}

impl Sidecar {
    pub fn describing(dem: &Dem, format: &str) -> Self {
        Self {
            width: dem.heights.width(),
            height: dem.heights.height(),
            format: format.into(),
            units: dem.units.clone(),
            cell_size: dem.cell_size.map(|c| [c.x, c.y]),
            min: None,
            max: None,
            nodata_pixel: None,
            nodata: None,
            crs: dem.geo.as_ref().and_then(GeoTags::epsg_name),
            geotransform: dem.geo.as_ref().and_then(GeoTags::geotransform),
            geotiff: dem.geo.clone(),
            data_fnv1a64: None,
        }
    }

    /// A DEM of `heights` with the units and cell size this sidecar (if any) gives.
    pub fn dem(sidecar: Option<&Sidecar>, heights: Heightmap, nodata: Option<f32>) -> Dem {
        Dem {
            geo: sidecar.and_then(|s| s.geotiff.clone()),
            heights,
            nodata,
            units: sidecar.map(|s| s.units.clone()).unwrap_or_default(),
            cell_size: sidecar.and_then(Sidecar::cell_size),
        }
    }

    pub fn cell_size(&self) -> Option<CellSize> {
        self.cell_size.map(|[x, y]| CellSize { x, y })
    }

    /// The sidecar of `data_path` (whose bytes are `data`), if there is one, checked like
    /// flags: a `format` it must declare, a cell size in [`CellSize::RANGE`], min no greater
    /// than max, and the checksum of the data it was written with.
    pub fn read_beside(
        data_path: &Path,
        data: &[u8],
        format: &str,
    ) -> Result<Option<Self>, FormatError> {
        let path = sidecar_path(data_path);
        let read = crate::read_input_text(&path);
        let text = match read {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(FormatError::new(&path, format!("cannot read: {e}"))),
        };
        Self::parse(&text, data, format)
            .map(Some)
            .map_err(|reason| FormatError::new(&path, reason.to_string()))
    }

    /// A sidecar's text, checked against the data file's bytes and format.
    pub fn parse(text: &str, data: &[u8], format: &str) -> Result<Self, SidecarError> {
        let sidecar: Self = serde_json::from_str(text).map_err(SidecarError::NotSidecar)?;
        sidecar.check(format)?;
        match &sidecar.data_fnv1a64 {
            Some(sum) if *sum != checksum(data) => Err(SidecarError::Mixed),
            _ => Ok(sidecar),
        }
    }

    fn check(&self, format: &str) -> Result<(), SidecarError> {
        if self.format != format {
            return Err(SidecarError::Format {
                says: self.format.clone(),
                beside: format.to_string(),
            });
        }
        if let Some([x, y]) = self.cell_size {
            (CellSize { x, y }).check()?;
        }
        if let (Some(min), Some(max)) = (self.min, self.max) {
            if !(min.is_finite() && max.is_finite() && min <= max) {
                return Err(SidecarError::Range { min, max });
            }
        }
        // vkerode reads `geotiff`; a `crs` or `geotransform` edited apart from it would
        // be ignored, so it is refused.
        let tags = self.geotiff.as_ref();
        let stated = (self.crs.as_deref(), self.geotransform);
        let from_tags = tags.and_then(GeoTags::epsg_name);
        if stated != (from_tags.as_deref(), tags.and_then(GeoTags::geotransform)) {
            return Err(SidecarError::Place {
                crs: shown(&self.crs),
                geotransform: shown(&self.geotransform),
                tags_crs: shown(&from_tags),
                tags_geotransform: shown(&tags.and_then(GeoTags::geotransform)),
            });
        }
        Ok(())
    }

    /// Writes the data file (and GDAL's files beside it) through `write_data`, which
    /// returns the files it wrote, then this sidecar with the data's checksum: data
    /// before sidecar, so that a sidecar never describes data that is not there, and a
    /// kill between the two leaves a pair the reader refuses.
    pub fn write_with(
        mut self,
        data_path: &Path,
        write_data: impl FnOnce() -> Result<Vec<PathBuf>, FormatError>,
    ) -> Result<Vec<PathBuf>, FormatError> {
        let mut written = write_data()?;
        let data = std::fs::read(data_path)
            .map_err(|e| FormatError::new(data_path, format!("cannot read back: {e}")))?;
        self.data_fnv1a64 = Some(checksum(&data));
        let path = sidecar_path(data_path);
        write_atomically(&path, |out| {
            serde_json::to_writer_pretty(&mut *out, &self).map_err(std::io::Error::other)
        })
        .map_err(|e| FormatError::new(&path, e.source.to_string()))?;
        written.push(path);
        Ok(written)
    }
}

/// Why a sidecar does not describe the file beside it.
#[derive(Debug, thiserror::Error)]
pub enum SidecarError {
    #[error("not a vkerode heightmap sidecar: {0}")]
    NotSidecar(serde_json::Error),
    #[error(
        "was written with another version of the file beside it (their checksums \
         differ): the pair is mixed from two runs"
    )]
    Mixed,
    #[error("says format {says:?}, but the file beside it is {beside:?}")]
    Format { says: String, beside: String },
    #[error("cell_size: {0}")]
    CellSize(#[from] CellSizeError),
    #[error("min {min} and max {max} must be finite with min <= max")]
    Range { min: f32, max: f32 },
    #[error(
        "its crs ({crs}) and geotransform ({geotransform}) are not what its geotiff tags give \
         (crs {tags_crs}, geotransform {tags_geotransform}); vkerode places the file by the tags"
    )]
    Place {
        crs: String,
        geotransform: String,
        tags_crs: String,
        tags_geotransform: String,
    },
}

fn shown<T: std::fmt::Debug>(value: &Option<T>) -> String {
    value
        .as_ref()
        .map_or_else(|| "none".into(), |v| format!("{v:?}"))
}

fn checksum(data: &[u8]) -> String {
    format!("{:016x}", fnv1a64(data))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sidecar(place: &str) -> String {
        format!(r#"{{"width": 4, "height": 4, "format": "raw-f32le", "units": "m"{place}}}"#)
    }

    #[test]
    fn the_place_comes_from_the_geotiff_tags_and_must_agree_with_what_it_says() {
        let tags = r#""geotiff": {"pixel_scale": [30.0, 30.0, 0.0],
            "tiepoints": [0.0, 0.0, 0.0, 500000.0, 4000000.0, 0.0],
            "key_directory": [1, 1, 0, 2, 1024, 0, 1, 1, 3072, 0, 1, 32614]}"#;
        let agreeing = format!(
            r#", "crs": "EPSG:32614", "geotransform": [500000.0, 30.0, 0.0, 4000000.0, 0.0, -30.0], {tags}"#
        );
        let read = Sidecar::parse(&sidecar(&agreeing), &[], "raw-f32le").unwrap();
        let dem = Sidecar::dem(
            Some(&read),
            Heightmap::new(4, 4, vec![0.0; 16]).unwrap(),
            None,
        );
        assert_eq!(
            dem.geo.as_ref().and_then(GeoTags::epsg_name).as_deref(),
            Some("EPSG:32614")
        );

        let edited = agreeing.replace("EPSG:32614", "EPSG:32615");
        let refused = Sidecar::parse(&sidecar(&edited), &[], "raw-f32le")
            .unwrap_err()
            .to_string();
        assert!(
            refused.contains("not what its geotiff tags give (crs \"EPSG:32614\""),
            "{refused}"
        );
        // An older sidecar, with no place at all, still reads.
        assert!(Sidecar::parse(&sidecar(""), &[], "raw-f32le").is_ok());
    }
}
