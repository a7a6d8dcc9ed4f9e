//! GeoTIFF georeferencing, kept as it came: the model tags and the GeoKey directory are
//! read verbatim and written back verbatim, so GDAL and QGIS place every TIFF vkerode
//! writes where its input lies. The cell size comes from ModelPixelScale, or from a
//! ModelTransformation without rotation, in the CRS's linear unit converted to metres.

use std::io::{Read, Seek, Write};

use tiff::decoder::ifd::Value;
use tiff::decoder::Decoder;
use tiff::encoder::{DirectoryEncoder, TiffKind};
use tiff::tags::Tag;

use crate::terrain::image::CellSize;

/// The georeferencing tags of a GeoTIFF, as the file had them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GeoTags {
    pub pixel_scale: Option<Vec<f64>>,
    pub tiepoints: Option<Vec<f64>>,
    pub transformation: Option<Vec<f64>>,
    pub key_directory: Option<Vec<u16>>,
    pub double_params: Option<Vec<f64>>,
    pub ascii_params: Option<String>,
    /// GDAL's own metadata (XML), kept for GDAL.
    pub gdal_metadata: Option<String>,
}

const GDAL_METADATA: Tag = Tag::Unknown(42112);
const GT_MODEL_TYPE: u16 = 1024;
const PROJ_LINEAR_UNITS: u16 = 3076;
const MODEL_TYPE_GEOGRAPHIC: u16 = 2;

/// A tag's value, converted, or `None` where the file lacks the tag.
fn tag<R: Read + Seek, T>(
    decoder: &mut Decoder<R>,
    tag: Tag,
    convert: fn(Value) -> tiff::TiffResult<T>,
) -> Result<Option<T>, String> {
    match decoder.find_tag(tag) {
        Ok(Some(value)) => convert(value).map(Some),
        Ok(None) => Ok(None),
        Err(e) => Err(e),
    }
    .map_err(|e| format!("{tag:?}: {e}"))
}

impl GeoTags {
    /// The file's georeferencing, or `None` where it has none.
    pub fn read<R: Read + Seek>(decoder: &mut Decoder<R>) -> Result<Option<Self>, String> {
        let tags = Self {
            pixel_scale: tag(decoder, Tag::ModelPixelScaleTag, Value::into_f64_vec)?,
            tiepoints: tag(decoder, Tag::ModelTiepointTag, Value::into_f64_vec)?,
            transformation: tag(decoder, Tag::ModelTransformationTag, Value::into_f64_vec)?,
            key_directory: tag(decoder, Tag::GeoKeyDirectoryTag, Value::into_u16_vec)?,
            double_params: tag(decoder, Tag::GeoDoubleParamsTag, Value::into_f64_vec)?,
            ascii_params: tag(decoder, Tag::GeoAsciiParamsTag, Value::into_string)?,
            gdal_metadata: tag(decoder, GDAL_METADATA, Value::into_string)?,
        };
        let placed = tags.pixel_scale.is_some() || tags.transformation.is_some();
        Ok((placed || tags.key_directory.is_some()).then_some(tags))
    }

    /// Writes the tags into the image directory being encoded.
    pub fn write<W: Write + Seek, K: TiffKind>(
        &self,
        directory: &mut DirectoryEncoder<'_, W, K>,
    ) -> tiff::TiffResult<()> {
        if let Some(v) = &self.pixel_scale {
            directory.write_tag(Tag::ModelPixelScaleTag, v.as_slice())?;
        }
        if let Some(v) = &self.tiepoints {
            directory.write_tag(Tag::ModelTiepointTag, v.as_slice())?;
        }
        if let Some(v) = &self.transformation {
            directory.write_tag(Tag::ModelTransformationTag, v.as_slice())?;
        }
        if let Some(v) = &self.key_directory {
            directory.write_tag(Tag::GeoKeyDirectoryTag, v.as_slice())?;
        }
        if let Some(v) = &self.double_params {
            directory.write_tag(Tag::GeoDoubleParamsTag, v.as_slice())?;
        }
        if let Some(v) = &self.ascii_params {
            directory.write_tag(Tag::GeoAsciiParamsTag, v.as_str())?;
        }
        if let Some(v) = &self.gdal_metadata {
            directory.write_tag(GDAL_METADATA, v.as_str())?;
        }
        Ok(())
    }

    /// A GeoKey's value where it is stored in the directory itself.
    fn key(&self, id: u16) -> Option<u16> {
        let dir = self.key_directory.as_ref()?;
        dir.get(4..)?
            .chunks_exact(4)
            .find(|k| k[0] == id && k[1] == 0)
            .map(|k| k[3])
    }

    /// Metres per unit of the CRS's linear unit; `None` for a geographic CRS (cells in
    /// degrees) or a unit other than metre, foot and US survey foot: the cell size is
    /// then unknown, and `erode` says so.
    fn metres_per_unit(&self) -> Option<f64> {
        if self.key(GT_MODEL_TYPE) == Some(MODEL_TYPE_GEOGRAPHIC) {
            return None;
        }
        match self.key(PROJ_LINEAR_UNITS) {
            None | Some(9001) => Some(1.0),
            Some(9002) => Some(0.3048),
            Some(9003) => Some(1200.0 / 3937.0),
            Some(_) => None,
        }
    }

    /// The cell size in metres: from ModelPixelScale, or a ModelTransformation without
    /// rotation or shear (refused otherwise). `Ok(None)` where the tags give no scale.
    pub fn cell_size(&self) -> Result<Option<CellSize>, String> {
        let (x, y) = match (&self.pixel_scale, &self.transformation) {
            (Some(scale), _) if scale.len() >= 2 => (scale[0], scale[1]),
            (_, Some(m)) if m.len() >= 16 => {
                if m[1] != 0.0 || m[4] != 0.0 {
                    return Err(format!(
                        "its ModelTransformation rotates or shears the grid (terms {} and {}); vkerode needs north-up cells",
                        m[1], m[4]
                    ));
                }
                (m[0].abs(), m[5].abs())
            }
            _ => return Ok(None),
        };
        let Some(metres) = self.metres_per_unit() else {
            return Ok(None);
        };
        let cell_size = CellSize {
            x: (x * metres) as f32,
            y: (y * metres) as f32,
        };
        cell_size.check()?;
        Ok(Some(cell_size))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn projected(unit: u16) -> GeoTags {
        GeoTags {
            pixel_scale: Some(vec![74.5, 92.6, 0.0]),
            key_directory: Some(vec![1, 1, 0, 2, 1024, 0, 1, 1, 3076, 0, 1, unit]),
            ..GeoTags::default()
        }
    }

    #[test]
    fn the_cell_size_comes_from_the_scale_in_metres() {
        let metres = projected(9001).cell_size().unwrap().unwrap();
        assert_eq!((metres.x, metres.y), (74.5, 92.6));
        let feet = projected(9002).cell_size().unwrap().unwrap();
        assert!((feet.x - 74.5 * 0.3048).abs() < 1e-4);
        assert_eq!(
            projected(9036).cell_size(),
            Ok(None),
            "a unit it cannot convert"
        );
    }

    #[test]
    fn a_rotated_transformation_and_a_geographic_crs_are_refused() {
        let mut m = vec![0.0; 16];
        (m[0], m[1], m[5], m[15]) = (30.0, 2.0, -30.0, 1.0);
        let rotated = GeoTags {
            transformation: Some(m.clone()),
            ..GeoTags::default()
        };
        assert!(rotated.cell_size().unwrap_err().contains("rotates"));
        m[1] = 0.0;
        let north_up = GeoTags {
            transformation: Some(m),
            ..GeoTags::default()
        };
        assert_eq!(north_up.cell_size().unwrap().unwrap().y, 30.0);
        let geographic = GeoTags {
            pixel_scale: Some(vec![0.001, 0.001, 0.0]),
            key_directory: Some(vec![1, 1, 0, 1, 1024, 0, 1, 2]),
            ..GeoTags::default()
        };
        assert_eq!(geographic.cell_size(), Ok(None), "degrees are not a length");
    }
}
