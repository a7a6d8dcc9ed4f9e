//! Single-channel OpenEXR (the `exr` crate): float32, float16 or uint32 in, float32 out
//! in one channel "Y", uncompressed, missing cells as NaN, with a GDAL VRT beside it.

use std::io::Cursor;
use std::path::{Path, PathBuf};

use exr::prelude::*;

use super::dem::{Dem, FormatError};
use super::gdal::{vrt_source_name, write_vrt, Band, RawLayout, Sample};
use crate::terrain::files::write_atomically;

pub const MAGIC: [u8; 4] = [0x76, 0x2f, 0x31, 0x01];

pub fn read(path: &Path, bytes: &[u8]) -> std::result::Result<Dem, FormatError> {
    // The headers first: a layer size the file cannot hold is refused before the
    // decoder allocates it.
    let meta = exr::meta::MetaData::read_from_buffered(Cursor::new(bytes), false)
        .map_err(|e| FormatError::new(path, format!("not a readable OpenEXR image: {e}")))?;
    for header in &meta.headers {
        let (w, h) = (header.layer_size.width(), header.layer_size.height());
        // Each channel's own sample size (2 bytes for f16, 4 for f32 and u32).
        let bytes_per_cell = header.channels.bytes_per_pixel.max(1) as u64;
        super::dem::check_declared_size(path, w as u64, h as u64, bytes_per_cell, bytes.len())?;
    }
    let image = read_first_flat_layer_from_buffered(bytes)
        .map_err(|e| FormatError::new(path, format!("not a readable OpenEXR image: {e}")))?;
    let layer = image.layer_data;
    let channels = &layer.channel_data.list;
    if channels.len() != 1 {
        let names: Vec<String> = channels.iter().map(|c| c.name.to_string()).collect();
        return Err(FormatError::new(
            path,
            format!(
                "has {} channels ({}); a heightmap needs one",
                channels.len(),
                names.join(", ")
            ),
        ));
    }
    let values: Vec<f32> = match &channels[0].sample_data {
        FlatSamples::F32(v) => v.clone(),
        FlatSamples::F16(v) => v.iter().map(|h| h.to_f32()).collect(),
        FlatSamples::U32(v) => v.iter().map(|&h| h as f32).collect(),
    };
    let (width, height) = (layer.size.width(), layer.size.height());
    Dem::bare(path, width, height, values)
}

fn read_first_flat_layer_from_buffered(
    bytes: &[u8],
) -> exr::error::Result<Image<Layer<AnyChannels<FlatSamples>>>> {
    exr::prelude::read()
        .no_deep_data()
        .largest_resolution_level()
        .all_channels()
        .first_valid_layer()
        .all_attributes()
        .from_buffered(Cursor::new(bytes))
}

/// Writes the heights uncompressed, one scanline per chunk, so that GDAL, which has no
/// OpenEXR driver, reads them through the VRT written beside it.
pub fn write(path: &Path, dem: &Dem) -> std::result::Result<Vec<PathBuf>, FormatError> {
    vrt_source_name(path)?;
    let map = &dem.heights;
    let channel = AnyChannel::new("Y", FlatSamples::F32(map.data().to_vec()));
    let layer = Layer::new(
        (map.width(), map.height()),
        LayerAttributes::named("heights"),
        Encoding::UNCOMPRESSED,
        AnyChannels::sort(vec![channel].into()),
    );
    let mut bytes = Vec::new();
    Image::from_layer(layer)
        .write()
        .non_parallel()
        .to_buffered(Cursor::new(&mut bytes))
        .map_err(|e| FormatError::new(path, format!("cannot encode: {e}")))?;
    let layout = scanline_layout(&bytes, map.width(), map.height()).ok_or_else(|| {
        FormatError::new(
            path,
            "the OpenEXR encoder did not lay out uncompressed scanlines in order; no VRT can read it",
        )
    })?;
    write_atomically(path, |out| std::io::Write::write_all(out, &bytes))
        .map_err(|e| FormatError::new(path, e.source.to_string()))?;
    let band = Band {
        dem,
        sample: Sample::Float32,
        // The heights go in as they are: missing cells are NaN.
        nodata: dem.nodata_written().map(|_| f32::NAN),
        scale_offset: None,
    };
    Ok(vec![path.to_path_buf(), write_vrt(path, &band, &layout)?])
}

/// Where the cells of an uncompressed single-channel float32 scanline OpenEXR lie: each
/// row is one chunk (a 4-byte y and a 4-byte size, then the row), the chunks run in
/// order to the end of the file, and the offset table before them points at each.
/// `None` where the bytes are laid out otherwise.
fn scanline_layout(bytes: &[u8], width: usize, height: usize) -> Option<RawLayout> {
    let row = 4 * width;
    let chunk = 8 + row;
    let first = bytes.len().checked_sub(height.checked_mul(chunk)?)?;
    let table = first.checked_sub(8 * height)?;
    let word = |at: usize, n: usize| bytes.get(at..at + n);
    for y in 0..height {
        let at = first + y * chunk;
        let offset = u64::from_le_bytes(word(table + 8 * y, 8)?.try_into().ok()?);
        let chunk_y = i32::from_le_bytes(word(at, 4)?.try_into().ok()?);
        let size = i32::from_le_bytes(word(at + 4, 4)?.try_into().ok()?);
        let expected = (at as u64, i32::try_from(y).ok()?, i32::try_from(row).ok()?);
        if (offset, chunk_y, size) != expected {
            return None;
        }
    }
    Some(RawLayout {
        image_offset: (first + 8) as u64,
        line_offset: chunk as u64,
    })
}
