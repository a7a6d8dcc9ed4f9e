//! The experiment harness end to end: config errors, resuming, the results schema,
//! shards and merging, charts, and the stopping rule. Every sweep runs on the default
//! device under validation.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use vkerode::experiment::results::{point_header, SampleRow};
use vkerode::table::header_of;

use common::{
    assert_clean_success, assert_only_its_own_columns_are_filled, results_dir, sweep_into, vkerode,
    vkerode_command,
};

fn scratch(name: &str) -> PathBuf {
    common::scratch("sweep", name)
}

/// A small sweep: `points` workgroup sizes on a 64^2 map.
fn small_config(dir: &Path, name: &str, workgroups: &str, measure: &str) -> PathBuf {
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(
        &path,
        format!(
            "name = \"{name}\"\ndescription = \"test\"\n[fixed]\nsize = 64\ndroplets = 3000\n\
             [axes]\nworkgroup = {workgroups}\n[measure]\n{measure}\n"
        ),
    )
    .unwrap();
    path
}

const QUICK: &str =
    "warmup = 1\nmin_reps = 3\nmax_reps = 4\ntarget_rel_iqr = 0.5\ntime_budget_s = 2";

fn read_csv(path: &Path) -> (Vec<String>, Vec<BTreeMap<String, String>>) {
    let mut reader = csv::Reader::from_path(path).unwrap();
    let headers: Vec<String> = reader
        .headers()
        .unwrap()
        .iter()
        .map(str::to_string)
        .collect();
    let rows = reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            headers
                .iter()
                .cloned()
                .zip(r.iter().map(str::to_string))
                .collect()
        })
        .collect();
    (headers, rows)
}

fn point_indices(rows: &[BTreeMap<String, String>]) -> Vec<usize> {
    let mut points: Vec<usize> = rows.iter().map(|r| r["point"].parse().unwrap()).collect();
    points.sort();
    points
}

fn assert_config_refused(text: &str, expected: &[&str]) {
    let dir = scratch(&format!(
        "bad-{}",
        expected[0].replace(['.', ' ', '='], "_")
    ));
    let config = dir.join("bad.toml");
    std::fs::write(&config, text).unwrap();
    let results = dir.join("results");
    let out = vkerode(&[
        "sweep",
        config.to_str().unwrap(),
        "--out",
        &common::sweep_out(&results),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "should fail: {err}");
    assert!(
        err.contains(config.to_str().unwrap()),
        "names the file: {err}"
    );
    for needle in expected {
        assert!(err.contains(needle), "expected {needle:?} in: {err}");
    }
    assert!(!results.exists(), "no results may be written");
}

#[test]
fn config_errors_name_the_file_and_key_before_any_gpu_work() {
    let head = "name = \"bad\"\ndescription = \"\"\n";
    assert_config_refused(&format!("{head}colour = 3\n"), &["colour", "unknown field"]);
    assert_config_refused(
        &format!("{head}[fixed]\nsise = 64\n"),
        &["fixed.sise", "unknown field `sise`"],
    );
    assert_config_refused(
        &format!("{head}[axes]\nworkgroup = [\"big\"]\n"),
        &["axes.workgroup[0]", "invalid type"],
    );
    assert_config_refused(
        &format!("{head}[axes]\nworkgroup = []\n"),
        &["axes.workgroup", "is empty"],
    );
    assert_config_refused(
        &format!("{head}[fixed]\nsize = 64\n[axes]\nworkgroup = [64, 100000]\n"),
        &["axes.workgroup = 100000", "above this device's limit"],
    );
    assert_config_refused(
        &format!("{head}[measure]\nmax_reps = \"ten\"\n"),
        &["measure.max_reps: ", "invalid type"],
    );
}

/// tests/data's DEM: untagged, 403 x 344 cells of 74.5 x 92.6 m.
const JACKSBORO: &str = "tests/data/jacksboro_fault_dem.tif";

#[test]
fn input_keys_are_refused_naming_the_key_and_the_file() {
    let head = "name = \"bad\"\ndescription = \"\"\n[fixed]\n";
    let dem = std::fs::canonicalize(JACKSBORO).unwrap();
    let dem = dem.to_str().unwrap();
    assert_config_refused(
        &format!("{head}input = \"nope.tif\"\ncell_size = [74.5, 92.6]\n"),
        &["fixed.input", "nope.tif", "cannot read"],
    );
    assert_config_refused(
        &format!("{head}input = {dem:?}\n"),
        &[
            "fixed.input",
            dem,
            "states no cell size in metres",
            "cell_size = [x, y]",
            "assume_cell_size = METRES",
        ],
    );
    assert_config_refused(
        &format!("{head}input = {dem:?}\ncell_size = [74.5, 92.6]\nsize = 64\n"),
        &[
            "fixed.size",
            "sets the noise terrain",
            dem,
            "come from the file",
        ],
    );
}

#[test]
fn a_sweep_on_an_input_dem_records_it_and_refuses_to_resume_once_the_file_changed() {
    let dir = scratch("dem");
    let dem = dir.join("dem.tif");
    std::fs::copy(JACKSBORO, &dem).unwrap();
    let config = dir.join("dem.toml");
    std::fs::write(
        &config,
        "name = \"dem\"\ndescription = \"test\"\n[fixed]\ninput = \"dem.tif\"\ncell_size = [74.5, 92.6]\n\
         droplets = 2000\n[measure]\nwarmup = 0\nmin_reps = 2\nmax_reps = 2\n",
    )
    .unwrap();
    let root = dir.join("results");
    sweep_into(&config, &root, &[]);
    let results = results_dir(&root, "dem");
    let (headers, rows) = read_csv(&results.join("points.csv"));
    assert_eq!(headers, point_header());
    let [row] = &rows[..] else {
        panic!("one point: {rows:?}");
    };
    assert_eq!(row["input"], "dem.tif");
    assert_eq!(
        (row["width"].as_str(), row["height"].as_str()),
        ("403", "344")
    );
    assert_eq!(row["size"], "", "no noise");
    assert!(row["droplet_steps"].parse::<u64>().unwrap() > 2000);
    // Figures in the DEM's metres, the strategy's own columns too: the heightmap
    // received what the counted run's change sums; the timed run's change, which
    // total_height_change holds, is another program's, alike to within its races.
    assert_eq!(row["height_unit"], "m");
    let number = |key: &str| -> f64 {
        row[key]
            .parse()
            .unwrap_or_else(|_| panic!("{key}: {row:?}"))
    };
    let (counted, received) = (number("counted_height_change"), number("mass_received"));
    assert!(
        (counted - received).abs() <= 1e-6 * counted.abs().max(1.0),
        "{counted} m against {received}"
    );
    let timed = number("total_height_change");
    assert!(
        (timed / counted - 1.0).abs() < 0.05,
        "timed {timed} m against counted {counted}"
    );
    // Horn's slope on the real 74.5 x 92.6 m cells (gdaldem gives 0.23159: tests/landform.rs).
    let slope = number("mean_slope_before");
    assert!((slope - 0.23159).abs() < 1e-4, "mean slope {slope}");
    let hash = &row["input_hash"];
    assert_eq!(hash.len(), 16, "{hash}");
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(results.join("meta.json")).unwrap()).unwrap();
    assert_eq!(meta["config"]["input_hashes"]["dem.tif"], hash.as_str());
    // The same file: nothing left to measure.
    sweep_into(&config, &root, &["--resume"]);
    // The first elevation (uncompressed float32 from byte 272), one metre higher.
    let mut bytes = std::fs::read(&dem).unwrap();
    let first = f32::from_le_bytes(bytes[272..276].try_into().unwrap());
    bytes[272..276].copy_from_slice(&(first + 1.0).to_le_bytes());
    std::fs::write(&dem, bytes).unwrap();
    let out = common::sweep(&config, &root, &["--resume"]);
    let err = common::stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("input_hashes.dem.tif"), "{err}");
    let (_, after) = read_csv(&results.join("points.csv"));
    assert_eq!(after.len(), 1, "no row added");
}

#[test]
fn a_sweep_writes_the_stable_schema_and_full_metadata() {
    let dir = scratch("schema");
    let config = small_config(&dir, "schema", "[32, 64]", QUICK);
    let root = dir.join("results");
    sweep_into(&config, &root, &[]);
    let results = results_dir(&root, "schema");
    let (headers, rows) = read_csv(&results.join("points.csv"));
    assert_eq!(headers, point_header());
    assert_eq!(point_indices(&rows), vec![0, 1]);
    for row in &rows {
        assert_eq!(row["experiment"], "schema");
        assert!(row["droplet_steps_per_s"].parse::<f64>().unwrap() > 0.0);
        assert!(row["droplet_steps"].parse::<u64>().unwrap() > 3000);
        assert_only_its_own_columns_are_filled(row, "droplets");
        let pct: f64 = row["percent_of_peak"].parse().unwrap();
        assert!(pct > 0.0 && pct < 1000.0, "percent of peak {pct}");
        let reps: usize = row["reps"].parse().unwrap();
        assert!((3..=4).contains(&reps));
    }
    let (sample_headers, samples) = read_csv(&results.join("samples.csv"));
    assert_eq!(sample_headers, header_of::<SampleRow>());
    let total_reps: usize = rows
        .iter()
        .map(|r| r["reps"].parse::<usize>().unwrap())
        .sum();
    assert_eq!(samples.len(), total_reps, "every repetition is kept");

    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(results.join("meta.json")).unwrap()).unwrap();
    assert_eq!(
        meta["schema_version"],
        vkerode::experiment::results::SCHEMA_VERSION
    );
    for field in [
        "device",
        "vendor_id",
        "driver_version",
        "api_version",
        "subgroup_size",
        "timestamp_period_ns",
        "vkerode_version",
        "git_commit",
        "config_hash",
        "config",
        "host",
        "started_at",
    ] {
        assert!(!meta[field].is_null(), "meta.json lacks {field}");
    }
    assert_eq!(
        meta["config"]["axes"]["workgroup"],
        serde_json::json!([32, 64])
    );
}

/// A set written before a row's height change and landform came from a timed run is
/// not resumed: its rows would hold two programs' figures under one column.
#[test]
fn a_set_whose_rows_take_the_change_from_the_counted_run_is_not_resumed() {
    let dir = scratch("older-schema");
    let config = small_config(&dir, "older", "[32]", QUICK);
    let root = dir.join("results");
    common::sweep_into(&config, &root, &[]);
    let results = common::results_dir(&root, "older");
    let mut meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(results.join("meta.json")).unwrap()).unwrap();
    meta["schema_version"] = serde_json::json!(4);
    std::fs::write(results.join("meta.json"), meta.to_string()).unwrap();
    let out = common::sweep(&config, &root, &["--resume"]);
    assert_eq!(out.status.code(), Some(1));
    let err = common::stderr(&out);
    assert!(
        err.contains("from the counted run (schema_version 4)") && err.contains("--force"),
        "{err}"
    );
}

#[test]
fn an_interrupted_sweep_resumes_without_duplicate_rows() {
    let dir = scratch("resume");
    let measure =
        "warmup = 1\nmin_reps = 4\nmax_reps = 4\ntarget_rel_iqr = 0.0\ntime_budget_s = 60";
    let config = small_config(&dir, "resume", "[16, 32, 64, 128, 256, 512]", measure);
    let root = dir.join("results");
    let args = [
        "sweep",
        config.to_str().unwrap(),
        "--out",
        &common::sweep_out(&root),
        "--quiet",
    ];
    let mut child = vkerode_command(&args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    let points_csv = root.join("resume");
    loop {
        let rows = std::fs::read_dir(&points_csv)
            .ok()
            .and_then(|mut d| d.next())
            .and_then(|d| std::fs::read_to_string(d.unwrap().path().join("points.csv")).ok())
            .map_or(0, |t| t.lines().count().saturating_sub(1));
        if rows >= 2 {
            break;
        }
        assert!(Instant::now() < deadline, "the sweep made no progress");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let results = results_dir(&root, "resume");
    let (_, before) = read_csv(&results.join("points.csv"));
    assert!(before.len() < 6, "the sweep was interrupted before the end");

    let mut resumed = args.to_vec();
    resumed.push("--resume");
    assert_clean_success(&vkerode(&resumed));
    let (_, rows) = read_csv(&results.join("points.csv"));
    assert_eq!(
        point_indices(&rows),
        vec![0, 1, 2, 3, 4, 5],
        "every point exactly once"
    );
    let (_, samples) = read_csv(&results.join("samples.csv"));
    assert_eq!(
        samples.len(),
        6 * 4,
        "four samples for each point, none left over"
    );

    let again = vkerode(&args);
    assert_eq!(
        again.status.code(),
        Some(1),
        "without --resume existing results are kept"
    );
}

/// A CSV of `header` and `records` at `path`.
fn write_records(path: &Path, header: &csv::StringRecord, records: &[csv::StringRecord]) {
    let mut writer = csv::Writer::from_path(path).unwrap();
    writer.write_record(header).unwrap();
    records.iter().for_each(|r| writer.write_record(r).unwrap());
    writer.flush().unwrap();
}

#[test]
fn shards_partition_the_points_and_merge_refuses_other_configs() {
    let dir = scratch("shards");
    let config = small_config(&dir, "shards", "[16, 32, 64, 128, 256]", QUICK);
    let root = dir.join("results");
    for shard in ["0/2", "1/2"] {
        sweep_into(&config, &root, &["--shard", shard]);
    }
    let device = results_dir(&root, "shards");
    let (a, b) = (device.join("shard-0-of-2"), device.join("shard-1-of-2"));
    assert_eq!(
        point_indices(&read_csv(&a.join("points.csv")).1),
        vec![0, 2, 4]
    );
    assert_eq!(
        point_indices(&read_csv(&b.join("points.csv")).1),
        vec![1, 3]
    );
    let merged = dir.join("merged");
    assert_clean_success(&vkerode(&[
        "merge",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--out",
        merged.to_str().unwrap(),
    ]));
    assert_eq!(
        point_indices(&read_csv(&merged.join("points.csv")).1),
        vec![0, 1, 2, 3, 4]
    );

    // Shard 0 of 2 alone is not the sweep: refused, unless --partial says so.
    let alone = vkerode(&[
        "merge",
        a.to_str().unwrap(),
        "--out",
        dir.join("alone").to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&alone.stderr);
    assert_eq!(alone.status.code(), Some(1), "{err}");
    assert!(
        err.contains("hold 3 of the sweep's 5 points; missing: [1, 3]"),
        "{err}"
    );
    assert!(!dir.join("alone").exists(), "nothing written");
    let partial = dir.join("partial");
    assert_clean_success(&vkerode(&[
        "merge",
        a.to_str().unwrap(),
        "--out",
        partial.to_str().unwrap(),
        "--partial",
    ]));
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(partial.join("meta.json")).unwrap()).unwrap();
    assert_eq!(meta["missing_points"], serde_json::json!([1, 3]));

    let other = small_config(&dir, "shards", "[16, 32]", QUICK);
    let other_root = dir.join("other");
    sweep_into(&other, &other_root, &["--shard", "1/2"]);
    let c = results_dir(&other_root, "shards").join("shard-1-of-2");
    let refused = vkerode(&[
        "merge",
        a.to_str().unwrap(),
        c.to_str().unwrap(),
        "--out",
        dir.join("bad").to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(1), "{err}");
    assert!(err.contains("does not match"), "{err}");
    let twice = vkerode(&[
        "merge",
        a.to_str().unwrap(),
        a.to_str().unwrap(),
        "--out",
        dir.join("twice").to_str().unwrap(),
    ]);
    assert!(String::from_utf8_lossy(&twice.stderr).contains("is in the inputs twice"));

    // Shards altered after the sweep are refused, naming what is wrong.
    let copy = |name: &str| {
        let to = dir.join(name);
        std::fs::create_dir_all(&to).unwrap();
        for file in ["meta.json", "points.csv", "samples.csv"] {
            std::fs::copy(a.join(file), to.join(file)).unwrap();
        }
        to
    };
    let merge_refused = |shard: &Path, expected: &str| {
        let out = dir.join(format!(
            "{}-merged",
            shard.file_name().unwrap().to_str().unwrap()
        ));
        let run = vkerode(&[
            "merge",
            shard.to_str().unwrap(),
            b.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]);
        let err = common::stderr(&run);
        assert_eq!(run.status.code(), Some(1), "{err}");
        assert!(err.contains(expected), "{expected}: {err}");
        assert!(!out.exists(), "{expected}: nothing written");
    };
    let edited = copy("edited");
    let mut meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(edited.join("meta.json")).unwrap()).unwrap();
    meta["config"]["axes"]["workgroup"] = serde_json::json!([16]);
    std::fs::write(edited.join("meta.json"), meta.to_string()).unwrap();
    merge_refused(&edited, "it was edited");

    let beyond = copy("beyond");
    let mut reader = csv::Reader::from_path(beyond.join("points.csv")).unwrap();
    let header = reader.headers().unwrap().clone();
    let mut records: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    let at = header.iter().position(|h| h == "point").unwrap();
    let mut stray: Vec<String> = records[0].iter().map(str::to_string).collect();
    stray[at] = "999".into();
    records.push(csv::StringRecord::from(stray));
    write_records(&beyond.join("points.csv"), &header, &records);
    merge_refused(
        &beyond,
        "point 999 on worker 0 is outside the sweep (points 0 to 4",
    );

    let unsampled = copy("unsampled");
    std::fs::remove_file(unsampled.join("samples.csv")).unwrap();
    merge_refused(&unsampled, "samples.csv: is missing");
    // A FIFO is said to be one, not "missing" (nor read as no samples by compare).
    let fifo = copy("fifo");
    std::fs::remove_file(fifo.join("samples.csv")).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(fifo.join("samples.csv"))
        .status();
    assert!(made.unwrap().success());
    merge_refused(&fifo, "it is a FIFO, not a regular file");
    let compared = vkerode(&["compare", a.to_str().unwrap(), fifo.to_str().unwrap()]);
    assert_eq!(compared.status.code(), Some(1));
    assert!(
        common::stderr(&compared).contains("it is a FIFO"),
        "{}",
        common::stderr(&compared)
    );
    // A set of a later schema is not relabelled as this one's.
    let newer = copy("newer");
    let mut meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(newer.join("meta.json")).unwrap()).unwrap();
    meta["schema_version"] = serde_json::json!(999);
    std::fs::write(newer.join("meta.json"), meta.to_string()).unwrap();
    merge_refused(
        &newer,
        &format!(
            "schema_version 999 is newer than this vkerode's {}",
            vkerode::experiment::results::SCHEMA_VERSION
        ),
    );

    // Nor is a set whose rows hold the counted run's change merged with a newer one.
    let older = copy("older");
    let mut meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(older.join("meta.json")).unwrap()).unwrap();
    meta["schema_version"] = serde_json::json!(4);
    std::fs::write(older.join("meta.json"), meta.to_string()).unwrap();
    merge_refused(&older, "from the counted run (schema_version 4)");

    // A kill between a point's samples and its row: the samples are dropped, said so.
    let orphans = copy("orphans");
    let mut reader = csv::Reader::from_path(orphans.join("points.csv")).unwrap();
    let header = reader.headers().unwrap().clone();
    let at = header.iter().position(|h| h == "point").unwrap();
    let kept: Vec<csv::StringRecord> = reader
        .records()
        .map(Result::unwrap)
        .filter(|r| &r[at] != "4")
        .collect();
    assert_eq!(kept.len(), 2, "point 4's row dropped");
    write_records(&orphans.join("points.csv"), &header, &kept);
    let merged_orphans = dir.join("orphans-merged");
    let run = vkerode(&[
        "merge",
        orphans.to_str().unwrap(),
        b.to_str().unwrap(),
        "--out",
        merged_orphans.to_str().unwrap(),
        "--partial",
    ]);
    let err = common::stderr(&run);
    assert!(run.status.success(), "{err}");
    assert!(err.contains("dropped the samples of point(s) {4}"), "{err}");
    let samples = read_csv(&merged_orphans.join("samples.csv")).1;
    assert!(
        samples.iter().all(|r| r["point"] != "4"),
        "no sample of point 4 left"
    );
    let compared = vkerode(&[
        "compare",
        merged.to_str().unwrap(),
        merged_orphans.to_str().unwrap(),
    ]);
    assert!(compared.status.success(), "{}", common::stderr(&compared));

    // Outputs that are the set's own files are refused before any work.
    let config = small_config(&dir, "shards", "[16, 32, 64, 128, 256]", QUICK);
    let points_csv = partial.join("points.csv");
    let before = std::fs::read(&points_csv).unwrap();
    let refused = vkerode(&[
        "sweep",
        config.to_str().unwrap(),
        "--out",
        partial.to_str().unwrap(),
        "--resume",
        "--quiet",
        "--markdown",
        points_csv.to_str().unwrap(),
    ]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(common::stderr(&refused).contains("which this command reads or writes"));
    for (flag, file) in [
        ("--html", "points.csv"),
        ("--markdown", "meta.json"),
        ("--html", "samples.csv"),
    ] {
        let refused = vkerode(&[
            "report",
            partial.to_str().unwrap(),
            flag,
            partial.join(file).to_str().unwrap(),
        ]);
        assert_eq!(refused.status.code(), Some(1), "{flag} {file}");
        assert!(
            common::stderr(&refused).contains("which this command reads or writes"),
            "{flag} {file}: {}",
            common::stderr(&refused)
        );
    }
    assert_eq!(
        std::fs::read(&points_csv).unwrap(),
        before,
        "points.csv untouched"
    );

    // A resume that fills a partial merge's gaps leaves no stale list of them.
    assert_clean_success(&vkerode(&[
        "sweep",
        config.to_str().unwrap(),
        "--out",
        partial.to_str().unwrap(),
        "--resume",
        "--quiet",
    ]));
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(partial.join("meta.json")).unwrap()).unwrap();
    assert_eq!(meta["missing_points"], serde_json::json!([]));
    assert_eq!(point_indices(&read_csv(&points_csv).1), vec![0, 1, 2, 3, 4]);
}

#[test]
fn an_unreachable_noise_target_stops_at_the_maximum_repetitions() {
    let dir = scratch("stop");
    let measure =
        "warmup = 0\nmin_reps = 2\nmax_reps = 3\ntarget_rel_iqr = 0.0\ntime_budget_s = 600";
    let config = small_config(&dir, "stop", "[64]", measure);
    let root = dir.join("results");
    sweep_into(&config, &root, &[]);
    let (_, rows) = read_csv(&results_dir(&root, "stop").join("points.csv"));
    assert_eq!(rows[0]["stop_reason"], "max-reps");
    assert_eq!(rows[0]["reps"], "3");
}

#[test]
fn a_chart_from_a_real_sweep_has_its_labels_drawn() {
    let dir = scratch("plot");
    let config = small_config(&dir, "plot", "[32, 64, 128]", QUICK);
    let root = dir.join("results");
    sweep_into(&config, &root, &[]);
    let csv = results_dir(&root, "plot").join("points.csv");
    let chart = dir.join("chart");
    assert_clean_success(&common::plot(&csv, "workgroup", &chart, &[]));
    let svg = std::fs::read_to_string(chart.with_extension("svg")).unwrap();
    assert!(
        svg.contains("workgroup size (invocations)") && svg.contains("droplet-steps/s"),
        "SVG labels"
    );

    let decoder = png::Decoder::new(std::io::BufReader::new(
        std::fs::File::open(chart.with_extension("png")).unwrap(),
    ));
    let mut reader = decoder.read_info().unwrap();
    let mut pixels = vec![0u8; reader.output_buffer_size()];
    let frame = reader.next_frame(&mut pixels).unwrap();
    let (w, h) = (frame.width as usize, frame.height as usize);
    let dark_in = |x0: usize, x1: usize, y0: usize, y1: usize| {
        (y0..y1)
            .flat_map(|y| (x0..x1).map(move |x| (x, y)))
            .filter(|&(x, y)| pixels[(y * w + x) * 3] < 100)
            .count()
    };
    assert!(dark_in(w / 4, 3 * w / 4, 0, 45) > 200, "the title is drawn");
    assert!(
        dark_in(w / 3, 2 * w / 3, h - 40, h) > 100,
        "the x-axis label is drawn"
    );
    assert!(
        dark_in(0, 30, h / 4, 3 * h / 4) > 100,
        "the y-axis label is drawn"
    );

    let bad = common::plot(&csv, "colour", &chart, &[]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("is not a points.csv column"));
}

#[test]
fn resume_drops_a_torn_last_row_and_refuses_a_garbled_one() {
    let dir = scratch("torn");
    let config = small_config(&dir, "torn", "[32, 64, 128]", QUICK);
    let root = dir.join("results");
    sweep_into(&config, &root, &[]);
    let points = results_dir(&root, "torn").join("points.csv");
    let text = std::fs::read_to_string(&points).unwrap();
    // As a kill or a full disk leaves it: the last row cut, with no line end.
    std::fs::write(&points, &text[..text.len() - 25]).unwrap();
    let out = common::sweep(&config, &root, &["--resume"]);
    assert!(out.status.success(), "{}", common::stderr(&out));
    assert!(common::stderr(&out).contains("dropped a torn last row"));
    let (_, rows) = read_csv(&points);
    assert_eq!(point_indices(&rows), vec![0, 1, 2], "each point once");

    // A garbled row that is not the last is not guessed at.
    let text = std::fs::read_to_string(&points).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines[1] = "garbled,row";
    std::fs::write(&points, lines.join("\n") + "\n").unwrap();
    let out = common::sweep(&config, &root, &["--resume"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        common::stderr(&out).contains("points.csv"),
        "{}",
        common::stderr(&out)
    );
}

#[test]
fn resume_mends_a_torn_samples_csv_and_a_points_csv_torn_before_its_header_ended() {
    let dir = scratch("torn-samples");
    let config = small_config(&dir, "torn-samples", "[32, 64]", QUICK);
    let root = dir.join("results");
    sweep_into(&config, &root, &[]);
    let folder = results_dir(&root, "torn-samples");
    let (points, samples) = (folder.join("points.csv"), folder.join("samples.csv"));
    // Each point's repetitions once each, 0..n with none missing.
    let samples_whole = |samples: &Path| {
        let mut reps: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        for row in read_csv(samples).1 {
            reps.entry(row["point"].clone())
                .or_default()
                .push(row["rep"].parse().unwrap());
        }
        reps.keys().eq(["0", "1"].iter())
            && reps
                .values()
                .all(|r| r.iter().copied().eq(0..r.len()) && r.len() >= 3)
    };
    // A full disk cut samples.csv mid-row, before its point's row was written.
    let text = std::fs::read_to_string(&points).unwrap();
    let keep = text.trim_end().rfind('\n').unwrap() + 1;
    std::fs::write(&points, &text[..keep]).unwrap();
    let text = std::fs::read_to_string(&samples).unwrap();
    std::fs::write(&samples, &text[..text.len() - 7]).unwrap();
    let out = common::sweep(&config, &root, &["--resume"]);
    assert!(out.status.success(), "{}", common::stderr(&out));
    assert!(
        common::stderr(&out).contains("dropped a torn last row of samples.csv"),
        "{}",
        common::stderr(&out)
    );
    assert_eq!(point_indices(&read_csv(&points).1), vec![0, 1]);
    assert!(
        samples_whole(&samples),
        "{}",
        std::fs::read_to_string(&samples).unwrap()
    );

    // Killed before the header was whole, or before anything was written.
    for torn in ["point,experim", ""] {
        std::fs::write(&points, torn).unwrap();
        let out = common::sweep(&config, &root, &["--resume"]);
        assert!(out.status.success(), "{torn:?}: {}", common::stderr(&out));
        assert_eq!(point_indices(&read_csv(&points).1), vec![0, 1], "{torn:?}");
        assert!(samples_whole(&samples), "{torn:?}");
    }
}

#[test]
fn a_second_sweep_on_a_folder_in_use_is_refused_and_nothing_is_duplicated() {
    let dir = scratch("locked");
    let measure =
        "warmup = 1\nmin_reps = 10\nmax_reps = 10\ntarget_rel_iqr = 0.0\ntime_budget_s = 60";
    let workgroups = "[8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96]";
    let config = small_config(&dir, "locked", workgroups, measure);
    let root = dir.join("results");
    let args = |resume: bool| {
        let mut args = vec![
            "sweep".to_string(),
            config.to_str().unwrap().into(),
            "--out".into(),
            common::sweep_out(&root),
            "--quiet".into(),
        ];
        if resume {
            args.push("--resume".into());
        }
        args
    };
    let first_args = args(false);
    let first_refs: Vec<&str> = first_args.iter().map(String::as_str).collect();
    let mut first = vkerode_command(&first_refs)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the first sweep holds its folder.
    let started = Instant::now();
    // The lock of the folder DIR/NAME is DIR/.NAME.lock.
    let (folder, lock) = loop {
        let found = std::fs::read_dir(root.join("locked")).ok().and_then(|d| {
            d.flatten()
                .map(|d| d.path())
                .find(|p| p.extension().is_some_and(|e| e == "lock"))
        });
        if let Some(lock) = found {
            let name = lock.file_stem().unwrap().to_str().unwrap();
            break (lock.with_file_name(name.trim_start_matches('.')), lock);
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the first sweep started"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let second_args = args(true);
    let second_refs: Vec<&str> = second_args.iter().map(String::as_str).collect();
    let second = vkerode(&second_refs);
    // A live sweep's folder is not replaced, even with --force.
    let folder_arg = folder.to_str().unwrap();
    let forced_erode = vkerode(&[
        "erode",
        "--size",
        "32",
        "--droplets",
        "100",
        "--no-images",
        "--out",
        folder_arg,
        "--force",
    ]);
    let forced_merge = vkerode(&["merge", folder_arg, "--out", folder_arg, "--force"]);
    let still_running = first.try_wait().unwrap().is_none();
    let first = first.wait_with_output().unwrap();
    assert!(first.status.success(), "{}", common::stderr(&first));
    assert!(
        still_running,
        "the second sweep ran while the first held the folder"
    );
    assert_eq!(second.status.code(), Some(1), "{}", common::stderr(&second));
    assert!(
        common::stderr(&second).contains("is being written by another vkerode"),
        "{}",
        common::stderr(&second)
    );
    for forced in [&forced_erode, &forced_merge] {
        assert_eq!(forced.status.code(), Some(1), "{}", common::stderr(forced));
        assert!(
            common::stderr(forced).contains("is being written by another vkerode"),
            "{}",
            common::stderr(forced)
        );
    }
    let (_, rows) = read_csv(&folder.join("points.csv"));
    assert_eq!(
        point_indices(&rows),
        (0..12).collect::<Vec<_>>(),
        "no duplicates"
    );
    assert!(!lock.exists(), "the lock file goes with its holder");
}

/// A sweep with a fault planted in its GPU (see src/gpu/faults.rs).
fn sweep_with_fault(
    config: &Path,
    root: &Path,
    fault: &str,
    extra: &[&str],
) -> std::process::Output {
    common::sweep_command(config, root, extra)
        .env("VKERODE_FAULT", fault)
        .output()
        .unwrap()
}

#[test]
fn a_point_the_gpu_fails_is_recorded_with_its_error_and_the_sweep_goes_on_or_stops() {
    let dir = scratch("point-fails");
    let config = small_config(&dir, "fails", "[16, 32, 64]", QUICK);
    let root = dir.join("results");
    // Every point allocates one cellHits buffer: the second point's runs out of memory.
    let failed = sweep_with_fault(&config, &root, "allocation:cellHits:2", &[]);
    let err = common::stderr(&failed);
    assert_eq!(failed.status.code(), Some(1), "{err}");
    assert!(err.contains("1 point(s) failed on the GPU"), "{err}");
    let results = results_dir(&root, "fails");
    let (_, rows) = read_csv(&results.join("points.csv"));
    assert_eq!(
        point_indices(&rows),
        [0, 2],
        "the sweep went on past the failure"
    );
    let (_, samples) = read_csv(&results.join("samples.csv"));
    assert!(
        samples.iter().all(|s| s["point"] != "1"),
        "no sample of the failed point"
    );
    let (_, failures) = read_csv(&results.join("failed.csv"));
    assert_eq!(failures.len(), 1);
    assert_eq!(failures[0]["point"], "1");
    assert_eq!(failures[0]["settings"], "workgroup=32");
    assert!(
        failures[0]["error"].contains("out of device memory"),
        "{failures:?}"
    );
    assert_eq!(failures[0]["device_lost"], "false");

    assert_clean_success(&common::sweep(&config, &root, &["--resume"]));
    let (_, rows) = read_csv(&results.join("points.csv"));
    assert_eq!(
        point_indices(&rows),
        [0, 1, 2],
        "--resume measured the failed point"
    );

    let stop_root = dir.join("stop");
    let stopped = sweep_with_fault(
        &config,
        &stop_root,
        "allocation:cellHits:1",
        &["--on-point-error", "stop"],
    );
    let err = common::stderr(&stopped);
    assert_eq!(stopped.status.code(), Some(1), "{err}");
    assert!(
        err.contains("the sweep stopped at point 0 (workgroup=16)"),
        "{err}"
    );
    let (_, rows) = read_csv(&results_dir(&stop_root, "fails").join("points.csv"));
    assert!(rows.is_empty(), "nothing after the stop");
}

#[test]
fn a_submission_that_never_finishes_stops_the_sweep_cleanly_and_resume_finishes_it() {
    let dir = scratch("hung");
    let config = small_config(&dir, "hung", "[16, 32, 64]", QUICK);
    let root = dir.join("results");
    let hung = sweep_with_fault(&config, &root, "fence-timeout:12", &[]);
    let err = common::stderr(&hung);
    assert_eq!(hung.status.code(), Some(1), "{err}");
    assert!(err.contains("the device is treated as lost"), "{err}");
    let results = results_dir(&root, "hung");
    let (_, failures) = read_csv(&results.join("failed.csv"));
    assert_eq!(failures.len(), 1, "the sweep stopped at the first");
    assert_eq!(failures[0]["device_lost"], "true");
    let lost: usize = failures[0]["point"].parse().unwrap();
    let (_, rows) = read_csv(&results.join("points.csv"));
    assert_eq!(
        point_indices(&rows),
        (0..lost).collect::<Vec<_>>(),
        "every point before the lost one, whole, and none after"
    );
    assert_clean_success(&common::sweep(&config, &root, &["--resume"]));
    let (_, rows) = read_csv(&results.join("points.csv"));
    assert_eq!(point_indices(&rows), [0, 1, 2]);
    assert!(
        !results.join("failed.csv").exists(),
        "failed.csv lists only points still missing"
    );
}

#[test]
fn every_worker_lost_says_which_points_never_ran_and_resume_empties_failed_csv() {
    let dir = scratch("all-lost");
    let config = small_config(&dir, "all-lost", "[16, 32, 64, 128]", QUICK);
    let root = dir.join("results");
    // Each worker's context loses its device at its second submission: its first point.
    let run = sweep_with_fault(&config, &root, "fence-timeout:2", &["--devices", "0,0"]);
    let err = common::stderr(&run);
    assert_eq!(run.status.code(), Some(1), "{err}");
    assert!(
        err.contains("2 point(s) failed on the GPU")
            && err
                .contains("and 2 never ran (their workers were lost); the 0 measured are recorded"),
        "{err}"
    );
    let results = results_dir(&root, "all-lost");
    assert_eq!(read_csv(&results.join("failed.csv")).1.len(), 2);
    assert_clean_success(&common::sweep(
        &config,
        &root,
        &["--devices", "0,0", "--resume"],
    ));
    assert_eq!(read_csv(&results.join("points.csv")).1.len(), 4);
    assert!(
        !results.join("failed.csv").exists(),
        "failed.csv lists only points still missing"
    );
}

#[test]
fn an_unwritable_markdown_summary_is_refused_before_the_sweep_runs() {
    let dir = scratch("summary");
    let config = small_config(&dir, "summary", "[16, 32]", QUICK);
    let root = dir.join("results");
    for summary in [dir.join("no-such-folder").join("x.md"), dir.clone()] {
        let run = common::sweep(&config, &root, &["--markdown", summary.to_str().unwrap()]);
        let err = common::stderr(&run);
        assert_eq!(run.status.code(), Some(1), "{err}");
        assert!(err.contains("--markdown"), "{err}");
        assert!(!root.exists(), "nothing ran: {err}");
    }
}

#[test]
fn a_grid_sweep_records_cell_steps_bandwidth_and_balance_per_variant() {
    let dir = scratch("grid");
    let config = dir.join("grid.toml");
    std::fs::write(
        &config,
        format!(
            "name = \"grid\"\ndescription = \"test\"\n[fixed]\nalgorithm = \"pipes\"\nsize = 48\n\
             pipes_advection = \"semi-lagrangian\"\npipes_steps = 12\npipes_check_every = 5\n[axes]\npipes_fusion = [\"none\", \"fused\"]\n\
             pipes_packing = [\"f32\", \"half\"]\npipes_workgroup = [\"8x8\"]\n[measure]\n{QUICK}\n"
        ),
    )
    .unwrap();
    let root = dir.join("results");
    sweep_into(&config, &root, &[]);
    let (headers, rows) = read_csv(&results_dir(&root, "grid").join("points.csv"));
    assert_eq!(headers, point_header());
    assert_eq!(point_indices(&rows), vec![0, 1, 2, 3]);
    for row in &rows {
        assert_eq!(row["algorithm"], "pipes");
        assert_eq!(row["cell_steps"], (48 * 48 * 12).to_string(), "cell-steps");
        assert!(row["cell_steps_per_s"].parse::<f64>().unwrap() > 0.0);
        assert_only_its_own_columns_are_filled(row, "pipes");
        let bytes: u64 = row["bytes_per_cell_step"].parse().unwrap();
        let expected = match (row["pipes_fusion"].as_str(), row["pipes_packing"].as_str()) {
            ("none", "f32") => 156,
            ("none", "half") => 112,
            ("fused", "f32") => 104,
            _ => 72,
        };
        assert_eq!(bytes, expected, "{row:?}");
        assert!(row["percent_of_peak"].parse::<f64>().unwrap() > 0.0);
        assert!(row["peak_copy_bytes_per_s"].parse::<f64>().unwrap() > 0.0);
        let water_error: f64 = row["water_error"].parse().unwrap();
        assert!(water_error.abs() < 1e-3, "{water_error}");
        assert!(row["advection_drift"].parse::<f64>().is_ok());
        // No atomics: two timed runs end at the same state.
        assert_eq!(row["rerun_cells_differing"], "0");
        assert_eq!(row["unstable"], "", "no droplet baseline for the grid");
        for column in [
            "droplets_in_flight",
            "concurrency_reference",
            "net_change_vs_sequential",
            "change_map_rmse_vs_sequential",
        ] {
            assert_eq!(
                row[column], "",
                "no concurrency error for the grid: {column}"
            );
        }
        assert!(row["kernel"].starts_with("pipes_"), "{}", row["kernel"]);
    }
    // Tiles or the upwind transport on the five plain passes: refused by name.
    assert_config_refused(
        "name = \"x\"\ndescription = \"x\"\n[fixed]\nalgorithm = \"pipes\"\npipes_fusion = \"none\"\n\
         pipes_advection = \"semi-lagrangian\"\npipes_tiles = \"shared\"\n",
        &["pipes_tiles", "fused"],
    );
    assert_config_refused(
        "name = \"y\"\ndescription = \"x\"\n[fixed]\nalgorithm = \"pipes\"\npipes_fusion = \"none\"\n",
        &["pipes_advection", "fused"],
    );
}

/// (point, worker) of every row.
fn point_workers(rows: &[BTreeMap<String, String>]) -> Vec<(usize, usize)> {
    let mut pairs: Vec<(usize, usize)> = rows
        .iter()
        .map(|r| (r["point"].parse().unwrap(), r["worker"].parse().unwrap()))
        .collect();
    pairs.sort();
    pairs
}

#[test]
fn two_devices_share_the_points_and_each_is_measured_once() {
    // Two contexts on the one device stand in for two GPUs.
    let dir = scratch("two-devices");
    let config = small_config(&dir, "pair", "[16, 32, 64, 128]", QUICK);
    let root = dir.join("results");
    sweep_into(&config, &root, &["--devices", "0,0"]);
    let results = results_dir(&root, "pair");
    let (_, rows) = read_csv(&results.join("points.csv"));
    let mut points = point_indices(&rows);
    points.sort();
    assert_eq!(points, [0, 1, 2, 3], "every point once");
    assert!(rows
        .iter()
        .all(|r| r["worker"] == "0" || r["worker"] == "1"));
    let (_, samples) = read_csv(&results.join("samples.csv"));
    for (point, worker) in point_workers(&rows) {
        assert!(
            samples
                .iter()
                .any(|s| s["point"] == point.to_string() && s["worker"] == worker.to_string()),
            "samples of point {point} by worker {worker}"
        );
    }
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(results.join("meta.json")).unwrap()).unwrap();
    let devices = meta["devices"].as_array().unwrap();
    assert_eq!(devices.len(), 2);
    assert_eq!(devices[1]["worker"], 1);
    assert_eq!(meta["replicate"], false);
}

#[test]
fn replicate_runs_every_point_on_every_device_and_records_their_spread() {
    let dir = scratch("replicate");
    let config = small_config(&dir, "twins", "[32, 64]", QUICK);
    let root = dir.join("results");
    sweep_into(&config, &root, &["--devices", "0,0", "--replicate"]);
    let (_, rows) = read_csv(&results_dir(&root, "twins").join("points.csv"));
    assert_eq!(point_workers(&rows), [(0, 0), (0, 1), (1, 0), (1, 1)]);
    for row in &rows {
        let spread: f64 = row["device_spread_percent"].parse().unwrap();
        assert!(spread >= 0.0 && spread.is_finite(), "{spread}");
    }
    let one = common::sweep(&config, &dir.join("one"), &["--replicate"]);
    assert_eq!(one.status.code(), Some(2), "--replicate needs --devices");

    // A replicate set holds each point once per worker, and merges as it is.
    let merged = dir.join("merged");
    assert_clean_success(&vkerode(&[
        "merge",
        results_dir(&root, "twins").to_str().unwrap(),
        "--out",
        merged.to_str().unwrap(),
    ]));
    let (_, rows) = read_csv(&merged.join("points.csv"));
    assert_eq!(point_workers(&rows), [(0, 0), (0, 1), (1, 0), (1, 1)]);
}

#[test]
fn a_lost_device_fails_its_point_the_other_finishes_and_resume_completes_the_set() {
    let dir = scratch("lost-one");
    let config = small_config(&dir, "lost", "[16, 32, 64, 128]", QUICK);
    let root = dir.join("results");
    // Worker 1's context (the second made) loses its device at its second submission.
    let run = sweep_with_fault(&config, &root, "fence-timeout:2@1", &["--devices", "0,0"]);
    let err = common::stderr(&run);
    assert_eq!(run.status.code(), Some(1), "{err}");
    assert!(err.contains("1 point(s) failed on the GPU"), "{err}");
    let results = results_dir(&root, "lost");
    let (_, failures) = read_csv(&results.join("failed.csv"));
    assert_eq!(failures.len(), 1);
    assert_eq!(failures[0]["worker"], "1");
    assert_eq!(failures[0]["device_lost"], "true");
    let lost: usize = failures[0]["point"].parse().unwrap();
    let (_, rows) = read_csv(&results.join("points.csv"));
    let done = point_workers(&rows);
    assert_eq!(
        done.len(),
        3,
        "the other worker measured the rest: {done:?}"
    );
    assert!(done.iter().all(|&(p, w)| p != lost && w == 0), "{done:?}");

    assert_clean_success(&common::sweep(
        &config,
        &root,
        &["--devices", "0,0", "--resume"],
    ));
    let (_, rows) = read_csv(&results.join("points.csv"));
    let mut points = point_indices(&rows);
    points.sort();
    assert_eq!(
        points,
        [0, 1, 2, 3],
        "--resume measured the lost point, once"
    );
}

#[test]
fn out_is_the_exact_folder_and_force_replaces_it_whole_where_a_rerun_is_refused() {
    let dir = scratch("force");
    let config = small_config(&dir, "force", "[16]", QUICK);
    let out = dir.join("exact");
    let run = |extra: &[&str]| {
        let mut args = vec![
            "sweep",
            config.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        vkerode(&args)
    };
    assert_clean_success(&run(&["--quiet"]));
    // The folder itself, with no experiment or device folders under it.
    assert!(out.join("points.csv").is_file() && out.join("meta.json").is_file());
    let stale = out.join("stale.txt");
    std::fs::write(&stale, "an earlier run's").unwrap();
    let refused = run(&["--quiet"]);
    let err = common::stderr(&refused);
    assert_eq!(refused.status.code(), Some(1), "{err}");
    assert!(err.contains("--resume") && err.contains("--force"), "{err}");
    assert!(stale.exists(), "a refused sweep removes nothing");
    assert_clean_success(&run(&["--force", "--quiet"]));
    assert!(!stale.exists(), "--force replaces the folder whole");
    let (_, rows) = read_csv(&out.join("points.csv"));
    assert_eq!(point_indices(&rows), vec![0], "one run's rows only");
    // --force and --resume contradict each other.
    let both = run(&["--force", "--resume"]);
    assert_eq!(both.status.code(), Some(2), "{}", common::stderr(&both));
    // A folder vkerode did not make is never cleared.
    let foreign = dir.join("foreign");
    std::fs::create_dir(&foreign).unwrap();
    std::fs::write(foreign.join("mine.txt"), "keep").unwrap();
    let args = [
        "sweep",
        config.to_str().unwrap(),
        "--out",
        foreign.to_str().unwrap(),
    ];
    let refused = vkerode(&[&args[..], &["--force", "--quiet"]].concat());
    assert_eq!(
        refused.status.code(),
        Some(1),
        "{}",
        common::stderr(&refused)
    );
    assert!(foreign.join("mine.txt").exists());
}

#[test]
fn a_sweep_neither_takes_a_foreign_folder_nor_resumes_what_it_cannot_trust() {
    let dir = scratch("untrusted");
    let config = small_config(&dir, "untrusted", "[16, 32, 64]", QUICK);
    let sweep = |out: &Path, extra: &[&str]| {
        let mut args = vec![
            "sweep",
            config.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--quiet",
        ];
        args.extend_from_slice(extra);
        vkerode(&args)
    };
    let refused = |out: &Path, extra: &[&str], said: &str| {
        let run = sweep(out, extra);
        let err = common::stderr(&run);
        assert_eq!(run.status.code(), Some(1), "{said}: {err}");
        assert!(err.contains(said), "{said}: {err}");
    };
    // A user's folder: refused, unmarked, and so never cleared by a later --force.
    let mine = dir.join("mine");
    std::fs::create_dir(&mine).unwrap();
    std::fs::write(mine.join("thesis.tex"), "years").unwrap();
    refused(&mine, &[], "holds files vkerode did not make");
    refused(&mine, &["--force"], "holds files vkerode did not make");
    assert!(!mine.join(".vkerode-output").exists());
    assert_eq!(
        std::fs::read_to_string(mine.join("thesis.tex")).unwrap(),
        "years"
    );

    let set = dir.join("set");
    assert_clean_success(&sweep(&set, &[]));
    let points = set.join("points.csv");
    let whole = std::fs::read_to_string(&points).unwrap();
    // A renamed column of this schema is refused, not emptied.
    std::fs::write(&points, whole.replacen(",workgroup,", ",wg,", 1)).unwrap();
    refused(
        &set,
        &["--resume"],
        "its header is not the one this vkerode writes",
    );
    // An edited config in meta.json is refused, as merge refuses it.
    let meta_path = set.join("meta.json");
    let meta = std::fs::read_to_string(&meta_path).unwrap();
    let mut edited: serde_json::Value = serde_json::from_str(&meta).unwrap();
    edited["config"]["axes"]["workgroup"] = serde_json::json!([16, 32, 128]);
    std::fs::write(&meta_path, edited.to_string()).unwrap();
    std::fs::write(&points, &whole).unwrap();
    refused(&set, &["--resume"], "it was edited");
    std::fs::write(&meta_path, &meta).unwrap();
    // A sample time that is not finite is refused.
    let samples_text = std::fs::read_to_string(set.join("samples.csv")).unwrap();
    let mut lines: Vec<String> = samples_text.lines().map(str::to_string).collect();
    let mut fields: Vec<String> = lines[1].split(',').map(str::to_string).collect();
    fields[4] = "NaN".into();
    lines[1] = fields.join(",");
    std::fs::write(set.join("samples.csv"), lines.join("\n") + "\n").unwrap();
    refused(&set, &["--resume"], "gpu_ms is NaN");
    std::fs::write(set.join("samples.csv"), &samples_text).unwrap();
    // A row recorded twice is refused.
    let second_row = whole.lines().nth(1).unwrap();
    std::fs::write(&points, format!("{whole}{second_row}\n")).unwrap();
    refused(&set, &["--resume"], "is recorded twice");
    std::fs::write(&points, &whole).unwrap();
    // A torn samples row loses a point a repetition: the point is measured again.
    let samples = set.join("samples.csv");
    let bytes = std::fs::read(&samples).unwrap();
    std::fs::write(&samples, &bytes[..bytes.len() - 3]).unwrap();
    let resumed = sweep(&set, &["--resume"]);
    let err = common::stderr(&resumed);
    assert!(resumed.status.success(), "{err}");
    assert!(err.contains("samples: it is measured again"), "{err}");
    let compared = vkerode(&["compare", set.to_str().unwrap(), set.to_str().unwrap()]);
    assert!(compared.status.success(), "{}", common::stderr(&compared));
    // Samples without the points.csv that names their points are not added to.
    std::fs::remove_file(&points).unwrap();
    refused(
        &set,
        &["--resume"],
        "has samples but the set has no points.csv",
    );
}

#[test]
fn each_point_records_its_stages_and_threads_beside_the_device_finish_the_same_rows_in_order() {
    let dir = scratch("stages");
    let path = dir.join("stages.toml");
    std::fs::write(
        &path,
        format!(
            "name = \"stages\"\ndescription = \"test\"\n[fixed]\nsize = 64\ndroplets = 3000\n\
             deterministic = true\n[axes]\nworkgroup = [16, 32, 64, 128, 256]\n[measure]\n{QUICK}\n"
        ),
    )
    .unwrap();
    let run = |threads: &str| {
        let root = dir.join(format!("threads-{threads}"));
        let out = common::sweep_out(&root);
        let result = vkerode_command(&["sweep", path.to_str().unwrap(), "--out", &out])
            .env(
                vkerode::experiment::sweep::CPU_SHARE_THREADS_VARIABLE,
                threads,
            )
            .output()
            .unwrap();
        assert_clean_success(&result);
        let said = common::stderr(&result) + &String::from_utf8_lossy(&result.stdout);
        assert!(said.contains("device busy "), "{said}");
        let results = results_dir(&root, "stages");
        let (_, rows) = read_csv(&results.join("points.csv"));
        let (_, samples) = read_csv(&results.join("samples.csv"));
        (rows, samples)
    };
    let (in_turn, samples) = run("0");
    let (beside, _) = run("3");
    let number = |row: &BTreeMap<String, String>, column: &str| -> f64 {
        row[column]
            .parse()
            .unwrap_or_else(|_| panic!("{column} = {:?}", row[column]))
    };
    for rows in [&in_turn, &beside] {
        assert_eq!(
            point_indices(rows),
            vec![0, 1, 2, 3, 4],
            "recorded in order"
        );
        for row in rows.iter() {
            for column in point_header().iter().filter(|c| c.starts_with("stage_")) {
                assert!(number(row, column) >= 0.0, "{column}");
            }
            for stage in ["stage_timed_s", "stage_counted_s", "stage_landform_s"] {
                assert!(number(row, stage) > 0.0, "{stage} took no time");
            }
        }
    }
    for row in &in_turn {
        // The warm-up's GPU time comes on top of the repetitions'.
        let point = &row["point"];
        let repetitions: f64 = (samples.iter())
            .filter(|s| &s["point"] == point)
            .map(|s| number(s, "gpu_ms") / 1e3)
            .sum();
        assert!(number(row, "point_gpu_s") > repetitions, "point {point}");
    }
    // Deterministic runs: the CPU's figures of each point are the same whichever thread
    // finished it.
    let figures = |row: &BTreeMap<String, String>| -> Vec<String> {
        (row.iter())
            .filter(|(c, _)| c.ends_with("_after") || c.as_str() == "total_height_change")
            .map(|(c, v)| format!("{c}={v}"))
            .collect()
    };
    for (a, b) in in_turn.iter().zip(&beside) {
        assert!(figures(a).len() > 5, "{:?}", figures(a));
        assert_eq!(figures(a), figures(b));
    }
}

/// The sweep keeps the last initial state (`TerrainCache`): points in another
/// arithmetic, or on another reading of a DEM, must get their own, and the answer of a
/// point that reuses one must be the answer it gets alone.
#[test]
fn points_that_share_a_terrain_share_its_initial_state_and_each_gets_its_own_answer() {
    let dir = scratch("initial");
    let sweep = |name: &str, fixed: &str, axes: &str| {
        let path = dir.join(format!("{name}.toml"));
        std::fs::write(
            &path,
            format!(
                "name = \"{name}\"\ndescription = \"test\"\n[fixed]\n{fixed}\ndroplets = 3000\n\
                 deterministic = true\n[axes]\n{axes}\n[measure]\n{QUICK}\njudge = false\n"
            ),
        )
        .unwrap();
        let out = common::sweep_out(&dir.join(name));
        let result = vkerode_command(&["sweep", path.to_str().unwrap(), "--out", &out])
            .output()
            .unwrap();
        assert_clean_success(&result);
        read_csv(&results_dir(&dir.join(name), name).join("points.csv")).1
    };
    let dem = std::fs::canonicalize(JACKSBORO).unwrap();
    let input = format!("input = {:?}", dem.to_str().unwrap());
    let dem = format!("{input}\ncell_size = [74.5, 92.6]");
    // Scale changes the fixed point the initial state is kept in; a DEM's vertical scale
    // and cell size its heights in kernel units.
    for (varied, fixed, both_axes, alone_axes) in [
        (
            "scale",
            "size = 64",
            "scale = [1000, 4000]",
            "scale = [4000]",
        ),
        (
            "vertical_scale",
            dem.as_str(),
            "vertical_scale = [1.0, 10.0]",
            "vertical_scale = [10.0]",
        ),
        (
            "cell_size_x",
            input.as_str(),
            "cell_size = [[74.5, 92.6], [7.45, 9.26]]",
            "cell_size = [[7.45, 9.26]]",
        ),
    ] {
        let answer = |row: &BTreeMap<String, String>| {
            (
                row[varied].clone(),
                row["workgroup"].clone(),
                row["total_height_change"].clone(),
            )
        };
        let both = sweep(
            &format!("{varied}-both"),
            fixed,
            &format!("{both_axes}\nworkgroup = [32, 64]"),
        );
        let alone = sweep(
            &format!("{varied}-alone"),
            fixed,
            &format!("{alone_axes}\nworkgroup = [64, 32]"),
        );
        assert_eq!(both.len(), 4);
        for row in &alone {
            let twin = (both.iter())
                .find(|b| b[varied] == row[varied] && b["workgroup"] == row["workgroup"])
                .expect("the same point in both sweeps");
            assert_eq!(answer(twin), answer(row));
        }
        let changes: std::collections::BTreeSet<_> = both
            .iter()
            .map(|r| r["total_height_change"].clone())
            .collect();
        assert!(
            changes.len() > 1,
            "every point the same answer: {changes:?}"
        );
    }
}
