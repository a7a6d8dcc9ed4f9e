//! `vkerode strategies`: droplets and pipes compared by dose on the same terrains, over
//! seeds, at matched water, end to end on the default device under validation; and
//! the configs it refuses before any GPU work.

mod common;

use std::collections::BTreeMap;

use common::{assert_clean_success, csv_rows, scratch, stderr, vkerode};

const CONFIG: &str = r#"
name = "duel"
description = "test"
water_per_cell = [0.01, 0.02]
seeds = [1, 2]
[measure]
warmup = 0
min_reps = 2
max_reps = 2
[[terrain]]
name = "noise"
size = 48
[[terrain]]
name = "dem"
input = "dem.tif"
cell_size = [74.5, 92.6]
[droplets]
physics = "corrected"
# The grid rains within this lifetime: 150 steps at its dt, a short run.
lifetime = 3
[pipes]
pipes_fusion = "fused"
pipes_check_every = 0
"#;

type Record = BTreeMap<String, String>;

/// [`CONFIG`] with its noise terrain only, so that a run is short.
fn noise_only() -> String {
    CONFIG.replace(
        "[[terrain]]\nname = \"dem\"\ninput = \"dem.tif\"\ncell_size = [74.5, 92.6]\n",
        "",
    )
}

fn number(row: &Record, name: &str) -> f64 {
    row[name]
        .parse()
        .unwrap_or_else(|_| panic!("{name} = {:?} in {row:?}", row[name]))
}

#[test]
fn every_strategy_rains_the_same_water_per_level_and_its_trajectory_is_gathered_over_seeds() {
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
    let runs = csv_rows(&out.join("strategies.csv"));
    // Terrain, then seed, then strategy, then level.
    let order: Vec<String> = runs
        .iter()
        .map(|r| {
            format!(
                "{} {} {} {}",
                r["terrain"], r["seed"], r["algorithm"], r["water_per_cell"]
            )
        })
        .collect();
    let mut expected = Vec::new();
    for terrain in ["noise", "dem"] {
        for seed in [1, 2] {
            for algorithm in ["droplets", "pipes"] {
                for water in ["0.01", "0.02"] {
                    expected.push(format!("{terrain} {seed} {algorithm} {water}"));
                }
            }
        }
    }
    assert_eq!(order, expected);
    for run in &runs {
        let cells = number(run, "width") * number(run, "height");
        let (asked, rained) = (number(run, "water_per_cell"), number(run, "water_rained"));
        if run["algorithm"] == "droplets" {
            // A whole dose: droplets of 1 over the map.
            let per_dose = 1.0 / cells;
            assert_eq!(rained, number(run, "work") * per_dose, "{run:?}");
            assert!((rained - asked).abs() <= per_dose / 2.0 + 1e-12, "{run:?}");
        } else {
            // The grid rains all of it within a droplet's lifetime (3 steps, a time
            // unit each) at its dt of 0.02; its rain is an f32.
            assert_eq!(number(run, "work"), 150.0, "{run:?}");
            assert!((rained / asked - 1.0).abs() < 1e-6, "{run:?}");
        }
        assert!(
            number(run, "gpu_ms") > 0.0 && number(run, "eroded") > 0.0,
            "{run:?}"
        );
        assert!((number(run, "eroded_depth") - number(run, "eroded") / cells).abs() < 1e-9);
    }
    let find = |terrain: &str, seed: &str, algorithm: &str, water: &str| -> &Record {
        runs.iter()
            .find(|r| {
                (
                    r["terrain"].as_str(),
                    r["seed"].as_str(),
                    r["algorithm"].as_str(),
                ) == (terrain, seed, algorithm)
                    && r["water_per_cell"] == water
            })
            .unwrap()
    };
    // Twice the water erodes more; the seed is the noise's, and a file is one terrain.
    for algorithm in ["droplets", "pipes"] {
        let [less, more] =
            ["0.01", "0.02"].map(|w| number(find("noise", "1", algorithm, w), "eroded"));
        assert!(more > less, "{algorithm}: {less} then {more}");
    }
    let before =
        |terrain, seed| number(find(terrain, seed, "droplets", "0.01"), "mean_slope_before");
    assert_ne!(before("noise", "1"), before("noise", "2"));
    assert_eq!(before("dem", "1"), before("dem", "2"));
    // One sea for every strategy: the DEM's lowest edge cell, as GDAL reads it, in metres.
    let cells = common::gdal_cells(&dir.join("dem.tif"), &dir, &[]);
    let heights: Vec<f32> = bytemuck::pod_collect_to_vec(&cells);
    let (w, h) = (403, 344);
    let edge = (0..w)
        .flat_map(|x| [x, (h - 1) * w + x])
        .chain((0..h).flat_map(|y| [y * w, y * w + w - 1]))
        .map(|i| f64::from(heights[i]))
        .fold(f64::INFINITY, f64::min);
    for run in runs.iter().filter(|r| r["terrain"] == "dem") {
        let sea = number(run, "base_level");
        assert!(
            (sea - edge).abs() < 1e-3 * edge,
            "{sea} m, not {edge} m: {run:?}"
        );
    }
    for seed in ["1", "2"] {
        let sea = |a| number(find("noise", seed, a, "0.01"), "base_level");
        assert_eq!(sea("droplets"), sea("pipes"));
    }

    let dose = csv_rows(&out.join("dose.csv"));
    assert_eq!(
        dose.len(),
        2 * 2 * 3,
        "terrain x strategy x (before + 2 levels)"
    );
    for point in &dose {
        assert_eq!(point["seeds"], "2", "{point:?}");
        let level = point["water_per_cell"].as_str();
        if level == "0" {
            assert_eq!(number(point, "eroded_depth_mean"), 0.0);
            continue;
        }
        // The mean is of the runs' own figures; the interval holds it.
        let of_runs: Vec<&Record> = runs
            .iter()
            .filter(|r| {
                r["terrain"] == point["terrain"]
                    && r["algorithm"] == point["algorithm"]
                    && r["water_per_cell"] == level
            })
            .collect();
        assert_eq!(of_runs.len(), 2);
        for (quantity, column) in [
            ("eroded_depth", "eroded_depth"),
            ("water_rained", "water_rained"),
            ("mean_slope", "mean_slope_after"),
            ("pits", "pits_after"),
        ] {
            let mean = of_runs.iter().map(|r| number(r, column)).sum::<f64>() / 2.0;
            let gathered = number(point, &format!("{quantity}_mean"));
            assert!(
                (gathered - mean).abs() <= 1e-9 * mean.abs().max(1.0),
                "{quantity}: {gathered} vs {mean}"
            );
            let (lo, hi) = (
                number(point, &format!("{quantity}_ci_low")),
                number(point, &format!("{quantity}_ci_high")),
            );
            assert!(
                lo <= gathered && gathered <= hi,
                "{quantity}: {lo} {gathered} {hi}"
            );
        }
    }
    for terrain in ["noise", "dem"] {
        for file in [
            "erosion.png",
            "dose.png",
            "dose.svg",
            "droplets.json",
            "pipes.json",
        ] {
            assert!(out.join(terrain).join(file).is_file(), "{terrain}/{file}");
        }
    }
}

#[test]
fn a_strategy_without_water_or_with_its_own_dose_is_refused() {
    assert_refused_before_the_device(
        "thermal",
        &format!("{CONFIG}[thermal]\nthermal_talus = 0.5\n"),
        &["thermal: thermal moves no water"],
    );
    let bad = CONFIG.replace("physics = \"corrected\"", "droplets = 500");
    assert_refused_before_the_device(
        "own-dose",
        &bad,
        &["droplets: `droplets` is set by the comparison"],
    );
    let bad = CONFIG.replace("physics = \"corrected\"", "droplet_seed = 3");
    assert_refused_before_the_device(
        "own-seed",
        &bad,
        &["`droplet_seed` is set by the comparison"],
    );
    let bad = CONFIG.replace("pipes_check_every = 0", "pipes_base_level = 0");
    assert_refused_before_the_device(
        "own-sea",
        &bad,
        &["pipes: `pipes_base_level` is set by the comparison"],
    );
    let bad = CONFIG.replace("seeds = [1, 2]", "seeds = [1, 2]\nbase_level = \"sea\"");
    assert_refused_before_the_device("sea-name", &bad, &["base_level", "lowest-edge"]);
}

#[test]
fn a_dose_axis_that_does_not_rise_and_equal_time_are_refused() {
    let bad = CONFIG.replace("[0.01, 0.02]", "[0.02, 0.01]");
    assert_refused_before_the_device("falling", &bad, &["water_per_cell", "increasing"]);
    // Less than half a droplet on the map: no whole dose rains it.
    let bad = CONFIG.replace("[0.01, 0.02]", "[0.0001, 0.02]");
    assert_refused_before_the_device(
        "no-whole-dose",
        &bad,
        &["water_per_cell = 0.0001", "whole number"],
    );
    let bad = CONFIG.replace("seeds = [1, 2]", "seeds = [1, 1]");
    assert_refused_before_the_device("seeds", &bad, &["seeds", "distinct"]);
    let bad = CONFIG.replace("seeds = [1, 2]", "seeds = [1, 2]\ngpu_seconds = 0.5");
    assert_refused_before_the_device("equal-time", &bad, &["gpu_seconds", "by dose"]);
}

#[test]
fn a_config_that_cannot_run_is_refused_by_key_before_any_gpu_work() {
    let dir = scratch("strategies", "bad");
    let config = dir.join("bad.toml");
    let bad = CONFIG.replace("pipes_check_every = 0", "pipes_dt = 0.5");
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
    let bad = CONFIG.replace("size = 48", "size = 48\ncell_size = [5, 5]");
    assert_refused_before_the_device(
        "noise-cell-size",
        &bad,
        &["terrain.cell_size", "noise", "input file"],
    );
}

#[test]
fn a_key_of_another_strategy_or_of_the_terrain_is_refused_naming_table_and_key() {
    let bad = CONFIG.replace("physics = \"corrected\"", "pipes_dt = 0.5");
    assert_refused_before_the_device(
        "foreign-key",
        &bad,
        &["droplets: `pipes_dt` is a setting of pipes"],
    );
    let bad = CONFIG.replace("pipes_check_every = 0", "size = 16");
    assert_refused_before_the_device("terrain-key", &bad, &["pipes: `size`"]);
}

#[test]
fn a_missing_input_is_refused_before_any_terrain_runs() {
    // The noise terrain comes first: it must not run before the file is found missing.
    let bad = CONFIG.replace("input = \"dem.tif\"", "input = \"nope.tif\"");
    assert_refused_before_the_device("missing-input", &bad, &["terrain.input", "nope.tif"]);
}

#[test]
fn set_overrides_the_config_as_sweep_set_does_and_a_bad_one_is_refused_by_name() {
    let dir = scratch("strategies", "set");
    std::fs::copy("tests/data/jacksboro_fault_dem.tif", dir.join("dem.tif")).unwrap();
    let config = dir.join("set.toml");
    std::fs::write(&config, noise_only()).unwrap();
    let out = dir.join("out");
    assert_clean_success(&vkerode(&[
        "strategies",
        config.to_str().unwrap(),
        "--set",
        "seeds=[7]",
        "--set",
        "water_per_cell=[0.01]",
        "--set",
        "pipes.pipes_check_every=0",
        "--set",
        "water_timing=\"own-rate\"",
        "--set",
        "base_level=-2.5",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]));
    let runs = csv_rows(&out.join("strategies.csv"));
    // One seed, one level, each strategy once.
    assert_eq!(runs.len(), 2, "{runs:?}");
    assert!(runs.iter().all(|r| r["seed"] == "7"), "{runs:?}");
    // At its own rate the grid rains whole steps of pipes_rain x pipes_dt; the sea is
    // the one given (noise is in cells: a height unit is a cell).
    let pipes = runs.iter().find(|r| r["algorithm"] == "pipes").unwrap();
    assert_eq!(number(pipes, "work"), (0.01f64 / (0.012 * 0.02)).round());
    assert!(
        runs.iter().all(|r| number(r, "base_level") == -2.5),
        "{runs:?}"
    );
    for (set, needle) in [
        ("nosection=1", "--set nosection=1"),
        ("fixed.size=64", "unknown section \"fixed\""),
        ("seeds", "expected section.key=value"),
    ] {
        let run = vkerode(&[
            "strategies",
            config.to_str().unwrap(),
            "--set",
            set,
            "--out",
            dir.join("refused").to_str().unwrap(),
        ]);
        let err = stderr(&run);
        assert_eq!(run.status.code(), Some(1), "{set}: {err}");
        assert!(err.contains(needle), "{set}: {err}");
        assert!(!dir.join("refused").exists());
    }
}

#[test]
fn a_chart_that_cannot_be_drawn_costs_a_warning_not_the_runs() {
    // One level of water: the dose chart's axis has no range to scale, on which the
    // drawing library panicked and every run was lost (exit 101).
    let dir = scratch("strategies", "one-level");
    let config = dir.join("one.toml");
    std::fs::write(&config, noise_only()).unwrap();
    let out = dir.join("out");
    let run = vkerode(&[
        "strategies",
        config.to_str().unwrap(),
        "--set",
        "seeds=[1]",
        "--set",
        "water_per_cell=[0.0003]",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_clean_success(&run);
    let said = String::from_utf8_lossy(&run.stdout);
    assert!(
        said.contains("warning: noise: a picture was not drawn"),
        "{said}"
    );
    assert!(!stderr(&run).contains("panicked"), "{}", stderr(&run));
    assert_eq!(csv_rows(&out.join("strategies.csv")).len(), 2);
    assert!(out.join("dose.csv").is_file() && out.join("noise/erosion.png").is_file());
}
