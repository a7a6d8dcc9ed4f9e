//! GDAL as the judge of the heightmaps vkerode writes outside TIFF: beside every raw,
//! r16, PNG16 and OpenEXR output of `erode` and `convert`, GDAL finds the input's CRS,
//! geotransform and nodata and reads the heights vkerode reads; a sidecar brings the
//! place back; a --cell-size replaces a projected file's spacing and keeps its place;
//! and r32 and PFM inputs read the right way up.

mod common;

use std::path::{Path, PathBuf};

use common::{assert_clean_success, gdal, gdal_cells, gdalinfo, stderr, vkerode, TEST_DEM};
use serde_json::Value;
use tiff::encoder::{colortype::Gray32Float, TiffEncoder};
use tiff::tags::Tag;
use vkerode::terrain::formats::read_dem;

fn scratch(name: &str) -> PathBuf {
    common::scratch("gdal-placement", name)
}

/// `--format` values, and the file GDAL opens for an output of each: OpenEXR has no
/// GDAL driver, so GDAL reads it through the VRT beside it.
const FORMATS: [(&str, &str); 6] = [
    ("tif", "tif"),
    ("tif-deflate", "tif"),
    ("raw", "raw"),
    ("r16", "r16"),
    ("png16", "png"),
    ("exr", "exr.vrt"),
];

/// `source` (a TIFF) georeferenced by `gdal_translate` with `options`, into `dir`.
fn georeferenced(source: &Path, dir: &Path, name: &str, options: &[&str]) -> PathBuf {
    let path = dir.join(name);
    let mut args = vec!["-q"];
    args.extend_from_slice(options);
    args.extend([source.to_str().unwrap(), path.to_str().unwrap()]);
    gdal("gdal_translate", &args);
    path
}

/// `source` in UTM zone 14N (EPSG:32614) with its top-left corner at (500000,
/// 4000000) and cells of 74.5 m x 92.6 m, nodata -9999.
fn utm_14n(source: &Path, dir: &Path) -> PathBuf {
    let (width, height) = {
        let dem = read_dem(source, None).unwrap();
        (dem.heights.width() as f64, dem.heights.height() as f64)
    };
    let corners = [
        500_000.0,
        4_000_000.0,
        500_000.0 + width * 74.5,
        4_000_000.0 - height * 92.6,
    ]
    .map(|v| v.to_string());
    let mut options = vec!["-a_srs", "EPSG:32614", "-a_nodata", "-9999", "-a_ullr"];
    options.extend(corners.iter().map(String::as_str));
    georeferenced(source, dir, "utm.tif", &options)
}

/// The CRS as gdalinfo gives it: the first line of its WKT (its name) and its EPSG
/// code. The whole WKT differs between an EPSG code and the GeoKeys that carry it (a
/// datum ensemble against its datum), so the name and code are what must agree.
fn crs_of(info: &Value) -> Option<(String, i64)> {
    let wkt = info["coordinateSystem"]["wkt"].as_str()?;
    let name = wkt.lines().next()?.to_string();
    Some((name, info["stac"]["proj:epsg"].as_i64()?))
}

/// GDAL places `output` where it places `input`, without a warning: the same CRS and
/// the same geotransform, bit for bit. Returns what GDAL says of `output`.
fn assert_placed_like(input: &Value, output: &Path) -> Value {
    let got = gdalinfo(output);
    let name = output.display();
    assert!(crs_of(input).is_some(), "the input has a CRS: {input}");
    assert_eq!(crs_of(&got), crs_of(input), "{name}: CRS");
    assert_eq!(got["geoTransform"], input["geoTransform"], "{name}: place");
    got
}

fn as_f32(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

/// The nodata value GDAL reports for the first band, NaN where it is "NaN".
fn nodata_of(info: &Value) -> Option<f32> {
    match &info["bands"][0]["noDataValue"] {
        Value::Null => None,
        Value::String(s) if s == "NaN" => Some(f32::NAN),
        v => Some(v.as_f64().unwrap() as f32),
    }
}

/// GDAL reads, through `gdal_file`, the heights vkerode reads from `ours`: bit for bit
/// from float32 files, and to a tenth of a pixel step from 16-bit pixels GDAL turns into
/// heights by their scale and offset; GDAL's nodata cells are vkerode's missing ones.
fn assert_gdal_reads_our_heights(ours: &Path, gdal_file: &Path, work: &Path) {
    let dem = read_dem(ours, None).unwrap();
    let info = gdalinfo(gdal_file);
    let scaled = info["bands"][0]["scale"].is_number();
    let theirs = as_f32(&gdal_cells(
        gdal_file,
        work,
        if scaled { &["-unscale"] } else { &[] },
    ));
    let nodata = nodata_of(&info);
    let missing = |v: f32| nodata.is_some_and(|n| v == n || (n.is_nan() && v.is_nan()));
    let stats = dem.heights.stats();
    let tolerance = if scaled {
        (stats.max - stats.min) / 65535.0 / 10.0
    } else {
        0.0
    };
    let name = ours.display();
    assert_eq!(theirs.len(), dem.heights.data().len(), "{name}: cells");
    for (i, (&a, &b)) in dem.heights.data().iter().zip(&theirs).enumerate() {
        if a.is_nan() {
            assert!(missing(b), "{name}: cell {i} is missing, GDAL reads {b}");
        } else {
            assert!(!missing(b), "{name}: cell {i} is {a}, GDAL reads nodata");
            assert!((a - b).abs() <= tolerance, "{name}: cell {i}: {a} vs {b}");
        }
    }
}

/// `vkerode erode` on the CPU, cheaply, with `extra` flags.
fn erode(input: &Path, out: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["erode", "--input", input.to_str().unwrap()];
    args.extend_from_slice(&["--engine", "cpu", "--droplets", "2000", "--no-images"]);
    args.extend_from_slice(extra);
    args.extend(["--out", out.to_str().unwrap()]);
    vkerode(&args)
}

fn convert(input: &Path, output: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["convert", input.to_str().unwrap(), output.to_str().unwrap()];
    args.extend_from_slice(extra);
    vkerode(&args)
}

#[test]
fn every_erode_format_lies_where_its_input_does_and_gdal_reads_its_heights() {
    let dir = scratch("erode");
    let work = dir.join("gdal");
    std::fs::create_dir_all(&work).unwrap();
    let input = utm_14n(Path::new(TEST_DEM), &dir);
    let input_info = gdalinfo(&input);
    for (format, gdal_extension) in FORMATS {
        let out = dir.join(format);
        assert_clean_success(&erode(&input, &out, &["--format", format]));
        let extension = gdal_extension.split('.').next().unwrap();
        for stem in ["before", "after"] {
            let ours = out.join(format!("{stem}.{extension}"));
            let gdal_file = out.join(format!("{stem}.{gdal_extension}"));
            let info = assert_placed_like(&input_info, &gdal_file);
            // The test DEM has no missing cells: float32 files keep the input's nodata
            // value (OpenEXR's missing cells are NaN), 16-bit pixels need none.
            let expected = match format {
                "tif" | "tif-deflate" | "raw" => Some(-9999.0),
                "exr" => Some(f32::NAN),
                _ => None,
            };
            let nodata = nodata_of(&info);
            assert_eq!(
                nodata.map(f32::to_bits),
                expected.map(f32::to_bits),
                "{format}: nodata"
            );
            if !format.starts_with("tif") {
                assert_eq!(info["bands"][0]["unit"], "m", "{format}: the heights' unit");
            }
            assert_gdal_reads_our_heights(&ours, &gdal_file, &work);
        }
    }
}

/// A 48 x 40 float32 TIFF with nodata -9999 in five cells and NaN in one, and the
/// indices of those cells.
fn holed_tiff(path: &Path) -> Vec<usize> {
    let holes = vec![3, 100, 101, 777, 1500, 1919];
    let mut data: Vec<f32> = (0..48 * 40)
        .map(|i| 300.0 + (i % 48) as f32 * 1.7 - (i / 48) as f32 * 0.9)
        .collect();
    for &i in &holes {
        data[i] = -9999.0;
    }
    data[1500] = f32::NAN;
    let mut encoder = TiffEncoder::new(std::fs::File::create(path).unwrap()).unwrap();
    let mut image = encoder.new_image::<Gray32Float>(48, 40).unwrap();
    image.encoder().write_tag(Tag::GdalNodata, "-9999").unwrap();
    image.write_data(&data).unwrap();
    holes
}

#[test]
fn converted_files_keep_the_place_and_missing_cells_and_their_sidecars_bring_the_place_back() {
    let dir = scratch("convert");
    let work = dir.join("gdal");
    std::fs::create_dir_all(&work).unwrap();
    let holed = dir.join("holed.tif");
    let holes = holed_tiff(&holed);
    let input = utm_14n(&holed, &dir);
    // And in degrees, tied at cell centres (PixelIsPoint): GDAL's corner is half a
    // cell off the tie point, and every output must say the corner GDAL says.
    let geographic = georeferenced(
        &holed,
        &dir,
        "wgs84-point.tif",
        &[
            "-a_srs",
            "EPSG:4326",
            "-mo",
            "AREA_OR_POINT=Point",
            "-a_ullr",
            "-84.3",
            "36.5",
            "-84.0",
            "36.2",
        ],
    );
    for input in [input, geographic] {
        let input_info = gdalinfo(&input);
        let stem = input.file_stem().unwrap().to_str().unwrap();
        for extension in ["raw", "r32", "r16", "png", "exr"] {
            // A stem of its own: GDAL reads one .hdr per stem.
            let output = dir.join(format!("{stem}-{extension}-out.{extension}"));
            assert_clean_success(&convert(&input, &output, &[]));
            let gdal_file = match extension {
                "exr" => dir.join(format!("{stem}-{extension}-out.exr.vrt")),
                _ => output.clone(),
            };
            assert_placed_like(&input_info, &gdal_file);
            assert_gdal_reads_our_heights(&output, &gdal_file, &work);
            let missing: Vec<usize> = read_dem(&output, None)
                .unwrap()
                .heights
                .data()
                .iter()
                .enumerate()
                .filter_map(|(i, h)| h.is_nan().then_some(i))
                .collect();
            assert_eq!(missing, holes, "{}: missing cells", output.display());
            if extension == "exr" {
                continue;
            }
            // The sidecar's tags place a TIFF made from the file where the input lies.
            let back = dir.join(format!("{stem}-{extension}-back.tif"));
            assert_clean_success(&convert(&output, &back, &[]));
            let info = assert_placed_like(&input_info, &back);
            let nodata = nodata_of(&info).expect("missing cells have a nodata value");
            assert!(nodata == -9999.0 || nodata.is_nan(), "{back:?}: {nodata}");
        }
    }
}

#[test]
fn a_cell_size_over_a_projected_file_replaces_its_spacing_and_keeps_its_crs_and_corner() {
    let dir = scratch("cell-size");
    let input = utm_14n(Path::new(TEST_DEM), &dir);
    let mut expected = gdalinfo(&input);
    expected["geoTransform"] = serde_json::json!([500000.0, 30.0, 0.0, 4000000.0, 0.0, -25.0]);
    for format in ["tif", "raw"] {
        let out = dir.join(format!("eroded-{format}"));
        let run = erode(&input, &out, &["--cell-size", "30,25", "--format", format]);
        assert_clean_success(&run);
        let report: Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
        assert_eq!(report["terrain"]["cell_size_source"], "flag");
        let after = out.join(format!("after.{format}"));
        assert_placed_like(&expected, &after);
        assert_placed_like(&expected, &out.join("erosion.tif"));
    }
    let converted = dir.join("converted.png");
    assert_clean_success(&convert(&input, &converted, &["--cell-size", "30,25"]));
    assert_placed_like(&expected, &converted);

    // A file with no place of its own gets the flag's spacing at the origin, in no CRS,
    // as its TIFFs do.
    let out = dir.join("untagged");
    let run = erode(
        Path::new(TEST_DEM),
        &out,
        &["--cell-size", "74.5,92.6", "--format", "r16"],
    );
    assert_clean_success(&run);
    let info = gdalinfo(&out.join("after.r16"));
    assert_eq!(
        info["geoTransform"],
        serde_json::json!([0.0, 74.5, 0.0, 0.0, 0.0, -92.6])
    );
    assert!(crs_of(&info).is_none(), "no CRS is made up: {info}");

    // Degrees are no metres: a geographic file keeps its own spacing, and the metres
    // are the flag's, as run.json says.
    let geographic = georeferenced(
        Path::new(TEST_DEM),
        &dir,
        "wgs84.tif",
        &[
            "-a_srs",
            "EPSG:4326",
            "-a_ullr",
            "-84.3",
            "36.5",
            "-84.0",
            "36.2",
        ],
    );
    let out = dir.join("geographic");
    assert_clean_success(&erode(&geographic, &out, &["--cell-size", "30"]));
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    assert_eq!(report["terrain"]["cell_size_source"], "flag");
    assert_eq!(report["terrain"]["units"]["cell_size"]["x"], 30.0);
    assert_placed_like(&gdalinfo(&geographic), &out.join("after.tif"));
}

#[test]
fn a_crs_with_no_epsg_code_is_warned_of_and_its_geotransform_still_given() {
    let dir = scratch("unnamed-crs");
    let lambert =
        "+proj=lcc +lat_1=33 +lat_2=45 +lat_0=39 +lon_0=-96 +datum=WGS84 +units=m +no_defs";
    let input = georeferenced(
        Path::new(TEST_DEM),
        &dir,
        "lcc.tif",
        &[
            "-a_srs", lambert, "-a_ullr", "100000", "200000", "130023.5", "168145.6",
        ],
    );
    let input_info = gdalinfo(&input);
    let raw = dir.join("lcc.raw");
    let result = convert(&input, &raw, &[]);
    assert_clean_success(&result);
    assert!(
        stderr(&result).contains("warning: the input's CRS has no EPSG code"),
        "{}",
        stderr(&result)
    );
    let info = gdalinfo(&raw);
    assert_eq!(info["geoTransform"], input_info["geoTransform"]);
    assert!(crs_of(&info).is_none(), "no CRS is made up: {info}");
    // The TIFF made back from it keeps the CRS whole, through the sidecar's tags.
    let back = dir.join("back.tif");
    assert_clean_success(&convert(&raw, &back, &[]));
    let back_info = gdalinfo(&back);
    assert_eq!(
        back_info["coordinateSystem"],
        input_info["coordinateSystem"]
    );
    assert_eq!(back_info["geoTransform"], input_info["geoTransform"]);

    let out = dir.join("eroded");
    let run = erode(&input, &out, &["--format", "png16"]);
    assert!(run.status.success(), "{}", stderr(&run));
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    let warnings = report["warnings"].to_string();
    assert!(warnings.contains("no EPSG code"), "{warnings}");
}

/// GDAL's value of the cell at column `x`, row `y` (row 0 at the top).
fn gdal_value(path: &Path, x: usize, y: usize) -> f32 {
    let out = gdal(
        "gdallocationinfo",
        &[
            "-valonly",
            path.to_str().unwrap(),
            &x.to_string(),
            &y.to_string(),
        ],
    );
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

#[test]
fn gaea_r32_and_pfm_heightmaps_read_the_right_way_up_as_gdal_sees_them() {
    let dir = scratch("r32-pfm");
    // Row-major heights with every cell its own: 6 wide, 5 high, the top row first.
    let (w, h) = (6, 5);
    let heights: Vec<f32> = (0..w * h).map(|i| 100.0 + i as f32 * 1.25).collect();

    // Gaea's .r32: a square of little-endian float32, no header or sidecar.
    let square: Vec<f32> = (0..36).map(|i| -3.5 + i as f32 * 0.75).collect();
    let r32 = dir.join("gaea.r32");
    std::fs::write(&r32, bytemuck::cast_slice(&square)).unwrap();
    let from_r32 = dir.join("from-r32.tif");
    assert_clean_success(&convert(&r32, &from_r32, &[]));
    assert_eq!(gdal_value(&from_r32, 0, 0), square[0]);
    assert_eq!(gdal_value(&from_r32, 4, 2), square[2 * 6 + 4]);
    // Written back as .r32 (raw float32 with its sidecar), it reads bit for bit.
    let again = dir.join("again.r32");
    assert_clean_success(&convert(&from_r32, &again, &[]));
    assert_eq!(std::fs::read(&again).unwrap(), std::fs::read(&r32).unwrap());
    assert_eq!(
        gdal_value(&again, 4, 2),
        square[2 * 6 + 4],
        "GDAL reads it too"
    );

    // PFM stores rows bottom to top, in the byte order its scale's sign gives.
    for (name, scale, little_endian) in [("le.pfm", "-1.0", true), ("be.pfm", "1.0", false)] {
        let mut bytes = format!("Pf\n{w} {h}\n{scale}\n").into_bytes();
        for row in heights.chunks_exact(w).rev() {
            for v in row {
                let b = if little_endian {
                    v.to_le_bytes()
                } else {
                    v.to_be_bytes()
                };
                bytes.extend_from_slice(&b);
            }
        }
        let pfm = dir.join(name);
        std::fs::write(&pfm, bytes).unwrap();
        let tif = dir.join(format!("{name}.tif"));
        assert_clean_success(&convert(&pfm, &tif, &[]));
        for (x, y) in [(0, 0), (5, 0), (2, 3), (0, 4)] {
            assert_eq!(
                gdal_value(&tif, x, y),
                heights[y * w + x],
                "{name} ({x}, {y})"
            );
        }
    }
}
