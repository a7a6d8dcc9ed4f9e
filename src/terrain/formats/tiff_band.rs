//! Single-band TIFF/GeoTIFF: float32, float64 or 8, 16 and 32-bit integers in (stripped
//! or tiled, uncompressed, deflate, LZW or PackBits, with a predictor); float32 out, with the
//! input's georeferencing (geotiff.rs) kept.

use std::io::{Cursor, Seek, Write};
use std::path::Path;

use tiff::decoder::{Decoder, DecodingResult};
use tiff::encoder::{colortype::Gray32Float, Compression, DeflateLevel, TiffEncoder, TiffKind};
use tiff::tags::Tag;
use tiff::ColorType;

use super::dem::{nodata_text, Dem, FormatError};
use super::geotiff::GeoTags;
use crate::terrain::files::write_atomically;
use crate::terrain::heightmap::Heightmap;

pub fn read(path: &Path, bytes: &[u8]) -> Result<Dem, FormatError> {
    let bad = |what: &str, e: tiff::TiffError| match e {
        tiff::TiffError::IoError(io) if io.kind() == std::io::ErrorKind::UnexpectedEof => {
            FormatError::new(path, format!("{what}: the file ends early (truncated?)"))
        }
        e => FormatError::new(path, format!("{what}: {e}")),
    };
    let mut decoder =
        Decoder::new(Cursor::new(bytes)).map_err(|e| bad("not a readable TIFF", e))?;
    let (width, height) = decoder.dimensions().map_err(|e| bad("no image size", e))?;
    match decoder
        .colortype()
        .map_err(|e| bad("unreadable sample layout", e))?
    {
        ColorType::Gray(bits) => {
            // Whole bytes per sample, at least one: the decoder unpacks to them.
            let bytes_per_cell = u64::from(bits).div_ceil(8).max(1);
            super::dem::check_declared_size(
                path,
                width.into(),
                height.into(),
                bytes_per_cell,
                bytes.len(),
            )?;
        }
        other => {
            return Err(FormatError::new(
                path,
                format!(
                    "has {} bands ({other:?}); a heightmap needs one band",
                    bands(other)
                ),
            ))
        }
    }
    let nodata = match decoder.find_tag(Tag::GdalNodata) {
        Ok(Some(value)) => {
            let text = value
                .into_string()
                .map_err(|e| bad("GDAL_NODATA tag is not text", e))?;
            Some(parse_nodata(path, &text)?)
        }
        Ok(None) => None,
        Err(e) => return Err(bad("unreadable GDAL_NODATA tag", e)),
    };
    let geo = GeoTags::read(&mut decoder).map_err(|e| FormatError::new(path, e.to_string()))?;
    let cell_size = match &geo {
        Some(tags) => tags
            .cell_size(height)
            .map_err(|e| FormatError::new(path, format!("cannot take its cell size: {e}")))?,
        None => None,
    };
    let image = decoder
        .read_image()
        .map_err(|e| bad("cannot decode the image data", e))?;
    let values: Vec<f32> = match image {
        DecodingResult::F32(v) => v,
        // Heights are float32 from here on, as the kernel takes them.
        DecodingResult::F64(v) => v.into_iter().map(|h| h as f32).collect(),
        DecodingResult::I32(v) => v.into_iter().map(|h| h as f32).collect(),
        DecodingResult::U32(v) => v.into_iter().map(|h| h as f32).collect(),
        DecodingResult::I16(v) => v.into_iter().map(f32::from).collect(),
        DecodingResult::U16(v) => v.into_iter().map(f32::from).collect(),
        DecodingResult::I8(v) => v.into_iter().map(f32::from).collect(),
        DecodingResult::U8(v) => v.into_iter().map(f32::from).collect(),
        other => {
            return Err(FormatError::new(
                path,
                format!(
                    "unsupported sample format {}; vkerode reads float32, float64, and 8, 16 and 32-bit integers",
                    sample_name(&other)
                ),
            ))
        }
    };
    let expected = width as usize * height as usize;
    if values.len() != expected {
        return Err(FormatError::new(
            path,
            format!(
                "holds {} samples for a {width} x {height} image",
                values.len()
            ),
        ));
    }
    let values = values
        .into_iter()
        .map(|v| if Some(v) == nodata { f32::NAN } else { v })
        .collect();
    let heights = Heightmap::new(width as usize, height as usize, values)
        .map_err(|e| FormatError::new(path, e.to_string()))?;
    Ok(Dem {
        heights,
        nodata,
        // The GeoKey first; GDAL's unit type (which vkerode writes) where it names none.
        units: geo
            .as_ref()
            .and_then(|g| {
                g.vertical_units()
                    .map(str::to_string)
                    .or_else(|| g.gdal_metadata.as_deref().and_then(unit_type))
            })
            .unwrap_or_default(),
        cell_size,
        geo,
    })
}

fn parse_nodata(path: &Path, text: &str) -> Result<f32, FormatError> {
    let trimmed = text.trim_matches(|c: char| c == '\0' || c.is_whitespace());
    match trimmed.to_ascii_lowercase().as_str() {
        "nan" | "-nan" => Ok(f32::NAN),
        _ => trimmed.parse::<f64>().map(|v| v as f32).map_err(|_| {
            FormatError::new(path, format!("GDAL_NODATA tag {trimmed:?} is not a number"))
        }),
    }
}

fn bands(colour: ColorType) -> u16 {
    match colour {
        ColorType::Gray(_) | ColorType::Palette(_) => 1,
        ColorType::GrayA(_) => 2,
        ColorType::RGB(_) | ColorType::YCbCr(_) | ColorType::Lab(_) => 3,
        ColorType::RGBA(_) | ColorType::CMYK(_) => 4,
        ColorType::CMYKA(_) => 5,
        ColorType::Multiband { num_samples, .. } => num_samples,
        _ => 0,
    }
}

fn sample_name(result: &DecodingResult) -> &'static str {
    match result {
        DecodingResult::U8(_) => "uint8",
        DecodingResult::U16(_) => "uint16",
        DecodingResult::U32(_) => "uint32",
        DecodingResult::U64(_) => "uint64",
        DecodingResult::F16(_) => "float16",
        DecodingResult::F32(_) => "float32",
        DecodingResult::F64(_) => "float64",
        DecodingResult::I8(_) => "int8",
        DecodingResult::I16(_) => "int16",
        DecodingResult::I32(_) => "int32",
        DecodingResult::I64(_) => "int64",
    }
}

/// Classic TIFF addresses 4 GiB; past this much image data vkerode writes BigTIFF (tags
/// and strip offsets need room too).
const CLASSIC_TIFF_DATA_LIMIT: u64 = 4_000_000_000;

fn needs_bigtiff(data_bytes: u64) -> bool {
    data_bytes > CLASSIC_TIFF_DATA_LIMIT
}

/// Float32, one band, uncompressed or deflated; BigTIFF past 4 GB. Missing cells take
/// the DEM's nodata value (NaN if it had none), which the GDAL_NODATA tag records; the
/// georeferencing is the input's.
pub fn write(path: &Path, dem: &Dem, deflate: bool) -> Result<(), FormatError> {
    let big = needs_bigtiff(dem.heights.data().len() as u64 * 4);
    write_as(path, dem, deflate, big)
}

/// [`write`], as BigTIFF where `big` says, whatever the map's size.
pub(super) fn write_as(
    path: &Path,
    dem: &Dem,
    deflate: bool,
    big: bool,
) -> Result<(), FormatError> {
    let map = &dem.heights;
    let nodata = dem.nodata_written();
    let fill = nodata.unwrap_or(f32::NAN);
    let values: Vec<f32> = map
        .data()
        .iter()
        .map(|&h| if h.is_nan() { fill } else { h })
        .collect();
    let nodata_tag = nodata.map(nodata_text);
    // GDAL reads a band's vertical unit from its metadata tag: the input's, with ours.
    let mut geo = dem.geo.clone().unwrap_or_default();
    if !dem.units.is_empty() {
        geo.gdal_metadata = Some(with_unit_type(geo.gdal_metadata.as_deref(), &dem.units));
    }
    let image = Band {
        width: map.width() as u32,
        height: map.height() as u32,
        values: &values,
        geo: Some(&geo),
        nodata_tag: nodata_tag.as_deref(),
        compression: if deflate {
            Compression::Deflate(DeflateLevel::Balanced)
        } else {
            Compression::Uncompressed
        },
    };
    write_atomically(path, |out| {
        let result = if big {
            image.encode(TiffEncoder::new_big(out))
        } else {
            image.encode(TiffEncoder::new(out))
        };
        result.map_err(std::io::Error::other)
    })
    .map_err(|e| FormatError::new(path, e.source.to_string()))
}

/// GDAL's metadata (the GDAL_METADATA tag's XML, or none) with the band's unit type
/// set to `units`, any earlier one replaced.
fn with_unit_type(metadata: Option<&str>, units: &str) -> String {
    let item = format!(
        "<Item name=\"UNITTYPE\" sample=\"0\" role=\"unittype\">{}</Item>",
        units
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    );
    let Some(xml) = metadata.filter(|m| m.contains("</GDALMetadata>")) else {
        return format!("<GDALMetadata>\n  {item}\n</GDALMetadata>\n");
    };
    let kept: Vec<&str> = xml
        .lines()
        .filter(|line| !line.contains("role=\"unittype\""))
        .collect();
    kept.join("\n")
        .replacen("</GDALMetadata>", &format!("  {item}\n</GDALMetadata>"), 1)
}

/// The band's unit type in GDAL's metadata, as [`with_unit_type`] writes it, where
/// the XML names one.
fn unit_type(metadata: &str) -> Option<String> {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_str(metadata);
    loop {
        match reader.read_event().ok()? {
            Event::Start(item)
                if item.name().as_ref() == "Item"
                    && item
                        .attributes()
                        .flatten()
                        .any(|a| a.key.as_ref() == "role" && &*a.value == "unittype") =>
            {
                let text = reader.read_text(item.name()).ok()?;
                let unit = quick_xml::escape::unescape(text.trim()).ok()?;
                return (!unit.is_empty()).then(|| unit.into_owned());
            }
            Event::Eof => return None,
            _ => {}
        }
    }
}

/// What goes into the TIFF, whichever kind (classic or BigTIFF) holds it.
struct Band<'a> {
    width: u32,
    height: u32,
    values: &'a [f32],
    geo: Option<&'a GeoTags>,
    nodata_tag: Option<&'a str>,
    compression: Compression,
}

impl Band<'_> {
    fn encode<W: Write + Seek, K: TiffKind>(
        &self,
        encoder: tiff::TiffResult<TiffEncoder<W, K>>,
    ) -> tiff::TiffResult<()> {
        let mut encoder = encoder?.with_compression(self.compression);
        let mut image = encoder.new_image::<Gray32Float>(self.width, self.height)?;
        if let Some(geo) = self.geo {
            geo.write(image.encoder())?;
        }
        if let Some(tag) = self.nodata_tag {
            image.encoder().write_tag(Tag::GdalNodata, tag)?;
        }
        image.write_data(self.values)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_unit_type_joins_or_replaces_gdal_s_metadata() {
        let fresh = with_unit_type(None, "m");
        assert_eq!(
            fresh,
            "<GDALMetadata>\n  <Item name=\"UNITTYPE\" sample=\"0\" role=\"unittype\">m</Item>\n</GDALMetadata>\n"
        );
        let input = "<GDALMetadata>\n  <Item name=\"SCALE\" sample=\"0\">1</Item>\n  <Item name=\"UNITTYPE\" sample=\"0\" role=\"unittype\">ft</Item>\n</GDALMetadata>";
        let merged = with_unit_type(Some(input), "m");
        assert!(merged.contains("name=\"SCALE\""), "{merged}");
        assert!(
            merged.contains(">m</Item>") && !merged.contains(">ft<"),
            "{merged}"
        );
    }

    #[test]
    fn the_unit_type_reads_back_as_written() {
        for unit in ["m", "cells", "US survey ft", "m<&>"] {
            let written = with_unit_type(Some("<GDALMetadata>\n</GDALMetadata>"), unit);
            assert_eq!(unit_type(&written).as_deref(), Some(unit), "{written}");
        }
        let other = "<GDALMetadata><Item name=\"SCALE\" sample=\"0\">1</Item></GDALMetadata>";
        assert_eq!(unit_type(other), None);
        assert_eq!(
            unit_type("<GDALMetadata><Item role=\"unittype\"></Item></GDALMetadata>"),
            None
        );
    }

    #[test]
    fn maps_past_four_gigabytes_are_written_as_bigtiff() {
        assert!(
            !needs_bigtiff(16384 * 16384 * 4),
            "a 16384^2 map is 1 GiB: classic"
        );
        assert!(
            needs_bigtiff(32768 * 32768 * 4),
            "32768^2 is 4 GiB: BigTIFF"
        );
    }
}
