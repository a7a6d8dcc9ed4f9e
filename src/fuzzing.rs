//! The ways in of the fuzz targets (`fuzz/fuzz_targets/`), shared with their regression
//! tests (`tests/fuzz_regressions.rs`): each takes any bytes and must return, never
//! panic, hang or exhaust memory. What they return is the reader's verdict, ignored.

use std::path::{Path, PathBuf};

use crate::experiment::report::plot::{plot, PlotRequest};
use crate::experiment::report::{compare, html_report, report, Pairing};
use crate::experiment::results::{merge, read_points, META_JSON, POINTS_CSV, SAMPLES_CSV};
use crate::experiment::sweep::config::Experiment;
use crate::terrain::files::Overwrite;
use crate::terrain::formats::{decode_dem, Sidecar};

/// A fuzz target: any bytes in, nothing out.
pub type Target = fn(&[u8]);

/// The fuzz targets by name, as `cargo fuzz` and the corpus folders call them.
pub const TARGETS: [(&str, Target); 6] = [
    ("config", config),
    ("heightmap", heightmap),
    ("sidecar", sidecar),
    ("results_csv", results_csv),
    ("report_html", report_html),
    ("merge_shards", merge_shards),
];

/// An experiment config (TOML), checked without a device.
pub fn config(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = Experiment::parse(Path::new("fuzz.toml"), text, None);
    }
}

/// A heightmap file: TIFF, PNG, OpenEXR and PFM by their signature; the first byte
/// picks what the name says for the others: raw float32 (the next two bytes its size),
/// r16 or r32 (square).
pub fn heightmap(data: &[u8]) {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    // A folder that does not exist: no sidecar is found beside the file.
    let dir = Path::new("/nonexistent-vkerode-fuzz");
    let (name, size) = match (pick % 4, rest) {
        (0, [w, h, ..]) => ("map.raw", Some((usize::from(*w), usize::from(*h)))),
        (1, _) => ("map.r16", None),
        (2, _) => ("map.r32", None),
        _ => ("map.tif", None),
    };
    let _ = decode_dem(&dir.join(name), rest, size);
}

/// A heightmap sidecar, checked against the 16 data bytes after a zero byte.
pub fn sidecar(data: &[u8]) {
    let (text, file) = match data.iter().position(|&b| b == 0) {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (data, &[][..]),
    };
    if let Ok(text) = std::str::from_utf8(text) {
        for format in ["png16", "raw-f32le", "r16"] {
            let _ = Sidecar::parse(text, file, format);
        }
    }
}

/// A points.csv, read as `merge`, `compare`, `report` and `plot` read it.
pub fn results_csv(data: &[u8]) {
    let dir = scratch_folder();
    let csv = dir.join("points.csv");
    if std::fs::write(&csv, data).is_err() {
        return;
    }
    let _ = read_points(&csv);
    let _ = compare(&dir, &dir, None, &Pairing::default());
    let _ = report(&dir);
    for (x, y, series) in [
        ("workgroup", "steps_per_s", None),
        ("droplets", "gpu_ms_median", Some("variant")),
    ] {
        let _ = plot(&PlotRequest {
            csvs: vec![csv.clone()],
            x: x.into(),
            y: y.into(),
            series: series.map(Into::into),
            filters: Vec::new(),
            out: dir.join("chart"),
            overwrite: Overwrite::Allow,
        });
    }
}

/// What parts a target's input between its files; a zero byte alone would split PNGs.
pub const PART: &[u8] = b"\0--part--\0";

/// `data`'s parts between [`PART`]s.
fn parts(data: &[u8]) -> Vec<&[u8]> {
    let mut parts = Vec::new();
    let mut rest = data;
    while let Some(at) = rest.windows(PART.len()).position(|w| w == PART) {
        parts.push(&rest[..at]);
        rest = &rest[at + PART.len()..];
    }
    parts.push(rest);
    parts
}

/// A results folder `dir` holding `names`, each the next of `parts` (a missing part is
/// no file); whether it could be written.
fn planted(dir: &Path, names: &[&str], parts: &[&[u8]]) -> bool {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).is_ok()
        && names
            .iter()
            .zip(parts)
            .all(|(name, part)| std::fs::write(dir.join(name), part).is_ok())
}

/// A results folder as `report --html` reads it: points.csv, samples.csv, meta.json
/// and a picture of each kind, the parts between [`PART`]s.
pub fn report_html(data: &[u8]) {
    let dir = scratch_folder().join("report");
    let names = [POINTS_CSV, SAMPLES_CSV, META_JSON, "chart.svg", "map.png"];
    if planted(&dir, &names, &parts(data)) {
        let _ = html_report(&dir, None, None);
    }
}

/// Two shards as `merge --partial` joins them: each one's meta.json, points.csv and
/// samples.csv, the parts between [`PART`]s.
pub fn merge_shards(data: &[u8]) {
    let root = scratch_folder().join("merge");
    let names = [META_JSON, POINTS_CSV, SAMPLES_CSV];
    let parts = parts(data);
    let (first, second) = parts.split_at(names.len().min(parts.len()));
    let shards = [root.join("a"), root.join("b")];
    if planted(&shards[0], &names, first) && planted(&shards[1], &names, second) {
        let _ = merge(&shards, &root.join("merged"), true, true);
    }
}

/// A folder of this process's own for the files a target writes.
fn scratch_folder() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("vkerode-fuzz-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    dir
}
