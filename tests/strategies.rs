//! `vkerode strategies`: every strategy (droplets, pipes, thermal) on the same terrains
//! at equal GPU time, end to end on the default device under validation.

mod common;

use common::{assert_clean_success, scratch, stderr, vkerode};

const CONFIG: &str = r#"
name = "duel"
description = "test"
gpu_seconds = 0.05
[[terrain]]
name = "noise"
size = 48
seed = 2
[[terrain]]
name = "dem"
input = "dem.tif"
cell_size = [74.5, 92.6]
[droplets]
droplets = 500
[pipes]
pipes_steps = 4
pipes_fusion = "fused"
[thermal]
thermal_steps = 4
"#;

#[test]
fn every_strategy_runs_on_every_terrain_and_lands_in_one_table() {
    let dir = scratch("strategies", "duel");
    std::fs::copy("tests/data/jacksboro_fault_dem.tif", dir.join("dem.tif")).unwrap();
    let config = dir.join("duel.toml");
    std::fs::write(&config, CONFIG).unwrap();
    let out = dir.join("out");
    assert_clean_success(&vkerode(&[
        "strategies",
        config.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]));
    let mut reader = csv::Reader::from_path(out.join("strategies.csv")).unwrap();
    let headers = reader.headers().unwrap().clone();
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    let col = |row: &csv::StringRecord, name: &str| -> String {
        let i = headers.iter().position(|h| h == name).unwrap();
        row[i].to_string()
    };
    let pairs: Vec<(String, String, String)> = rows
        .iter()
        .map(|r| (col(r, "terrain"), col(r, "algorithm"), col(r, "unit")))
        .collect();
    assert_eq!(
        pairs,
        [
            ("noise", "droplets", "droplet-steps"),
            ("noise", "pipes", "cell-steps"),
            ("noise", "thermal", "cell-steps"),
            ("dem", "droplets", "droplet-steps"),
            ("dem", "pipes", "cell-steps"),
            ("dem", "thermal", "cell-steps"),
        ]
        .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
    );
    for row in &rows {
        let number = |name| col(row, name).parse::<f64>().unwrap();
        assert!(number("work") >= 1.0 && number("gpu_ms") > 0.0, "{row:?}");
        assert!(
            number("steps_per_s") > 0.0 && number("eroded") > 0.0,
            "{row:?}"
        );
        assert_eq!(number("net_change"), number("deposited") - number("eroded"));
    }
    assert_eq!(col(&rows[3], "width"), "403", "the DEM keeps its shape");
    for terrain in ["noise", "dem"] {
        for file in ["erosion.png", "droplets.json", "pipes.json", "thermal.json"] {
            assert!(out.join(terrain).join(file).is_file(), "{terrain}/{file}");
        }
    }
}

#[test]
fn a_config_that_cannot_run_is_refused_by_key_before_any_gpu_work() {
    let dir = scratch("strategies", "bad");
    let config = dir.join("bad.toml");
    let bad = CONFIG.replace("pipes_steps = 4", "pipes_dt = 0.5");
    std::fs::write(&config, bad).unwrap();
    let out = dir.join("out");
    let run = vkerode(&[
        "strategies",
        config.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let err = stderr(&run);
    assert_eq!(run.status.code(), Some(1), "{err}");
    assert!(
        err.contains("bad.toml") && err.contains("pipes_dt"),
        "{err}"
    );
    assert!(!out.exists(), "nothing written");
}

/// Runs `config` (the duel's, changed) expecting a refusal that names each of
/// `needles`, before any device is opened and with nothing written.
fn assert_refused_before_the_device(name: &str, config: &str, needles: &[&str]) {
    let dir = scratch("strategies", name);
    std::fs::copy("tests/data/jacksboro_fault_dem.tif", dir.join("dem.tif")).unwrap();
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, config).unwrap();
    let out = dir.join("out");
    let run = vkerode(&[
        "strategies",
        path.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let err = stderr(&run);
    let said = format!("{}{err}", String::from_utf8_lossy(&run.stdout));
    assert_eq!(run.status.code(), Some(1), "{said}");
    for needle in needles {
        assert!(err.contains(needle), "expected {needle:?} in: {err}");
    }
    assert!(!said.contains("device:"), "a device was opened: {said}");
    assert!(!out.exists(), "nothing written");
}

#[test]
fn a_cell_size_that_is_not_positive_is_refused() {
    let bad = CONFIG.replace("cell_size = [74.5, 92.6]", "cell_size = [-1, 0]");
    assert_refused_before_the_device(
        "cell-size",
        &bad,
        &["terrain.cell_size", "dem", "is not a cell size"],
    );
}

#[test]
fn a_file_terrain_without_a_cell_size_is_refused_naming_the_key() {
    let bad = CONFIG.replace("cell_size = [74.5, 92.6]", "");
    assert_refused_before_the_device(
        "no-cell-size",
        &bad,
        &["dem", "states no cell size in metres", "cell_size = [x, y]"],
    );
}

#[test]
fn a_cell_size_on_noise_is_refused() {
    let bad = CONFIG.replace("seed = 2", "seed = 2\ncell_size = [5, 5]");
    assert_refused_before_the_device(
        "noise-cell-size",
        &bad,
        &["terrain.cell_size", "noise", "input file"],
    );
}

#[test]
fn a_key_of_another_strategy_or_of_the_terrain_is_refused_naming_table_and_key() {
    let bad = CONFIG.replace("droplets = 500", "droplets = 500\npipes_dt = 0.5");
    assert_refused_before_the_device(
        "foreign-key",
        &bad,
        &["droplets: `pipes_dt` is a setting of pipes"],
    );
    let bad = CONFIG.replace("thermal_steps = 4", "thermal_steps = 4\nsize = 16");
    assert_refused_before_the_device("terrain-key", &bad, &["thermal: `size`"]);
}

#[test]
fn a_missing_input_is_refused_before_any_terrain_runs() {
    // The noise terrain comes first: it must not run before the file is found missing.
    let bad = CONFIG.replace("input = \"dem.tif\"", "input = \"nope.tif\"");
    assert_refused_before_the_device("missing-input", &bad, &["terrain.input", "nope.tif"]);
}
