//! The 16-bit raw heightmap of Unity, Gaea and World Machine (`.r16`): unsigned
//! little-endian, row-major, no header. vkerode writes it with the PNG16 mapping, a
//! sidecar, and GDAL's header and PAM file; a file without a sidecar is read as its
//! pixel values, its size from the flags or, as those tools make them, a square.

use std::path::{Path, PathBuf};

use super::dem::{square_side, Dem, FormatError};
use super::gdal::{write_pam, EsriHeader, Sample};
use super::png16::{gdal_band, heights_of, pixels_of};
use super::sidecar::Sidecar;
use crate::terrain::files::write_atomically;
use crate::terrain::heightmap::Heightmap;

const FORMAT: &str = "r16";

pub fn read(path: &Path, bytes: &[u8], size: Option<(usize, usize)>) -> Result<Dem, FormatError> {
    let sidecar = Sidecar::read_beside(path, bytes, FORMAT)?;
    if !bytes.len().is_multiple_of(2) {
        return Err(FormatError::new(
            path,
            format!("holds {} bytes, not whole 16-bit cells", bytes.len()),
        ));
    }
    let cells = bytes.len() / 2;
    let (width, height) = match (size, &sidecar) {
        (Some(size), _) => size,
        (None, Some(s)) => (s.width, s.height),
        (None, None) => {
            let side = square_side(path, cells)?;
            (side, side)
        }
    };
    if width.checked_mul(height) != Some(cells) {
        return Err(FormatError::new(
            path,
            format!(
                "holds {cells} cells, but {width} x {height} needs {}",
                width.saturating_mul(height)
            ),
        ));
    }
    let pixels: Vec<u16> = bytes
        .chunks_exact(2)
        .map(|b| u16::from_le_bytes([b[0], b[1]]))
        .collect();
    let values = match &sidecar {
        Some(s) => heights_of(path, &pixels, s, 65535.0)?,
        None => pixels.iter().map(|&p| f32::from(p)).collect(),
    };
    let heights =
        Heightmap::new(width, height, values).map_err(|e| FormatError::new(path, e.to_string()))?;
    Ok(Sidecar::dem(sidecar.as_ref(), heights, None))
}

/// Writes the pixels, then GDAL's header and PAM file (placement, and the scale and
/// offset that turn pixels into heights), then the sidecar.
pub fn write(path: &Path, dem: &Dem) -> Result<Vec<PathBuf>, FormatError> {
    let header = EsriHeader::of(path, dem, Sample::UInt16)?;
    let (pixels, sidecar) = pixels_of(dem, FORMAT);
    let band = gdal_band(path, dem, &sidecar)?;
    sidecar.write_with(path, || {
        write_atomically(path, |out| {
            let bytes: Vec<u8> = pixels.iter().flat_map(|p| p.to_le_bytes()).collect();
            std::io::Write::write_all(out, &bytes)
        })
        .map_err(|e| FormatError::new(path, e.source.to_string()))?;
        Ok(vec![
            path.to_path_buf(),
            header.write()?,
            write_pam(path, &band)?,
        ])
    })
}
