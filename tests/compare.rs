//! Previews, summaries, comparisons, chart series and resume refusals, from one real
//! two-axis sweep on the default device under validation, and result sets planted from
//! it or from committed ones; `compare`'s verdicts, thresholds and baselines on sets
//! whose every repetition is written here.

mod common;

use std::path::{Path, PathBuf};

use common::{results_dir, stderr, sweep_into, vkerode, vkerode_command};
use vkerode::experiment::report::compare::WRONG_ANSWER_MARGIN;

const CONFIG: &str =
    "name = \"pair\"\ndescription = \"test\"\n[fixed]\nsize = 64\ndroplets = 3000\n\
    [axes]\nworkgroup = [32, 64]\nvariant = [\"paper\", \"fast\"]\n[measure]\nwarmup = 1\n\
    min_reps = 10\nmax_reps = 12\ntarget_rel_iqr = 0.5\ntime_budget_s = 2\n";

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
fn a_dry_run_lists_every_point_and_estimates_from_earlier_results() {
    let (config, results) = swept("dry-run");
    let root = results.parent().unwrap().parent().unwrap();
    let (out, err, code) = run(&[
        "sweep",
        config.to_str().unwrap(),
        "--out",
        &common::sweep_out(root),
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
        "--out",
        &common::sweep_out(&fresh),
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
        "--markdown",
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
        "--out",
        &common::sweep_out(root),
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

/// Every row of a sweep carries its answer against the CPU reference; a row made to
/// compute twelve times the reference's net change (the image lever's on an H100) is
/// marked a wrong answer in `report`'s table and `--json`, and no other row is; `compare`
/// gives its pair no verdict and says why, `--fail-slower` fails when the new side turned
/// wrong, and its chart crosses it.
#[test]
fn a_speed_whose_answer_is_far_from_its_reference_is_marked_a_wrong_answer() {
    let (_, results) = swept("answers");
    let (out, _, code) = run(&["report", s(&results)]);
    assert_eq!(code, Some(0));
    assert!(out.contains("| net change vs reference (ratio) |"), "{out}");
    let rows = answer_rows(&out);
    assert_eq!(rows.len(), 4, "{out}");
    // 0.7 droplets a cell: every point's answer is checked and right, on lavapipe or a GPU.
    for row in &rows {
        let ratio: f64 = row
            .split('|')
            .nth(5)
            .unwrap()
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("no net change in {row}"));
        assert!((ratio - 1.0).abs() <= WRONG_ANSWER_MARGIN, "{row}");
    }
    assert!(!out.contains("wrong answer"), "{out}");

    let planted = results.parent().unwrap().join("wrong");
    with_values(
        &results,
        &planted,
        "net_change_vs_sequential",
        &[(2, "12.43")],
    );
    for file in ["meta.json", "samples.csv"] {
        std::fs::copy(results.join(file), planted.join(file)).unwrap();
    }
    let (out, _, code) = run(&["report", s(&planted)]);
    assert_eq!(code, Some(0));
    let marked: Vec<usize> = (answer_rows(&out).iter().enumerate())
        .filter(|(_, row)| row.contains("**12.430: wrong answer**"))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(marked, vec![2], "{out}");
    assert!(out.contains("its speed is not a result"), "{out}");
    let (json, _, code) = run(&["report", s(&planted), "--json"]);
    assert_eq!(code, Some(0));
    let points: serde_json::Value = serde_json::from_str(&json).unwrap();
    let answers: Vec<&str> = (points.as_array().unwrap().iter())
        .map(|p| p["answer"].as_str().unwrap())
        .collect();
    assert_eq!(
        answers,
        ["checked", "checked", "wrong-answer", "checked"],
        "{json}"
    );

    // compare gives the wrong answer's pair no verdict, and says why.
    let (json, _, code) = run(&["compare", s(&results), s(&planted), "--json"]);
    assert_eq!(code, Some(0));
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    let reasons: Vec<&str> = (report["points"].as_array().unwrap().iter())
        .map(|p| {
            p["judgement"]["no_verdict"]["reason"]
                .as_str()
                .unwrap_or("-")
        })
        .collect();
    assert_eq!(reasons[2], "wrong-answer", "{json}");
    assert!(
        (reasons.iter().enumerate()).all(|(i, r)| i == 2 || *r != "wrong-answer"),
        "{json}"
    );
    assert_eq!(report["counts"]["no_verdict"]["wrong_answer"], 1, "{json}");
    let (out, _, code) = run(&["compare", s(&results), s(&planted)]);
    assert_eq!(code, Some(0));
    assert!(
        out.contains("new's net change is 12.430 times its CPU reference's, a wrong answer"),
        "{out}"
    );
    assert!(out.contains("1 with a wrong answer"), "{out}");
    // --fail-slower fails on an answer that turned wrong, whatever its speed; a change
    // that makes a wrong answer right passes, and the pair still says which side was.
    let (_, err, code) = run(&["compare", s(&results), s(&planted), "--fail-slower", "10"]);
    assert_eq!(code, Some(4), "{err}");
    assert!(
        err.contains("1 point(s) whose answer turned wrong"),
        "{err}"
    );
    let (out, err, code) = run(&["compare", s(&planted), s(&results), "--fail-slower", "10"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("base's net change is 12.430 times"), "{out}");

    // The chart crosses the wrong answer's point, and says what a cross is.
    let crosses = |set: &Path, name: &str| -> (usize, bool) {
        let folder = set.parent().unwrap().join(name);
        let csv = set.join("points.csv");
        let (_, err, code) = run(&[
            "plot",
            s(&csv),
            "--x",
            "workgroup",
            "--series",
            "variant",
            "--out",
            s(&folder),
            "--name",
            "chart",
        ]);
        assert_eq!(code, Some(0), "{err}");
        let svg = std::fs::read_to_string(folder.join("chart.svg")).unwrap();
        // A cross is two black strokes 3 px wide, which nothing else in a chart is.
        let strokes = svg
            .matches(r##"stroke="#000000" stroke-width="3""##)
            .count();
        (strokes / 2, svg.contains("cross: wrong answer"))
    };
    assert_eq!(crosses(&results, "chart-right"), (0, false));
    // One on the point, one in the legend.
    assert_eq!(crosses(&planted, "chart-wrong"), (2, true));
}

/// `report --over droplet_seed` gathers the points that differ in their seed alone:
/// each group's mean net change with Student's 95% interval over its seeds (checked
/// here by hand), settled only where that whole interval lies within the margin, and
/// the fastest settled group at its noise target named as the headline.
#[test]
fn report_over_seeds_settles_a_group_only_when_its_whole_interval_lies_within_the_margin() {
    let dir = common::scratch("compare", "over-seeds");
    let config = dir.join("seeds.toml");
    std::fs::write(
        &config,
        CONFIG.replace("workgroup = [32, 64]", "droplet_seed = [1, 2, 3]"),
    )
    .unwrap();
    let root = dir.join("results");
    sweep_into(&config, &root, &[]);
    let results = results_dir(&root, "pair");
    let mut reader = csv::Reader::from_path(results.join("points.csv")).unwrap();
    let headers = reader.headers().unwrap().clone();
    let at = |name: &str| headers.iter().position(|h| h == name).unwrap();
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    let variant_of: Vec<String> = rows.iter().map(|r| r[at("variant")].to_string()).collect();

    let over = |set: &Path, extra: &[&str]| -> serde_json::Value {
        let mut args = vec!["report", s(set), "--over", "droplet_seed", "--json"];
        args.extend_from_slice(extra);
        let (out, err, code) = run(&args);
        assert_eq!(code, Some(0), "{err}");
        serde_json::from_str(&out).unwrap()
    };
    let report = over(&results, &[]);
    let groups = report["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 2, "{report}");
    for group in groups {
        let variant = group["label"]
            .as_str()
            .unwrap()
            .trim_start_matches("variant=");
        let ratios: Vec<f64> = (rows.iter().zip(&variant_of))
            .filter(|(_, v)| *v == variant)
            .map(|(r, _)| r[at("net_change_vs_sequential")].parse().unwrap())
            .collect();
        assert_eq!(ratios.len(), 3, "{group}");
        assert_eq!(
            group["values"],
            serde_json::json!(["1", "2", "3"]),
            "{group}"
        );
        let mean = ratios.iter().sum::<f64>() / 3.0;
        let sd = (ratios.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / 2.0).sqrt();
        // scipy.stats.t.ppf(0.975, 2)
        let half = 4.302652729749464 * sd / 3f64.sqrt();
        let interval = &group["net_change_interval"];
        assert!(
            (group["net_change_mean"].as_f64().unwrap() - mean).abs() < 1e-12,
            "{group}"
        );
        assert!(
            (interval[0].as_f64().unwrap() - (mean - half)).abs() < 1e-9,
            "{group}"
        );
        assert!(
            (interval[1].as_f64().unwrap() - (mean + half)).abs() < 1e-9,
            "{group}"
        );
    }

    // Planted: paper's seeds agree within 0.3% of the reference, fast's 5 to 7%
    // beyond it, every point at its noise target.
    let ratio_of = |variant: &str, i: usize| match variant {
        "paper" => ["1.001", "1.002", "1.003"][i],
        _ => ["1.05", "1.07", "1.06"][i],
    };
    let mut seen = std::collections::BTreeMap::<&str, usize>::new();
    let planted_ratios: Vec<(usize, &str)> = (variant_of.iter().enumerate())
        .map(|(row, variant)| {
            let n = seen.entry(variant).or_default();
            *n += 1;
            (row, ratio_of(variant, *n - 1))
        })
        .collect();
    let planted = dir.join("planted");
    with_values(
        &results,
        &planted,
        "net_change_vs_sequential",
        &planted_ratios,
    );
    let all_at_target: Vec<(usize, &str)> = (0..rows.len()).map(|r| (r, "noise-target")).collect();
    with_values(&planted, &planted, "stop_reason", &all_at_target);
    for file in ["meta.json", "samples.csv"] {
        std::fs::copy(results.join(file), planted.join(file)).unwrap();
    }
    let settled = |report: &serde_json::Value| -> Vec<String> {
        (report["groups"].as_array().unwrap().iter())
            .map(|g| {
                format!(
                    "{} {}",
                    g["label"].as_str().unwrap(),
                    g["settled"].as_str().unwrap()
                )
            })
            .collect()
    };
    let report = over(&planted, &[]);
    assert_eq!(
        settled(&report),
        ["variant=paper within", "variant=fast beyond"],
        "{report}"
    );
    assert_eq!(report["fastest_settled"], 0, "{report}");
    // Paper's interval, 1.002 ± 0.0025, straddles a margin of 0.4%.
    let report = over(&planted, &["--margin", "0.4"]);
    assert_eq!(
        settled(&report),
        ["variant=paper unsettled", "variant=fast beyond"],
        "{report}"
    );
    assert!(report["fastest_settled"].is_null(), "{report}");
    let (out, _, _) = run(&["report", s(&planted), "--over", "droplet_seed"]);
    assert!(
        out.contains("Fastest settled group at its noise target: variant=paper on "),
        "{out}"
    );

    // A point short of its noise target leaves its group out of the headline.
    let paper_row = variant_of.iter().position(|v| v == "paper").unwrap();
    with_values(
        &planted,
        &planted,
        "stop_reason",
        &[(paper_row, "time-budget")],
    );
    assert!(over(&planted, &[])["fastest_settled"].is_null());

    let (_, err, code) = run(&["report", s(&results), "--over", "droplet_seeds"]);
    assert_eq!(code, Some(1));
    assert!(
        err.contains("--over droplet_seeds: not a setting of a point"),
        "{err}"
    );
}

/// A copy of `points.csv` at `to` with `column` set to `value` in the rows `rows`.
fn with_values(from: &Path, to: &Path, column: &str, values: &[(usize, &str)]) -> PathBuf {
    std::fs::create_dir_all(to).unwrap();
    let mut reader = csv::Reader::from_path(from.join("points.csv")).unwrap();
    let headers = reader.headers().unwrap().clone();
    let at = headers.iter().position(|h| h == column).unwrap();
    // Read whole first: `to` may be `from`.
    let records: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    let mut writer = csv::Writer::from_path(to.join("points.csv")).unwrap();
    writer.write_record(&headers).unwrap();
    for (row, record) in records.iter().enumerate() {
        let mut fields: Vec<String> = record.iter().map(str::to_string).collect();
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
    // 65 columns and 5-column samples (no worker, no outlier); 118 columns of pipes,
    // whose 5 repetitions a point are too few for a verdict.
    let too_few =
        format!("no verdict: base has 5 repetitions, fewer than the {MIN_SAMPLES} a verdict needs");
    for (name, from, points, verdict) in [
        ("workgroup", "results/workgroup/nvidia-h200", 16, "same"),
        ("pipes", "results/pipes/nvidia-h200", 16, too_few.as_str()),
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
        assert_eq!(
            out.matches(&format!("| {verdict} |")).count(),
            points,
            "{name}: {out}"
        );
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
fn plot_writes_its_charts_into_the_out_folder_by_name() {
    let dir = common::scratch("compare", "plot-out-folder");
    let folder = dir.join("charts");
    std::fs::create_dir(&folder).unwrap();
    let kept = folder.join("notes.txt");
    std::fs::write(&kept, "mine").unwrap();
    let csv = "results/workgroup/nvidia-h200/points.csv";
    let out = folder.to_str().unwrap();
    // Without --name: Y-by-X, beside what the folder already holds.
    let (_, err, code) = run(&["plot", csv, "--x", "workgroup", "--out", out]);
    assert_eq!(code, Some(0), "{err}");
    for written in [
        "steps_per_s-by-workgroup.png",
        "steps_per_s-by-workgroup.svg",
    ] {
        assert!(folder.join(written).is_file(), "{written}");
    }
    assert_eq!(std::fs::read_to_string(&kept).unwrap(), "mine");
    // A missing folder is made; --name names the files.
    let deeper = dir.join("new").join("folder");
    let (_, err, code) = run(&[
        "plot",
        csv,
        "--x",
        "workgroup",
        "--out",
        deeper.to_str().unwrap(),
        "--name",
        "wg",
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(deeper.join("wg.png").is_file() && deeper.join("wg.svg").is_file());
    // A name with a folder or an extension is refused by clap, and writes nothing.
    for name in ["a/b", "chart.png", ""] {
        let (_, err, code) = run(&[
            "plot",
            csv,
            "--x",
            "workgroup",
            "--out",
            out,
            "--name",
            name,
        ]);
        assert_eq!(code, Some(2), "{name}: {err}");
        assert!(err.contains("--name"), "{err}");
    }
    // An --out that is a file, or a name that is a folder: refused before reading.
    let file = dir.join("file");
    std::fs::write(&file, "").unwrap();
    let missing = dir.join("missing.csv");
    let missing = missing.to_str().unwrap();
    let (_, err, code) = run(&[
        "plot",
        missing,
        "--x",
        "workgroup",
        "--out",
        file.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("is a file"), "{err}");
    std::fs::create_dir(folder.join("taken")).unwrap();
    let (_, err, code) = run(&[
        "plot",
        missing,
        "--x",
        "workgroup",
        "--out",
        out,
        "--name",
        "taken",
    ]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("choose another --name"), "{err}");
    assert_eq!(std::fs::read_dir(&folder).unwrap().count(), 4);
}

// ---- compare: verdicts from the bootstrap, thresholds, baselines ----

use vkerode::experiment::report::noise::{threshold_of_spread, RerunNoise, DEFAULT_THRESHOLD};
use vkerode::experiment::report::rerun_spread;
use vkerode::stats::bootstrap::MIN_SAMPLES;
use vkerode::stats::{median_interval, Quartiles};

/// Committed H200 points (4 workgroups of the paper's kernel) whose settings and device
/// the synthetic sets below take.
const TEMPLATE: &str = "results/h200-state-and-compare/locked/demo-workgroup/nvidia-h200";

/// `n` repetitions spread evenly (in a scrambled order) over center × (1 ± spread).
fn noisy(center: f64, spread: f64, n: usize, phase: usize) -> Vec<f64> {
    (0..n)
        .map(|i| {
            let u = ((i * 37 + phase * 11) % n) as f64 / (n - 1).max(1) as f64;
            center * (1.0 + spread * (2.0 * u - 1.0))
        })
        .collect()
}

/// A results set at `to`: the template's points, measured on `device`, point p with
/// the repetitions `times(p)` and the stop reason `stop(p)`; points.csv's median,
/// quartiles, interval and reps are those of the repetitions, and samples.csv holds
/// each of them.
fn synthetic(
    to: &Path,
    device: &str,
    times: impl Fn(usize) -> Vec<f64>,
    stop: impl Fn(usize) -> &'static str,
) -> PathBuf {
    std::fs::create_dir_all(to).unwrap();
    let mut reader = csv::Reader::from_path(Path::new(TEMPLATE).join("points.csv")).unwrap();
    let headers = reader.headers().unwrap().clone();
    let at = |name: &str| headers.iter().position(|h| h == name).unwrap();
    let mut points = csv::Writer::from_path(to.join("points.csv")).unwrap();
    points.write_record(&headers).unwrap();
    let mut samples = csv::Writer::from_path(to.join("samples.csv")).unwrap();
    samples
        .write_record([
            "experiment",
            "point",
            "worker",
            "rep",
            "gpu_ms",
            "wall_ms",
            "outlier",
        ])
        .unwrap();
    for (p, record) in reader.records().enumerate() {
        let mut fields: Vec<String> = record.unwrap().iter().map(str::to_string).collect();
        let ms = times(p);
        let s = Quartiles::of(&ms);
        let (low, high) = median_interval(&ms).unwrap();
        for (column, value) in [
            ("device", device.to_string()),
            ("reps", ms.len().to_string()),
            ("stop_reason", stop(p).to_string()),
            ("gpu_ms_median", s.median.to_string()),
            ("gpu_ms_min", s.min.to_string()),
            ("gpu_ms_max", s.max.to_string()),
            ("gpu_ms_q1", s.q1.to_string()),
            ("gpu_ms_q3", s.q3.to_string()),
            ("gpu_ms_rel_iqr", s.rel_iqr().to_string()),
            ("gpu_ms_ci_low", low.to_string()),
            ("gpu_ms_ci_high", high.to_string()),
        ] {
            fields[at(column)] = value;
        }
        points.write_record(&fields).unwrap();
        for (rep, gpu_ms) in ms.iter().enumerate() {
            let row = ["demo-workgroup", &p.to_string(), "0", &rep.to_string()];
            let mut row: Vec<String> = row.iter().map(|f| f.to_string()).collect();
            row.extend([gpu_ms.to_string(), gpu_ms.to_string(), "false".into()]);
            samples.write_record(&row).unwrap();
        }
    }
    points.flush().unwrap();
    samples.flush().unwrap();
    to.to_path_buf()
}

const H200: &str = "NVIDIA H200";
const MET: fn(usize) -> &'static str = |_| "noise-target";

/// Point p's tight repetitions (±0.5%), times `factor`.
fn tight(factor: f64) -> impl Fn(usize) -> Vec<f64> {
    move |p| {
        noisy(10.0 + p as f64, 0.005, 30, p)
            .into_iter()
            .map(|v| v * factor)
            .collect()
    }
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// The table's rows whose verdict column is `verdict`.
fn rows_with(out: &str, verdict: &str) -> Vec<String> {
    out.lines()
        .filter(|l| l.starts_with("| variant=") || l.starts_with("| workgroup="))
        .filter(|l| l.trim_end().ends_with(&format!("| {verdict} |")))
        .map(str::to_string)
        .collect()
}

/// The (low, high) interval of a table row.
fn interval_of(row: &str) -> (f64, f64) {
    let cell = row.split('|').nth(5).unwrap().trim();
    let (low, high) = cell.split_once(" to ").unwrap();
    (low.parse().unwrap(), high.parse().unwrap())
}

fn recorded_h200() -> f64 {
    RerunNoise::built_in().of(H200).unwrap().threshold_percent / 100.0
}

#[test]
fn identical_samples_are_the_same_and_a_doubled_time_is_slower_beyond_the_threshold() {
    let dir = common::scratch("compare", "bootstrap-verdicts");
    let base = synthetic(&dir.join("base"), H200, tight(1.0), MET);
    let again = synthetic(&dir.join("again"), H200, tight(1.0), MET);
    let doubled = synthetic(&dir.join("doubled"), H200, tight(2.0), MET);
    let (out, err, code) = run(&["compare", s(&base), s(&again)]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(rows_with(&out, "same").len(), 4, "{out}");
    let threshold = recorded_h200();
    assert!(
        out.contains(&format!(
            "Threshold: {}%, the largest spread measured between reruns on \"NVIDIA H200\" (results/rerun-noise.toml)",
            vkerode::readable_number(threshold * 100.0)
        )),
        "{out}"
    );
    assert!(
        out.contains("percentile bootstrap") && out.contains("10000 resamples"),
        "{out}"
    );
    let (out, _, code) = run(&["compare", s(&base), s(&doubled)]);
    assert_eq!(code, Some(0));
    let slower = rows_with(&out, "slower");
    assert_eq!(slower.len(), 4, "{out}");
    for row in &slower {
        let (low, high) = interval_of(row);
        assert!(low > 1.0 + threshold && low <= 2.0 && 2.0 <= high, "{row}");
    }
    assert!(
        out.contains("4 slower, 0 faster, 0 same, 0 unclear, 0 without a verdict"),
        "{out}"
    );
    // A fixed seed: the same verdicts and intervals on every run.
    let (again_out, _, _) = run(&["compare", s(&base), s(&doubled)]);
    assert_eq!(out, again_out);
    // Halved is faster.
    let halved = synthetic(&dir.join("halved"), H200, tight(0.5), MET);
    let (out, _, _) = run(&["compare", s(&base), s(&halved)]);
    assert_eq!(rows_with(&out, "faster").len(), 4, "{out}");
}

#[test]
fn overlapping_wide_noise_is_unclear_and_fails_no_gate() {
    let dir = common::scratch("compare", "unclear");
    let wide = |factor: f64, phase: usize| {
        move |p: usize| noisy((10.0 + p as f64) * factor, 0.2, 12, p + phase)
    };
    let base = synthetic(&dir.join("base"), H200, wide(1.0, 0), MET);
    let new = synthetic(&dir.join("new"), H200, wide(1.04, 5), MET);
    let (out, err, code) = run(&["compare", s(&base), s(&new), "--fail-slower", "1"]);
    assert_eq!(code, Some(0), "{err}");
    let unclear = rows_with(&out, "unclear");
    assert_eq!(unclear.len(), 4, "{out}");
    for row in &unclear {
        let (low, high) = interval_of(row);
        assert!(
            low < 1.0 + recorded_h200() && high > 1.0 + recorded_h200(),
            "{row}"
        );
    }
}

#[test]
fn a_point_that_missed_its_noise_target_gets_no_verdict_and_fails_no_gate() {
    let dir = common::scratch("compare", "missed");
    let base = synthetic(&dir.join("base"), H200, tight(1.0), MET);
    let stop = |p: usize| if p == 1 { "max-reps" } else { "noise-target" };
    let new = synthetic(&dir.join("new"), H200, tight(2.0), stop);
    let (out, err, code) = run(&["compare", s(&base), s(&new), "--fail-slower", "10"]);
    assert_eq!(code, Some(3), "{err}");
    let flagged: Vec<&str> = out
        .lines()
        .filter(|l| l.contains("| no verdict: new missed its noise target (max-reps, relative IQR"))
        .collect();
    assert_eq!(flagged.len(), 1, "{out}");
    assert!(flagged[0].starts_with("| workgroup=64 |"), "{out}");
    assert_eq!(rows_with(&out, "slower").len(), 3, "{out}");
    assert!(
        err.contains("3 point(s) slower") && !err.contains("workgroup=64"),
        "{err}"
    );
    // As the base, too.
    let (out, _, _) = run(&["compare", s(&new), s(&base)]);
    assert!(
        out.contains("| no verdict: base missed its noise target (max-reps"),
        "{out}"
    );
}

#[test]
fn the_threshold_comes_from_the_flag_the_device_record_or_the_default() {
    let dir = common::scratch("compare", "threshold");
    let base = synthetic(&dir.join("base"), H200, tight(1.0), MET);
    // 3% slower: within the H200's rerun spread and the default, beyond 1%.
    let new = synthetic(&dir.join("new"), H200, tight(1.03), MET);
    assert!(recorded_h200() > 0.035 && DEFAULT_THRESHOLD > 0.035);
    let (out, _, _) = run(&["compare", s(&base), s(&new)]);
    assert_eq!(rows_with(&out, "same").len(), 4, "{out}");
    let (out, _, _) = run(&["compare", s(&base), s(&new), "--threshold", "1"]);
    assert_eq!(rows_with(&out, "slower").len(), 4, "{out}");
    assert!(out.contains("Threshold: 1%, from --threshold."), "{out}");
    let device = "Imaginary GPU";
    let other_base = synthetic(&dir.join("other-base"), device, tight(1.0), MET);
    let other_new = synthetic(&dir.join("other-new"), device, tight(1.03), MET);
    let (out, _, _) = run(&["compare", s(&other_base), s(&other_new)]);
    assert_eq!(rows_with(&out, "same").len(), 4, "{out}");
    assert!(
        out.contains(&format!(
            "Threshold: {}%, the default: results/rerun-noise.toml has no rerun record of \"{device}\"",
            vkerode::readable_number(DEFAULT_THRESHOLD * 100.0)
        )),
        "{out}"
    );
    for bad in ["nan", "0", "-1", "100", "inf", "two"] {
        let flag = format!("--threshold={bad}");
        let (out, err, code) = run(&["compare", s(&base), s(&new), &flag]);
        assert_eq!(code, Some(2), "{bad}: {out}{err}");
        assert!(
            err.contains("--threshold") && err.contains("above 0 and below 100"),
            "{bad}: {err}"
        );
        assert!(out.is_empty(), "{bad}");
    }
}

#[test]
fn fail_slower_exits_3_only_on_a_slower_verdict_beyond_its_percent() {
    let dir = common::scratch("compare", "fail-slower");
    let base = synthetic(&dir.join("base"), H200, tight(1.0), MET);
    let slower = synthetic(&dir.join("slower"), H200, tight(1.2), MET);
    let faster = synthetic(&dir.join("faster"), H200, tight(0.5), MET);
    let table = dir.join("slower.md");
    let (out, err, code) = run(&[
        "compare",
        s(&base),
        s(&slower),
        "--markdown",
        s(&table),
        "--fail-slower",
        "10",
    ]);
    assert_eq!(code, Some(3), "a 20% slowdown fails the run: {err}");
    assert_eq!(rows_with(&out, "slower").len(), 4, "{out}");
    assert!(out.contains("| 1.200 |"), "{out}");
    assert!(
        err.contains("4 point(s) slower than the base by more than 10%"),
        "{err}"
    );
    let written = std::fs::read_to_string(&table).unwrap();
    assert_eq!(rows_with(&written, "slower").len(), 4, "the table is kept");
    for (new, percent) in [(&slower, "25"), (&faster, "1"), (&base, "1")] {
        let (out, err, code) = run(&["compare", s(&base), s(new), "--fail-slower", percent]);
        assert_eq!(code, Some(0), "{}: {out}{err}", new.display());
    }
}

#[test]
fn a_set_without_samples_is_judged_on_its_medians_intervals_and_says_so() {
    let dir = common::scratch("compare", "no-samples");
    let base = synthetic(&dir.join("base"), H200, tight(1.0), MET);
    let doubled = synthetic(&dir.join("doubled"), H200, tight(2.0), MET);
    std::fs::remove_file(doubled.join("samples.csv")).unwrap();
    let (out, err, code) = run(&["compare", s(&base), s(&doubled)]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(rows_with(&out, "slower").len(), 4, "{out}");
    let said = format!(
        "no samples.csv beside `{}`",
        doubled.join("points.csv").display()
    );
    assert!(out.contains(&said) && err.contains(&said), "{out}{err}");
    // The interval: new's interval over base's, from the medians' intervals.
    let row = &rows_with(&out, "slower")[0];
    let (low, high) = interval_of(row);
    assert!(low < 2.0 && high > 2.0 && high - low < 0.05, "{row}");
}

/// An edit of a CSV's lines.
type Edit = dyn Fn(&mut Vec<String>);

#[test]
fn samples_that_disagree_with_points_csv_are_refused_naming_the_file() {
    let dir = common::scratch("compare", "bad-samples");
    let base = synthetic(&dir.join("base"), H200, tight(1.0), MET);
    let baselines = dir.join("baselines");
    // Each edit of samples.csv's lines (the header first), and what the error says.
    let drop_point_2 =
        |lines: &mut Vec<String>| lines.retain(|l| !l.starts_with("demo-workgroup,2,"));
    let nan_first = |lines: &mut Vec<String>| {
        let mut fields: Vec<String> = lines[1].split(',').map(str::to_string).collect();
        fields[4] = "NaN".into();
        lines[1] = fields.join(",");
    };
    let edits: [(&str, &Edit, &str); 2] = [
        (
            "missing-point",
            &drop_point_2,
            "point 2 (worker 0) has 0 samples, but line 4 of points.csv says 30 repetitions",
        ),
        ("nan", &nan_first, "line 2: gpu_ms is NaN"),
    ];
    for (name, edit, said) in edits {
        let bad = synthetic(&dir.join(name), H200, tight(1.0), MET);
        let samples = bad.join("samples.csv");
        let mut lines: Vec<String> = std::fs::read_to_string(&samples)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect();
        edit(&mut lines);
        std::fs::write(&samples, lines.join("\n") + "\n").unwrap();
        let (out, err, code) = run(&[
            "compare",
            s(&base),
            s(&bad),
            "--save-baseline",
            name,
            "--baselines",
            s(&baselines),
        ]);
        assert_eq!(code, Some(1), "{name}: {out}{err}");
        assert!(
            err.contains(s(&samples)) && err.contains(said),
            "{name}: {err}"
        );
        assert!(
            !out.contains("| point |"),
            "{name}: refused before the table"
        );
        assert!(!baselines.join(name).exists(), "{name}: nothing saved");
    }
}

/// The rows of `report`'s table of the two-axis sweep.
fn answer_rows(out: &str) -> Vec<&str> {
    out.lines()
        .filter(|l| l.starts_with("| variant="))
        .collect()
}

/// The table's rows, without the lines that name the sets.
fn table_rows(out: &str) -> Vec<&str> {
    out.lines()
        .filter(|l| l.starts_with("| workgroup="))
        .collect()
}

#[test]
fn a_saved_baseline_compares_as_its_set_and_is_replaced_only_with_force() {
    let dir = common::scratch("compare", "baselines");
    let base = synthetic(&dir.join("base"), H200, tight(1.0), MET);
    let new = synthetic(&dir.join("new"), H200, tight(1.1), MET);
    let doubled = synthetic(&dir.join("doubled"), H200, tight(2.0), MET);
    let baselines = dir.join("kept");
    let at = ["--baselines", s(&baselines)];
    let main = baselines.join("main");
    let same_files = |a: &Path, b: &Path| {
        ["points.csv", "samples.csv"]
            .iter()
            .all(|f| std::fs::read(a.join(f)).unwrap() == std::fs::read(b.join(f)).unwrap())
    };

    // Saved alone: a copy, no comparison.
    let (out, err, code) =
        run(&[&["compare", s(&base), "--save-baseline", "main"], &at[..]].concat());
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("saved") && !out.contains("| point |"), "{out}");
    assert!(same_files(&base, &main));

    // Compared against: as BASE itself.
    let (direct, _, _) = run(&["compare", s(&base), s(&new)]);
    let (against, err, code) =
        run(&[&["compare", s(&new), "--baseline", "main"], &at[..]].concat());
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(table_rows(&against), table_rows(&direct));
    assert_eq!(rows_with(&against, "slower").len(), 4, "{against}");
    assert!(
        against.contains(&format!("Base: `{}`", main.display())),
        "{against}"
    );

    // An existing baseline is kept without --force, replaced with it.
    let save_new = [
        &[
            "compare",
            s(&new),
            "--baseline",
            "main",
            "--save-baseline",
            "main",
        ],
        &at[..],
    ]
    .concat();
    let (_, err, code) = run(&save_new);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("--save-baseline main") && err.contains("--force"),
        "{err}"
    );
    assert!(same_files(&base, &main), "kept whole");
    let (out, err, code) = run(&[&save_new[..], &["--force"]].concat());
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        rows_with(&out, "slower").len(),
        4,
        "compared before it was replaced"
    );
    assert!(same_files(&new, &main));

    // A failing gate saves nothing.
    let gate = [
        &[
            "compare",
            s(&doubled),
            "--baseline",
            "main",
            "--save-baseline",
            "main",
            "--force",
        ],
        &["--fail-slower", "10"][..],
        &at[..],
    ]
    .concat();
    let (_, _, code) = run(&gate);
    assert_eq!(code, Some(3));
    assert!(
        same_files(&new, &main),
        "the gate failed: the old baseline stays"
    );
    let names: Vec<String> = std::fs::read_dir(&baselines)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["main"], "no staging or lock left behind");

    // Names, missing baselines and the forms of the command line.
    let (_, err, code) = run(&[&["compare", s(&new), "--baseline", "other"], &at[..]].concat());
    assert_eq!(code, Some(1));
    assert!(
        err.contains("no baseline \"other\"") && err.contains("saved there: main"),
        "{err}"
    );
    for (args, said) in [
        (
            vec!["compare", s(&new), "--save-baseline", "../up"],
            "not a baseline name",
        ),
        (
            vec!["compare", s(&new), "--baseline", "a/b"],
            "not a baseline name",
        ),
        (
            vec!["compare", s(&base), s(&new), "--baseline", "main"],
            "give NEW alone",
        ),
        (vec!["compare", s(&new)], "give BASE and NEW"),
        (
            vec![
                "compare",
                s(&new),
                "--save-baseline",
                "x",
                "--fail-slower",
                "5",
            ],
            "need a comparison",
        ),
    ] {
        let (out, err, code) = run(&[&args[..], &at[..]].concat());
        assert_eq!(code, Some(2), "{args:?}: {out}{err}");
        assert!(err.contains(said), "{args:?}: {err}");
    }
    assert!(!baselines.join("x").exists());
}

#[test]
fn the_rerun_noise_table_is_the_largest_spread_of_its_reruns() {
    let table = RerunNoise::built_in();
    assert!(!table.device.is_empty());
    for device in &table.device {
        let mut largest = 0.0f64;
        for group in &device.reruns {
            let sets: Vec<PathBuf> = group.sets.iter().map(PathBuf::from).collect();
            let spread = rerun_spread(&sets)
                .unwrap()
                .unwrap_or_else(|| panic!("{}: no two points match in {:?}", device.device, sets));
            largest = largest.max(spread.spread);
            for set in &sets {
                let points = std::fs::read_to_string(set.join("points.csv")).unwrap();
                assert!(
                    points.contains(&device.device),
                    "{} ran on {}",
                    set.display(),
                    device.device
                );
            }
        }
        assert!(
            (threshold_of_spread(largest) - device.threshold_percent / 100.0).abs() < 1e-12,
            "{}: the reruns' largest spread is {largest}, recorded {}%",
            device.device,
            device.threshold_percent
        );
        assert!(DEFAULT_THRESHOLD >= device.threshold_percent / 100.0);
    }
}

#[test]
fn a_real_sweep_compared_with_itself_is_never_faster_or_slower() {
    let (_, results) = swept("itself");
    let (out, err, code) = run(&["compare", s(&results), s(&results), "--fail-slower", "1"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("4 points matched"), "{out}");
    assert!(
        rows_with(&out, "faster").is_empty() && rows_with(&out, "slower").is_empty(),
        "{out}"
    );
    assert!(out.contains("percentile bootstrap"), "{out}");
    // min_reps reaches the minimum: the points are weighed, not withheld as too few.
    assert!(!out.contains("too few repetitions"), "{out}");
}

// ---- compare: too few repetitions, no match, --pair-by and --ignore ----

/// Rewrites `column` of the set's points.csv in place (added, empty, to an older file
/// without it): row r gets `value(r)` where it gives one.
fn set_column(set: &Path, column: &str, value: impl Fn(usize) -> Option<String>) {
    let path = set.join("points.csv");
    let mut reader = csv::Reader::from_path(&path).unwrap();
    let mut headers = reader.headers().unwrap().clone();
    let added = !headers.iter().any(|h| h == column);
    if added {
        headers.push_field(column);
    }
    let at = headers.iter().position(|h| h == column).unwrap();
    let rows: Vec<Vec<String>> = reader
        .records()
        .map(|r| r.unwrap().iter().map(str::to_string).collect())
        .map(|mut fields: Vec<String>| {
            if added {
                fields.push(String::new());
            }
            fields
        })
        .collect();
    let mut writer = csv::Writer::from_path(&path).unwrap();
    writer.write_record(&headers).unwrap();
    for (r, mut fields) in rows.into_iter().enumerate() {
        if let Some(v) = value(r) {
            fields[at] = v;
        }
        writer.write_record(&fields).unwrap();
    }
    writer.flush().unwrap();
}

/// `compare --json`'s document.
fn compared_json(args: &[&str]) -> serde_json::Value {
    let (out, err, code) = run(&[&["compare"], args, &["--json"]].concat());
    assert_eq!(code, Some(0), "{err}");
    serde_json::from_str(&out).unwrap()
}

#[test]
fn a_point_with_fewer_than_the_minimum_of_repetitions_gets_no_verdict_and_says_so() {
    let dir = common::scratch("compare", "too-few");
    // Point 1 has one repetition short of the minimum, point 2 exactly the minimum.
    let reps = |p: usize| match p {
        1 => MIN_SAMPLES - 1,
        2 => MIN_SAMPLES,
        _ => 30,
    };
    let times = |factor: f64| move |p: usize| noisy((10.0 + p as f64) * factor, 0.005, reps(p), p);
    let base = synthetic(&dir.join("base"), H200, times(1.0), MET);
    let doubled = synthetic(&dir.join("doubled"), H200, times(2.0), MET);
    let (out, err, code) = run(&["compare", s(&base), s(&doubled), "--fail-slower", "10"]);
    assert_eq!(code, Some(3), "{err}");
    let withheld = format!(
        "| no verdict: base has {} repetitions, fewer than the {MIN_SAMPLES} a verdict needs |",
        MIN_SAMPLES - 1
    );
    let flagged: Vec<&str> = out.lines().filter(|l| l.contains(&withheld)).collect();
    assert_eq!(flagged.len(), 1, "{out}");
    assert!(flagged[0].starts_with("| workgroup=64 |"), "{out}");
    // Its interval is still shown, and would have cleared the threshold.
    let (low, _) = interval_of(flagged[0]);
    assert!(low > 1.0 + recorded_h200(), "{out}");
    assert_eq!(rows_with(&out, "slower").len(), 3, "{out}");
    assert!(
        out.contains(
            "3 slower, 0 faster, 0 same, 0 unclear, 1 without a verdict (1 too few repetitions)."
        ),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "No verdict where a side has fewer than {MIN_SAMPLES} repetitions"
        )),
        "{out}"
    );
    assert!(
        err.contains("3 point(s) slower") && !err.contains("workgroup=64"),
        "{err}"
    );
    let json = compared_json(&[s(&base), s(&doubled)]);
    assert_eq!(json["min_samples"], MIN_SAMPLES);
    assert_eq!(json["counts"]["slower"], 3);
    assert_eq!(json["counts"]["no_verdict"]["too_few_repetitions"], 1);
    assert_eq!(
        json["points"][1]["judgement"]["no_verdict"]["reason"],
        "too-few-repetitions"
    );
}

#[test]
fn identical_reruns_of_3_and_5_repetitions_are_never_faster_or_slower() {
    let dir = common::scratch("compare", "three-and-five");
    // Draws of one process (±20% about each point's time): the base's three happen to
    // be low and the new set's five high, as two short reruns can.
    let base = synthetic(
        &dir.join("base"),
        H200,
        |p| {
            [0.82, 0.85, 0.88]
                .iter()
                .map(|u| u * (10.0 + p as f64))
                .collect()
        },
        MET,
    );
    let new = synthetic(
        &dir.join("new"),
        H200,
        |p| {
            [0.95, 1.05, 1.1, 1.15, 1.2]
                .iter()
                .map(|u| u * (10.0 + p as f64))
                .collect()
        },
        MET,
    );
    for (b, n) in [(&base, &new), (&new, &base)] {
        let (out, err, code) = run(&["compare", s(b), s(n), "--fail-slower", "1"]);
        assert_eq!(code, Some(0), "{err}");
        assert!(
            rows_with(&out, "faster").is_empty() && rows_with(&out, "slower").is_empty(),
            "{out}"
        );
        let withheld: Vec<&str> = out
            .lines()
            .filter(|l| l.contains("repetitions, fewer than the"))
            .collect();
        assert_eq!(withheld.len(), 4, "{out}");
        // Without the rule these would be verdicts: every interval clears the band.
        for row in withheld {
            let (low, high) = interval_of(row);
            assert!(
                low > 1.0 + recorded_h200() || high < 1.0 - recorded_h200(),
                "{row}"
            );
        }
        assert!(
            out.contains("4 without a verdict (4 too few repetitions)"),
            "{out}"
        );
    }
}

#[test]
fn a_set_that_stopped_at_the_time_budget_says_so_in_text_and_json() {
    let dir = common::scratch("compare", "time-budget");
    let base = synthetic(&dir.join("base"), H200, tight(1.0), MET);
    let new = synthetic(&dir.join("new"), H200, tight(1.0), |_| "time-budget");
    let (out, err, code) = run(&["compare", s(&base), s(&new)]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("4 without a verdict (4 missed the noise target). Every point of the new set stopped at the time budget, before its noise target."),
        "{out}"
    );
    let json = compared_json(&[s(&base), s(&new)]);
    assert_eq!(json["counts"]["no_verdict"]["missed_noise_target"], 4);
    assert_eq!(json["stopped"]["new"]["time_budget"], 4);
    assert_eq!(json["stopped"]["base"]["noise_target"], 4);
}

#[test]
fn sets_that_match_nowhere_fail_naming_the_settings_that_differ() {
    let dir = common::scratch("compare", "no-match");
    let base = synthetic(&dir.join("base"), H200, tight(1.0), MET);
    let new = synthetic(&dir.join("new"), H200, tight(1.0), MET);
    set_column(&new, "size", |_| Some("512".into()));
    set_column(&new, "variant", |_| Some("fast".into()));
    let (out, err, code) = run(&["compare", s(&base), s(&new)]);
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(!out.contains("| point |"), "no empty table: {out}");
    for said in [
        "size: 256 in base, 512 in new",
        "variant: paper in base, fast in new",
        "--ignore size,variant",
        "--pair-by workgroup",
    ] {
        assert!(err.contains(said), "{said}: {err}");
    }
    assert!(
        !err.contains("workgroup:"),
        "workgroup takes one set of values: {err}"
    );
    // --ignore follows the advice.
    let (out, err, code) = run(&["compare", s(&base), s(&new), "--ignore", "size,variant"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(rows_with(&out, "same").len(), 4, "{out}");
}

#[test]
fn pair_by_compares_two_sets_across_the_setting_they_fix_differently() {
    let dir = common::scratch("compare", "pair-by");
    let base = synthetic(&dir.join("paper"), H200, tight(1.0), MET);
    let fast = synthetic(&dir.join("fast"), H200, tight(2.0), MET);
    set_column(&fast, "variant", |_| Some("fast".into()));
    for flags in [
        &["--pair-by", "workgroup"][..],
        &["--pair-by", "workgroup,size"],
        &["--pair-by", "workgroup", "--pair-by", "size"],
    ] {
        let (out, err, code) = run(&[&["compare", s(&base), s(&fast)], flags].concat());
        assert_eq!(code, Some(0), "{flags:?}: {err}");
        let slower = rows_with(&out, "slower");
        assert_eq!(slower.len(), 4, "{flags:?}: {out}");
        assert!(
            slower[1].starts_with("| workgroup=64 (variant paper → fast) |"),
            "{flags:?}: {out}"
        );
        assert!(out.contains("compared across variant."), "{flags:?}: {out}");
    }
    let json = compared_json(&[s(&base), s(&fast), "--pair-by", "workgroup"]);
    assert_eq!(json["compared_across"], serde_json::json!(["variant"]));
    assert_eq!(
        json["points"][0]["changes"],
        serde_json::json!([{"key": "variant", "base": "paper", "new": "fast"}])
    );
    assert_eq!(json["counts"]["slower"], 4);
}

#[test]
fn pair_by_and_ignore_refuse_unknown_keys_and_ambiguous_matches() {
    let dir = common::scratch("compare", "pair-by-refusals");
    let base = synthetic(&dir.join("base"), H200, tight(1.0), MET);
    for (flags, said) in [
        (
            &["--pair-by", "wrokgroup"][..],
            "--pair-by wrokgroup: not a key of a point",
        ),
        (
            &["--ignore", "size,sizes"],
            "--ignore sizes: not a key of a point",
        ),
        (
            &["--pair-by", "size", "--ignore", "size"],
            "--pair-by and --ignore both name size",
        ),
    ] {
        let (out, err, code) = run(&[&["compare", s(&base), s(&base)], flags].concat());
        assert_eq!(code, Some(2), "{flags:?}: {out}{err}");
        assert!(err.contains(said), "{flags:?}: {err}");
        assert!(out.is_empty(), "{flags:?}: refused before comparing: {out}");
    }
    // New's second point is workgroup 32 too, at another size: with size left out, the
    // base's workgroup 32 has two different matches.
    let new = synthetic(&dir.join("new"), H200, tight(1.0), MET);
    set_column(&new, "workgroup", |r| (r == 1).then(|| "32".into()));
    set_column(&new, "size", |r| (r == 1).then(|| "512".into()));
    let (_, err, code) = run(&["compare", s(&base), s(&new)]);
    assert_eq!(code, Some(0), "matched on size, unique: {err}");
    let (out, err, code) = run(&["compare", s(&base), s(&new), "--ignore", "size"]);
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(
        err.contains("ambiguous match: the point workgroup=32 of the base matches 2 points of the new set, which differ in size (256, 512)")
            && err.contains("take them off --ignore size"),
        "{err}"
    );
}

#[test]
fn the_threshold_is_of_every_device_of_both_sets_matched_or_not() {
    let dir = common::scratch("compare", "devices");
    let device = "Imaginary GPU";
    // Base's last point ran elsewhere and matches nothing; the sets' threshold is still
    // the default, as that device has no rerun record.
    let base = synthetic(&dir.join("base"), H200, tight(1.0), MET);
    set_column(&base, "device", |r| (r == 3).then(|| device.into()));
    set_column(&base, "workgroup", |r| (r == 3).then(|| "1024".into()));
    let new = synthetic(&dir.join("new"), H200, tight(1.0), MET);
    let (out, err, code) = run(&["compare", s(&base), s(&new)]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("3 points matched; 1 only in the base"),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "Threshold: {}%, the default: results/rerun-noise.toml has no rerun record of \"{device}\"",
            vkerode::readable_number(DEFAULT_THRESHOLD * 100.0)
        )),
        "{out}"
    );
    // Sets that name no device say so.
    for set in [&base, &new] {
        set_column(set, "device", |_| Some(String::new()));
    }
    let (out, _, _) = run(&["compare", s(&base), s(&new)]);
    assert!(
        out.contains("the default (the sets name no device)"),
        "{out}"
    );
}

#[test]
fn points_on_different_heightmaps_pair_by_their_input_whatever_their_order() {
    let dir = common::scratch("compare", "by-input");
    // Four DEMs, one setting: the new sweep listed them in the opposite order, and
    // each DEM takes its own time (10 + its index, ms) in both.
    let dems = ["a.tif", "b.tif", "c.tif", "d.tif"];
    let base = synthetic(&dir.join("base"), H200, tight(1.0), MET);
    let new = synthetic(
        &dir.join("new"),
        H200,
        |p| tight(1.0)(dems.len() - 1 - p),
        MET,
    );
    let reversed: Vec<&str> = dems.iter().rev().copied().collect();
    for (set, inputs) in [(&base, dems.to_vec()), (&new, reversed)] {
        set_column(set, "workgroup", |_| Some("64".into()));
        set_column(set, "variant", |_| Some("paper".into()));
        set_column(set, "input", |r| Some(inputs[r].into()));
        set_column(set, "input_hash", |r| {
            Some(format!("hash-of-{}", inputs[r]))
        });
    }
    let (out, err, code) = run(&["compare", s(&base), s(&new)]);
    assert_eq!(code, Some(0), "{err}");
    let same = out
        .lines()
        .filter(|l| l.starts_with("| input=") && l.trim_end().ends_with("| same |"))
        .count();
    assert_eq!(same, 4, "{out}");
    for dem in dems {
        assert!(out.contains(&format!("| input={dem} ")), "{dem}: {out}");
    }
    assert!(!out.contains("the one point"), "{out}");
    // The same name over other content is another heightmap.
    set_column(&new, "input_hash", |_| Some("other".into()));
    let (_, err, code) = run(&["compare", s(&base), s(&new)]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("input_hash"), "{err}");
}

#[test]
fn a_points_csv_median_that_is_not_its_samples_median_is_refused() {
    let dir = common::scratch("compare", "edited-median");
    let base = synthetic(&dir.join("base"), H200, tight(1.0), MET);
    let edited = synthetic(&dir.join("edited"), H200, tight(1.0), MET);
    set_column(&edited, "gpu_ms_median", |r| {
        (r == 1).then(|| "1e308".into())
    });
    let (out, err, code) = run(&["compare", s(&base), s(&edited)]);
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(
        err.contains("point 1 (worker 0): its samples' median is")
            && err.contains("says 1.000e308 ms"),
        "{err}"
    );
}

#[test]
fn plot_names_an_unknown_where_column() {
    let dir = common::scratch("compare", "unknown-where");
    let csv = Path::new(TEMPLATE).join("points.csv");
    let (_, err, code) = run(&[
        "plot",
        s(&csv),
        "--x",
        "workgroup",
        "--where",
        "nonexist=1",
        "--out",
        s(&dir),
    ]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("\"nonexist\" is not a points.csv column"),
        "{err}"
    );
}
