//! Every `--json` output and every JSON file vkerode writes (run.json, meta.json,
//! peak.json, equivalence.json) passes its committed schema in docs/schemas/, and the schemas are strict:
//! a document missing a required field, or with a field its type does not have, fails.

mod common;

use std::path::Path;

use serde_json::Value;

use common::{assert_clean_success, scratch, vkerode, Schemas};

/// Runs vkerode with `args` and `--json`: it succeeds, and stdout is one JSON document.
fn json_output(args: &[&str]) -> Value {
    let mut args = args.to_vec();
    args.push("--json");
    let output = vkerode(&args);
    assert_clean_success(&output);
    let stdout = String::from_utf8(output.stdout).expect("stdout is UTF-8");
    serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!("vkerode {args:?}: stdout is not one JSON document ({e}):\n{stdout}")
    })
}

fn json_file(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn path(p: &Path) -> &str {
    p.to_str().expect("scratch paths are UTF-8")
}

#[test]
fn every_json_output_and_file_passes_its_schema() {
    let dir = scratch("json_schemas", "outputs");
    let mut schemas = Schemas::new();

    let devices = json_output(&["devices"]);
    assert!(devices.as_array().is_some_and(|d| !d.is_empty()));
    schemas.assert_valid("devices", "devices --json", &devices);

    // Each strategy, and the CPU reference: the strategies' own fields differ.
    let strategies = vkerode::erosion::ALL_STRATEGIES
        .iter()
        .map(|s| (s.algorithm().as_str(), s.smoke_args()));
    let cpu: (&str, &[&str]) = ("cpu", &["--droplets", "300", "--engine", "cpu-sequential"]);
    let runs = strategies.chain([cpu]);
    let mut droplets_run = Value::Null;
    for (name, extra) in runs {
        let out = dir.join(name);
        let mut args = vec!["erode", "--size", "32", "--no-images", "--out", path(&out)];
        args.extend_from_slice(extra);
        let printed = json_output(&args);
        schemas.assert_valid("run", &format!("erode --json ({name})"), &printed);
        let file = json_file(&out.join("run.json"));
        schemas.assert_valid("run", &format!("run.json ({name})"), &file);
        assert_eq!(printed, file, "erode --json prints run.json ({name})");
        if name != "cpu" {
            assert_eq!(file["algorithm"], name, "{name}'s smoke_args run {name}");
        }
        if name == "droplets" {
            droplets_run = file;
        }
    }

    let config = dir.join("tiny.toml");
    std::fs::write(
        &config,
        "name = \"tiny\"\ndescription = \"t\"\n[fixed]\nsize = 32\ndroplets = 200\n[axes]\nworkgroup = [32, 64]\n[measure]\nwarmup = 0\nmin_reps = 3\nmax_reps = 3\n",
    )
    .unwrap();
    let results = dir.join("results");
    let sweep = json_output(&[
        "sweep",
        path(&config),
        "--out",
        &common::sweep_out(&results),
        "--quiet",
    ]);
    schemas.assert_valid("sweep", "sweep --json", &sweep);
    assert_eq!(sweep["measured"], 2, "{sweep:#}");
    let set = common::results_dir(&results, "tiny");
    schemas.assert_valid("meta", "meta.json", &json_file(&set.join("meta.json")));

    let report = json_output(&["report", path(&set)]);
    schemas.assert_valid("report", "report --json", &report);
    let over = json_output(&["report", path(&set), "--over", "workgroup"]);
    schemas.assert_valid("report-over", "report --over KEY --json", &over);
    assert_eq!(
        over["groups"][0]["values"],
        serde_json::json!(["32", "64"]),
        "{over:#}"
    );
    assert_eq!(
        report, sweep["points"],
        "sweep --json's points are report's"
    );

    // Numbers as numbers, units in their own fields.
    for point in report.as_array().unwrap() {
        assert!(point["outliers"].is_u64(), "{point}");
        assert!(point["rate"].is_f64(), "{point}");
        assert_eq!(point["rate_unit"], "droplet-steps/s", "{point}");
    }
    let compare = json_output(&["compare", path(&set), path(&set)]);
    schemas.assert_valid("compare", "compare --json", &compare);
    assert_eq!(compare["points"].as_array().map(Vec::len), Some(2));
    // The bootstrap as the text states it.
    let intervals = &compare["intervals"];
    assert_eq!(intervals["method"], "bootstrap");
    assert_eq!(intervals["level"], 0.95);
    assert_eq!(intervals["resamples"], vkerode::stats::bootstrap::RESAMPLES);
    assert_eq!(intervals["seed"], vkerode::stats::bootstrap::SEED);

    let kernels = json_output(&["kernels", "--variant", "paper", "--workgroup", "64"]);
    schemas.assert_valid("kernels", "kernels --json", &kernels);

    let peak_dir = dir.join("peak");
    let peak = json_output(&["peak", "--out", path(&peak_dir)]);
    schemas.assert_valid("peak", "peak --json", &peak);
    let peak_file = json_file(&peak_dir.join("peak.json"));
    schemas.assert_valid("peak", "peak.json", &peak_file);
    assert_eq!(peak, peak_file, "peak --json prints peak.json");

    let equivalence_dir = dir.join("equivalence");
    let equivalence = json_output(&[
        "equivalence",
        "--size",
        "32",
        "--droplets",
        "200",
        "--seeds",
        "3",
        "--reference-seeds",
        "2",
        "--permutations",
        "19",
        "--variants",
        "paper",
        "--out",
        path(&equivalence_dir),
    ]);
    schemas.assert_valid("equivalence", "equivalence --json", &equivalence);
    let equivalence_file = json_file(&equivalence_dir.join("equivalence.json"));
    schemas.assert_valid("equivalence", "equivalence.json", &equivalence_file);
    assert_eq!(
        equivalence, equivalence_file,
        "equivalence --json prints equivalence.json"
    );

    // Strict where it matters: a required field removed, a field added, a number
    // where a text is due, and a strategy field no strategy writes, each fail.
    let mut without = droplets_run.clone();
    without.as_object_mut().unwrap().remove("change");
    schemas.assert_invalid("run", "run.json without `change`", &without);
    let mut nested = droplets_run.clone();
    nested["figures"]
        .as_object_mut()
        .unwrap()
        .remove("steps_per_s");
    schemas.assert_invalid("run", "run.json without `figures.steps_per_s`", &nested);
    let mut extra = droplets_run.clone();
    extra["landform"]["before"]["made_up"] = 1.into();
    schemas.assert_invalid("run", "run.json with `landform.before.made_up`", &extra);
    let mut wrong = droplets_run.clone();
    wrong["provenance"]["device"] = 7.into();
    schemas.assert_invalid("run", "run.json with a numeric device", &wrong);
    let mut unknown = droplets_run;
    unknown["not_a_strategy_field"] = true.into();
    schemas.assert_invalid("run", "run.json with an unlisted field", &unknown);
    let mut unnamed = devices;
    unnamed[0].as_object_mut().unwrap().remove("name");
    schemas.assert_invalid("devices", "devices --json without a name", &unnamed);
    let mut no_rows = peak_file;
    no_rows.as_object_mut().unwrap().remove("walk");
    schemas.assert_invalid("peak", "peak.json without `walk`", &no_rows);
}

#[test]
fn each_schema_closes_its_objects_and_states_units() {
    for entry in std::fs::read_dir("docs/schemas").expect("docs/schemas/") {
        let path = entry.unwrap().path();
        let schema = json_file(&path);
        let root = match &schema["type"] {
            Value::String(t) if t == "array" => &schema["items"],
            _ => &schema,
        };
        assert_eq!(
            root["additionalProperties"],
            Value::Bool(false),
            "{}: its objects are closed",
            path.display()
        );
        assert!(
            root["required"].as_array().is_some_and(|r| !r.is_empty()),
            "{}: it requires fields",
            path.display()
        );
    }
    assert_eq!(
        vkerode::reference::fields_missing_from_schemas(),
        Vec::<&str>::new(),
        "fields docs/results.md lists that the files' types do not have"
    );
    let run = json_file(Path::new("docs/schemas/run.schema.json"));
    let gpu_ms = run["properties"]["figures"]["properties"]["gpu_ms"]["description"]
        .as_str()
        .unwrap_or_default();
    assert!(gpu_ms.contains("(unit: ms)"), "{gpu_ms:?}");
}
