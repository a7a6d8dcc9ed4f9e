//! Heightmap files: round trips through every format, the real Jacksboro DEM, and
//! nodata filling.

mod common;

use std::path::{Path, PathBuf};

use tiff::encoder::{colortype::Gray32Float, TiffEncoder};
use tiff::tags::Tag;
use vkerode::terrain::formats::{read_dem, write_dem, Dem, HeightFormat};
use vkerode::terrain::image::CellSize;
use vkerode::terrain::nodata::fill_missing;
use vkerode::terrain::units::GridUnits;
use vkerode::terrain::Heightmap;

fn scratch(name: &str) -> PathBuf {
    common::scratch("heightmap-files", name)
}

/// Bathymetry to mountains, with values that do not round nicely.
fn sample_dem() -> Dem {
    let (w, h) = (37, 23);
    let data = (0..w * h)
        .map(|i| {
            let (x, y) = ((i % w) as f32, (i / w) as f32);
            -431.7 + 97.31 * x + 13.9 * y * y + (x * y).sin() * 3.3
        })
        .collect();
    Dem {
        geo: None,
        heights: Heightmap::new(w, h, data).unwrap(),
        nodata: None,
        units: "m".into(),
        cell_size: Some(CellSize { x: 30.0, y: 27.5 }),
    }
}

/// The heights' bit patterns, for bit-exact comparisons.
fn height_bits(dem: &Dem) -> Vec<u32> {
    dem.heights.data().iter().map(|h| h.to_bits()).collect()
}

#[test]
fn float32_tiff_round_trips_bit_exactly() {
    let dem = sample_dem();
    let path = scratch("tif").join("map.tif");
    write_dem(&path, HeightFormat::Tif, &dem).unwrap();
    let back = read_dem(&path, None).unwrap();
    assert_eq!(height_bits(&back), height_bits(&dem));
    assert_eq!((back.heights.width(), back.heights.height()), (37, 23));
}

/// Every height of `back` within one 16-bit step of the range of `dem`.
fn assert_within_one_step(dem: &Dem, back: &Dem) {
    let stats = dem.heights.stats();
    let step = (stats.max - stats.min) / 65535.0;
    let worst = dem
        .heights
        .data()
        .iter()
        .zip(back.heights.data())
        .map(|(a, b)| (a - b).abs())
        .fold(0.0f32, f32::max);
    assert!(worst <= step, "worst error {worst} for a step of {step}");
}

#[test]
fn png16_round_trips_within_one_quantisation_step() {
    let dem = sample_dem();
    let path = scratch("png").join("map.png");
    let files = write_dem(&path, HeightFormat::Png16, &dem).unwrap();
    assert_eq!(files.len(), 3, "the PNG, GDAL's .aux.xml and the sidecar");
    let back = read_dem(&path, None).unwrap();
    assert_within_one_step(&dem, &back);
    assert_eq!(back.units, "m");
    assert_eq!(back.cell_size, dem.cell_size);
}

#[test]
fn r16_round_trips_within_one_quantisation_step_and_reads_headerless_squares() {
    let dem = sample_dem();
    let path = scratch("r16").join("map.r16");
    let files = write_dem(&path, HeightFormat::R16, &dem).unwrap();
    assert_eq!(
        files.len(),
        4,
        "the r16, GDAL's .hdr and .aux.xml, and the sidecar"
    );
    let back = read_dem(&path, None).unwrap();
    assert_within_one_step(&dem, &back);
    assert_eq!(back.cell_size, dem.cell_size);

    // As Unity and Gaea write them: a square of little-endian u16, no sidecar.
    let plain = scratch("r16-plain").join("terrain.r16");
    let pixels: Vec<u16> = (0..33 * 33).map(|i| (i * 7) as u16).collect();
    std::fs::write(&plain, bytemuck::cast_slice(&pixels)).unwrap();
    let read = read_dem(&plain, None).unwrap();
    assert_eq!((read.heights.width(), read.heights.height()), (33, 33));
    assert_eq!(read.heights.at(5, 1), f32::from(pixels[33 + 5]));
}

#[test]
fn single_channel_openexr_round_trips_bit_exactly() {
    let mut dem = sample_dem();
    dem.heights.data_mut()[5] = f32::NAN;
    let path = scratch("exr").join("map.exr");
    let written = write_dem(&path, HeightFormat::Exr, &dem).unwrap();
    assert_eq!(
        written,
        [path.clone(), path.with_extension("exr.vrt")],
        "and GDAL's VRT"
    );
    let back = read_dem(&path, None).unwrap();
    assert_eq!(height_bits(&back), height_bits(&dem));
    assert_eq!(back.missing_cells(), 1);
}

#[test]
fn raw_float32_round_trips_bit_exactly_with_its_sidecar() {
    let dem = sample_dem();
    let path = scratch("raw").join("map.raw");
    write_dem(&path, HeightFormat::Raw, &dem).unwrap();
    // The sidecar gives the size; --width/--height are not needed.
    let back = read_dem(&path, None).unwrap();
    assert_eq!(height_bits(&back), height_bits(&dem));
    assert_eq!(back.cell_size, dem.cell_size);
}

#[test]
fn elevations_in_metres_survive_cell_units_and_fixed_point() {
    let dem = sample_dem();
    let units = GridUnits::metres(CellSize { x: 30.0, y: 27.5 }, 1.0);
    let scale = 1000.0;
    let cells = dem.heights.map(|e| units.to_kernel(e));
    let fixed = cells.to_fixed(scale).unwrap();
    let back = Heightmap::from_fixed(37, 23, &fixed, scale)
        .unwrap()
        .map(|h| units.from_kernel(h));
    // One fixed-point unit is 30 m / 1000 = 3 cm.
    for (a, b) in dem.heights.data().iter().zip(back.data()) {
        assert!((a - b).abs() <= 0.031, "{a} m came back as {b} m");
    }
}

#[test]
fn the_jacksboro_dem_reads_as_403_by_344_metres() {
    let dem = read_dem(Path::new("tests/data/jacksboro_fault_dem.tif"), None).unwrap();
    assert_eq!((dem.heights.width(), dem.heights.height()), (403, 344));
    assert_eq!(dem.missing_cells(), 0);
    let stats = dem.heights.stats();
    assert!((235.0..237.0).contains(&stats.min), "min {}", stats.min);
    assert!((1075.0..1077.0).contains(&stats.max), "max {}", stats.max);
}

/// A 6 x 5 float32 GeoTIFF with nodata -9999 in two cells and NaN in one.
pub fn write_nodata_tiff(path: &Path) -> Vec<f32> {
    let nodata = -9999.0f32;
    let mut data: Vec<f32> = (0..30).map(|i| 100.0 + i as f32).collect();
    data[7] = nodata;
    data[8] = nodata;
    data[22] = f32::NAN;
    let file = std::fs::File::create(path).unwrap();
    let mut encoder = TiffEncoder::new(file).unwrap();
    let mut image = encoder.new_image::<Gray32Float>(6, 5).unwrap();
    image.encoder().write_tag(Tag::GdalNodata, "-9999").unwrap();
    image.write_data(&data).unwrap();
    data
}

#[test]
fn nodata_and_nan_cells_are_filled_from_neighbours_and_written_back_as_nodata() {
    let dir = scratch("nodata");
    let input = dir.join("holes.tif");
    let original = write_nodata_tiff(&input);
    let dem = read_dem(&input, None).unwrap();
    assert_eq!(dem.nodata, Some(-9999.0));
    assert_eq!(dem.missing_cells(), 3);

    let mut filled = dem.heights.clone();
    let mask = fill_missing(&mut filled);
    assert_eq!(mask.iter().filter(|&&m| m).count(), 3);
    // Cell 7 = (1, 1): its known neighbours are cells 0, 1, 2, 6, 12, 13, 14.
    let expected = [0, 1, 2, 6, 12, 13, 14]
        .iter()
        .map(|&i| original[i])
        .sum::<f32>()
        / 7.0;
    assert!(
        (filled.at(1, 1) - expected).abs() < 1e-3,
        "{} vs {expected}",
        filled.at(1, 1)
    );
    assert!(filled.data().iter().all(|h| h.is_finite()));

    let output = dir.join("written.tif");
    write_dem(&output, HeightFormat::Tif, &dem).unwrap();
    let back = read_dem(&output, None).unwrap();
    assert_eq!(back.nodata, Some(-9999.0));
    let missing: Vec<usize> = (0..30)
        .filter(|&i| back.heights.data()[i].is_nan())
        .collect();
    assert_eq!(missing, vec![7, 8, 22]);
}

#[test]
fn a_sidecar_beside_another_version_of_its_file_is_refused() {
    // Run A writes map.png and its sidecar; run B is killed after its PNG was renamed
    // into place but before its sidecar: B's pixels beside A's range would decode wrong.
    let dir = scratch("mixed-pair");
    let path = dir.join("map.png");
    let run_a = sample_dem();
    write_dem(&path, HeightFormat::Png16, &run_a).unwrap();
    let run_b = Dem {
        heights: run_a.heights.map(|h| h + (h * 0.01).sin() * 500.0),
        ..run_a.clone()
    };
    let b_path = dir.join("b.png");
    write_dem(&b_path, HeightFormat::Png16, &run_b).unwrap();
    std::fs::copy(&b_path, &path).unwrap();
    let Err(error) = read_dem(&path, None) else {
        panic!("the mixed pair was read");
    };
    let error = error.to_string();
    assert!(error.contains("map.png.json"), "{error}");
    assert!(error.contains("mixed from two runs"), "{error}");
    // Each whole pair still reads.
    assert_within_one_step(&run_b, &read_dem(&b_path, None).unwrap());
}

/// A fuzz target's input (its first byte picks the format) saved as `name`: refused as
/// corrupt.
fn assert_refused_as_corrupt(found: &str, name: &str) {
    let found = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/regressions/heightmap")
        .join(found);
    let bytes = std::fs::read(found).unwrap();
    let path = scratch(&format!("claims-{name}")).join(name);
    std::fs::write(&path, &bytes[1..]).unwrap();
    let Err(error) = read_dem(&path, None) else {
        panic!("{name} was read");
    };
    assert!(error.to_string().contains("corrupt"), "{error}");
}

#[test]
fn a_header_claiming_more_pixels_than_its_file_can_hold_is_refused_before_allocating() {
    // Found by the heightmap fuzz target: 200 bytes of PNG whose header claims
    // 8 x 218,103,816 pixels, which the reader used to allocate (3.5 GB). The fuzz build
    // skips CRC checks; this copy has its CRCs fixed, so the size check is what refuses.
    assert_refused_as_corrupt("png-header-claims-3.5-gb-crc-fixed", "map.png");
    // And an OpenEXR header whose layer would take 6 GB.
    assert_refused_as_corrupt("exr-layer-claims-6-gb", "map.exr");
}

#[test]
fn gdals_header_never_replaces_a_file_vkerode_did_not_write() {
    // GDAL finds an ESRI header by the data file's name with `.hdr` for its extension:
    // a name the user did not give, which may hold another dataset's ENVI header.
    let dir = scratch("foreign-hdr");
    let envi = "ENVI\nsamples = 4\nlines = 4\n";
    std::fs::write(dir.join("map.hdr"), envi).unwrap();
    let path = dir.join("map.raw");
    let error = write_dem(&path, HeightFormat::Raw, &sample_dem())
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("map.hdr: exists and is not a header vkerode wrote"),
        "{error}"
    );
    assert!(!path.exists(), "refused before any data was written");
    assert_eq!(std::fs::read_to_string(dir.join("map.hdr")).unwrap(), envi);
    // Its own header it replaces, writing the map again.
    std::fs::remove_file(dir.join("map.hdr")).unwrap();
    write_dem(&path, HeightFormat::Raw, &sample_dem()).unwrap();
    write_dem(&path, HeightFormat::Raw, &sample_dem()).unwrap();
}
