//! The JSON written beside PNG16 and raw heightmaps: what their pixels mean.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::dem::{sidecar_path, Dem, FormatError};
use crate::hash::fnv1a64;
use crate::terrain::files::write_atomically;
use crate::terrain::heightmap::Heightmap;
use crate::terrain::image::CellSize;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sidecar {
    pub width: usize,
    pub height: usize,
    /// "png16" or "raw-f32le".
    pub format: String,
    /// Height units ("m", "cells"); empty when unknown.
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
            data_fnv1a64: None,
        }
    }

    /// A DEM of `heights` with the units and cell size this sidecar (if any) gives.
    pub fn dem(sidecar: Option<&Sidecar>, heights: Heightmap, nodata: Option<f32>) -> Dem {
        Dem {
            geo: None,
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
            .map_err(|reason| FormatError::new(&path, reason))
    }

    /// A sidecar's text, checked against the data file's bytes and format.
    pub fn parse(text: &str, data: &[u8], format: &str) -> Result<Self, String> {
        let sidecar: Self = serde_json::from_str(text)
            .map_err(|e| format!("not a vkerode heightmap sidecar: {e}"))?;
        sidecar.check(format)?;
        match &sidecar.data_fnv1a64 {
            Some(sum) if *sum != checksum(data) => Err(
                "was written with another version of the file beside it (their checksums \
                 differ): the pair is mixed from two runs"
                    .into(),
            ),
            _ => Ok(sidecar),
        }
    }

    fn check(&self, format: &str) -> Result<(), String> {
        if self.format != format {
            return Err(format!(
                "says format {:?}, but the file beside it is {format:?}",
                self.format
            ));
        }
        if let Some([x, y]) = self.cell_size {
            (CellSize { x, y })
                .check()
                .map_err(|e| format!("cell_size: {e}"))?;
        }
        match (self.min, self.max) {
            (Some(min), Some(max)) if !(min.is_finite() && max.is_finite() && min <= max) => Err(
                format!("min {min} and max {max} must be finite with min <= max"),
            ),
            _ => Ok(()),
        }
    }

    /// Writes the data file through `write_data`, then this sidecar beside it with the
    /// data's checksum: data before sidecar, so that a sidecar never describes data that
    /// is not there, and a kill between the two leaves a pair the reader refuses.
    pub fn write_with(
        mut self,
        data_path: &Path,
        write_data: impl FnOnce() -> Result<(), FormatError>,
    ) -> Result<Vec<PathBuf>, FormatError> {
        write_data()?;
        let data = std::fs::read(data_path)
            .map_err(|e| FormatError::new(data_path, format!("cannot read back: {e}")))?;
        self.data_fnv1a64 = Some(checksum(&data));
        let path = sidecar_path(data_path);
        write_atomically(&path, |out| {
            serde_json::to_writer_pretty(&mut *out, &self).map_err(std::io::Error::other)
        })
        .map_err(|e| FormatError::new(&path, e.source.to_string()))?;
        Ok(vec![data_path.to_path_buf(), path])
    }
}

fn checksum(data: &[u8]) -> String {
    format!("{:016x}", fnv1a64(data))
}
