//! Grayscale PNG, 8 or 16 bits in; 16 bits out, mapping [min, max] to the pixel range,
//! with a sidecar that records the mapping.

use std::io::Cursor;
use std::path::{Path, PathBuf};

use super::dem::{Dem, FormatError};
use super::gdal::{write_pam, Band, Sample};
use super::sidecar::Sidecar;
use crate::terrain::heightmap::Heightmap;
use crate::terrain::image::write_png;

/// Pixel value of missing cells when a map has any; valid cells then use 1..=65535.
const NODATA_PIXEL: u16 = 0;

pub fn read(path: &Path, bytes: &[u8]) -> Result<Dem, FormatError> {
    let bad = |what: &str, e: png::DecodingError| FormatError::new(path, format!("{what}: {e}"));
    let mut decoder = png::Decoder::new(Cursor::new(bytes));
    decoder.set_transformations(png::Transformations::IDENTITY);
    let mut reader = decoder
        .read_info()
        .map_err(|e| bad("not a readable PNG", e))?;
    let info = reader.info();
    let (width, height) = (info.width as usize, info.height as usize);
    if info.color_type != png::ColorType::Grayscale {
        return Err(FormatError::new(
            path,
            format!(
                "has colour type {:?}; a heightmap needs a grayscale PNG",
                info.color_type
            ),
        ));
    }
    let depth = info.bit_depth;
    if !matches!(depth, png::BitDepth::Eight | png::BitDepth::Sixteen) {
        return Err(FormatError::new(
            path,
            format!("has {depth:?}-bit samples; vkerode reads 8 or 16 bits"),
        ));
    }
    let bytes_per_cell = if depth == png::BitDepth::Sixteen {
        2
    } else {
        1
    };
    super::dem::check_declared_size(
        path,
        width as u64,
        height as u64,
        bytes_per_cell,
        bytes.len(),
    )?;
    let mut buffer = vec![0u8; reader.output_buffer_size()];
    let frame = reader
        .next_frame(&mut buffer)
        .map_err(|e| bad("cannot decode the image data (truncated?)", e))?;
    let samples = &buffer[..frame.buffer_size()];
    let pixels: Vec<u16> = match depth {
        png::BitDepth::Sixteen => samples
            .chunks_exact(2)
            .map(|b| u16::from_be_bytes([b[0], b[1]]))
            .collect(),
        _ => samples.iter().map(|&b| u16::from(b)).collect(),
    };

    let sidecar = Sidecar::read_beside(path, bytes, "png16")?;
    let top = if depth == png::BitDepth::Sixteen {
        65535.0
    } else {
        255.0
    };
    let values = match &sidecar {
        Some(s) => {
            if (s.width, s.height) != (width, height) {
                return Err(FormatError::new(
                    path,
                    format!(
                        "is {width} x {height} but its sidecar says {} x {}",
                        s.width, s.height
                    ),
                ));
            }
            heights_of(path, &pixels, s, top)?
        }
        None => pixels.iter().map(|&p| f32::from(p)).collect(),
    };
    let heights =
        Heightmap::new(width, height, values).map_err(|e| FormatError::new(path, e.to_string()))?;
    Ok(Sidecar::dem(sidecar.as_ref(), heights, None))
}

/// The linear map from pixel values to heights a sidecar records.
pub(super) struct PixelMap {
    /// The height of pixel value `first`.
    min: f32,
    /// The lowest valid pixel value: 1 where 0 marks missing cells, else 0.
    first: f32,
    /// Height per pixel step.
    span: f32,
}

impl PixelMap {
    /// The sidecar's map for pixels whose highest value is `top` (65535, or 255 for
    /// 8-bit PNG).
    pub(super) fn of(path: &Path, sidecar: &Sidecar, top: f32) -> Result<Self, FormatError> {
        let (min, max) = sidecar
            .min
            .zip(sidecar.max)
            .ok_or_else(|| FormatError::new(path, "its sidecar gives no min and max heights"))?;
        let first = if sidecar.nodata_pixel.is_some() {
            1.0
        } else {
            0.0
        };
        Ok(Self {
            min,
            first,
            span: (max - min) / (top - first),
        })
    }

    fn height(&self, pixel: u16) -> f32 {
        self.min + (f32::from(pixel) - self.first) * self.span
    }

    /// GDAL's (scale, offset) for the same map: height = offset + scale x pixel.
    pub(super) fn scale_offset(&self) -> (f64, f64) {
        let span = f64::from(self.span);
        (span, f64::from(self.min) - f64::from(self.first) * span)
    }
}

/// Heights of 16-bit pixels through a sidecar's [min, max] mapping; `top` is the
/// highest pixel value (65535, or 255 for 8-bit PNG).
pub(super) fn heights_of(
    path: &Path,
    pixels: &[u16],
    sidecar: &Sidecar,
    top: f32,
) -> Result<Vec<f32>, FormatError> {
    let map = PixelMap::of(path, sidecar, top)?;
    Ok(pixels
        .iter()
        .map(|&p| match sidecar.nodata_pixel {
            Some(nodata) if p == nodata => f32::NAN,
            _ => map.height(p),
        })
        .collect())
}

/// What GDAL is told of 16-bit pixels written with `sidecar`'s mapping.
pub(super) fn gdal_band<'a>(
    path: &Path,
    dem: &'a Dem,
    sidecar: &Sidecar,
) -> Result<Band<'a>, FormatError> {
    let map = PixelMap::of(path, sidecar, 65535.0)?;
    Ok(Band {
        dem,
        sample: Sample::UInt16,
        nodata: sidecar.nodata_pixel.map(f32::from),
        scale_offset: Some(map.scale_offset()),
    })
}

/// The heights as 16-bit pixels mapping [min, max] to [0, 65535] (to [1, 65535] when
/// pixel 0 marks missing cells), and the sidecar that records the mapping.
pub(super) fn pixels_of(dem: &Dem, format: &str) -> (Vec<u16>, Sidecar) {
    let map = &dem.heights;
    let (min, max) = map
        .data()
        .iter()
        .filter(|h| !h.is_nan())
        .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &h| {
            (lo.min(h), hi.max(h))
        });
    let has_missing = map.data().iter().any(|h| h.is_nan());
    let first = if has_missing { 1.0 } else { 0.0 };
    let steps = 65535.0 - first;
    let span = max - min;
    let pixels = map
        .data()
        .iter()
        .map(|&h| {
            if h.is_nan() {
                NODATA_PIXEL
            } else if span > 0.0 {
                (first + ((h - min) / span * steps).round()).clamp(first, 65535.0) as u16
            } else {
                first as u16
            }
        })
        .collect();
    let mut sidecar = Sidecar::describing(dem, format);
    sidecar.min = Some(min);
    sidecar.max = Some(max);
    sidecar.nodata_pixel = has_missing.then_some(NODATA_PIXEL);
    (pixels, sidecar)
}

/// Writes the PNG, then GDAL's PAM file (placement, and the scale and offset that turn
/// pixels into heights), then the sidecar.
pub fn write(path: &Path, dem: &Dem) -> Result<Vec<PathBuf>, FormatError> {
    let map = &dem.heights;
    let (pixels, sidecar) = pixels_of(dem, "png16");
    let band = gdal_band(path, dem, &sidecar)?;
    let bytes: Vec<u8> = pixels.iter().flat_map(|p| p.to_be_bytes()).collect();
    sidecar.write_with(path, || {
        write_png(
            path,
            map.width(),
            map.height(),
            png::ColorType::Grayscale,
            png::BitDepth::Sixteen,
            &bytes,
        )
        .map_err(|e| FormatError::new(path, e.source.to_string()))?;
        Ok(vec![path.to_path_buf(), write_pam(path, &band)?])
    })
}
