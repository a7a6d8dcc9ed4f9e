//! What GDAL reads beside the heightmaps vkerode writes outside TIFF, so that
//! `gdalinfo` finds them where the input lies and reads their heights: an ESRI `.hdr`
//! (GDAL's EHdr driver) laying out raw and r16 cells; a PAM `FILE.aux.xml` beside raw,
//! r16 and PNG files with the CRS, geotransform, nodata, unit and, for 16-bit pixels,
//! the scale and offset back to heights; and for OpenEXR, which GDAL does not read, a
//! VRT (`FILE.vrt`) over its uncompressed scanlines with the same.

use std::fmt::Write as _;
use std::io::Read;
use std::path::{Path, PathBuf};

use super::dem::{beside, nodata_text, Dem, FormatError};
use super::geotiff::GeoTags;
use crate::terrain::files::write_atomically;

/// How one cell is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Sample {
    Float32,
    UInt16,
}

impl Sample {
    fn bits(self) -> u32 {
        match self {
            Sample::Float32 => 32,
            Sample::UInt16 => 16,
        }
    }

    fn gdal_type(self) -> &'static str {
        match self {
            Sample::Float32 => "Float32",
            Sample::UInt16 => "UInt16",
        }
    }
}

/// What GDAL is told of a file's one band of heights.
pub(super) struct Band<'a> {
    pub dem: &'a Dem,
    pub sample: Sample,
    /// The stored value that marks missing cells.
    pub nodata: Option<f32>,
    /// (scale, offset): height = offset + scale x stored value, for 16-bit pixels.
    pub scale_offset: Option<(f64, f64)>,
}

impl Band<'_> {
    /// The dataset's SRS (where its CRS has an EPSG code) and geotransform.
    fn dataset_elements(&self) -> String {
        let mut xml = String::new();
        let geo = self.dem.geo.as_ref();
        if let Some(name) = geo.and_then(GeoTags::epsg_name) {
            let _ = writeln!(xml, "  <SRS>{name}</SRS>");
        }
        if let Some(gt) = geo.and_then(GeoTags::geotransform) {
            let gt: Vec<String> = gt.iter().map(f64::to_string).collect();
            let _ = writeln!(xml, "  <GeoTransform>{}</GeoTransform>", gt.join(", "));
        }
        xml
    }

    /// The band's nodata, offset, scale and unit.
    fn band_elements(&self) -> String {
        let mut xml = String::new();
        if let Some(nodata) = self.nodata {
            let _ = writeln!(
                xml,
                "    <NoDataValue>{}</NoDataValue>",
                nodata_text(nodata)
            );
        }
        if let Some((scale, offset)) = self.scale_offset {
            let _ = writeln!(xml, "    <Offset>{offset}</Offset>");
            let _ = writeln!(xml, "    <Scale>{scale}</Scale>");
        }
        if !self.dem.units.is_empty() {
            let _ = writeln!(xml, "    <UnitType>{}</UnitType>", escaped(&self.dem.units));
        }
        xml
    }
}

fn write_text(path: &Path, text: &str) -> Result<PathBuf, FormatError> {
    write_atomically(path, |out| std::io::Write::write_all(out, text.as_bytes()))
        .map_err(|e| FormatError::new(path, e.source.to_string()))?;
    Ok(path.to_path_buf())
}

/// Writes `FILE.aux.xml`, the PAM file GDAL reads beside `data_path`.
pub(super) fn write_pam(data_path: &Path, band: &Band) -> Result<PathBuf, FormatError> {
    let xml = format!(
        "<PAMDataset>\n{}  <PAMRasterBand band=\"1\">\n{}  </PAMRasterBand>\n</PAMDataset>\n",
        band.dataset_elements(),
        band.band_elements()
    );
    write_text(&beside(data_path, ".aux.xml"), &xml)
}

/// The ESRI header (GDAL's EHdr driver) that lets GDAL open headerless little-endian
/// cells, and where it goes.
pub(super) struct EsriHeader {
    path: PathBuf,
    text: String,
}

/// How every ESRI header vkerode writes begins.
const ESRI_HEADER_START: &str = "NROWS ";
/// A header's line naming a file it describes (GDAL passes over keys it does not know).
const DATA_FILE_KEY: &str = "VKERODE_DATA_FILE ";

impl EsriHeader {
    /// The header of `data_path`, `dem`'s cells stored as `sample`: its name with the
    /// extension replaced by `.hdr`, the one GDAL looks for. Checked before the data is
    /// written: the name is not one the user gave, so a file there that vkerode did not
    /// write (an ENVI dataset's header, say) is refused, not replaced; and so is the
    /// header of another file of the same stem (dem.raw beside dem.r16) whose cells are
    /// laid out otherwise, which GDAL would then read with the wrong layout.
    pub(super) fn of(data_path: &Path, dem: &Dem, sample: Sample) -> Result<Self, FormatError> {
        let path = data_path.with_extension("hdr");
        if path == data_path {
            return Err(FormatError::new(
                data_path,
                "a raw or r16 heightmap cannot be named .hdr: its ESRI header takes that name",
            ));
        }
        let pixel_type = match sample {
            Sample::Float32 => "FLOAT",
            Sample::UInt16 => "UNSIGNEDINT",
        };
        let layout = format!(
            "{ESRI_HEADER_START}{}\nNCOLS {}\nNBANDS 1\nNBITS {}\nPIXELTYPE {pixel_type}\nBYTEORDER I\nLAYOUT BIL\n",
            dem.heights.height(),
            dem.heights.width(),
            sample.bits()
        );
        let own = data_path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut text = Vec::new();
        let existing = crate::check_regular_file(&path)
            .and_then(|()| std::fs::File::open(&path))
            .and_then(|f| f.take(4096).read_to_end(&mut text));
        let mut sharers = Vec::new();
        if existing.is_ok() {
            let text = String::from_utf8_lossy(&text);
            if !text.starts_with(ESRI_HEADER_START) {
                return Err(FormatError::new(
                    &path,
                    format!(
                        "exists and is not a header vkerode wrote; GDAL needs this name for the header of {}: move it, or name the output otherwise",
                        data_path.display()
                    ),
                ));
            }
            let (named, old_layout): (Vec<&str>, Vec<&str>) =
                text.lines().partition(|l| l.starts_with(DATA_FILE_KEY));
            sharers = named
                .iter()
                .map(|l| l[DATA_FILE_KEY.len()..].trim().to_string())
                .filter(|n| *n != own && data_path.with_file_name(n).exists())
                .collect();
            let same_layout = old_layout
                .iter()
                .map(|l| format!("{l}\n"))
                .collect::<String>()
                == layout;
            if let Some(other) = sharers.first().filter(|_| !same_layout) {
                return Err(FormatError::new(
                    data_path,
                    format!(
                        "its header {} is {other}'s, laid out otherwise: GDAL reads one .hdr per name stem, so one of the two would be read with the other's cells; give this output another name, or remove {other}",
                        path.display()
                    ),
                ));
            }
        }
        sharers.push(own);
        let named: String = sharers
            .iter()
            .map(|n| format!("{DATA_FILE_KEY}{n}\n"))
            .collect();
        Ok(Self {
            path,
            text: layout + &named,
        })
    }

    pub(super) fn write(&self) -> Result<PathBuf, FormatError> {
        write_text(&self.path, &self.text)
    }
}

/// Where the cells lie in a file GDAL has no driver for: row 0's first cell at
/// `image_offset`, rows `line_offset` bytes apart, cells packed, little-endian.
pub(super) struct RawLayout {
    pub image_offset: u64,
    pub line_offset: u64,
}

/// The name by which a VRT beside `data_path` names it, checked before the data is
/// written: XML holds only text.
pub(super) fn vrt_source_name(data_path: &Path) -> Result<&str, FormatError> {
    data_path
        .file_name()
        .and_then(|name| name.to_str())
        .ok_or_else(|| {
            FormatError::new(data_path, "a VRT can only name a file whose name is UTF-8")
        })
}

/// Writes `FILE.vrt`, a VRT dataset over the cells of `data_path` laid out as `layout`.
pub(super) fn write_vrt(
    data_path: &Path,
    band: &Band,
    layout: &RawLayout,
) -> Result<PathBuf, FormatError> {
    let map = &band.dem.heights;
    let name = vrt_source_name(data_path)?;
    let source = format!(
        "    <SourceFilename relativeToVRT=\"1\">{}</SourceFilename>\n    <ImageOffset>{}</ImageOffset>\n    <PixelOffset>{}</PixelOffset>\n    <LineOffset>{}</LineOffset>\n    <ByteOrder>LSB</ByteOrder>\n",
        escaped(name),
        layout.image_offset,
        band.sample.bits() / 8,
        layout.line_offset
    );
    let xml = format!(
        "<VRTDataset rasterXSize=\"{}\" rasterYSize=\"{}\">\n{}  <VRTRasterBand dataType=\"{}\" band=\"1\" subClass=\"VRTRawRasterBand\">\n{}{source}  </VRTRasterBand>\n</VRTDataset>\n",
        map.width(),
        map.height(),
        band.dataset_elements(),
        band.sample.gdal_type(),
        band.band_elements()
    );
    write_text(&beside(data_path, ".vrt"), &xml)
}

/// `text` with XML's special characters escaped.
fn escaped(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
}
