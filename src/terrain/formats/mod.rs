//! Heightmap files: single-band TIFF/GeoTIFF, 16-bit grayscale PNG, raw float32 and
//! 16-bit, OpenEXR and (read only) PFM, read and written with the metadata each needs
//! (nodata, units, cell size, georeferencing), and GDAL's files beside the non-TIFF ones.

mod dem;
mod gdal;
mod geotiff;
mod openexr;
mod pfm;
mod png16;
mod r16;
mod raw;
mod sidecar;
mod tiff_band;

use std::fs;
use std::path::{Path, PathBuf};

use super::heightmap::Heightmap;
use super::MIN_SIZE;
pub use dem::{sidecar_path, with_companions, Dem, FormatError, HeightFormat};
pub use geotiff::{Crs, GeoTags};
pub use sidecar::Sidecar;

/// Reads a heightmap. TIFF, OpenEXR, PNG and PFM are recognised by their signature,
/// r16 and raw float32 (.raw, .r32) by their extension or a `raw_size`; a raw size
/// comes from `raw_size` or the sidecar (or, for r16 and r32, a square).
pub fn read_dem(path: &Path, raw_size: Option<(usize, usize)>) -> Result<Dem, FormatError> {
    let bytes = crate::check_regular_file(path)
        .and_then(|()| fs::read(path))
        .map_err(|e| FormatError::new(path, format!("cannot read: {e}")))?;
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
        sized_by_itself(path, "TIFF", raw_size)?;
        tiff_band::read(path, bytes)?
    } else if bytes.starts_with(&openexr::MAGIC) {
        sized_by_itself(path, "OpenEXR", raw_size)?;
        openexr::read(path, bytes)?
    } else if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        sized_by_itself(path, "PNG", raw_size)?;
        png16::read(path, bytes)?
    } else if HeightFormat::from_path(path) == Some(HeightFormat::R16) {
        r16::read(path, bytes, raw_size)?
    } else if HeightFormat::from_path(path) == Some(HeightFormat::Raw) {
        let r32 = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("r32"));
        raw::read(path, bytes, raw_size, r32)?
    } else if pfm::is_pfm(bytes) {
        sized_by_itself(path, "PFM", raw_size)?;
        pfm::read(path, bytes)?
    } else if raw_size.is_some() {
        raw::read(path, bytes, raw_size, false)?
    } else {
        return Err(FormatError::new(
            path,
            "not a TIFF, PNG, OpenEXR or PFM file; for raw float32 use a .raw or .r32 name or give --width and --height",
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

/// Refuses a raw size for a file that states its own: it would be ignored.
fn sized_by_itself(
    path: &Path,
    format: &str,
    raw_size: Option<(usize, usize)>,
) -> Result<(), FormatError> {
    match raw_size {
        Some((w, h)) => Err(FormatError::new(
            path,
            format!(
                "a {format} file gives its own size; a width and height ({w} x {h}, --width and --height) are for raw files"
            ),
        )),
        None => Ok(()),
    }
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

/// Writes `dem` in `format`; returns every file written (the heightmap, its sidecar
/// where the format has one, and GDAL's files beside the non-TIFF formats). Missing
/// cells (NaN) are written as nodata.
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
        HeightFormat::Exr => openexr::write(path, dem),
    }
}

/// `dem` as a float32 BigTIFF whatever its size, as [`write_dem`] writes maps past 4 GB:
/// for tests, which cannot afford 4 GB (tests/geotiff.rs).
#[doc(hidden)]
pub fn write_bigtiff(path: &Path, dem: &Dem) -> Result<(), FormatError> {
    tiff_band::write_as(path, dem, false, true)
}

/// What `dem` written as `format` leaves out, for a warning: a CRS with no EPSG code,
/// which GDAL's files beside a non-TIFF heightmap cannot name (TIFFs keep it whole).
pub fn export_warning(dem: &Dem, format: HeightFormat) -> Option<String> {
    let tiff = matches!(format, HeightFormat::Tif | HeightFormat::TifDeflate);
    let unnamed = dem.geo.as_ref().and_then(GeoTags::crs) == Some(Crs::Unnamed);
    (unnamed && !tiff).then(|| {
        format!(
            "the input's CRS has no EPSG code: GDAL's files beside a .{} heightmap give its geotransform but no CRS (a TIFF keeps it whole)",
            format.extension()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn infinities_are_missing_cells_like_nan() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let path = dir.join("inf.raw");
        let mut values = vec![5.0f32; 16];
        (values[3], values[7], values[9]) = (f32::INFINITY, f32::NEG_INFINITY, f32::NAN);
        std::fs::write(&path, bytemuck::cast_slice(&values)).unwrap();
        let dem = read_dem(&path, Some((4, 4))).unwrap();
        assert_eq!(dem.missing_cells(), 3);
        let stats = dem.heights.stats();
        assert_eq!((stats.min, stats.max), (5.0, 5.0));
    }
}
