//! What GDAL reads beside the heightmaps vkerode writes outside TIFF, so that
//! `gdalinfo` finds them where the input lies and reads their heights: an ESRI `.hdr`
//! (GDAL's EHdr driver) laying out raw and r16 cells; a PAM `FILE.aux.xml` beside raw,
//! r16 and PNG files with the CRS, geotransform, nodata, unit and, for 16-bit pixels,
//! the scale and offset back to heights; and for OpenEXR, which GDAL does not read, a
//! VRT (`FILE.vrt`) over its uncompressed scanlines with the same.

use std::io::{self, Read};
use std::path::{Path, PathBuf};

use quick_xml::events::{BytesEnd, BytesStart, BytesText, Event};
use quick_xml::Writer;

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

/// XML indented by two spaces, as GDAL writes it.
type Xml = Writer<Vec<u8>>;

/// `<name>text</name>`, the text escaped.
fn element(xml: &mut Xml, name: &str, text: &str) -> io::Result<()> {
    xml.create_element(name)
        .write_text_content(BytesText::new(text))
        .map(|_| ())
}

fn start(xml: &mut Xml, name: &str, attributes: &[(&str, &str)]) -> io::Result<()> {
    let tag = BytesStart::new(name).with_attributes(attributes.iter().copied());
    xml.write_event(Event::Start(tag))
}

fn end(xml: &mut Xml, name: &str) -> io::Result<()> {
    xml.write_event(Event::End(BytesEnd::new(name)))
}

/// The document `write` makes, with a closing line break.
fn document(write: impl FnOnce(&mut Xml) -> io::Result<()>) -> String {
    let mut xml = Writer::new_with_indent(Vec::new(), b' ', 2);
    write(&mut xml).expect("a Vec takes every byte");
    let mut text = String::from_utf8(xml.into_inner()).expect("XML of text is UTF-8");
    text.push('\n');
    text
}

impl Band<'_> {
    /// The dataset's SRS (where its CRS has an EPSG code) and geotransform.
    fn dataset_elements(&self, xml: &mut Xml) -> io::Result<()> {
        let geo = self.dem.geo.as_ref();
        if let Some(name) = geo.and_then(GeoTags::epsg_name) {
            element(xml, "SRS", &name)?;
        }
        if let Some(gt) = geo.and_then(GeoTags::geotransform) {
            let gt: Vec<String> = gt.iter().map(f64::to_string).collect();
            element(xml, "GeoTransform", &gt.join(", "))?;
        }
        Ok(())
    }

    /// The band's nodata, offset, scale and unit.
    fn band_elements(&self, xml: &mut Xml) -> io::Result<()> {
        if let Some(nodata) = self.nodata {
            element(xml, "NoDataValue", &nodata_text(nodata))?;
        }
        if let Some((scale, offset)) = self.scale_offset {
            element(xml, "Offset", &offset.to_string())?;
            element(xml, "Scale", &scale.to_string())?;
        }
        if !self.dem.units.is_empty() {
            element(xml, "UnitType", &self.dem.units)?;
        }
        Ok(())
    }
}

fn write_text(path: &Path, text: &str) -> Result<PathBuf, FormatError> {
    write_atomically(path, |out| std::io::Write::write_all(out, text.as_bytes()))
        .map_err(|e| FormatError::new(path, e.source.to_string()))?;
    Ok(path.to_path_buf())
}

/// Writes `FILE.aux.xml`, the PAM file GDAL reads beside `data_path`.
pub(super) fn write_pam(data_path: &Path, band: &Band) -> Result<PathBuf, FormatError> {
    let xml = document(|xml| {
        start(xml, "PAMDataset", &[])?;
        band.dataset_elements(xml)?;
        start(xml, "PAMRasterBand", &[("band", "1")])?;
        band.band_elements(xml)?;
        end(xml, "PAMRasterBand")?;
        end(xml, "PAMDataset")
    });
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
    let xml = document(|xml| {
        let (width, height) = (map.width().to_string(), map.height().to_string());
        start(
            xml,
            "VRTDataset",
            &[
                ("rasterXSize", width.as_str()),
                ("rasterYSize", height.as_str()),
            ],
        )?;
        band.dataset_elements(xml)?;
        let band_attributes = [
            ("dataType", band.sample.gdal_type()),
            ("band", "1"),
            ("subClass", "VRTRawRasterBand"),
        ];
        start(xml, "VRTRasterBand", &band_attributes)?;
        band.band_elements(xml)?;
        xml.create_element("SourceFilename")
            .with_attribute(("relativeToVRT", "1"))
            .write_text_content(BytesText::new(name))?;
        element(xml, "ImageOffset", &layout.image_offset.to_string())?;
        element(xml, "PixelOffset", &(band.sample.bits() / 8).to_string())?;
        element(xml, "LineOffset", &layout.line_offset.to_string())?;
        element(xml, "ByteOrder", "LSB")?;
        end(xml, "VRTRasterBand")?;
        end(xml, "VRTDataset")
    });
    write_text(&beside(data_path, ".vrt"), &xml)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The PAM and VRT files as the `format!` strings before quick-xml wrote them, byte
    /// for byte: every element, and a unit and a file name that need escaping.
    #[test]
    fn pam_and_vrt_files_are_written_as_before() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let mut dem = Dem::bare(dir, 3, 2, vec![0.0; 6]).unwrap();
        dem.units = "m<&>\"'".into();
        let band = Band {
            dem: &dem,
            sample: Sample::UInt16,
            nodata: Some(-9999.0),
            scale_offset: Some((0.5, 10.25)),
        };
        let data = dir.join("a&b'c.r16");
        let pam = std::fs::read_to_string(write_pam(&data, &band).unwrap()).unwrap();
        assert_eq!(
            pam,
            "<PAMDataset>\n  <PAMRasterBand band=\"1\">\n    <NoDataValue>-9999</NoDataValue>\n    <Offset>10.25</Offset>\n    <Scale>0.5</Scale>\n    <UnitType>m&lt;&amp;&gt;&quot;&apos;</UnitType>\n  </PAMRasterBand>\n</PAMDataset>\n"
        );
        let layout = RawLayout {
            image_offset: 3112,
            line_offset: 1620,
        };
        let vrt = std::fs::read_to_string(write_vrt(&data, &band, &layout).unwrap()).unwrap();
        assert_eq!(
            vrt,
            "<VRTDataset rasterXSize=\"3\" rasterYSize=\"2\">\n  <VRTRasterBand dataType=\"UInt16\" band=\"1\" subClass=\"VRTRawRasterBand\">\n    <NoDataValue>-9999</NoDataValue>\n    <Offset>10.25</Offset>\n    <Scale>0.5</Scale>\n    <UnitType>m&lt;&amp;&gt;&quot;&apos;</UnitType>\n    <SourceFilename relativeToVRT=\"1\">a&amp;b&apos;c.r16</SourceFilename>\n    <ImageOffset>3112</ImageOffset>\n    <PixelOffset>2</PixelOffset>\n    <LineOffset>1620</LineOffset>\n    <ByteOrder>LSB</ByteOrder>\n  </VRTRasterBand>\n</VRTDataset>\n"
        );
        // An empty band keeps its start and end tags on lines of their own.
        let bare = Dem::bare(dir, 3, 2, vec![0.0; 6]).unwrap();
        let band = Band {
            dem: &bare,
            sample: Sample::Float32,
            nodata: None,
            scale_offset: None,
        };
        let pam = std::fs::read_to_string(write_pam(&data, &band).unwrap()).unwrap();
        assert_eq!(
            pam,
            "<PAMDataset>\n  <PAMRasterBand band=\"1\">\n  </PAMRasterBand>\n</PAMDataset>\n"
        );
    }
}
