//! Georeferenced DEMs, with GDAL as the independent judge: inputs are made by
//! `gdal_translate` from the test DEM, and every TIFF vkerode writes must open in GDAL
//! without a warning, in the input's CRS, at its geotransform, with its nodata value,
//! and (for `convert`) with its cells. The other formats: tests/gdal_placement.rs.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{assert_clean_success, gdal, gdalinfo, stderr, vkerode, TEST_DEM as DEM};

/// The cells as GDAL reads them, raw float32.
fn cells(path: &Path, dir: &Path) -> Vec<u8> {
    common::gdal_cells(path, dir, &[])
}

/// The test DEM placed in UTM zone 17N at its true 74.5 m x 92.6 m cells, nodata -9999.
fn projected_input(dir: &Path) -> PathBuf {
    let path = dir.join("utm.tif");
    let (x0, y0) = (700_000.0f64, 4_000_000.0f64);
    let (x1, y1) = (x0 + 403.0 * 74.5, y0 - 344.0 * 92.6);
    let corners = [x0, y0, x1, y1].map(|v| v.to_string());
    let mut args = vec![
        "-q",
        "-a_srs",
        "EPSG:26917",
        "-a_nodata",
        "-9999",
        "-a_ullr",
    ];
    args.extend(corners.iter().map(String::as_str));
    args.extend([DEM, path.to_str().unwrap()]);
    gdal("gdal_translate", &args);
    path
}

fn assert_placed_like(input: &serde_json::Value, output: &Path) {
    let got = gdalinfo(output);
    let name = output.display();
    assert_eq!(
        got["coordinateSystem"]["wkt"], input["coordinateSystem"]["wkt"],
        "{name}: CRS"
    );
    assert_eq!(
        got["geoTransform"], input["geoTransform"],
        "{name}: geotransform"
    );
    assert_eq!(
        got["bands"][0]["noDataValue"], input["bands"][0]["noDataValue"],
        "{name}: nodata"
    );
}

/// `vkerode erode --input input ... --out out`.
fn erode(input: &Path, out: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["erode", "--input", input.to_str().unwrap()];
    args.extend_from_slice(extra);
    args.extend(["--out", out.to_str().unwrap()]);
    vkerode(&args)
}

fn run_report(out: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap()
}

#[test]
fn convert_and_erode_keep_a_geotiffs_place_cell_size_and_cells() {
    let dir = common::scratch("geotiff", "projected");
    let input = projected_input(&dir);
    let input_info = gdalinfo(&input);

    let converted = dir.join("converted.tif");
    assert_clean_success(&vkerode(&[
        "convert",
        input.to_str().unwrap(),
        converted.to_str().unwrap(),
    ]));
    assert_placed_like(&input_info, &converted);
    assert_eq!(
        cells(&converted, &dir),
        cells(&input, &dir),
        "cells as GDAL reads them"
    );

    // No --cell-size: the file's 74.5 m x 92.6 m is used, and said to be.
    let out = dir.join("eroded");
    let run = erode(&input, &out, &["--droplets", "5000", "--no-images"]);
    assert_clean_success(&run);
    let printed = String::from_utf8_lossy(&run.stdout);
    assert!(
        printed.contains("cell size 74.5 x 92.6 m (from the file)"),
        "{printed}"
    );
    for name in ["before.tif", "after.tif", "erosion.tif"] {
        assert_placed_like(&input_info, &out.join(name));
    }
    let report: serde_json::Value = run_report(&out);
    let terrain = &report["terrain"];
    assert_eq!(terrain["cell_size_source"], "file");
    assert_eq!(terrain["georeferenced"], true);
    assert_eq!(terrain["units"]["cell_size"]["x"], 74.5);

    // erosion.tif is after minus before, cell for cell.
    let as_f32 = |bytes: Vec<u8>| -> Vec<f32> {
        bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect()
    };
    let before = as_f32(cells(&out.join("before.tif"), &dir));
    let after = as_f32(cells(&out.join("after.tif"), &dir));
    let change = as_f32(cells(&out.join("erosion.tif"), &dir));
    let mismatched = (0..change.len())
        .filter(|&i| (change[i] - (after[i] - before[i])).abs() > 1e-3)
        .count();
    assert_eq!(mismatched, 0);
    assert!(change.iter().any(|&c| c.abs() > 0.1), "the terrain changed");
}

#[test]
fn the_layouts_compressions_and_sample_types_gis_tools_write_read_as_gdal_reads_them() {
    let dir = common::scratch("geotiff", "layouts");
    let input = projected_input(&dir);
    let variants: [&[&str]; 9] = [
        &["-ot", "UInt32", "-a_nodata", "none"],
        &["-co", "BIGTIFF=YES"],
        &[
            "-co",
            "TILED=YES",
            "-co",
            "BLOCKXSIZE=64",
            "-co",
            "BLOCKYSIZE=64",
        ],
        &["-co", "COMPRESS=DEFLATE", "-co", "PREDICTOR=2"],
        &["-co", "COMPRESS=DEFLATE", "-co", "PREDICTOR=3"],
        &["-co", "COMPRESS=LZW"],
        &["-co", "COMPRESS=PACKBITS"],
        &["-ot", "Float64"],
        &["-ot", "Int32"],
    ];
    for (i, options) in variants.iter().enumerate() {
        let variant = dir.join(format!("variant-{i}.tif"));
        let mut args = vec!["-q"];
        args.extend_from_slice(options);
        args.extend([input.to_str().unwrap(), variant.to_str().unwrap()]);
        gdal("gdal_translate", &args);
        let converted = dir.join(format!("converted-{i}.tif"));
        assert_clean_success(&vkerode(&[
            "convert",
            variant.to_str().unwrap(),
            converted.to_str().unwrap(),
        ]));
        assert_placed_like(&gdalinfo(&variant), &converted);
        assert_eq!(
            cells(&converted, &dir),
            cells(&variant, &dir),
            "{options:?}: cells as GDAL reads them"
        );
    }
}

#[test]
fn deflate_output_is_smaller_and_reads_back_as_gdal_reads_the_input() {
    let dir = common::scratch("geotiff", "deflate");
    let input = projected_input(&dir);
    let deflated = dir.join("deflated.tif");
    assert_clean_success(&vkerode(&[
        "convert",
        input.to_str().unwrap(),
        deflated.to_str().unwrap(),
        "--format",
        "tif-deflate",
    ]));
    let info = gdalinfo(&deflated);
    assert_eq!(
        info["metadata"]["IMAGE_STRUCTURE"]["COMPRESSION"],
        "DEFLATE"
    );
    assert_placed_like(&gdalinfo(&input), &deflated);
    assert_eq!(cells(&deflated, &dir), cells(&input, &dir));
    let size = |p: &Path| std::fs::metadata(p).unwrap().len();
    assert!(size(&deflated) < size(&input), "deflate shrinks the file");
}

#[test]
fn a_geographic_geotiff_keeps_its_place_and_its_degrees_become_metres_as_gdal_measures_them() {
    let dir = common::scratch("geotiff", "geographic");
    let input = dir.join("wgs84.tif");
    gdal(
        "gdal_translate",
        &[
            "-q",
            "-a_srs",
            "EPSG:4326",
            "-a_ullr",
            "-84.3",
            "36.5",
            "-84.0",
            "36.2",
            DEM,
            input.to_str().unwrap(),
        ],
    );
    let info = gdalinfo(&input);
    let converted = dir.join("converted.tif");
    assert_clean_success(&vkerode(&[
        "convert",
        input.to_str().unwrap(),
        converted.to_str().unwrap(),
    ]));
    assert_placed_like(&info, &converted);
    let out = dir.join("eroded");
    let run = erode(&input, &out, &["--droplets", "2000", "--no-images"]);
    assert_clean_success(&run);
    assert_placed_like(&info, &out.join("after.tif"));
    let report = run_report(&out);
    let geodesic = &report["terrain"]["cell_size_source"]["geodesic"];
    let latitude = geodesic["latitude_deg"].as_f64().unwrap();
    assert!((latitude - 36.35).abs() < 1e-9, "{geodesic}");
    // GDAL as the judge: true distances from the centre of an azimuthal equidistant
    // projection there, to one cell east and one cell north.
    let (dx, dy) = (0.3 / 403.0, 0.3 / 344.0);
    let points = format!(
        "-84.15 {}\n{} {}\n-84.15 {}\n",
        latitude,
        -84.15 + dx,
        latitude,
        latitude + dy
    );
    let aeqd = format!("+proj=aeqd +lat_0={latitude} +lon_0=-84.15 +ellps=WGS84 +units=m");
    let mut transform = Command::new("gdaltransform")
        .args(["-s_srs", "EPSG:4326", "-t_srs", &aeqd])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut transform.stdin.take().unwrap(), points.as_bytes()).unwrap();
    let metres: Vec<Vec<f64>> = String::from_utf8(transform.wait_with_output().unwrap().stdout)
        .unwrap()
        .lines()
        .map(|l| l.split_whitespace().map(|v| v.parse().unwrap()).collect())
        .collect();
    let cell = &report["terrain"]["units"]["cell_size"];
    for (ours, gdal) in [(&cell["x"], metres[1][0]), (&cell["y"], metres[2][1])] {
        let ours = ours.as_f64().unwrap();
        assert!(
            (ours / gdal - 1.0).abs() < 1e-5,
            "{ours} m against GDAL's {gdal} m"
        );
    }
}

#[test]
fn a_flag_overrides_the_file_and_a_missing_cell_size_is_refused_unless_assumed_by_name() {
    let dir = common::scratch("geotiff", "cell-size");
    let input = projected_input(&dir);
    let out = dir.join("flag");
    assert_clean_success(&erode(
        &input,
        &out,
        &["--cell-size", "30", "--droplets", "2000", "--no-images"],
    ));
    let report: serde_json::Value = run_report(&out);
    assert_eq!(report["terrain"]["cell_size_source"], "flag");
    assert_eq!(report["terrain"]["units"]["cell_size"]["x"], 30.0);

    // The test DEM itself has no georeferencing: refused, naming both ways out, unless
    // a cell size is assumed by name.
    let out = dir.join("assumed");
    let run = erode(Path::new(DEM), &out, &["--droplets", "2000", "--no-images"]);
    let err = stderr(&run);
    assert_eq!(run.status.code(), Some(1), "{err}");
    assert!(
        err.contains(DEM)
            && err.contains("states no cell size in metres")
            && err.contains("--cell-size")
            && err.contains("--assume-cell-size"),
        "{err}"
    );
    assert!(!out.exists(), "nothing written: {err}");
    assert_clean_success(&erode(
        Path::new(DEM),
        &out,
        &[
            "--assume-cell-size",
            "1",
            "--droplets",
            "2000",
            "--no-images",
        ],
    ));
    let report: serde_json::Value = run_report(&out);
    assert_eq!(report["terrain"]["cell_size_source"], "assumed");
    assert_eq!(report["terrain"]["units"]["cell_size"]["x"], 1.0);
}

#[test]
fn a_cell_size_given_for_an_untagged_input_is_written_into_its_tiffs() {
    let dir = common::scratch("geotiff", "flag-written");
    let out = dir.join("flag");
    assert_clean_success(&erode(
        Path::new(DEM),
        &out,
        &[
            "--cell-size",
            "74.5,92.6",
            "--droplets",
            "2000",
            "--no-images",
        ],
    ));
    for tif in ["before.tif", "after.tif", "erosion.tif"] {
        let info = gdalinfo(&out.join(tif));
        assert_eq!(
            info["geoTransform"],
            serde_json::json!([0.0, 74.5, 0.0, 0.0, 0.0, -92.6]),
            "{tif}: {info}"
        );
    }
    // Read back, the file now says its cell size itself.
    let again = dir.join("again");
    assert_clean_success(&erode(
        &out.join("after.tif"),
        &again,
        &["--droplets", "2000", "--no-images"],
    ));
    let report = run_report(&again);
    assert_eq!(report["terrain"]["cell_size_source"], "file");
    assert_eq!(report["terrain"]["units"]["cell_size"]["y"], 92.6);
}

#[test]
fn a_sparse_tiff_bomb_is_refused_with_its_cells_and_bytes_told_apart() {
    // 40000 x 40000 float32 cells in a few hundred KB: GDAL writes no empty tiles.
    let dir = common::scratch("geotiff", "bomb");
    let bomb = dir.join("bomb.tif");
    let _ = std::fs::remove_file(&bomb);
    gdal(
        "gdal_create",
        &[
            "-q",
            "-of",
            "GTiff",
            "-outsize",
            "40000",
            "40000",
            "-ot",
            "Float32",
            "-co",
            "TILED=YES",
            "-co",
            "SPARSE_OK=TRUE",
            bomb.to_str().unwrap(),
        ],
    );
    let converted = dir.join("converted.tif");
    let result = vkerode(&[
        "convert",
        bomb.to_str().unwrap(),
        converted.to_str().unwrap(),
    ]);
    let err = stderr(&result);
    assert_eq!(result.status.code(), Some(1), "{err}");
    assert!(
        err.contains("1600000000 cells of 4 bytes (6400000000 bytes)"),
        "{err}"
    );
    assert!(!converted.exists());
}

/// GDAL's statistics of a file's band: (minimum, maximum, mean, valid cells).
fn band_statistics(path: &Path) -> (f64, f64, f64, f64) {
    let out = gdal("gdalinfo", &["-json", "-stats", path.to_str().unwrap()]);
    let info: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let metadata = &info["bands"][0]["metadata"][""];
    let number = |key: &str| -> f64 {
        metadata[key]
            .as_str()
            .unwrap_or_else(|| panic!("{}: no {key} in {metadata}", path.display()))
            .parse()
            .unwrap()
    };
    let size = &info["size"];
    let cells =
        size[0].as_f64().unwrap() * size[1].as_f64().unwrap() * number("STATISTICS_VALID_PERCENT")
            / 100.0;
    (
        number("STATISTICS_MINIMUM"),
        number("STATISTICS_MAXIMUM"),
        number("STATISTICS_MEAN"),
        cells,
    )
}

#[test]
fn run_json_gives_heights_changes_and_masses_in_metres_as_gdal_reads_the_outputs() {
    let dir = common::scratch("geotiff", "metres");
    let input = projected_input(&dir);
    let out = dir.join("out");
    // An exaggeration, so that kernel units are neither metres nor metres per cell.
    let output = erode(
        &input,
        &out,
        &[
            "--engine",
            "cpu-sequential",
            "--droplets",
            "3000",
            "--vertical-scale",
            "2",
            "--no-images",
        ],
    );
    assert_clean_success(&output);
    let report = run_report(&out);
    assert_eq!(report["height_unit"]["name"], "m");
    assert_eq!(report["height_unit"]["per_kernel_unit"], 74.5 / 2.0);
    let close = |what: &str, ours: f64, gdal: f64, tolerance: f64| {
        assert!(
            (ours - gdal).abs() <= tolerance * gdal.abs().max(1.0),
            "{what}: run.json {ours}, GDAL {gdal}"
        );
    };
    let change = &report["change"];
    let (min, max, _, _) = band_statistics(&out.join("after.tif"));
    close(
        "lowest height after",
        change["min_after"].as_f64().unwrap(),
        min,
        1e-6,
    );
    close(
        "highest height after",
        change["max_after"].as_f64().unwrap(),
        max,
        1e-6,
    );
    // The change map's mean over its cells is the total change per cell.
    let (deepest, highest, mean, cells) = band_statistics(&out.join("erosion.tif"));
    assert!(
        deepest < 0.0 && highest > 0.0,
        "the run eroded and deposited"
    );
    close(
        "deepest erosion",
        change["deepest_erosion"].as_f64().unwrap(),
        deepest,
        1e-5,
    );
    close(
        "highest deposition",
        change["highest_deposition"].as_f64().unwrap(),
        highest,
        1e-5,
    );
    let total = change["total_change"].as_f64().unwrap();
    close(
        "total change",
        total,
        mean * cells,
        1e-4 * change["eroded"].as_f64().unwrap() / total.abs(),
    );
    // A strategy's own masses are in metres too: thermal erosion's heights summed.
    let thermal = dir.join("thermal");
    let output = erode(
        &input,
        &thermal,
        &[
            "--engine",
            "cpu-sequential",
            "--algorithm",
            "thermal",
            "--vertical-scale",
            "2",
            "--no-images",
        ],
    );
    assert_clean_success(&output);
    let (_, _, mean, cells) = band_statistics(&thermal.join("before.tif"));
    let summed = run_report(&thermal)["mass"]["before"].as_f64().unwrap();
    close(
        "thermal's heights summed before",
        summed,
        mean * cells,
        1e-6,
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The BigTIFF path runs only past 4 GB, which no test can afford to write: here the
/// placed test DEM, some cells missing, goes through it, and GDAL must read it as it
/// reads the classic TIFF, cell for cell.
#[test]
fn a_bigtiff_reads_in_gdal_as_the_classic_tiff_does() {
    use vkerode::terrain::formats::{read_dem, write_bigtiff, write_dem, HeightFormat};
    let dir = common::scratch("geotiff", "bigtiff");
    let mut dem = read_dem(&projected_input(&dir), None).unwrap();
    assert!(
        dem.geo.is_some() && dem.nodata == Some(-9999.0),
        "placed, with nodata"
    );
    // Its lowest cells missing, so that the nodata fill is written.
    let lowest = dem
        .heights
        .data()
        .iter()
        .copied()
        .fold(f32::INFINITY, f32::min);
    dem.heights = dem
        .heights
        .map(|h| if h < lowest + 5.0 { f32::NAN } else { h });
    assert!(dem.heights.data().iter().any(|h| h.is_nan()));
    let (classic, big) = (dir.join("classic.tif"), dir.join("big.tif"));
    write_dem(&classic, HeightFormat::Tif, &dem).unwrap();
    write_bigtiff(&big, &dem).unwrap();
    let magic = |path: &Path| std::fs::read(path).unwrap()[..4].to_vec();
    assert_eq!(magic(&classic), b"II*\0", "classic TIFF, version 42");
    assert_eq!(magic(&big), b"II+\0", "BigTIFF, version 43");
    let (classic_info, big_info) = (gdalinfo(&classic), gdalinfo(&big));
    for key in ["size", "geoTransform", "coordinateSystem", "bands"] {
        assert_eq!(big_info[key], classic_info[key], "GDAL's {key}");
    }
    assert_eq!(big_info["bands"][0]["type"], "Float32");
    let big_cells = cells(&big, &dir);
    assert_eq!(big_cells, cells(&classic, &dir), "the same cells");
    let expected: Vec<u8> = dem
        .heights
        .data()
        .iter()
        .map(|&h| if h.is_nan() { -9999.0 } else { h })
        .flat_map(f32::to_le_bytes)
        .collect();
    assert_eq!(big_cells, expected, "the DEM's cells, nodata where missing");
    assert_eq!(
        read_dem(&big, None).unwrap().geo,
        dem.geo,
        "vkerode reads it back"
    );
}
