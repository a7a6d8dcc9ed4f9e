//! `vkerode erode --input` and `vkerode convert` on real and broken files.

mod common;

use std::path::{Path, PathBuf};

use common::{assert_clean_success, assert_erode_outputs, stderr, vkerode};

use tiff::encoder::{colortype, TiffEncoder};
use tiff::tags::Tag;
use vkerode::terrain::formats::read_dem;

const JACKSBORO: &str = "tests/data/jacksboro_fault_dem.tif";

fn scratch(name: &str) -> PathBuf {
    common::scratch("cli-files", name)
}

#[test]
fn the_jacksboro_dem_erodes_end_to_end_in_metres_with_pictures() {
    let dir = scratch("jacksboro");
    let out = dir.join("out");
    let result = vkerode(&[
        "erode",
        "--input",
        JACKSBORO,
        "--cell-size",
        "74.5,92.6",
        "--droplets",
        "60000",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_clean_success(&result);
    assert_erode_outputs(&out);
    let input = read_dem(Path::new(JACKSBORO), None).unwrap();
    let before = read_dem(&out.join("before.tif"), None).unwrap();
    let after = read_dem(&out.join("after.tif"), None).unwrap();
    // The exported "before" is the input in metres again, to one fixed-point unit
    // (74.5 m / 1000).
    for (a, b) in input.heights.data().iter().zip(before.heights.data()) {
        assert!((a - b).abs() <= 0.0746, "{a} m exported as {b} m");
    }
    // Erosion followed the drainage: valley floors (D8 channels) gained sediment
    // from the slopes above them, by metres, not by rounding.
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    let change = &report["change"];
    let channel = change["channel_mean_change"].as_f64().unwrap() * 74.5;
    let hillslope = change["hillslope_mean_change"].as_f64().unwrap() * 74.5;
    assert!(
        channel > 1.0 && hillslope < -0.1,
        "channels {channel} m, hillslopes {hillslope} m"
    );
    let moved = input
        .heights
        .data()
        .iter()
        .zip(after.heights.data())
        .filter(|(a, b)| (*a - *b).abs() > 1.0)
        .count();
    assert!(
        moved * 4 > input.heights.data().len(),
        "only {moved} cells changed by over a metre"
    );
}

#[test]
fn nodata_cells_are_reported_filled_and_written_back_as_nodata() {
    let dir = scratch("nodata");
    let input = dir.join("holes.tif");
    let nodata = -9999.0f32;
    let mut data: Vec<f32> = (0..48 * 40)
        .map(|i| 500.0 + (i % 48) as f32 * 2.0 + (i / 48) as f32)
        .collect();
    for i in [100, 101, 102, 148, 149, 150, 1000] {
        data[i] = nodata;
    }
    data[1500] = f32::NAN;
    let mut encoder = TiffEncoder::new(std::fs::File::create(&input).unwrap()).unwrap();
    let mut image = encoder.new_image::<colortype::Gray32Float>(48, 40).unwrap();
    image.encoder().write_tag(Tag::GdalNodata, "-9999").unwrap();
    image.write_data(&data).unwrap();

    let erode = |out: &Path, extra: &[&str]| {
        let mut args = vec![
            "erode",
            "--input",
            input.to_str().unwrap(),
            "--cell-size",
            "10",
            "--droplets",
            "500",
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let result = vkerode(&args);
        assert_clean_success(&result);
        result
    };
    let out = dir.join("out");
    let result = erode(&out, &["--format", "raw"]);
    let stdout = String::from_utf8_lossy(&result.stdout);
    assert!(stdout.contains("8 cells have no data"), "{stdout}");
    let after = read_dem(&out.join("after.raw"), None).unwrap();
    assert_eq!(after.nodata, Some(nodata));
    let missing: Vec<usize> = (0..data.len())
        .filter(|&i| after.heights.data()[i].is_nan())
        .collect();
    assert_eq!(missing, vec![100, 101, 102, 148, 149, 150, 1000, 1500]);
    assert!(after
        .heights
        .data()
        .iter()
        .filter(|h| !h.is_nan())
        .all(|h| h.is_finite()));

    // GDAL, the independent judge: every TIFF states its unit, and run.json's range is
    // that of the cells the map has, not of the filled ones.
    let tif_out = dir.join("tif-out");
    erode(&tif_out, &["--no-images"]);
    for file in ["before.tif", "after.tif", "erosion.tif"] {
        let info = common::gdalinfo(&tif_out.join(file));
        assert_eq!(info["bands"][0]["unit"], "m", "{file}: {info}");
    }
    let stats = common::gdal(
        "gdalinfo",
        &[
            "-json",
            "-stats",
            tif_out.join("after.tif").to_str().unwrap(),
        ],
    );
    let stats: serde_json::Value = serde_json::from_slice(&stats.stdout).unwrap();
    let band = &stats["bands"][0];
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(tif_out.join("run.json")).unwrap()).unwrap();
    for (ours, gdal) in [("min_after", "minimum"), ("max_after", "maximum")] {
        let (ours_m, gdal_m) = (
            report["change"][ours].as_f64().unwrap(),
            band[gdal].as_f64().unwrap(),
        );
        // One fixed-point step of the kernel (10 m / 1000) apart at most.
        assert!(
            (ours_m - gdal_m).abs() <= 0.011,
            "{ours}: {ours_m} m, GDAL {gdal_m} m"
        );
    }
}

#[test]
fn convert_turns_a_dem_into_png16_and_back() {
    let dir = scratch("convert");
    let png = dir.join("jacksboro.png");
    assert_clean_success(&vkerode(&[
        "convert",
        JACKSBORO,
        png.to_str().unwrap(),
        "--cell-size",
        "74.5,92.6",
    ]));
    let tif = dir.join("back.tif");
    assert_clean_success(&vkerode(&[
        "convert",
        png.to_str().unwrap(),
        tif.to_str().unwrap(),
    ]));
    let input = read_dem(Path::new(JACKSBORO), None).unwrap();
    let back = read_dem(&tif, None).unwrap();
    let stats = input.heights.stats();
    let step = (stats.max - stats.min) / 65535.0;
    for (a, b) in input.heights.data().iter().zip(back.heights.data()) {
        assert!((a - b).abs() <= step * 1.001, "{a} vs {b}");
    }
}

/// A file that vkerode must refuse: the message names the file and `problem`, the exit
/// status is 1, and neither an output folder nor an output file appears.
fn assert_refused(input: &Path, extra: &[&str], problem: &str) {
    let dir = input.parent().unwrap();
    let out = dir.join("out");
    let mut args = vec!["erode", "--input", input.to_str().unwrap()];
    args.extend_from_slice(extra);
    args.extend(["--out", out.to_str().unwrap()]);
    let result = vkerode(&args);
    let err = stderr(&result);
    assert_eq!(
        result.status.code(),
        Some(1),
        "{input:?} should fail: {err}"
    );
    assert!(
        err.contains(input.to_str().unwrap()),
        "the message names the file: {err}"
    );
    assert!(err.contains(problem), "expected {problem:?} in: {err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(!out.exists(), "an output folder was left behind");

    let converted = dir.join("converted.tif");
    let mut convert = vec![
        "convert",
        input.to_str().unwrap(),
        converted.to_str().unwrap(),
    ];
    convert.extend_from_slice(extra);
    let result = vkerode(&convert);
    let err = stderr(&result);
    assert_eq!(
        result.status.code(),
        Some(1),
        "convert of {input:?} should fail: {err}"
    );
    assert!(
        err.contains(problem),
        "convert: expected {problem:?} in: {err}"
    );
    assert!(!converted.exists(), "convert left a file behind");
}

fn write_tiff<C: colortype::ColorType>(path: &Path, w: u32, h: u32, data: &[C::Inner])
where
    [C::Inner]: tiff::encoder::TiffValue,
{
    let mut encoder = TiffEncoder::new(std::fs::File::create(path).unwrap()).unwrap();
    encoder.write_image::<C>(w, h, data).unwrap();
}

fn write_png(path: &Path, colour: png::ColorType, w: u32, h: u32, data: &[u8]) {
    let mut encoder = png::Encoder::new(std::fs::File::create(path).unwrap(), w, h);
    encoder.set_color(colour);
    encoder.set_depth(png::BitDepth::Eight);
    encoder
        .write_header()
        .unwrap()
        .write_image_data(data)
        .unwrap();
}

fn truncate(path: &Path, keep: usize) {
    let bytes = std::fs::read(path).unwrap();
    std::fs::write(path, &bytes[..keep.min(bytes.len())]).unwrap();
}

#[test]
fn an_empty_file_is_refused() {
    let path = scratch("empty").join("empty.tif");
    std::fs::write(&path, b"").unwrap();
    assert_refused(&path, &[], "the file is empty");
}

#[test]
fn a_truncated_tiff_is_refused() {
    let path = scratch("truncated-tiff").join("cut.tif");
    write_tiff::<colortype::Gray32Float>(&path, 64, 64, &vec![1.0f32; 64 * 64]);
    truncate(&path, 5000);
    assert_refused(&path, &[], "the file ends early (truncated?)");
}

#[test]
fn a_truncated_png_is_refused() {
    let path = scratch("truncated-png").join("cut.png");
    let noise: Vec<u8> = (0..64 * 64u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 24) as u8)
        .collect();
    write_png(&path, png::ColorType::Grayscale, 64, 64, &noise);
    truncate(&path, 900);
    assert_refused(&path, &[], "truncated");
}

#[test]
fn an_rgb_png_is_refused() {
    let path = scratch("rgb-png").join("colour.png");
    write_png(&path, png::ColorType::Rgb, 16, 16, &[90u8; 16 * 16 * 3]);
    assert_refused(&path, &[], "needs a grayscale PNG");
}

#[test]
fn a_multi_band_tiff_is_refused() {
    let path = scratch("rgb-tiff").join("bands.tif");
    write_tiff::<colortype::RGB8>(&path, 16, 16, &[7u8; 16 * 16 * 3]);
    assert_refused(&path, &[], "has 3 bands");
}

#[test]
fn an_unsupported_sample_format_is_refused() {
    let path = scratch("u64-tiff").join("wide.tif");
    write_tiff::<colortype::Gray64>(&path, 16, 16, &[1u64; 16 * 16]);
    assert_refused(&path, &[], "unsupported sample format uint64");
}

#[test]
fn a_two_by_two_image_is_refused() {
    let path = scratch("tiny").join("tiny.tif");
    write_tiff::<colortype::Gray32Float>(&path, 2, 2, &[1.0f32; 4]);
    assert_refused(&path, &[], "needs at least 4 x 4");
}

#[test]
fn colour_and_truncated_pfm_files_are_refused_and_pfm_is_not_written() {
    let dir = scratch("pfm");
    let colour = dir.join("colour.pfm");
    let mut bytes = b"PF\n4 4\n-1.0\n".to_vec();
    bytes.extend(std::iter::repeat_n(0u8, 4 * 4 * 3 * 4));
    std::fs::write(&colour, &bytes).unwrap();
    assert_refused(&colour, &[], "three-channel colour PFM");
    let cut = dir.join("cut.pfm");
    let mut bytes = b"Pf\n8 8\n-1.0\n".to_vec();
    bytes.extend(std::iter::repeat_n(0u8, 8 * 8 * 4 - 5));
    std::fs::write(&cut, &bytes).unwrap();
    assert_refused(
        &cut,
        &[],
        "truncated: its header says 8 x 8 cells (256 bytes), but 251",
    );
    // Read only: no output is taken to be a PFM.
    let out = dir.join("out.pfm");
    let result = vkerode(&["convert", JACKSBORO, out.to_str().unwrap()]);
    assert_eq!(result.status.code(), Some(1));
    assert!(stderr(&result).contains("cannot tell the format from the name"));
    assert!(!out.exists());
}

#[test]
fn a_raw_file_of_the_wrong_size_is_refused() {
    let path = scratch("raw-size").join("heights.raw");
    std::fs::write(&path, vec![0u8; 4 * 30 * 30 - 4]).unwrap();
    assert_refused(&path, &["--width", "30", "--height", "30"], "need 3600");
}

#[test]
fn heights_past_the_fixed_point_range_are_refused_with_a_scale_that_fits() {
    let path = scratch("overflow").join("tall.tif");
    let mut data = vec![100.0f32; 32 * 32];
    data[77] = 5.0e6;
    write_tiff::<colortype::Gray32Float>(&path, 32, 32, &data);
    let out = path.parent().unwrap().join("out");
    let result = vkerode(&[
        "erode",
        "--input",
        path.to_str().unwrap(),
        "--cell-size=1",
        "--out",
        out.to_str().unwrap(),
    ]);
    let err = stderr(&result);
    assert_eq!(result.status.code(), Some(1), "{err}");
    assert!(
        err.contains(path.to_str().unwrap()),
        "names the file: {err}"
    );
    assert!(
        err.contains("the largest height, 5000000") && err.contains("a scale of at most"),
        "{err}"
    );
    assert!(!out.exists());
}

#[test]
fn bad_sidecar_values_are_refused_like_bad_flags() {
    let cases = [
        (
            "cell-zero",
            r#""format": "raw-f32le", "cell_size": [0.0, 10.0]"#,
            "cell_size: 0 is not a cell size from 1e-6 to 1e6 metres",
        ),
        (
            "cell-negative",
            r#""format": "raw-f32le", "cell_size": [-5.0, 5.0]"#,
            "cell_size: -5 is not a cell size",
        ),
        (
            "min-above-max",
            r#""format": "raw-f32le", "min": 9.0, "max": 1.0"#,
            "min 9 and max 1 must be finite with min <= max",
        ),
        (
            "wrong-format",
            r#""format": "png16""#,
            "says format \"png16\", but the file beside it is \"raw-f32le\"",
        ),
    ];
    for (name, fields, problem) in cases {
        let path = scratch(&format!("sidecar-{name}")).join("map.raw");
        let heights = vec![3.0f32; 16 * 16];
        std::fs::write(&path, bytemuck::cast_slice(&heights)).unwrap();
        let sidecar = format!(r#"{{"width": 16, "height": 16, "units": "m", {fields}}}"#);
        std::fs::write(path.with_file_name("map.raw.json"), sidecar).unwrap();
        assert_refused(&path, &[], problem);
    }
}

#[test]
fn a_vertical_scale_that_rounds_the_relief_away_is_refused() {
    let path = scratch("vanishing").join("flat.raw");
    let heights: Vec<f32> = (0..16 * 16).map(|i| 100.0 + (i % 16) as f32).collect();
    std::fs::write(&path, bytemuck::cast_slice(&heights)).unwrap();
    let out = path.parent().unwrap().join("out");
    let result = vkerode(&[
        "erode",
        "--input",
        path.to_str().unwrap(),
        "--width",
        "16",
        "--height",
        "16",
        "--cell-size=1",
        "--vertical-scale",
        "0.00000001",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(result.status.code(), Some(1));
    assert!(
        stderr(&result).contains("vanishes in the fixed point"),
        "{}",
        stderr(&result)
    );
    assert!(!out.exists(), "no output");
}

#[test]
fn an_absurd_sidecar_cell_size_is_refused_naming_the_file_and_key() {
    for (name, cell) in [("huge", "1e30"), ("tiny", "1e-30")] {
        let path = scratch(&format!("sidecar-cell-{name}")).join("map.raw");
        let heights: Vec<f32> = (0..16 * 16).map(|i| 100.0 + (i % 16) as f32).collect();
        std::fs::write(&path, bytemuck::cast_slice(&heights)).unwrap();
        let sidecar = format!(
            r#"{{"width": 16, "height": 16, "units": "m", "format": "raw-f32le", "cell_size": [{cell}, {cell}]}}"#
        );
        let json = path.with_file_name("map.raw.json");
        std::fs::write(&json, sidecar).unwrap();
        // Named by the sidecar's path (which contains the map's) and its key, not
        // blamed on --vertical-scale or --scale.
        assert_refused(&path, &[], "map.raw.json: cell_size:");
        assert_refused(&path, &[], "is not a cell size from 1e-6 to 1e6 metres");
    }
    let path = scratch("flag-cell-huge").join("map.raw");
    std::fs::write(&path, bytemuck::cast_slice(&[3.0f32; 16 * 16])).unwrap();
    let out = path.parent().unwrap().join("out");
    let result = vkerode(&[
        "erode",
        "--input",
        path.to_str().unwrap(),
        "--width=16",
        "--height=16",
        "--cell-size=1e30",
        "--out",
        out.to_str().unwrap(),
    ]);
    let err = stderr(&result);
    assert_eq!(result.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--cell-size") && err.contains("not a cell size from"),
        "{err}"
    );
    assert!(!out.exists());
}

#[test]
fn a_tiny_fitting_scale_is_printed_in_digits_not_rounded_to_zero() {
    let path = scratch("tiny-scale").join("map.raw");
    let heights: Vec<f32> = (0..16 * 16).map(|i| 100.0 + (i % 16) as f32).collect();
    std::fs::write(&path, bytemuck::cast_slice(&heights)).unwrap();
    let out = path.parent().unwrap().join("out");
    let result = vkerode(&[
        "erode",
        "--input",
        path.to_str().unwrap(),
        "--width=16",
        "--height=16",
        "--cell-size=1",
        "--vertical-scale=1e30",
        "--out",
        out.to_str().unwrap(),
    ]);
    let err = stderr(&result);
    assert_eq!(result.status.code(), Some(1), "{err}");
    // 2^30 / 115e30 x 0.999.
    assert!(
        err.contains("a scale of at most 9.328e-24 would fit"),
        "{err}"
    );
    assert!(!err.contains("0.000000"), "{err}");
    assert!(!out.exists());
}

/// Runs vkerode, killing it if it has not exited within `seconds`: a read that blocks
/// (a FIFO) or never ends (/dev/zero) fails the test instead of hanging it.
fn vkerode_within(args: &[&str], seconds: u64) -> std::process::Output {
    let mut child = common::vkerode_command(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the vkerode binary runs");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(seconds);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("vkerode {args:?} still ran after {seconds} s");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

fn mkfifo(path: &Path) {
    let _ = std::fs::remove_file(path);
    let made = std::process::Command::new("mkfifo").arg(path).status();
    assert!(made.unwrap().success(), "mkfifo {path:?}");
}

#[test]
fn inputs_that_are_not_regular_files_are_refused_before_they_are_opened() {
    let dir = scratch("not-files");
    let fifo = dir.join("fifo.tif");
    mkfifo(&fifo);
    let toml = dir.join("fifo.toml");
    mkfifo(&toml);
    let csv = dir.join("points.csv");
    mkfifo(&csv);
    // A raw map whose sidecar is a FIFO.
    let raw = dir.join("map.raw");
    std::fs::write(&raw, bytemuck::cast_slice(&[3.0f32; 16 * 16])).unwrap();
    mkfifo(&dir.join("map.raw.json"));
    let out = dir.join("out");
    let (fifo, toml, csv, raw, out) = (
        fifo.to_str().unwrap(),
        toml.to_str().unwrap(),
        csv.to_str().unwrap(),
        raw.to_str().unwrap(),
        out.to_str().unwrap(),
    );
    let folder = dir.to_str().unwrap();
    let converted = dir.join("converted.tif");
    let converted = converted.to_str().unwrap();
    let cases: [(&[&str], &str, &str); 9] = [
        (&["erode", "--input", fifo, "--out", out], fifo, "a FIFO"),
        (&["convert", fifo, converted], fifo, "a FIFO"),
        (
            &["erode", "--input", folder, "--out", out],
            folder,
            "a folder",
        ),
        (
            &["erode", "--input", raw, "--out", out],
            "map.raw.json",
            "a FIFO",
        ),
        (&["sweep", toml], toml, "a FIFO"),
        (&["strategies", toml, "--out", out], toml, "a FIFO"),
        (&["plot", csv, "--x", "size", "--out", out], csv, "a FIFO"),
        (
            &["convert", "/dev/zero", converted],
            "/dev/zero",
            "a device",
        ),
        (
            &["erode", "--input", "/dev/zero", "--out", out],
            "/dev/zero",
            "a device",
        ),
    ];
    for (args, named, what) in cases {
        let result = vkerode_within(args, 5);
        let err = stderr(&result);
        assert_eq!(result.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains(named) && err.contains(&format!("{what}, not a regular file")),
            "{args:?}: {err}"
        );
        assert!(!Path::new(out).exists() && !Path::new(converted).exists());
    }
}

#[test]
fn two_outputs_that_would_share_gdal_s_header_are_refused_and_an_input_is_never_an_output() {
    let dir = scratch("shared-header");
    let tif = dir.join("t.tif");
    std::fs::copy(JACKSBORO, &tif).unwrap();
    let (raw, r16) = (dir.join("dem.raw"), dir.join("dem.r16"));
    let convert = |to: &Path| {
        let (tif, to) = (tif.to_str().unwrap(), to.to_str().unwrap());
        vkerode(&["convert", tif, to, "--force"])
    };
    assert_clean_success(&convert(&raw));
    assert_clean_success(&convert(&raw)); // its own header, rewritten
    let refused = convert(&r16);
    let err = common::stderr(&refused);
    assert_eq!(refused.status.code(), Some(1), "{err}");
    assert!(
        err.contains("is dem.raw's, laid out otherwise: GDAL reads one .hdr per name stem"),
        "{err}"
    );
    assert!(!r16.exists(), "nothing written");
    let band = &common::gdalinfo(&raw)["bands"][0];
    assert_eq!(band["type"], "Float32", "dem.raw is still read as itself");
    // A file of the same layout shares the header, and both read as themselves.
    let r32 = dir.join("dem.r32");
    assert_clean_success(&convert(&r32));
    for file in [&raw, &r32] {
        assert_eq!(common::gdalinfo(file)["bands"][0]["type"], "Float32");
    }
    let header = std::fs::read_to_string(dir.join("dem.hdr")).unwrap();
    assert!(
        header.contains("VKERODE_DATA_FILE dem.raw\nVKERODE_DATA_FILE dem.r32\n"),
        "{header}"
    );
    assert_eq!(
        convert(&r16).status.code(),
        Some(1),
        "refused while dem.raw is there"
    );
    std::fs::remove_file(&r32).unwrap();
    // Once dem.raw is gone, its old header may be replaced.
    std::fs::remove_file(&raw).unwrap();
    assert_clean_success(&convert(&r16));
    assert_eq!(common::gdalinfo(&r16)["bands"][0]["type"], "UInt16");

    // An input's own sidecar and GDAL header are inputs too.
    for companion in ["dem.r16.json", "dem.hdr", "dem.r16.aux.xml"] {
        let over = vkerode(&[
            "convert",
            r16.to_str().unwrap(),
            dir.join(companion).to_str().unwrap(),
            "--format",
            "tif",
        ]);
        assert_eq!(over.status.code(), Some(1), "{companion}");
    }
    assert!(read_dem(&r16, None).is_ok(), "dem.r16 still reads");
    // A FIFO where a companion goes is found before the data is replaced.
    let fifo_home = dir.join("fifo-home");
    std::fs::create_dir(&fifo_home).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(fifo_home.join("x.raw.json"))
        .status();
    assert!(made.unwrap().success());
    let blocked = vkerode(&[
        "convert",
        tif.to_str().unwrap(),
        fifo_home.join("x.raw").to_str().unwrap(),
    ]);
    assert_eq!(blocked.status.code(), Some(1));
    assert!(
        common::stderr(&blocked).contains("is a FIFO"),
        "{}",
        common::stderr(&blocked)
    );
    assert!(!fifo_home.join("x.raw").exists(), "no data written");
    // An output that cannot be written is refused before the terrain is made.
    let nowhere = dir.join("no-such-folder/x.tif");
    let early = vkerode(&[
        "terrain",
        "--cpu",
        "--size",
        "64",
        nowhere.to_str().unwrap(),
    ]);
    assert_eq!(early.status.code(), Some(1));
    assert!(!common::stderr(&early).contains("mean slope"));
    assert!(!String::from_utf8_lossy(&early.stdout).contains("mean slope"));

    let before = std::fs::read(&tif).unwrap();
    let same = vkerode(&[
        "convert",
        tif.to_str().unwrap(),
        dir.join("./t.tif").to_str().unwrap(),
    ]);
    assert_eq!(same.status.code(), Some(1));
    assert!(
        common::stderr(&same).contains("which this command reads"),
        "{}",
        common::stderr(&same)
    );
    assert_eq!(std::fs::read(&tif).unwrap(), before);
}

/// Writes a change map of `depth` (half the cells eroded by it, half given half of it
/// back) as erode would, into `dir/name/erosion.tif`; returns the folder.
fn change_map_folder(dir: &Path, name: &str, depth: f32) -> PathBuf {
    change_map_in(dir, name, depth, None)
}

/// [`change_map_folder`]'s map, in metres on cells of `metres` where given.
fn change_map_in(dir: &Path, name: &str, depth: f32, metres: Option<f32>) -> PathBuf {
    use vkerode::terrain::formats::{write_dem, Dem, GeoTags, HeightFormat};
    use vkerode::terrain::image::CellSize;
    let folder = dir.join(name);
    std::fs::create_dir_all(&folder).unwrap();
    let changes = (0..40 * 30)
        .map(|i| if i % 2 == 0 { -depth } else { depth / 2.0 })
        .collect();
    let map = Dem {
        heights: vkerode::terrain::Heightmap::new(40, 30, changes).unwrap(),
        nodata: None,
        units: if metres.is_some() { "m" } else { "cells" }.into(),
        cell_size: None,
        geo: metres.map(|x| GeoTags::of_cell_size(CellSize { x, y: x })),
    };
    write_dem(&folder.join("erosion.tif"), HeightFormat::Tif, &map).unwrap();
    folder
}

fn png_width(path: &Path) -> u32 {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    decoder.read_info().unwrap().info().width
}

#[test]
fn maps_sets_change_maps_side_by_side_on_one_scale_only_where_their_ranges_allow() {
    let dir = scratch("maps");
    let gentle = change_map_folder(&dir, "gentle", 1.0);
    let close = change_map_folder(&dir, "close", 2.0);
    let deep = change_map_folder(&dir, "deep", 50.0);
    let arg = |p: &Path| p.to_str().unwrap().to_string();
    let run = |args: &[String]| vkerode(&args.iter().map(String::as_str).collect::<Vec<_>>());

    // Titled by their folders; near ranges share one scale.
    let shared = dir.join("shared.png");
    let together = run(&["maps".into(), arg(&gentle), arg(&close), arg(&shared)]);
    assert_clean_success(&together);
    let said = String::from_utf8_lossy(&together.stdout).into_owned();
    assert!(
        said.contains("gentle: change -1.00 to +0.500 h.u."),
        "{said}"
    );
    assert!(said.contains("close: change -2.00 to +1.00 h.u."), "{said}");
    assert!(
        said.contains("h.u.: height units (one = one cell's width)"),
        "the short unit is said in words: {said}"
    );
    assert!(said.contains("one colour scale for every map"), "{said}");
    let alone = dir.join("alone.png");
    assert_clean_success(&run(&[
        "maps".into(),
        arg(&gentle),
        arg(&gentle),
        arg(&alone),
    ]));
    let three = dir.join("three.png");
    let args = [
        "maps".into(),
        arg(&gentle),
        arg(&close),
        arg(&deep),
        arg(&three),
    ];
    assert_clean_success(&run(&args));
    assert!(
        png_width(&three) > png_width(&shared) * 4 / 3,
        "three panels are wider than two"
    );

    // Far ranges keep their own scales, and the labels given are the titles.
    let apart = dir.join("apart.png");
    let args = [
        "maps".into(),
        arg(&gentle),
        arg(&deep.join("erosion.tif")),
        arg(&apart),
        "--label".into(),
        "droplets".into(),
        "--label".into(),
        "pipes".into(),
    ];
    let separate = run(&args);
    assert_clean_success(&separate);
    let said = String::from_utf8_lossy(&separate.stdout).into_owned();
    assert!(said.contains("droplets: change -1.00"), "{said}");
    assert!(said.contains("pipes: change -50.0"), "{said}");
    assert!(said.contains("each map on its own colour scale"), "{said}");

    // A DEM's change map is told in its metres.
    let dem = change_map_in(&dir, "dem", 3.0, Some(30.0));
    let in_metres = dir.join("metres.png");
    let metres = run(&["maps".into(), arg(&dem), arg(&dem), arg(&in_metres)]);
    assert_clean_success(&metres);
    let said = String::from_utf8_lossy(&metres.stdout).into_owned();
    assert!(said.contains("dem: change -3.00 to +1.50 m,"), "{said}");

    // Refused, with nothing written: maps measured differently (cells beside a DEM's
    // metres), a label short, an OUTPUT that is not a PNG.
    let mixed = dir.join("mixed.png");
    let refused = run(&["maps".into(), arg(&gentle), arg(&dem), arg(&mixed)]);
    assert!(!refused.status.success());
    let message = stderr(&refused);
    assert!(
        message.contains(&arg(&dem.join("erosion.tif"))) && message.contains("measured alike"),
        "{message}"
    );
    assert!(!mixed.exists());
    let short = run(&[
        "maps".into(),
        arg(&gentle),
        arg(&close),
        arg(&mixed),
        "--label".into(),
        "one".into(),
    ]);
    assert!(stderr(&short).contains("--label given 1 times for 2 INPUTs"));
    let not_png = dir.join("maps.tif");
    let wrong = run(&["maps".into(), arg(&gentle), arg(&close), arg(&not_png)]);
    assert!(
        stderr(&wrong).contains("name it .png"),
        "{}",
        stderr(&wrong)
    );
    assert!(!mixed.exists() && !not_png.exists());
}
