//! Previews, summaries, comparisons, chart series and resume refusals, from one real
//! two-axis sweep on the default device under validation, and result sets planted from
//! it.

mod common;

use std::path::{Path, PathBuf};

use common::{results_dir, stderr, sweep_into, vkerode, vkerode_command};

const CONFIG: &str =
    "name = \"pair\"\ndescription = \"test\"\n[fixed]\nsize = 64\ndroplets = 3000\n\
    [axes]\nworkgroup = [32, 64]\nvariant = [\"paper\", \"fast\"]\n[measure]\nwarmup = 1\n\
    min_reps = 3\nmax_reps = 4\ntarget_rel_iqr = 0.5\ntime_budget_s = 2\n";

/// The sweep, run once per test binary into its own folder: (config, results folder).
fn swept(name: &str) -> (PathBuf, PathBuf) {
    let dir = common::scratch("compare", name);
    let config = dir.join("pair.toml");
    std::fs::write(&config, CONFIG).unwrap();
    let root = dir.join("results");
    sweep_into(&config, &root, &[]);
    (config, results_dir(&root, "pair"))
}

fn run(args: &[&str]) -> (String, String, Option<i32>) {
    outcome(vkerode(args))
}

fn outcome(out: std::process::Output) -> (String, String, Option<i32>) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr(&out),
        out.status.code(),
    )
}

/// A copy of `points.csv` at `to` whose every point has the given median GPU time and
/// 95% interval.
fn plant(from: &Path, to: &Path, median: f64, interval: (f64, f64)) -> PathBuf {
    std::fs::create_dir_all(to).unwrap();
    let mut reader = csv::Reader::from_path(from.join("points.csv")).unwrap();
    let headers = reader.headers().unwrap().clone();
    let at = |name: &str| headers.iter().position(|h| h == name).unwrap();
    let (m, low, high) = (
        at("gpu_ms_median"),
        at("gpu_ms_ci_low"),
        at("gpu_ms_ci_high"),
    );
    let mut writer = csv::Writer::from_path(to.join("points.csv")).unwrap();
    writer.write_record(&headers).unwrap();
    for record in reader.records() {
        let mut fields: Vec<String> = record.unwrap().iter().map(str::to_string).collect();
        fields[m] = median.to_string();
        fields[low] = interval.0.to_string();
        fields[high] = interval.1.to_string();
        writer.write_record(&fields).unwrap();
    }
    writer.flush().unwrap();
    to.to_path_buf()
}

#[test]
fn compare_tells_a_real_slowdown_from_noise_and_can_fail_a_script() {
    let (_, results) = swept("verdicts");
    let dir = results.parent().unwrap().to_path_buf();
    let base = plant(&results, &dir.join("base"), 100.0, (98.0, 102.0));
    let slower = plant(&results, &dir.join("slower"), 120.0, (118.0, 122.5));
    let noise = plant(&results, &dir.join("noise"), 101.0, (99.0, 103.0));
    let (out, _, code) = run(&["compare", base.to_str().unwrap(), noise.to_str().unwrap()]);
    assert_eq!(code, Some(0));
    assert_eq!(out.matches("| same |").count(), 4, "{out}");
    assert!(out.contains("4 points matched"), "{out}");
    let table = dir.join("slower.md");
    let (out, err, code) = run(&[
        "compare",
        base.to_str().unwrap(),
        slower.to_str().unwrap(),
        "--out",
        table.to_str().unwrap(),
        "--fail-slower",
        "10",
    ]);
    assert_eq!(code, Some(3), "a 20% slowdown fails the run: {err}");
    assert_eq!(out.matches("| slower |").count(), 4, "{out}");
    assert!(
        out.contains("| 1.200 |") && out.contains("variant=fast workgroup=64"),
        "{out}"
    );
    assert!(
        err.contains("slower than the base by more than 10%"),
        "{err}"
    );
    assert!(std::fs::read_to_string(&table)
        .unwrap()
        .contains("| slower |"));
    let (_, _, code) = run(&[
        "compare",
        base.to_str().unwrap(),
        slower.to_str().unwrap(),
        "--fail-slower",
        "25",
    ]);
    assert_eq!(code, Some(0), "within the threshold");
}

#[test]
fn a_dry_run_lists_every_point_and_estimates_from_earlier_results() {
    let (config, results) = swept("dry-run");
    let root = results.parent().unwrap().parent().unwrap();
    let (out, err, code) = run(&[
        "sweep",
        config.to_str().unwrap(),
        "--results",
        root.to_str().unwrap(),
        "--dry-run",
    ]);
    assert_eq!(code, Some(0), "{err}");
    for label in [
        "[0] workgroup=32 variant=paper",
        "[3] workgroup=64 variant=fast",
    ] {
        assert!(out.contains(label), "{label} in {out}");
    }
    assert!(
        out.contains("heights 16384 bytes") && out.contains("fits"),
        "{out}"
    );
    assert_eq!(out.matches("(earlier run)").count(), 4, "{out}");
    let fresh = results
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("fresh");
    let (out, _, code) = run(&[
        "sweep",
        config.to_str().unwrap(),
        "--results",
        fresh.to_str().unwrap(),
        "--dry-run",
    ]);
    assert_eq!(code, Some(0));
    assert_eq!(out.matches("no earlier results").count(), 4, "{out}");
    assert!(!fresh.exists(), "a dry run writes nothing");
}

#[test]
fn report_charts_and_resume_keep_the_sweep_honest() {
    let (config, results) = swept("report");
    // The closing table of `report`, to stdout and a file.
    let table = results.join("report.md");
    let (out, _, code) = run(&[
        "report",
        results.to_str().unwrap(),
        "--out",
        table.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0));
    assert_eq!(
        out.lines().filter(|l| l.starts_with("| variant=")).count(),
        4,
        "{out}"
    );
    assert!(out.contains("| stopped by |"), "{out}");
    let written = std::fs::read_to_string(&table).unwrap();
    assert!(out.starts_with(written.trim()), "{written}");

    // Two axes vary: without --series the other axis becomes the series.
    let csv = results.join("points.csv");
    let chart = results.join("chart");
    let (_, err, code) = outcome(common::plot(&csv, "workgroup", &chart, &[]));
    assert_eq!(code, Some(0), "{err}");
    let svg = std::fs::read_to_string(chart.with_extension("svg")).unwrap();
    assert!(
        svg.contains("variant paper") && svg.contains("variant fast"),
        "series by variant"
    );
    // With another column as the series, variant would be drawn as one line: refused.
    let (_, err, code) = outcome(common::plot(
        &csv,
        "workgroup",
        &chart,
        &["--series", "spawn"],
    ));
    assert_eq!(code, Some(1));
    assert!(err.contains("variant also vary"), "{err}");

    // The set was made under validation: resuming without it is refused.
    let root = results.parent().unwrap().parent().unwrap();
    let out = vkerode_command(&[
        "sweep",
        config.to_str().unwrap(),
        "--results",
        root.to_str().unwrap(),
        "--resume",
        "--quiet",
    ])
    .env("VKERODE_VALIDATE", "0")
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("was made with validation on; this run has off"),
        "{}",
        stderr(&out)
    );
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(results.join("meta.json")).unwrap()).unwrap();
    assert_eq!(meta["validation"], true);
    assert!(meta["command_line"].as_str().unwrap().contains("sweep"));
}

/// A copy of `points.csv` at `to` with `column` set to `value` in the rows `rows`.
fn with_values(from: &Path, to: &Path, column: &str, values: &[(usize, &str)]) -> PathBuf {
    std::fs::create_dir_all(to).unwrap();
    let mut reader = csv::Reader::from_path(from.join("points.csv")).unwrap();
    let headers = reader.headers().unwrap().clone();
    let at = headers.iter().position(|h| h == column).unwrap();
    let mut writer = csv::Writer::from_path(to.join("points.csv")).unwrap();
    writer.write_record(&headers).unwrap();
    for (row, record) in reader.records().enumerate() {
        let mut fields: Vec<String> = record.unwrap().iter().map(str::to_string).collect();
        if let Some((_, value)) = values.iter().find(|(r, _)| *r == row) {
            fields[at] = value.to_string();
        }
        writer.write_record(&fields).unwrap();
    }
    writer.flush().unwrap();
    to.join("points.csv")
}

fn plot_by_variant(csv: &Path, chart: &Path) -> (String, String, Option<i32>) {
    outcome(common::plot(
        csv,
        "workgroup",
        chart,
        &["--series", "variant"],
    ))
}

#[test]
fn plot_leaves_out_non_finite_values_with_a_warning_and_refuses_when_none_remain() {
    let (_, results) = swept("plot-total");
    let dir = results.parent().unwrap().to_path_buf();
    let csv = with_values(
        &results,
        &dir.join("some-inf"),
        "droplet_steps_per_s",
        &[(0, "inf"), (3, "1e308")],
    );
    let chart = dir.join("chart");
    let (_, err, code) = plot_by_variant(&csv, &chart);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("left out 2 row(s)") && err.contains("points.csv:2"),
        "{err}"
    );
    let all: Vec<(usize, &str)> = (0..4).map(|r| (r, "NaN")).collect();
    let csv = with_values(&results, &dir.join("all-nan"), "droplet_steps_per_s", &all);
    let (_, err, code) = plot_by_variant(&csv, &chart);
    assert_eq!(code, Some(1));
    assert!(err.contains("no plottable points"), "{err}");
}

/// A copy of the committed results folder `from` (points.csv, samples.csv, meta.json).
fn copied(from: &str, to: &Path) -> PathBuf {
    std::fs::create_dir_all(to).unwrap();
    for file in ["points.csv", "samples.csv", "meta.json"] {
        std::fs::copy(Path::new(from).join(file), to.join(file)).unwrap();
    }
    to.to_path_buf()
}

#[test]
fn older_results_merge_onto_the_current_columns_and_compare_with_themselves() {
    let dir = common::scratch("compare", "older");
    // 65 columns and 5-column samples (no worker, no outlier); 118 columns of pipes.
    for (name, from, points) in [
        ("workgroup", "results/workgroup/nvidia-h200", 16),
        ("pipes", "results/pipes/nvidia-h200", 16),
    ] {
        let base = copied(from, &dir.join(name).join("base"));
        let merged = dir.join(name).join("merged");
        let (_, err, code) = run(&[
            "merge",
            base.to_str().unwrap(),
            "--out",
            merged.to_str().unwrap(),
        ]);
        assert_eq!(code, Some(0), "{name}: {err}");
        let header = std::fs::read_to_string(merged.join("points.csv")).unwrap();
        let header = header.lines().next().unwrap().to_string();
        assert_eq!(
            header,
            vkerode::experiment::results::point_header().join(","),
            "{name}"
        );
        let samples = std::fs::read_to_string(merged.join("samples.csv")).unwrap();
        assert!(
            samples.starts_with("experiment,point,worker,rep,gpu_ms,wall_ms,outlier\n"),
            "{name}"
        );
        let meta: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(merged.join("meta.json")).unwrap())
                .unwrap();
        assert_eq!(
            meta["schema_version"],
            vkerode::experiment::results::SCHEMA_VERSION
        );
        // The older file and its rewrite match point for point, on their recorded settings.
        let (out, err, code) = run(&["compare", base.to_str().unwrap(), merged.to_str().unwrap()]);
        assert_eq!(code, Some(0), "{name}: {err}");
        assert!(
            out.contains(&format!(
                "{points} points matched; 0 only in the base, 0 only in the new set"
            )),
            "{name}: {out}"
        );
        assert_eq!(out.matches("| same |").count(), points, "{name}: {out}");
    }
}

#[test]
fn compare_refuses_times_that_are_not_finite_and_above_0() {
    let dir = common::scratch("compare", "bad-times");
    // Committed pipes results: they have the medians' intervals.
    let results = Path::new("results/pipes/nvidia-h200");
    let base = plant(results, &dir.join("base"), 100.0, (98.0, 102.0));
    for (name, median, interval, column, value) in [
        (
            "nan",
            f64::NAN,
            (f64::NAN, f64::NAN),
            "gpu_ms_median",
            "NaN",
        ),
        ("zero", 0.0, (0.0, 0.0), "gpu_ms_median", "0"),
        ("negative", -1.0, (-1.0, -1.0), "gpu_ms_median", "-1"),
        ("interval", 100.0, (-1.0, 102.0), "gpu_ms_ci_low", "-1"),
        (
            "infinite",
            100.0,
            (98.0, f64::INFINITY),
            "gpu_ms_ci_high",
            "inf",
        ),
    ] {
        let bad = plant(results, &dir.join(name), median, interval);
        let csv = bad.join("points.csv");
        let said = format!("point 0 (line 2): {column} is {value}");
        // As the new set, with a gate that must not pass, and as the base.
        for args in [
            vec![
                base.to_str().unwrap(),
                bad.to_str().unwrap(),
                "--fail-slower",
                "10",
            ],
            vec![bad.to_str().unwrap(), base.to_str().unwrap()],
        ] {
            let (out, err, code) = run(&[&["compare"], args.as_slice()].concat());
            assert_eq!(code, Some(1), "{name}: {out}{err}");
            assert!(
                err.contains(csv.to_str().unwrap()) && err.contains(&said),
                "{name}: {err}"
            );
            assert!(
                !out.contains("| point |"),
                "{name}: refused before the table"
            );
        }
    }
}

#[test]
fn a_fail_slower_threshold_is_a_finite_percentage_above_0() {
    let set = "results/pipes/nvidia-h200";
    for bad in ["nan", "-5", "inf", "0", "ten"] {
        let flag = format!("--fail-slower={bad}");
        let (out, err, code) = run(&["compare", set, set, &flag]);
        assert_eq!(code, Some(2), "{bad}: {out}{err}");
        assert!(
            err.contains("--fail-slower") && err.contains("not a percentage above 0"),
            "{bad}: {err}"
        );
        assert!(out.is_empty(), "{bad}: refused before comparing: {out}");
    }
    let (_, err, code) = run(&["compare", set, set, "--fail-slower", "2.5"]);
    assert_eq!(code, Some(0), "{err}");
}

#[test]
fn plot_leaves_out_times_and_rates_of_0_or_below_with_a_warning() {
    let dir = common::scratch("compare", "plot-non-positive");
    // Committed droplet results, of an older version (steps_per_s, no intervals).
    let results = Path::new("results/workgroup/nvidia-h200");
    let csv = with_values(
        results,
        &dir.join("some"),
        "steps_per_s",
        &[(0, "-5"), (1, "0")],
    );
    let chart = dir.join("chart");
    let (_, err, code) = outcome(common::plot(&csv, "workgroup", &chart, &[]));
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("left out 2 row(s)")
            && err.contains("points.csv:2,")
            && err.contains("points.csv:3"),
        "{err}"
    );
    let all: Vec<(usize, &str)> = (0..16).map(|r| (r, "-1.5")).collect();
    let csv = with_values(results, &dir.join("all"), "gpu_ms_median", &all);
    let (_, err, code) = outcome(common::plot(
        &csv,
        "workgroup",
        &chart,
        &["--y", "gpu_ms_median"],
    ));
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("no plottable points"), "{err}");
}

#[test]
fn plot_refuses_an_out_that_is_a_folder_before_reading() {
    let dir = common::scratch("compare", "plot-out-folder");
    let folder = dir.join("charts");
    std::fs::create_dir(&folder).unwrap();
    let csv = Path::new("results/workgroup/nvidia-h200/points.csv");
    let missing = dir.join("missing.csv");
    let slashed = format!("{}/", folder.display());
    for (csv, out) in [
        (csv, folder.clone()),
        (csv, PathBuf::from(&slashed)),
        // Refused before the CSV is read.
        (missing.as_path(), folder.clone()),
    ] {
        let (_, err, code) = outcome(common::plot(csv, "workgroup", &out, &[]));
        assert_eq!(code, Some(1), "{}: {err}", out.display());
        assert!(
            err.contains(&format!("--out {} is a folder", out.display()))
                && err.contains("STEM.png and STEM.svg"),
            "{err}"
        );
    }
    for beside in ["charts.png", "charts.svg"] {
        assert!(
            !dir.join(beside).exists(),
            "{beside} written beside the folder"
        );
    }
    assert_eq!(std::fs::read_dir(&folder).unwrap().count(), 0);
}
