//! Raw little-endian float32, row-major (`.raw`, and Gaea's `.r32`), with a sidecar that
//! gives its size, and GDAL's header and PAM file beside it.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::dem::{square_side, Dem, FormatError};
use super::gdal::{write_pam, Band, EsriHeader, Sample};
use super::sidecar::Sidecar;
use crate::terrain::files::write_atomically;
use crate::terrain::heightmap::Heightmap;

/// Reads raw float32; `square`: the format is square by convention (`.r32`), so a file
/// with no size given and no sidecar is read as a square.
pub fn read(
    path: &Path,
    bytes: &[u8],
    size: Option<(usize, usize)>,
    square: bool,
) -> Result<Dem, FormatError> {
    let sidecar = Sidecar::read_beside(path, bytes, "raw-f32le")?;
    let (width, height) = match (size, &sidecar) {
        (Some(size), _) => size,
        (None, Some(s)) => (s.width, s.height),
        (None, None) if square => {
            if !bytes.len().is_multiple_of(4) {
                return Err(FormatError::new(
                    path,
                    format!("holds {} bytes, not whole float32 cells", bytes.len()),
                ));
            }
            let side = square_side(path, bytes.len() / 4)?;
            (side, side)
        }
        (None, None) => {
            return Err(FormatError::new(
                path,
                "raw float32 needs --width and --height (or a .json sidecar beside it)",
            ))
        }
    };
    let expected = width.checked_mul(height).and_then(|n| n.checked_mul(4));
    if expected != Some(bytes.len()) {
        return Err(FormatError::new(
            path,
            format!(
                "holds {} bytes, but {width} x {height} float32 cells need {}",
                bytes.len(),
                expected.map_or("more than fits in memory".into(), |n| n.to_string())
            ),
        ));
    }
    let nodata = sidecar.as_ref().and_then(|s| s.nodata);
    let values = bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .map(|v| if Some(v) == nodata { f32::NAN } else { v })
        .collect();
    let heights =
        Heightmap::new(width, height, values).map_err(|e| FormatError::new(path, e.to_string()))?;
    Ok(Sidecar::dem(sidecar.as_ref(), heights, nodata))
}

/// Writes the cells, missing ones as the DEM's nodata (NaN if it had none), then GDAL's
/// header and PAM file, then the sidecar.
pub fn write(path: &Path, dem: &Dem) -> Result<Vec<PathBuf>, FormatError> {
    let header = EsriHeader::of(path, dem, Sample::Float32)?;
    let nodata = dem.nodata_written();
    let fill = nodata.unwrap_or(f32::NAN);
    let mut sidecar = Sidecar::describing(dem, "raw-f32le");
    sidecar.nodata = dem.nodata;
    sidecar.write_with(path, || {
        write_atomically(path, |out| {
            for &h in dem.heights.data() {
                out.write_all(&(if h.is_nan() { fill } else { h }).to_le_bytes())?;
            }
            Ok(())
        })
        .map_err(|e| FormatError::new(path, e.source.to_string()))?;
        let band = Band {
            dem,
            sample: Sample::Float32,
            nodata,
            scale_offset: None,
        };
        Ok(vec![
            path.to_path_buf(),
            header.write()?,
            write_pam(path, &band)?,
        ])
    })
}
