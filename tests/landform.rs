//! Landform figures and pictures of a DEM whose cells are not square: the test DEM at
//! its 74.5 m x 92.6 m cells. GDAL's `gdaldem slope` (Horn's method) judges the slope;
//! the pictures must show the ground at its true aspect. pysheds, an independent
//! implementation, judges the depression filling and the channels
//! (tests/data/jacksboro_pysheds.json, made by tools/fixtures/pysheds_landform.py);
//! pysheds, scikit-image and scipy count the sinks, flats and depressions
//! (tests/data/jacksboro_depressions.json, made by tools/fixtures/depressions.py).

mod common;

use std::path::{Path, PathBuf};

use common::{assert_clean_success, assert_erode_outputs, gdal, vkerode};
use vkerode::studies::equivalence::margin_of;
use vkerode::terrain::drainage::{Drainage, FlatRouting};
use vkerode::terrain::flood::{depressions, fill_depressions, is_edge};
use vkerode::terrain::formats::read_dem;
use vkerode::terrain::image::{horn_gradient, CellSize};
use vkerode::terrain::metrics::Landform;
use vkerode::terrain::units::LengthUnit;
use vkerode::terrain::Heightmap;

const DEM: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/jacksboro_fault_dem.tif"
);
/// The cell's sides in metres, as GDAL takes them (in double precision).
const DX: f64 = 74.5;
const DY: f64 = 92.6;
const CELL: CellSize = CellSize {
    x: DX as f32,
    y: DY as f32,
};
const COLUMNS: usize = 403;
const ROWS: usize = 344;

/// The test DEM placed in UTM zone 14N at its true cells, origin at (0, 0).
fn placed_dem(dir: &Path) -> PathBuf {
    let path = dir.join("placed.tif");
    let (east, north) = (
        (COLUMNS as f64 * DX).to_string(),
        (ROWS as f64 * DY).to_string(),
    );
    gdal(
        "gdal_translate",
        &[
            "-q",
            "-a_srs",
            "EPSG:32614",
            "-a_ullr",
            "0",
            &north,
            &east,
            "0",
            DEM,
            path.to_str().unwrap(),
        ],
    );
    let info: serde_json::Value =
        serde_json::from_slice(&gdal("gdalinfo", &["-json", path.to_str().unwrap()]).stdout)
            .unwrap();
    let transform: Vec<f64> = info["geoTransform"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert!(
        (transform[1] - DX).abs() < 1e-9 && (transform[5] + DY).abs() < 1e-9,
        "GDAL's pixel size: {transform:?}"
    );
    path
}

/// `gdaldem slope` of `dem` as tangents (its percent over 100), row-major, NaN where it
/// gives none: GDAL leaves the edge cells out.
fn gdal_slopes(dem: &Path, dir: &Path) -> Vec<f64> {
    let slope = dir.join("slope.tif");
    let raw = dir.join("slope.envi");
    gdal(
        "gdaldem",
        &[
            "slope",
            "-p",
            "-q",
            dem.to_str().unwrap(),
            slope.to_str().unwrap(),
        ],
    );
    gdal(
        "gdal_translate",
        &[
            "-q",
            "-of",
            "ENVI",
            "-ot",
            "Float32",
            slope.to_str().unwrap(),
            raw.to_str().unwrap(),
        ],
    );
    std::fs::read(raw)
        .unwrap()
        .chunks_exact(4)
        .map(|b| f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]])))
        .map(|percent| match percent {
            -9999.0 => f64::NAN,
            _ => percent / 100.0,
        })
        .collect()
}

fn interior(i: usize) -> bool {
    let (x, y) = (i % COLUMNS, i / COLUMNS);
    (1..COLUMNS - 1).contains(&x) && (1..ROWS - 1).contains(&y)
}

/// The mean of GDAL's slopes over the cells it computes, which must be the interior.
fn gdal_mean_slope(slopes: &[f64]) -> f64 {
    assert_eq!(slopes.len(), COLUMNS * ROWS);
    assert!(
        (0..slopes.len()).all(|i| slopes[i].is_finite() == interior(i)),
        "GDAL computes the interior cells, and only those"
    );
    let finite: Vec<f64> = slopes.iter().copied().filter(|s| s.is_finite()).collect();
    finite.iter().sum::<f64>() / finite.len() as f64
}

#[test]
fn the_mean_slope_is_gdaldems_horn_slope_on_the_real_spacing() {
    let dir = common::scratch("landform", "gdaldem");
    let placed = placed_dem(&dir);
    let slopes = gdal_slopes(&placed, &dir);
    let gdal_mean = gdal_mean_slope(&slopes);
    // vkerode reads the spacing from the placed file's tags.
    let dem = read_dem(&placed, None).unwrap();
    assert_eq!(dem.cell_size, Some(CELL));
    // Cell by cell, Horn's gradient is GDAL's.
    let worst = (0..slopes.len())
        .filter(|&i| interior(i))
        .map(|i| {
            let (dzdx, dzdy) = horn_gradient(&dem.heights, i % COLUMNS, i / COLUMNS, CELL);
            (dzdx.hypot(dzdy) - slopes[i]).abs()
        })
        .fold(0.0f64, f64::max);
    assert!(
        worst < 1e-5,
        "a cell's slope differs from GDAL's by {worst}"
    );
    let ours = Landform::of(&dem.heights, CELL, LengthUnit::Metres).mean_slope;
    assert!(
        (ours - gdal_mean).abs() < 1e-6 * gdal_mean,
        "mean slope {ours}, GDAL's {gdal_mean}"
    );
    // Square cells of 74.5 m would read the rows' rise 24% too steep.
    let square = Landform::of(
        &dem.heights,
        CellSize { x: 74.5, y: 74.5 },
        LengthUnit::Metres,
    )
    .mean_slope;
    assert!(square > 1.05 * gdal_mean, "{square} on square cells");
}

/// pysheds' figures of the test DEM on its true cells.
#[derive(serde::Deserialize)]
struct Pysheds {
    pits_and_flats: u64,
    depression_volume_m3: f64,
    /// (cell, filled height) of every cell the filling raised.
    raised: Vec<(usize, f32)>,
    channel_threshold_cells: f64,
    /// (cell, upstream cells) of every interior channel cell.
    channels: Vec<(usize, u32)>,
}

#[test]
fn depressions_fill_and_channels_route_as_pysheds_finds_them() {
    let fixture: Pysheds = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/jacksboro_pysheds.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let dem = read_dem(Path::new(DEM), None).unwrap();
    let heights = dem.heights.data();
    // The priority flood fills to exactly pysheds' heights, cell by cell.
    let drainage = Drainage::of(&dem.heights, CELL);
    let mut theirs = heights.to_vec();
    for &(i, h) in &fixture.raised {
        theirs[i] = h;
    }
    let differing = (0..theirs.len())
        .filter(|&i| drainage.filled.data()[i] != theirs[i])
        .count();
    assert_eq!(differing, 0, "cells filled otherwise than by pysheds");
    let figures = Landform::of(&dem.heights, CELL, LengthUnit::Metres);
    // pysheds' pits and flats: the cells where D8 on the unfilled map stops.
    assert_eq!(figures.sinks + figures.flats, fixture.pits_and_flats);
    // The same heights: only the cell's area differs, 92.6 m held in f32 (1.6e-8).
    let volume = fixture.depression_volume_m3;
    assert!(
        (figures.depression_volume - volume).abs() < 1e-7 * volume,
        "{} m3 filled, pysheds {volume}",
        figures.depression_volume
    );
    // The channels: the same D8 on the filled heights, and across flats the same
    // gradients of Barnes et al. (2014).
    let threshold = LengthUnit::Metres.channel_area() / (DX * DY);
    assert!((threshold - fixture.channel_threshold_cells).abs() < 1e-9);
    let ours: std::collections::BTreeSet<usize> = (0..heights.len())
        .filter(|&i| interior(i) && f64::from(drainage.area[i]) >= threshold)
        .collect();
    let theirs: std::collections::BTreeSet<usize> = fixture.channels.iter().map(|c| c.0).collect();
    let shared = ours.intersection(&theirs).count() as f64;
    let jaccard = shared / ours.union(&theirs).count() as f64;
    let same_area = fixture
        .channels
        .iter()
        .filter(|&&(i, cells)| {
            (f64::from(drainage.area[i]) - f64::from(cells)).abs() <= 0.01 * f64::from(cells)
        })
        .count() as f64
        / fixture.channels.len() as f64;
    eprintln!(
        "channels: {} ours, {} pysheds, Jaccard {jaccard}, upstream area within 1% {same_area}",
        ours.len(),
        theirs.len()
    );
    // 2 of 8,485 channel cells differ, and 3% of their areas (by a cell or a few):
    // ties between equal falls that pysheds, in f64 on heights raised by 1e-5 per step
    // of the gradient, breaks otherwise than exact integers do.
    assert!(jaccard > 0.999, "channel cells agree {jaccard}");
    assert!(same_area > 0.99, "upstream areas within 1% on {same_area}");
}

/// The test DEM's sinks, flats and depressions as independent implementations count
/// them.
#[derive(serde::Deserialize)]
struct Depressions {
    /// pysheds' detect_pits: interior cells below all eight neighbours.
    sinks: u64,
    /// pysheds' detect_flats: no neighbour lower, one of the same height at least.
    flats: u64,
    /// The cells scikit-image's fill (reconstruction by erosion) raises.
    raised_cells: usize,
    /// scipy's 8-connected labels of those cells: how many, and their sizes, ascending.
    depressions: u64,
    depression_sizes: Vec<u64>,
    /// The same cells' 4-connected labels.
    depressions_4_connected: u64,
}

#[test]
fn pits_count_the_dems_depressions_as_scipy_labels_them_and_sinks_and_flats_as_pysheds_finds_them()
{
    let fixture: Depressions = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/jacksboro_depressions.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let dem = read_dem(Path::new(DEM), None).unwrap();
    let figures = Landform::of(&dem.heights, CELL, LengthUnit::Metres);
    assert_eq!(
        (figures.sinks, figures.flats),
        (fixture.sinks, fixture.flats)
    );
    // The same cells raised by another filling algorithm, in the same regions.
    let filled = fill_depressions(&dem.heights);
    let raised = (0..COLUMNS * ROWS)
        .filter(|&i| filled.data()[i] > dem.heights.data()[i])
        .count();
    assert_eq!(raised, fixture.raised_cells);
    assert_eq!(figures.pits, fixture.depressions);
    let mut sizes = depressions(&dem.heights, &filled);
    sizes.sort_unstable();
    assert!(
        sizes == fixture.depression_sizes,
        "the same number of regions, of other sizes: the largest {:?}, scipy's {:?}",
        &sizes[sizes.len().saturating_sub(5)..],
        &fixture.depression_sizes[fixture.depression_sizes.len().saturating_sub(5)..],
    );
    // 988 depressions: a third of the 3,435 cells where D8 stops, and fewer than the
    // 1,192 sinks (several in one depression); read 4-connected, the same cells would
    // be 1,267 regions.
    assert_eq!(
        (
            figures.pits,
            figures.sinks + figures.flats,
            fixture.depressions_4_connected
        ),
        (988, 3435, 1267)
    );
}

/// The drainage density of `map` with every interior channel cell's step counted, a
/// filled lake's among them, over the whole interior: the figure before lakes were left
/// out, flats routed by `routing`.
fn density_with_lakes(
    map: &Heightmap,
    cell: CellSize,
    lengths: LengthUnit,
    routing: FlatRouting,
) -> f64 {
    let (w, h) = (map.width(), map.height());
    let drainage = Drainage::routed(map, cell, routing);
    let cell_area = f64::from(cell.x) * f64::from(cell.y);
    let threshold = lengths.channel_area() / cell_area;
    let interior: Vec<usize> = (0..w * h).filter(|&i| !is_edge(i, w, h)).collect();
    let length: f64 = interior
        .iter()
        .filter(|&&i| f64::from(drainage.area[i]) >= threshold)
        .filter_map(|&i| drainage.step(i))
        .map(|s| f64::from(s.length))
        .sum();
    length / (interior.len() as f64 * cell_area) * lengths.per_density_unit()
}

/// The maps before and after an `erode` on the CPU reference with `args`.
fn eroded(dir: &Path, name: &str, args: &[&str]) -> [Heightmap; 2] {
    let out = dir.join(name);
    let mut all = vec![
        "erode",
        "--engine",
        "cpu-sequential",
        "--out",
        out.to_str().unwrap(),
    ];
    all.extend_from_slice(args);
    assert_clean_success(&vkerode(&all));
    ["before.tif", "after.tif"].map(|f| read_dem(&out.join(f), None).unwrap().heights)
}

#[test]
fn the_flat_method_moves_the_drainage_density_a_tenth_of_its_equivalence_margin_and_the_incision_under_half_its_own(
) {
    let dir = common::scratch("landform", "flat-method");
    let [noise, noise_after] = eroded(&dir, "noise", &["--size", "512", "--seed", "1"]);
    let [dem, dem_after] = eroded(&dir, "dem", &["--input", DEM, "--cell-size", "74.5,92.6"]);
    let (margin, listed) = margin_of("drainage_density");
    assert!(listed, "drainage_density has a margin of its own");
    for (name, map, cell, lengths) in [
        ("noise", &noise, CellSize::default(), LengthUnit::Cells),
        (
            "eroded noise",
            &noise_after,
            CellSize::default(),
            LengthUnit::Cells,
        ),
        ("DEM", &dem, CELL, LengthUnit::Metres),
        ("eroded DEM", &dem_after, CELL, LengthUnit::Metres),
    ] {
        let [by_gradient, by_epsilon] = [FlatRouting::Gradient, FlatRouting::Epsilon]
            .map(|routing| Landform::routed(map, cell, lengths, routing));
        let (gradient, epsilon) = (by_gradient.drainage_density, by_epsilon.drainage_density);
        let spread = (epsilon - gradient).abs() / gradient;
        // The incision on dry ground: with a lake's cells among its channels the flat
        // method moved it by 3 to 21%, past its 2% margin.
        let incision = (by_epsilon.channel_incision - by_gradient.channel_incision).abs()
            / by_gradient.channel_incision;
        let incision_margin = margin_of("channel_incision").0;
        eprintln!("{name}: channel incision moves {:+.3}%", 100.0 * incision);
        assert!(
            incision < incision_margin / 2.0,
            "{name}: incision {incision}"
        );
        let (lakes_gradient, lakes_epsilon) = (
            density_with_lakes(map, cell, lengths, FlatRouting::Gradient),
            density_with_lakes(map, cell, lengths, FlatRouting::Epsilon),
        );
        eprintln!(
            "{name}: drainage density {gradient:.5} by Barnes's gradients, {epsilon:.5} by \
             Priority-Flood+epsilon ({:+.3}%); lakes counted {lakes_gradient:.5} and \
             {lakes_epsilon:.5} ({:+.2}%)",
            100.0 * (epsilon / gradient - 1.0),
            100.0 * (lakes_epsilon / lakes_gradient - 1.0),
        );
        // The column and the margin's reason say "under 0.2%".
        assert!(spread < 0.002 && spread < margin / 10.0, "{name}: {spread}");
    }
    // Counting the lakes' paths, the noise's density moved 15%: the figure the margin
    // was first set on (0.0907 against 0.1040 per cell).
    let lakes =
        |routing| density_with_lakes(&noise, CellSize::default(), LengthUnit::Cells, routing);
    let (gradient, epsilon) = (lakes(FlatRouting::Gradient), lakes(FlatRouting::Epsilon));
    assert!(epsilon > 1.1 * gradient, "{gradient} against {epsilon}");
}

/// The size of the picture panel whose top-left corner is at `corner` in a PNG: how far
/// its first row and column run before the white canvas (relief and change colours are
/// never pure white).
fn panel_size(png: &Path, corner: (usize, usize)) -> (usize, usize) {
    let decoder = png::Decoder::new(std::fs::File::open(png).unwrap());
    let mut reader = decoder.read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size()];
    let frame = reader.next_frame(&mut pixels).unwrap();
    assert_eq!(frame.color_type, png::ColorType::Rgb, "{}", png.display());
    let width = frame.width as usize;
    let white = |x: usize, y: usize| {
        let i = (y * width + x) * 3;
        pixels[i..i + 3] == [255, 255, 255]
    };
    let (x0, y0) = corner;
    let across = (x0..width).take_while(|&x| !white(x, y0)).count();
    let down = (y0..frame.height as usize)
        .take_while(|&y| !white(x0, y))
        .count();
    (across, down)
}

#[test]
fn an_erode_of_oblong_cells_reports_metres_and_draws_the_ground_at_its_aspect() {
    let dir = common::scratch("landform", "erode");
    let out = dir.join("out");
    assert_clean_success(&vkerode(&[
        "erode",
        "--input",
        DEM,
        "--cell-size",
        "74.5,92.6",
        "--engine",
        "cpu-sequential",
        "--droplets",
        "2000",
        "--out",
        out.to_str().unwrap(),
    ]));
    assert_erode_outputs(&out);

    // The landform before is the DEM's, in metres on its 74.5 m x 92.6 m grid (the
    // kernel's fixed point rounds heights to 7.45 cm).
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    let before = &report["landform"]["before"];
    let gdal_mean = gdal_mean_slope(&gdal_slopes(&placed_dem(&dir), &dir));
    let reported = before["mean_slope"].as_f64().unwrap();
    assert!(
        (reported - gdal_mean).abs() < 1e-3 * gdal_mean,
        "run.json's mean slope {reported}, GDAL's {gdal_mean}"
    );
    let dem = read_dem(Path::new(DEM), None).unwrap();
    let direct = Landform::of(&dem.heights, CELL, LengthUnit::Metres);
    let density = before["drainage_density"].as_f64().unwrap();
    assert!(
        (density - direct.drainage_density).abs() < 0.01 * direct.drainage_density,
        "run.json's drainage density {density} per metre, {} from the DEM",
        direct.drainage_density
    );

    // Every picture's map panel covers as much ground across a pixel as down it.
    let ground = (ROWS as f64 * DY) / (COLUMNS as f64 * DX);
    // The maps' top left corners: under the 44-pixel heading strip (before_after's
    // panels under their 30-pixel titles too).
    for (png, corner) in [
        ("before_relief.png", (10, 44)),
        ("after_relief.png", (10, 44)),
        ("erosion.png", (10, 44)),
        ("before_after.png", (12, 44 + 30)),
    ] {
        let (across, down) = panel_size(&out.join(png), corner);
        assert!(
            (down as f64 - across as f64 * ground).abs() <= 1.0,
            "{png}: a {across} x {down} panel for {COLUMNS} x {ROWS} cells of {CELL:?}"
        );
        assert_eq!(across, COLUMNS, "{png}: one pixel per 74.5 m across");
    }
}
