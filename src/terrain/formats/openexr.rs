//! Single-channel OpenEXR (the `exr` crate): float32, float16 or uint32 in, float32 out
//! in one channel "Y", missing cells as NaN.

use std::io::Cursor;
use std::path::Path;

use exr::prelude::*;

use super::dem::{Dem, FormatError};
use crate::terrain::files::write_atomically;
use crate::terrain::heightmap::Heightmap;

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
    let heights =
        Heightmap::new(width, height, values).map_err(|e| FormatError::new(path, e.to_string()))?;
    Ok(Dem {
        heights,
        nodata: None,
        units: String::new(),
        cell_size: None,
        geo: None,
    })
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

pub fn write(path: &Path, dem: &Dem) -> std::result::Result<(), FormatError> {
    let map = &dem.heights;
    let channel = AnyChannel::new("Y", FlatSamples::F32(map.data().to_vec()));
    let layer = Layer::new(
        (map.width(), map.height()),
        LayerAttributes::named("heights"),
        Encoding::SMALL_LOSSLESS,
        AnyChannels::sort(vec![channel].into()),
    );
    let image = Image::from_layer(layer);
    write_atomically(path, |out| {
        image
            .write()
            .to_buffered(out)
            .map_err(std::io::Error::other)
    })
    .map_err(|e| FormatError::new(path, e.source.to_string()))
}
