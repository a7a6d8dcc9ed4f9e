//! GeoTIFF georeferencing, kept as it came: the model tags and the GeoKey directory are
//! read verbatim and written back verbatim, so GDAL and QGIS place every TIFF vkerode
//! writes where its input lies. The cell size comes from ModelPixelScale, or from a
//! ModelTransformation without rotation, in the CRS's linear unit converted to metres.

use std::io::{Read, Seek, Write};

use tiff::decoder::ifd::Value;
use tiff::decoder::Decoder;
use tiff::encoder::{DirectoryEncoder, TiffKind};
use tiff::tags::Tag;

use crate::terrain::image::{CellSize, CellSizeError};
use crate::terrain::units::Geodesic;

/// The georeferencing tags of a GeoTIFF, as the file had them (and as sidecars keep
/// them, so that a TIFF made from a sidecar's file lies where its source did).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GeoTags {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pixel_scale: Option<Vec<f64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tiepoints: Option<Vec<f64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transformation: Option<Vec<f64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_directory: Option<Vec<u16>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub double_params: Option<Vec<f64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ascii_params: Option<String>,
    /// GDAL's own metadata (XML), kept for GDAL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gdal_metadata: Option<String>,
}

/// A GeoTIFF's CRS as it can be told to GDAL without a CRS database.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Crs {
    /// Named by its EPSG code in the GeoKeys.
    Epsg(u16),
    /// Defined by parameters (user-defined) or by keys vkerode does not read: it has
    /// no name to give GDAL, and only TIFF outputs, which keep the keys, carry it.
    Unnamed,
}

const GDAL_METADATA: Tag = Tag::Unknown(42112);
const GT_MODEL_TYPE: u16 = 1024;
const GT_RASTER_TYPE: u16 = 1025;
const RASTER_PIXEL_IS_POINT: u16 = 2;
const PROJECTED_CS_TYPE: u16 = 3072;
const PROJ_LINEAR_UNITS: u16 = 3076;
const VERTICAL_UNITS: u16 = 4099;
const MODEL_TYPE_PROJECTED: u16 = 1;
const MODEL_TYPE_GEOGRAPHIC: u16 = 2;
const GEOGRAPHIC_TYPE: u16 = 2048;
const GEOG_ANGULAR_UNITS: u16 = 2054;
const GEOG_SEMI_MAJOR_AXIS: u16 = 2057;
const GEOG_INV_FLATTENING: u16 = 2059;
const ANGULAR_DEGREE: u16 = 9102;
const USER_DEFINED: u16 = 32767;
const GEO_DOUBLE_PARAMS: u16 = 34736;

/// An ellipsoid: its semi-major axis in metres and its flattening.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Ellipsoid {
    a: f64,
    f: f64,
}

impl Ellipsoid {
    const WGS84: Self = Self {
        a: 6_378_137.0,
        f: 1.0 / 298.257_223_563,
    };
    const GRS80: Self = Self {
        a: 6_378_137.0,
        f: 1.0 / 298.257_222_101,
    };
    const CLARKE_1866: Self = Self {
        a: 6_378_206.4,
        f: 1.0 / 294.978_698_214,
    };

    // Kept (no geographiclib-rs): it gives distances between points, not metres per radian (1e-5 off for 1-degree cells at 60 degrees; f32-equal for arc-second cells).
    /// Metres per radian east-west and north-south at `latitude` (radians): the
    /// parallel's radius N cos(latitude) and the meridian's radius of curvature M. For
    /// cells of arc-seconds they are the geodesic spacing to a part in 10^7 (GDAL's
    /// azimuthal equidistant projection agrees: tests below).
    fn metres_per_radian(self, latitude: f64) -> (f64, f64) {
        let e2 = self.f * (2.0 - self.f);
        let w = (1.0 - e2 * latitude.sin().powi(2)).sqrt();
        let n = self.a / w;
        (n * latitude.cos(), self.a * (1.0 - e2) / w.powi(3))
    }
}

/// `v` as the decimal it was written as (92.6, not 92.59999847): the f64 nearest to
/// the f32's shortest decimal form.
fn decimal(v: f32) -> f64 {
    v.to_string().parse().unwrap_or(f64::from(v))
}

/// A georeferencing tag the file has but that cannot be read.
#[derive(Debug, thiserror::Error)]
#[error("{tag:?}: {source}")]
pub struct GeoTagError {
    tag: Tag,
    source: tiff::TiffError,
}

/// Why a GeoTIFF's tags give no cell size vkerode takes.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
pub enum GeoCellSizeError {
    #[error("its ModelTransformation rotates or shears the grid (terms {0} and {1}); vkerode needs north-up cells")]
    Rotated(f64, f64),
    #[error(transparent)]
    CellSize(#[from] CellSizeError),
}

/// A tag's value, converted, or `None` where the file lacks the tag.
fn tag<R: Read + Seek, T>(
    decoder: &mut Decoder<R>,
    tag: Tag,
    convert: fn(Value) -> tiff::TiffResult<T>,
) -> Result<Option<T>, GeoTagError> {
    match decoder.find_tag(tag) {
        Ok(Some(value)) => convert(value).map(Some),
        Ok(None) => Ok(None),
        Err(e) => Err(e),
    }
    .map_err(|source| GeoTagError { tag, source })
}

impl GeoTags {
    /// The file's georeferencing, or `None` where it has none.
    pub fn read<R: Read + Seek>(decoder: &mut Decoder<R>) -> Result<Option<Self>, GeoTagError> {
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

    /// Tags that place a grid of `cell_size` metres with its top-left corner at the
    /// model origin, in no CRS: for a file with no georeferencing of its own whose cell
    /// size was given on the command line, so GDAL reads that size back.
    pub fn of_cell_size(cell_size: CellSize) -> Self {
        Self {
            pixel_scale: Some(vec![decimal(cell_size.x), decimal(cell_size.y), 0.0]),
            tiepoints: Some(vec![0.0; 6]),
            ..Self::default()
        }
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

    /// A GeoKey's value where it is stored in GeoDoubleParams.
    fn double_key(&self, id: u16) -> Option<f64> {
        let dir = self.key_directory.as_ref()?;
        let entry = dir
            .get(4..)?
            .chunks_exact(4)
            .find(|k| k[0] == id && k[1] == GEO_DOUBLE_PARAMS)?;
        self.double_params
            .as_ref()?
            .get(usize::from(entry[3]))
            .copied()
    }

    fn is_geographic(&self) -> bool {
        self.key(GT_MODEL_TYPE) == Some(MODEL_TYPE_GEOGRAPHIC)
    }

    /// The ellipsoid of a geographic CRS in degrees: WGS 84, NAD83 or ETRS89 (GRS 80),
    /// NAD27 (Clarke 1866), or one the file defines; `None` for any other.
    fn ellipsoid(&self) -> Option<Ellipsoid> {
        if self
            .key(GEOG_ANGULAR_UNITS)
            .is_some_and(|u| u != ANGULAR_DEGREE)
        {
            return None;
        }
        match self.key(GEOGRAPHIC_TYPE)? {
            4326 => Some(Ellipsoid::WGS84),
            4269 | 4258 => Some(Ellipsoid::GRS80),
            4267 => Some(Ellipsoid::CLARKE_1866),
            USER_DEFINED => {
                let a = self.double_key(GEOG_SEMI_MAJOR_AXIS)?;
                let inverse = self.double_key(GEOG_INV_FLATTENING)?;
                (a > 0.0 && inverse > 1.0).then(|| Ellipsoid {
                    a,
                    f: 1.0 / inverse,
                })
            }
            _ => None,
        }
    }

    /// The grid's scale (x, y, in CRS units per cell) and the model y of the top edge
    /// of row 0, from ModelPixelScale and a tie point, or a ModelTransformation.
    fn scale_and_top(&self) -> Option<(f64, f64, Option<f64>)> {
        match (&self.pixel_scale, &self.transformation) {
            (Some(scale), _) if scale.len() >= 2 => {
                let top = self
                    .tiepoints
                    .as_ref()
                    .filter(|t| t.len() >= 6)
                    .map(|t| t[4] + t[1] * scale[1]);
                Some((scale[0], scale[1], top))
            }
            (_, Some(m)) if m.len() >= 16 => Some((m[0].abs(), m[5].abs(), Some(m[7]))),
            _ => None,
        }
    }

    /// For a geographic CRS on a known ellipsoid, the cell size in metres at the
    /// centre row of a map of `rows` rows, and how it was found.
    pub fn geodesic(&self, rows: u32) -> Option<(CellSize, Geodesic)> {
        if !self.is_geographic() {
            return None;
        }
        let ellipsoid = self.ellipsoid()?;
        let (dx, dy, top) = self.scale_and_top()?;
        let top = top?;
        let bottom = top - f64::from(rows) * dy;
        if ![top, bottom].iter().all(|l| (-90.0..=90.0).contains(l)) {
            return None;
        }
        let centre = (top + bottom) / 2.0;
        let east = |latitude: f64| ellipsoid.metres_per_radian(latitude.to_radians()).0;
        let (x, y) = ellipsoid.metres_per_radian(centre.to_radians());
        // Widest nearest the equator, narrowest nearest a pole: the two edges of a
        // map across the equator are equally narrow.
        let (near, far) = (top.abs().min(bottom.abs()), top.abs().max(bottom.abs()));
        let widest = if top.signum() != bottom.signum() {
            0.0
        } else {
            near
        };
        let spread = (east(widest) - east(far)) / x;
        let cell_size = CellSize {
            x: (x * dx.to_radians()) as f32,
            y: (y * dy.to_radians()) as f32,
        };
        Some((
            cell_size,
            Geodesic {
                latitude_deg: centre,
                x_spread: spread,
            },
        ))
    }

    /// Metres per unit of the CRS's linear unit; `None` for a geographic CRS (cells in
    /// degrees, see [`GeoTags::geodesic`]) or a unit other than metre, foot and US
    /// survey foot.
    fn metres_per_unit(&self) -> Option<f64> {
        if self.is_geographic() {
            return None;
        }
        match self.key(PROJ_LINEAR_UNITS) {
            None | Some(9001) => Some(1.0),
            Some(9002) => Some(0.3048),
            Some(9003) => Some(1200.0 / 3937.0),
            Some(_) => None,
        }
    }

    /// The cell size in metres of a map of `rows` rows: from ModelPixelScale, or a
    /// ModelTransformation without rotation or shear (refused otherwise), in the CRS's
    /// linear unit or, for degrees, on its ellipsoid. `Ok(None)` where the tags give no
    /// scale or no unit vkerode can turn into metres.
    pub fn cell_size(&self, rows: u32) -> Result<Option<CellSize>, GeoCellSizeError> {
        let (x, y) = match (&self.pixel_scale, &self.transformation) {
            (Some(scale), _) if scale.len() >= 2 => (scale[0], scale[1]),
            (_, Some(m)) if m.len() >= 16 => {
                if m[1] != 0.0 || m[4] != 0.0 {
                    return Err(GeoCellSizeError::Rotated(m[1], m[4]));
                }
                (m[0].abs(), m[5].abs())
            }
            _ => return Ok(None),
        };
        if let Some((cell_size, _)) = self.geodesic(rows) {
            cell_size.check()?;
            return Ok(Some(cell_size));
        }
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

    /// The CRS the GeoKeys state, or `None` where they state none: the projected CRS's
    /// code for a projected model, the geographic CRS's for a geographic one.
    pub fn crs(&self) -> Option<Crs> {
        let model = self.key(GT_MODEL_TYPE);
        let code = match model {
            Some(MODEL_TYPE_PROJECTED) => self.key(PROJECTED_CS_TYPE),
            Some(MODEL_TYPE_GEOGRAPHIC) => self.key(GEOGRAPHIC_TYPE),
            Some(_) => None,
            None => self
                .key(PROJECTED_CS_TYPE)
                .or_else(|| self.key(GEOGRAPHIC_TYPE)),
        };
        match code {
            // 0 is "undefined" and 32767 "user-defined" in every GeoKey.
            Some(code) if (1..USER_DEFINED).contains(&code) => Some(Crs::Epsg(code)),
            _ if model.is_some() || code.is_some() => Some(Crs::Unnamed),
            _ => None,
        }
    }

    /// The CRS as GDAL is told it by name, "EPSG:n", where the GeoKeys give its code.
    pub fn epsg_name(&self) -> Option<String> {
        match self.crs()? {
            Crs::Epsg(code) => Some(format!("EPSG:{code}")),
            Crs::Unnamed => None,
        }
    }

    /// GDAL's geotransform of the grid, as GDAL reads it from these tags: the corner of
    /// cell (0, 0), then x and y per column and per row. From ModelPixelScale and the
    /// first tie point (a negative y scale taken as north-up, as GDAL does), or else a
    /// ModelTransformation; half a cell to the corner where the raster is PixelIsPoint.
    pub fn geotransform(&self) -> Option<[f64; 6]> {
        let mut gt = match (&self.pixel_scale, &self.tiepoints, &self.transformation) {
            (Some(s), Some(t), _) if s.len() >= 2 && s[0] != 0.0 && s[1] != 0.0 && t.len() >= 6 => {
                let dy = -s[1].abs();
                [t[3] - t[0] * s[0], s[0], 0.0, t[4] - t[1] * dy, 0.0, dy]
            }
            (_, _, Some(m)) if m.len() == 16 => [m[3], m[0], m[1], m[7], m[4], m[5]],
            _ => return None,
        };
        if self.key(GT_RASTER_TYPE) == Some(RASTER_PIXEL_IS_POINT) {
            gt[0] -= 0.5 * (gt[1] + gt[2]);
            gt[3] -= 0.5 * (gt[4] + gt[5]);
        }
        Some(gt)
    }

    /// These tags with the grid's spacing replaced by `cell_size` metres, in the CRS's
    /// linear unit, keeping the CRS and the place of cell (0, 0). Tags in degrees (or a
    /// unit vkerode cannot convert), or with no north-up spacing of their own, come back
    /// as they are: metres are no spacing in degrees, and a spacing with no anchor
    /// would place the grid nowhere.
    pub fn with_cell_size(&self, cell_size: CellSize) -> Self {
        let Some(metres) = self.metres_per_unit() else {
            return self.clone();
        };
        let (x, y) = (decimal(cell_size.x) / metres, decimal(cell_size.y) / metres);
        let mut tags = self.clone();
        match (&self.pixel_scale, &self.tiepoints, &self.transformation) {
            (Some(s), Some(t), _) if s.len() >= 2 && t.len() >= 6 => {
                // The tie point moved to cell (0, 0), so the new spacing keeps it there.
                let (x0, y0) = (t[3] - t[0] * s[0], t[4] + t[1] * s[1].abs());
                let mut tiepoint = t[..6].to_vec();
                tiepoint[..2].copy_from_slice(&[0.0, 0.0]);
                tiepoint[3..5].copy_from_slice(&[x0, y0]);
                let mut scale = s.clone();
                scale[..2].copy_from_slice(&[x, y.copysign(s[1])]);
                (tags.pixel_scale, tags.tiepoints) = (Some(scale), Some(tiepoint));
            }
            (None, _, Some(m)) if m.len() == 16 && m[1] == 0.0 && m[4] == 0.0 => {
                let mut m = m.clone();
                (m[0], m[5]) = (x.copysign(m[0]), y.copysign(m[5]));
                tags.transformation = Some(m);
            }
            _ => {}
        }
        tags
    }

    /// The heights' unit where VerticalUnitsGeoKey names metres or feet.
    pub fn vertical_units(&self) -> Option<&'static str> {
        match self.key(VERTICAL_UNITS)? {
            9001 => Some("m"),
            9002 => Some("ft"),
            9003 => Some("US survey ft"),
            _ => None,
        }
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
        let metres = projected(9001).cell_size(10).unwrap().unwrap();
        assert_eq!((metres.x, metres.y), (74.5, 92.6));
        let feet = projected(9002).cell_size(10).unwrap().unwrap();
        assert!((feet.x - 74.5 * 0.3048).abs() < 1e-4);
        assert_eq!(
            projected(9036).cell_size(10),
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
        assert!(rotated
            .cell_size(10)
            .unwrap_err()
            .to_string()
            .contains("rotates"));
        m[1] = 0.0;
        let north_up = GeoTags {
            transformation: Some(m),
            ..GeoTags::default()
        };
        assert_eq!(north_up.cell_size(10).unwrap().unwrap().y, 30.0);
        let geographic = GeoTags {
            pixel_scale: Some(vec![0.001, 0.001, 0.0]),
            key_directory: Some(vec![1, 1, 0, 1, 1024, 0, 1, 2]),
            ..GeoTags::default()
        };
        assert_eq!(
            geographic.cell_size(10),
            Ok(None),
            "degrees are not a length"
        );
    }

    /// UTM 14N cells of 74.5 x 92.6 m, tied at cell (2, 1), in `unit` (9001: metre).
    fn utm_14n(unit: u16, raster_type: u16) -> GeoTags {
        GeoTags {
            pixel_scale: Some(vec![74.5, 92.6, 0.0]),
            tiepoints: Some(vec![2.0, 1.0, 0.0, 500_149.0, 3_999_907.4, 0.0]),
            key_directory: Some(
                [
                    [1, 1, 0, 4],
                    [1024, 0, 1, 1],
                    [1025, 0, 1, raster_type],
                    [3072, 0, 1, 32614],
                    [3076, 0, 1, unit],
                ]
                .concat(),
            ),
            ..GeoTags::default()
        }
    }

    #[test]
    fn the_crs_and_geotransform_are_what_gdal_reads_from_the_tags() {
        let area = utm_14n(9001, 1);
        assert_eq!(area.crs(), Some(Crs::Epsg(32614)));
        let gt = area.geotransform().unwrap();
        assert!((gt[0] - 500_000.0).abs() < 1e-9 && (gt[3] - 4_000_000.0).abs() < 1e-9);
        assert_eq!((gt[1], gt[2], gt[4], gt[5]), (74.5, 0.0, 0.0, -92.6));
        // PixelIsPoint ties cell centres: the corner is half a cell up and left.
        let point = utm_14n(9001, 2).geotransform().unwrap();
        assert!((point[0] - (gt[0] - 37.25)).abs() < 1e-9);
        assert!((point[3] - (gt[3] + 46.3)).abs() < 1e-9);

        let mut user_defined = area.clone();
        user_defined.key_directory.as_mut().unwrap()[15] = USER_DEFINED;
        assert_eq!(user_defined.crs(), Some(Crs::Unnamed));
        assert_eq!(
            GeoTags::of_cell_size(CellSize { x: 1.0, y: 1.0 }).crs(),
            None
        );
        let geographic = wgs84_arc_seconds(10);
        assert_eq!(geographic.crs(), Some(Crs::Epsg(4326)));
    }

    #[test]
    fn a_stated_cell_size_replaces_the_spacing_in_the_crs_unit_and_keeps_the_corner() {
        let cell = CellSize { x: 30.0, y: 25.0 };
        let metres = utm_14n(9001, 1);
        let gt = metres.with_cell_size(cell).geotransform().unwrap();
        let before = metres.geotransform().unwrap();
        assert!((gt[0] - before[0]).abs() < 1e-9 && (gt[3] - before[3]).abs() < 1e-9);
        assert_eq!((gt[1], gt[5]), (30.0, -25.0));
        assert_eq!(metres.with_cell_size(cell).crs(), metres.crs());
        let feet = utm_14n(9002, 1).with_cell_size(cell);
        assert!((feet.pixel_scale.unwrap()[0] - 30.0 / 0.3048).abs() < 1e-9);
        // Degrees cannot take metres: the tags stay as they are.
        let degrees = wgs84_arc_seconds(10);
        assert_eq!(degrees.with_cell_size(cell), degrees);
        let mut m = vec![0.0; 16];
        (m[0], m[3], m[5], m[7], m[15]) = (10.0, 7.0, -10.0, 9.0, 1.0);
        let matrix = GeoTags {
            transformation: Some(m),
            ..GeoTags::default()
        };
        assert_eq!(
            matrix.with_cell_size(cell).geotransform(),
            Some([7.0, 30.0, 0.0, 9.0, 0.0, -25.0])
        );
    }

    /// A 3 arc-second grid in EPSG:4326 whose centre row lies at 36.6 N.
    fn wgs84_arc_seconds(rows: u32) -> GeoTags {
        let step = 3.0 / 3600.0;
        GeoTags {
            pixel_scale: Some(vec![step, step, 0.0]),
            tiepoints: Some(vec![
                0.0,
                0.0,
                0.0,
                -84.0,
                36.6 + step * f64::from(rows) / 2.0,
                0.0,
            ]),
            key_directory: Some(vec![1, 1, 0, 2, 1024, 0, 1, 2, 2048, 0, 1, 4326]),
            ..GeoTags::default()
        }
    }

    #[test]
    fn degrees_become_metres_on_the_ellipsoid_as_gdal_measures_them() {
        let tags = wgs84_arc_seconds(344);
        let (cell, geodesic) = tags.geodesic(344).unwrap();
        // `gdaltransform -s_srs EPSG:4326 -t_srs "+proj=aeqd +lat_0=36.6 +lon_0=-84
        // +ellps=WGS84"` of (-84 + 3", 36.6) and (-84, 36.6 + 3"): true distances from
        // the projection's centre.
        let (gdal_x, gdal_y) = (74.563_133_940_6, 92.475_140_813_4);
        assert!((f64::from(cell.x) / gdal_x - 1.0).abs() < 1e-6, "{cell:?}");
        assert!((f64::from(cell.y) / gdal_y - 1.0).abs() < 1e-6, "{cell:?}");
        assert!((geodesic.latitude_deg - 36.6).abs() < 1e-9, "{geodesic:?}");
        // 344 rows of 3" span 0.287 degrees: cos varies by 0.37% over them.
        assert!((0.003..0.004).contains(&geodesic.x_spread), "{geodesic:?}");
        assert_eq!(tags.cell_size(344).unwrap(), Some(cell));
    }

    #[test]
    fn the_spread_compares_the_widest_and_narrowest_rows() {
        // 60 S to 60 N in 1-degree rows: the equator's spacing is twice the edges'.
        let mut tags = wgs84_arc_seconds(120);
        tags.pixel_scale = Some(vec![1.0, 1.0, 0.0]);
        tags.tiepoints = Some(vec![0.0, 0.0, 0.0, 0.0, 60.0, 0.0]);
        let (_, geodesic) = tags.geodesic(120).unwrap();
        // The parallel's radius on WGS 84, N cos(latitude).
        let east = |degrees: f64| {
            let (a, f) = (6_378_137.0, 1.0 / 298.257_223_563);
            let e2: f64 = f * (2.0 - f);
            let latitude = degrees.to_radians();
            a * latitude.cos() / (1.0 - e2 * latitude.sin().powi(2)).sqrt()
        };
        let (equator, sixty) = (east(0.0), east(60.0));
        let expected = (equator - sixty) / equator;
        assert!((geodesic.x_spread - expected).abs() < 1e-12, "{geodesic:?}");
        assert!(geodesic.x_spread > 0.49, "{geodesic:?}");
    }
}
