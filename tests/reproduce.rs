//! `vkerode reproduce` on the default device (lavapipe in CI), end to end under
//! validation: a 60-second budget is kept (the command's own promise about its running
//! time, checked by its own clock and the test's; not a benchmark of the device), every
//! claim gets its reading with its unit, direction, scale and seeds, each is set beside
//! a planted reference at its own scale, and the page loads in Chromium with every
//! chart and image. `--claims` runs only the steps its claims need; bad input is
//! refused before any work, with nothing written.

mod common;

use std::path::Path;
use std::sync::Mutex;
use std::time::Instant;

use common::{assert_clean_success, browse, probe, scratch, stderr, vkerode, Schemas};
use vkerode::stats::Verdict;
use vkerode::studies::reproduce::{
    Calibration, ClaimKind, ClaimResult, ClaimVerdict, Reproduction, Reps, Scale, BUDGET_FLOOR_S,
    CLAIMS, FRAGILE_SHARE, JSON_FILE, REPORT_HTML, SUMMARY_MD,
};

/// The suites of this file one at a time: the budget test's clock must not share the
/// two cores with another suite.
static ONE_SUITE: Mutex<()> = Mutex::new(());

/// A planted reference bundle: at 64² every claim holds (context claims: "lower") but
/// the grid, which it lacks; at 2048² every one does not hold. Each scale in its own
/// folder, as the committed bundle.
fn reference(dir: &Path) {
    for (size, verdict) in [(64, ClaimVerdict::Holds), (2048, ClaimVerdict::DoesNotHold)] {
        let claims = CLAIMS
            .iter()
            .filter(|c| size != 64 || c.id != "grid")
            .map(|c| ClaimResult {
                id: c.id.into(),
                topic: c.topic.into(),
                paper: c.paper.into(),
                tested: c.tested.into(),
                kind: c.kind,
                verdict: match c.kind {
                    ClaimKind::Paper => verdict,
                    ClaimKind::Context => ClaimVerdict::Context,
                },
                interval_verdict: Some(Verdict::Lower),
                band: None,
                why: "planted".into(),
                effect: None,
                scale: Scale::at(size),
                seeds: vec![1, 2, 3],
                flip_share: None,
                fragile: false,
                stable: None,
                erosion: None,
                figures: Vec::new(),
                method: String::new(),
            })
            .collect();
        let planted = Reproduction {
            device: "Planted GPU".into(),
            driver: "none".into(),
            vulkan: "1.3".into(),
            commit: "0000000".into(),
            budget_s: 1.0,
            predicted_s: 1.0,
            elapsed_s: 1.0,
            calibration: Calibration::of_runs(Vec::new(), Reps::for_budget(1.0), String::new()),
            scale: Scale::at(size),
            scale_choice: None,
            reps: Reps::for_budget(1.0),
            cuts: Vec::new(),
            units: Vec::new(),
            threshold_percent: 3.6,
            threshold_source: "planted".into(),
            claims,
        };
        let folder = dir.join(size.to_string());
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(
            folder.join(JSON_FILE),
            serde_json::to_string(&planted).unwrap(),
        )
        .unwrap();
    }
}

#[test]
fn a_minutes_budget_is_kept_and_every_claim_is_read_beside_the_reference() {
    let _one = ONE_SUITE.lock().unwrap_or_else(|e| e.into_inner());
    let dir = scratch("reproduce", "minute");
    let reference_dir = dir.join("reference");
    reference(&reference_dir);
    let out = dir.join("out");
    let started = Instant::now();
    let run = vkerode(&[
        "reproduce",
        "--budget",
        "60s",
        "--reference",
        reference_dir.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--json",
    ]);
    let wall = started.elapsed().as_secs_f64();
    assert_clean_success(&run);

    // stdout is reproduce.json, and both pass its schema.
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join(JSON_FILE)).unwrap()).unwrap();
    let printed: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(printed, file);
    Schemas::new().assert_valid("reproduce", "reproduce.json", &file);
    let outcome: Reproduction = serde_json::from_value(file).unwrap();

    // The budget: kept within 10%, by the command's clock and by the test's (which
    // also counts the start and the last writes).
    assert_eq!(outcome.budget_s, 60.0);
    assert!(outcome.elapsed_s <= 66.0, "{} s", outcome.elapsed_s);
    assert!(
        wall <= 66.0,
        "the command took {wall:.1} s of a 60 s budget"
    );
    assert!(outcome.predicted_s > 0.0);
    assert!(!outcome.calibration.runs.is_empty());
    // The calibration says why it measured no larger side, and the scale why it was
    // chosen, on the console and in reproduce.json: among the sides measured and the one
    // past them.
    assert!(!outcome.calibration.stopped.is_empty());
    let choice = outcome.scale_choice.as_ref().expect("the scale's choice");
    let largest_measured = outcome.calibration.runs.iter().map(|r| r.1).max().unwrap();
    let considered: Vec<u32> = choice.predicted.iter().map(|&(side, _)| side).collect();
    assert!(considered.contains(&outcome.scale.size), "{choice:?}");
    assert!(
        considered.iter().all(|&side| side <= 2 * largest_measured),
        "{choice:?}"
    );
    let said = format!(
        "budget 60 s buys {}² ({} droplets a run): {}",
        outcome.scale.size, outcome.scale.droplets, choice.why
    );
    assert!(stderr(&run).contains(&said), "{said}\n{}", stderr(&run));
    // Every unit run is recorded with its prediction and its time, and they add up to
    // no more than the whole.
    assert!(!outcome.units.is_empty());
    let taken: f64 = outcome.units.iter().map(|u| u.taken_s).sum();
    assert!(
        taken <= outcome.elapsed_s,
        "{taken} of {}",
        outcome.elapsed_s
    );
    assert!(outcome.units.iter().all(|u| u.predicted_s > 0.0));

    let ids: Vec<&str> = outcome.claims.iter().map(|c| c.id.as_str()).collect();
    let expected: Vec<&str> = CLAIMS.iter().map(|c| c.id).collect();
    assert_eq!(ids, expected);
    for claim in &outcome.claims {
        assert!(!claim.why.is_empty(), "{}: a verdict says why", claim.id);
        if claim.verdict == ClaimVerdict::NotMeasured {
            continue;
        }
        assert!(claim.seeds.len() >= 2, "{claim:?}");
        // What the paper does not claim gets no verdict, only its effect.
        let context = CLAIMS
            .iter()
            .any(|c| c.id == claim.id && c.kind == ClaimKind::Context);
        assert_eq!(claim.verdict == ClaimVerdict::Context, context, "{claim:?}");
        if let Some(effect) = &claim.effect {
            assert!(effect.value.is_finite(), "{claim:?}");
            assert!(effect.text().contains("is better)"), "{}", effect.text());
            if let Some((low, high)) = effect.interval {
                assert!(low <= high, "{claim:?}");
            }
        }
        // A speed claim that holds needs a stable setting and an interval beyond the
        // threshold.
        if claim.verdict == ClaimVerdict::Holds
            && ["batching", "stagger-speed"].contains(&claim.id.as_str())
        {
            assert_ne!(claim.stable, Some(false), "{claim:?}");
            let (_, high) = claim.effect.as_ref().unwrap().interval.unwrap();
            assert!(high < 1.0 - outcome.threshold_percent / 100.0, "{claim:?}");
        }
        assert_eq!(
            claim.fragile,
            claim.flip_share.is_some_and(|f| f > FRAGILE_SHARE),
            "{claim:?}"
        );
    }
    // The deterministic mode's reruns never differ, whatever the int atomics do.
    let atomics = outcome
        .claims
        .iter()
        .find(|c| c.id == "atomics-deterministic")
        .unwrap();
    if atomics.verdict != ClaimVerdict::NotMeasured {
        let deterministic = atomics
            .figures
            .iter()
            .find(|(what, _)| what.ends_with("deterministic"))
            .unwrap();
        assert!(deterministic.1.starts_with("0 "), "{deterministic:?}");
    }
    assert!(
        !out.join(".calibration").exists(),
        "the calibration is not kept"
    );

    // The summary: every claim, the reference's beside it at its own scale.
    let summary = std::fs::read_to_string(out.join(SUMMARY_MD)).unwrap();
    assert!(summary.contains("Reference: Planted GPU"), "{summary}");
    assert!(summary.contains("of a 60 s budget"), "{summary}");
    assert!(summary.contains(&choice.why), "{summary}");
    for claim in &outcome.claims {
        let row = summary
            .lines()
            .find(|l| l.starts_with(&format!("| {} |", claim.topic)))
            .unwrap_or_else(|| panic!("no row for {}: {summary}", claim.topic));
        let agreement = |agrees: bool| match agrees {
            true => "(agrees)".to_string(),
            false => "(differs)".to_string(),
        };
        let expected = match claim.verdict {
            ClaimVerdict::NotMeasured => "not measured here".to_string(),
            _ if claim.id == "grid" => "not comparable (64² here, 2048² there)".to_string(),
            ClaimVerdict::Context => agreement(claim.interval_verdict == Some(Verdict::Lower)),
            verdict => agreement(verdict == ClaimVerdict::Holds),
        };
        assert!(row.contains(&expected), "{expected}: {row}");
        assert!(
            summary.contains(&format!("> {}", claim.paper)),
            "{}",
            claim.id
        );
    }
    // The planted reference holds at 64² and does not at 2048²: it depends on scale.
    assert!(
        summary.contains("depends on scale in the reference: holds at 64²; does not hold at 2048²"),
        "{summary}"
    );

    // The page: no script of its own, no console message, every image decoded, the
    // forest plot and each step's charts inline.
    let page = out.join(REPORT_HTML);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(!html.contains("<script"), "no script");
    let charts = html.matches("<figure><svg").count();
    assert!(charts >= 2, "the forest plot and a step's chart: {charts}");
    let shot = dir.join("report.png");
    let (_, console) = browse(
        &page,
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1200,3000",
        ],
    );
    assert!(console.is_empty(), "console messages: {console:#?}");
    assert!(std::fs::read(&shot).unwrap().starts_with(b"\x89PNG"));
    let found = probe(&page, &dir.join("probed.html"));
    assert_eq!(found["decoded"], found["images"], "{found}");
    assert_eq!(found["svgs"].as_u64(), Some(charts as u64), "{found}");

    // Judged again from its folders, without a device, by the same rules: the same
    // claims, and the run as recorded.
    let again = vkerode(&[
        "reproduce",
        "--rejudge",
        out.to_str().unwrap(),
        "--reference",
        reference_dir.to_str().unwrap(),
        "--json",
    ]);
    assert_clean_success(&again);
    let rejudged: Reproduction = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(rejudged.claims, outcome.claims);
    assert_eq!(
        (rejudged.elapsed_s, &rejudged.units),
        (outcome.elapsed_s, &outcome.units)
    );

    // A time compare would refuse is refused here too, not judged.
    let points = first_points_csv(&out.join("sweeps")).expect("a sweep's points.csv");
    let mut reader = csv::Reader::from_path(&points).unwrap();
    let header = reader.headers().unwrap().clone();
    let at = header.iter().position(|h| h == "gpu_ms_median").unwrap();
    let mut rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    let mut first: Vec<String> = rows[0].iter().map(str::to_string).collect();
    first[at] = "NaN".into();
    rows[0] = csv::StringRecord::from(first);
    let mut writer = csv::Writer::from_path(&points).unwrap();
    writer.write_record(&header).unwrap();
    rows.iter().for_each(|r| writer.write_record(r).unwrap());
    writer.flush().unwrap();
    let refused = vkerode(&[
        "reproduce",
        "--rejudge",
        out.to_str().unwrap(),
        "--no-reference",
    ]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        stderr(&refused).contains("gpu_ms_median is NaN"),
        "{}",
        stderr(&refused)
    );
}

/// The first points.csv under `dir`, in name order.
fn first_points_csv(dir: &std::path::Path) -> Option<std::path::PathBuf> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    entries.iter().find_map(|path| match path.is_dir() {
        true => first_points_csv(path),
        false => (path.file_name()? == "points.csv").then(|| path.clone()),
    })
}

#[test]
fn only_the_claims_asked_for_run() {
    let _one = ONE_SUITE.lock().unwrap_or_else(|e| e.into_inner());
    let dir = scratch("reproduce", "claims");
    let out = dir.join("out");
    // The least budget the suite takes.
    let floor = format!("{BUDGET_FLOOR_S}s");
    let run = vkerode(&[
        "reproduce",
        "--budget",
        &floor,
        "--claims",
        "stagger-speed",
        "--no-reference",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_clean_success(&run);
    let outcome: Reproduction =
        serde_json::from_str(&std::fs::read_to_string(out.join(JSON_FILE)).unwrap()).unwrap();
    let ids: Vec<&str> = outcome.claims.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["stagger-speed"]);
    let ran: Vec<String> = std::fs::read_dir(out.join("sweeps"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(ran, ["reproduce-stagger"]);
    assert!(!out.join("grid").exists());
}

#[test]
fn bad_input_is_refused_before_any_work_and_nothing_is_written() {
    let dir = scratch("reproduce", "refusals");
    let out = dir.join("out");
    let refused = |args: &[&str], names: &str| {
        let mut all = vec!["reproduce", "--out", out.to_str().unwrap()];
        all.extend_from_slice(args);
        let run = vkerode(&all);
        assert!(!run.status.success(), "{args:?} was accepted");
        assert!(stderr(&run).contains(names), "{args:?}: {}", stderr(&run));
        assert!(!out.exists(), "{args:?} wrote {}", out.display());
    };
    // Below the suite's floor: refused before the device is opened (one that does not
    // exist is never looked for), naming the floor.
    let floor = format!(
        "the suite's floor of {} s",
        vkerode::readable_number(BUDGET_FLOOR_S)
    );
    refused(&["--budget", "1s", "--device", "no-such-device"], &floor);
    let just_below = format!("{}", BUDGET_FLOOR_S - 0.5);
    refused(
        &["--budget", &just_below, "--device", "no-such-device"],
        &floor,
    );
    refused(&["--budget", "0"], "--budget");
    refused(&["--budget", "ten minutes"], "--budget");
    refused(&["--budget", "1e308h"], "--budget");
    refused(&["--claims", "stagger,nope"], "no claim \"stagger\"");
    refused(&["--size", "100"], "not a side of the suite");
    let typo = dir.join("no-such-reference");
    refused(&["--reference", typo.to_str().unwrap()], "no such folder");
    let broken = dir.join("broken");
    std::fs::create_dir_all(&broken).unwrap();
    std::fs::write(broken.join(JSON_FILE), "{\"device\": 1}").unwrap();
    refused(&["--reference", broken.to_str().unwrap()], "reproduce.json");
    // A FIFO would block the read forever: it is refused as one.
    let fifo = dir.join("fifo");
    std::fs::create_dir_all(&fifo).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(fifo.join(JSON_FILE))
        .status()
        .unwrap();
    assert!(made.success());
    refused(&["--reference", fifo.to_str().unwrap()], "FIFO");
}
