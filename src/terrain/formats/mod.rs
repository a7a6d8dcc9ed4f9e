//! Heightmap files: single-band TIFF/GeoTIFF, 16-bit grayscale PNG and raw float32,
//! read and written with the metadata each needs (nodata, units, cell size).

mod geotiff;
mod openexr;
mod png16;
mod r16;
mod raw;
mod sidecar;
mod tiff_band;

use std::fs;
use std::path::{Path, PathBuf};

use thiserror::Error;

use super::heightmap::Heightmap;
use super::image::CellSize;
use super::MIN_SIZE;
pub use geotiff::GeoTags;
pub use sidecar::Sidecar;

/// A file-level problem, naming the file.
#[derive(Debug, Error)]
#[error("{}: {problem}", path.display())]
pub struct FormatError {
    pub path: PathBuf,
    pub problem: String,
}

impl FormatError {
    pub(crate) fn new(path: &Path, problem: impl Into<String>) -> Self {
        Self {
            path: path.to_path_buf(),
            problem: problem.into(),
        }
    }
}

/// How heights are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum HeightFormat {
    /// Single-band float32 TIFF: lossless; nodata in the GDAL_NODATA tag.
    Tif,
    /// The same TIFF, deflate-compressed.
    TifDeflate,
    /// 16-bit grayscale PNG mapping [min, max] to [0, 65535], with a JSON sidecar.
    Png16,
    /// Raw little-endian float32, row-major, with a JSON sidecar.
    Raw,
    /// Single-channel float32 OpenEXR, lossless.
    Exr,
    /// Raw unsigned 16-bit little-endian (Unity, Gaea, World Machine), mapped as PNG16,
    /// with a JSON sidecar.
    R16,
}

impl HeightFormat {
    pub fn extension(self) -> &'static str {
        match self {
            HeightFormat::Tif | HeightFormat::TifDeflate => "tif",
            HeightFormat::Png16 => "png",
            HeightFormat::Raw => "raw",
            HeightFormat::R16 => "r16",
            HeightFormat::Exr => "exr",
        }
    }

    /// The format a file name asks for, by its extension.
    pub fn from_path(path: &Path) -> Option<Self> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "tif" | "tiff" => Some(HeightFormat::Tif),
            "png" => Some(HeightFormat::Png16),
            "raw" | "f32" | "bin" => Some(HeightFormat::Raw),
            "r16" => Some(HeightFormat::R16),
            "exr" => Some(HeightFormat::Exr),
            _ => None,
        }
    }
}

/// A digital elevation model as read from a file: heights in the file's own units,
/// NaN where the file has no data.
#[derive(Clone, Debug, PartialEq)]
pub struct Dem {
    pub heights: Heightmap,
    /// The value the file used to mark missing cells, if it declared one.
    pub nodata: Option<f32>,
    /// Height units, where the file says ("m", "cells"); empty when unknown.
    pub units: String,
    /// Grid spacing, where the file says.
    pub cell_size: Option<CellSize>,
    /// A GeoTIFF's georeferencing, written back into every TIFF made from it.
    pub geo: Option<GeoTags>,
}

impl Dem {
    pub fn missing_cells(&self) -> usize {
        self.heights.data().iter().filter(|h| h.is_nan()).count()
    }
}

/// The sidecar path of a PNG16 or raw heightmap: the file name plus ".json".
pub fn sidecar_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".json");
    path.with_file_name(name)
}

/// Reads a heightmap. TIFF and PNG are recognised by their signature; anything else
/// is read as raw float32, whose size comes from `raw_size` or its sidecar.
pub fn read_dem(path: &Path, raw_size: Option<(usize, usize)>) -> Result<Dem, FormatError> {
    let bytes = fs::read(path).map_err(|e| FormatError::new(path, format!("cannot read: {e}")))?;
    decode_dem(path, &bytes, raw_size)
}

/// [`read_dem`] on bytes already read; `path` names the file in messages, sets the raw
/// formats apart by its extension and leads to the sidecar.
pub fn decode_dem(
    path: &Path,
    bytes: &[u8],
    raw_size: Option<(usize, usize)>,
) -> Result<Dem, FormatError> {
    if bytes.is_empty() {
        return Err(FormatError::new(path, "the file is empty"));
    }
    let tiff = [b"II*\0", b"MM\0*", b"II+\0", b"MM\0+"];
    let dem = if tiff.iter().any(|magic| bytes.starts_with(*magic)) {
        // Classic TIFF or BigTIFF.
        tiff_band::read(path, bytes)?
    } else if bytes.starts_with(&openexr::MAGIC) {
        openexr::read(path, bytes)?
    } else if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        png16::read(path, bytes)?
    } else if HeightFormat::from_path(path) == Some(HeightFormat::R16) {
        r16::read(path, bytes, raw_size)?
    } else if HeightFormat::from_path(path) == Some(HeightFormat::Raw) || raw_size.is_some() {
        raw::read(path, bytes, raw_size)?
    } else {
        return Err(FormatError::new(
            path,
            "not a TIFF or PNG file; for raw float32 use a .raw name or give --width and --height",
        ));
    };
    // +-Inf marks no height as NaN does: missing, never a statistic.
    let dem = Dem {
        heights: dem
            .heights
            .map(|h| if h.is_infinite() { f32::NAN } else { h }),
        ..dem
    };
    check_shape(path, &dem.heights)?;
    if dem.missing_cells() == dem.heights.data().len() {
        return Err(FormatError::new(
            path,
            "no cell holds a valid height (all are nodata or NaN)",
        ));
    }
    Ok(dem)
}

/// No codec vkerode reads packs more than this into a file (deflate's worst case is
/// 1032:1, LZW's about 4096:1), so a header claiming more is corrupt, and is refused
/// before its pixels are allocated.
const MAX_PACKING: u64 = 4096;

pub(crate) fn check_declared_size(
    path: &Path,
    width: u64,
    height: u64,
    bytes_per_cell: u64,
    file_len: usize,
) -> Result<(), FormatError> {
    let claimed = width.saturating_mul(height).saturating_mul(bytes_per_cell);
    if claimed > MAX_PACKING.saturating_mul(file_len as u64).max(1 << 20) {
        return Err(FormatError::new(
            path,
            format!(
                "its header claims {width} x {height} cells ({claimed} bytes), more than a file of {file_len} bytes can hold at any compression: corrupt"
            ),
        ));
    }
    Ok(())
}

fn check_shape(path: &Path, map: &Heightmap) -> Result<(), FormatError> {
    let min = MIN_SIZE as usize;
    if map.width() < min || map.height() < min {
        return Err(FormatError::new(
            path,
            format!(
                "the image is {} x {} cells; erosion needs at least {min} x {min}",
                map.width(),
                map.height()
            ),
        ));
    }
    Ok(())
}

/// Writes `dem` in `format`; returns every file written (the heightmap, and the
/// sidecar where the format has one). Missing cells (NaN) are written as nodata.
pub fn write_dem(
    path: &Path,
    format: HeightFormat,
    dem: &Dem,
) -> Result<Vec<PathBuf>, FormatError> {
    match format {
        HeightFormat::Tif | HeightFormat::TifDeflate => {
            tiff_band::write(path, dem, format == HeightFormat::TifDeflate)?;
            Ok(vec![path.to_path_buf()])
        }
        HeightFormat::Png16 => png16::write(path, dem),
        HeightFormat::Raw => raw::write(path, dem),
        HeightFormat::R16 => r16::write(path, dem),
        HeightFormat::Exr => {
            openexr::write(path, dem)?;
            Ok(vec![path.to_path_buf()])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn infinities_are_missing_cells_like_nan() {
        let dir = std::env::temp_dir().join(format!("vkerode-inf-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("inf.raw");
        let mut values = vec![5.0f32; 16];
        (values[3], values[7], values[9]) = (f32::INFINITY, f32::NEG_INFINITY, f32::NAN);
        std::fs::write(&path, bytemuck::cast_slice(&values)).unwrap();
        let dem = read_dem(&path, Some((4, 4))).unwrap();
        assert_eq!(dem.missing_cells(), 3);
        let stats = dem.heights.stats();
        assert_eq!((stats.min, stats.max), (5.0, 5.0));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
