//! What a heightmap file holds and how it is refused: the elevation model as read,
//! the formats, the file-level error, and the checks every reader shares.

use std::path::{Path, PathBuf};

use thiserror::Error;

use super::geotiff::GeoTags;
use crate::terrain::heightmap::Heightmap;
use crate::terrain::image::CellSize;
use crate::terrain::units::CellSizeSource;

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
    /// 16-bit grayscale PNG mapping [min, max] to [0, 65535], with a JSON sidecar and
    /// GDAL's FILE.aux.xml.
    Png16,
    /// Raw little-endian float32, row-major (also .r32), with a JSON sidecar, an ESRI
    /// .hdr and GDAL's FILE.aux.xml.
    Raw,
    /// Single-channel float32 OpenEXR, lossless, uncompressed, with a GDAL VRT
    /// (FILE.vrt) over it.
    Exr,
    /// Raw unsigned 16-bit little-endian (Unity, Gaea, World Machine), mapped as PNG16,
    /// with a JSON sidecar, an ESRI .hdr and GDAL's FILE.aux.xml.
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
            // Gaea's .r32 is raw float32 (square by convention when read).
            "raw" | "f32" | "bin" | "r32" => Some(HeightFormat::Raw),
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
    /// Height units where the source says ("m", "cells"); empty where it does not.
    pub units: String,
    /// Grid spacing, where the file says.
    pub cell_size: Option<CellSize>,
    /// A GeoTIFF's georeferencing, written back into every TIFF made from it.
    pub geo: Option<GeoTags>,
}

impl Dem {
    /// Heights alone, from a format that says nothing else of them.
    pub(crate) fn bare(
        path: &Path,
        width: usize,
        height: usize,
        values: Vec<f32>,
    ) -> Result<Self, FormatError> {
        Ok(Self {
            heights: Heightmap::new(width, height, values)
                .map_err(|e| FormatError::new(path, e.to_string()))?,
            nodata: None,
            units: String::new(),
            cell_size: None,
            geo: None,
        })
    }

    /// Its cell size and where it comes from: `stated` (a cell size the user gave)
    /// wins; `None` where neither it nor the file gives one.
    pub fn cell_size_from(&self, stated: Option<CellSize>) -> Option<(CellSize, CellSizeSource)> {
        if let Some(cell_size) = stated {
            return Some((cell_size, CellSizeSource::Flag));
        }
        let rows = u32::try_from(self.heights.height()).unwrap_or(u32::MAX);
        let source = match self.geo.as_ref().and_then(|g| g.geodesic(rows)) {
            Some((_, how)) => CellSizeSource::Geodesic(how),
            None => CellSizeSource::File,
        };
        Some((self.cell_size?, source))
    }

    /// Why the file states no cell size vkerode can use, for a refusal.
    pub fn why_no_cell_size(&self) -> &'static str {
        match self.geo {
            Some(_) => "it is georeferenced, but not in metres or feet, nor in degrees on an ellipsoid vkerode knows",
            None => "it has no georeferencing and no sidecar cell size",
        }
    }

    pub fn missing_cells(&self) -> usize {
        self.heights.data().iter().filter(|h| h.is_nan()).count()
    }

    /// The value its missing cells are written as in float32 files, where one is needed:
    /// the file's own nodata, or NaN where it declared none but has missing cells.
    pub fn nodata_written(&self) -> Option<f32> {
        let has_missing = self.heights.data().iter().any(|h| h.is_nan());
        self.nodata.or(has_missing.then_some(f32::NAN))
    }

    /// The georeferencing its outputs carry when the user stated its cell size: its
    /// tags with that spacing (see [`GeoTags::with_cell_size`]), or, where it had none,
    /// that spacing at the origin in no CRS.
    pub fn geo_with_cell_size(&self, cell_size: CellSize) -> GeoTags {
        match &self.geo {
            Some(tags) => tags.with_cell_size(cell_size),
            None => GeoTags::of_cell_size(cell_size),
        }
    }
}

/// A nodata value as GDAL reads it (GDAL_NODATA, PAM, VRT): "nan" for NaN.
pub(crate) fn nodata_text(value: f32) -> String {
    if value.is_nan() {
        "nan".into()
    } else {
        value.to_string()
    }
}

/// The side of a headerless map of `cells` cells that is a square (r16 and r32, as
/// Unity and Gaea write them), or a refusal that asks for its size.
pub(crate) fn square_side(path: &Path, cells: usize) -> Result<usize, FormatError> {
    let side = (cells as f64).sqrt().round() as usize;
    if side.checked_mul(side) == Some(cells) {
        Ok(side)
    } else {
        Err(FormatError::new(
            path,
            format!("its {cells} cells are not a square; give --width and --height"),
        ))
    }
}

/// A heightmap file and the files beside it that describe it (vkerode's sidecar,
/// GDAL's header, PAM file and VRT), there or not: what reading it may read, and what
/// an output may not replace.
pub fn with_companions(path: &Path) -> Vec<PathBuf> {
    let mut files = vec![path.to_path_buf(), beside(path, ".aux.xml")];
    match HeightFormat::from_path(path) {
        Some(HeightFormat::Raw | HeightFormat::R16) => {
            files.extend([sidecar_path(path), path.with_extension("hdr")]);
        }
        Some(HeightFormat::Png16) => files.push(sidecar_path(path)),
        Some(HeightFormat::Exr) => files.push(beside(path, ".vrt")),
        _ => {}
    }
    files
}

/// The sidecar path of a PNG16, raw or r16 heightmap: the file name plus ".json".
pub fn sidecar_path(path: &Path) -> PathBuf {
    beside(path, ".json")
}

/// `path` with `suffix` added to its file name: where a file's sidecars go.
pub(crate) fn beside(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(suffix);
    path.with_file_name(name)
}

/// No codec vkerode reads packs more than this into a file (deflate's worst case is
/// 1032:1, LZW's about 4096:1), so a header claiming more is corrupt, and is refused
/// before its pixels are allocated.
const MAX_PACKING: u64 = 4096;

/// `bytes_per_cell` is what one cell takes uncompressed, so the message gives the cells
/// and the bytes they would take.
pub(crate) fn check_declared_size(
    path: &Path,
    width: u64,
    height: u64,
    bytes_per_cell: u64,
    file_len: usize,
) -> Result<(), FormatError> {
    let cells = width.saturating_mul(height);
    let claimed = cells.saturating_mul(bytes_per_cell);
    if claimed > MAX_PACKING.saturating_mul(file_len as u64).max(1 << 20) {
        return Err(FormatError::new(
            path,
            format!(
                "its header claims {width} x {height} = {cells} cells of {bytes_per_cell} bytes ({claimed} bytes), more than a file of {file_len} bytes can hold at any compression: corrupt"
            ),
        ));
    }
    Ok(())
}
