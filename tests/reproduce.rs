//! `vkerode reproduce`: the paper's claims on the default device (lavapipe in CI) at
//! the smallest scale, end to end under validation. Every claim of the suite gets a
//! verdict and its evidence, the summary sets each beside a reference, the page loads
//! in Chromium with every chart; bad input is refused before any work, with nothing
//! written.

mod common;

use std::path::Path;

use common::{assert_clean_success, browse, scratch, stderr, vkerode, Schemas};
use vkerode::experiment::reproduce::{
    Calibration, ClaimResult, ClaimVerdict, Reproduction, Scale, CLAIMS, JSON_FILE, REPORT_HTML,
    SIZES, SUMMARY_MD,
};

/// A reference in which every claim holds with an effect of 1.
fn reference(dir: &Path) {
    let claims = CLAIMS
        .iter()
        .map(|c| ClaimResult {
            id: c.id.into(),
            topic: c.topic.into(),
            paper: c.paper.into(),
            tested: c.tested.into(),
            verdict: ClaimVerdict::Holds,
            why: "planted".into(),
            effect: None,
            stable: None,
            erosion: None,
            figures: Vec::new(),
        })
        .collect();
    let planted = Reproduction {
        device: "Planted GPU".into(),
        driver: "none".into(),
        vulkan: "1.3".into(),
        commit: "0000000".into(),
        budget_s: 1.0,
        elapsed_s: 1.0,
        calibration: Calibration {
            fixed_s: 0.0,
            per_cell_s: 0.0,
        },
        scale: Scale::at(4096, 3, 1.0),
        threshold_percent: 3.6,
        threshold_source: "planted".into(),
        claims,
    };
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join(JSON_FILE),
        serde_json::to_string(&planted).unwrap(),
    )
    .unwrap();
}

#[test]
fn every_claim_gets_a_verdict_beside_the_reference_and_the_page_loads() {
    let dir = scratch("reproduce", "tiny");
    let reference_dir = dir.join("reference");
    reference(&reference_dir);
    let out = dir.join("out");
    // A second's budget: the calibration alone spends it, so the smallest scale runs.
    let run = vkerode(&[
        "reproduce",
        "--budget",
        "1s",
        "--seeds",
        "2",
        "--reference",
        reference_dir.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--json",
    ]);
    assert_clean_success(&run);
    assert!(
        stderr(&run).contains("the budget is too small"),
        "{}",
        stderr(&run)
    );

    // stdout is reproduce.json, and both pass its schema.
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join(JSON_FILE)).unwrap()).unwrap();
    let printed: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(printed, file);
    Schemas::new().assert_valid("reproduce", "reproduce.json", &file);
    let outcome: Reproduction = serde_json::from_value(file).unwrap();
    assert_eq!(outcome.scale.size, SIZES[0]);
    assert_eq!(outcome.scale.seeds, 2);
    assert_eq!(outcome.budget_s, 1.0);
    let ids: Vec<&str> = outcome.claims.iter().map(|c| c.id.as_str()).collect();
    let expected: Vec<&str> = CLAIMS.iter().map(|c| c.id).collect();
    assert_eq!(ids, expected);
    for claim in &outcome.claims {
        assert!(!claim.why.is_empty(), "{}: a verdict says why", claim.id);
        if let Some(effect) = &claim.effect {
            assert!(effect.value.is_finite(), "{claim:?}");
            if let Some((low, high)) = effect.interval {
                assert!(low <= high, "{claim:?}");
            }
        }
        // A speed claim that holds needs a stable setting and an interval beyond the
        // threshold.
        if claim.verdict == ClaimVerdict::Holds && claim.id.ends_with("speed") {
            assert_ne!(claim.stable, Some(false), "{claim:?}");
            let (_, high) = claim.effect.as_ref().unwrap().interval.unwrap();
            assert!(high < 1.0 - outcome.threshold_percent / 100.0, "{claim:?}");
        }
    }
    // The deterministic mode's reruns never differ, whatever the int atomics do.
    let atomics = outcome
        .claims
        .iter()
        .find(|c| c.id == "atomics-deterministic")
        .unwrap();
    let deterministic = atomics
        .figures
        .iter()
        .find(|(what, _)| what.ends_with("deterministic"))
        .unwrap();
    assert!(deterministic.1.starts_with("0 "), "{deterministic:?}");

    // Every sweep's files, and the grid's runs.
    for sweep in ["workgroup", "batching", "stagger", "atomics"] {
        let folder = out.join("sweeps").join(format!("reproduce-{sweep}"));
        let device = std::fs::read_dir(&folder)
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        for file in ["points.csv", "samples.csv", "meta.json"] {
            assert!(
                device.join(file).is_file(),
                "{}",
                device.join(file).display()
            );
        }
    }
    assert!(out.join("grid").join("strategies.csv").is_file());
    assert!(
        !out.join(".calibration").exists(),
        "the calibration is not kept"
    );

    // The summary: every claim, the reference's verdict beside it, agreeing or not.
    let summary = std::fs::read_to_string(out.join(SUMMARY_MD)).unwrap();
    assert!(summary.contains("Reference: Planted GPU"), "{summary}");
    for claim in &outcome.claims {
        let agreement = match claim.verdict {
            ClaimVerdict::Holds => "(agrees)",
            _ => "(differs)",
        };
        let row = summary
            .lines()
            .find(|l| l.starts_with(&format!("| {} |", claim.topic)))
            .unwrap_or_else(|| panic!("no row for {}: {summary}", claim.topic));
        assert!(row.contains(agreement), "{row}");
        assert!(
            summary.contains(&format!("> {}", claim.paper)),
            "{}",
            claim.id
        );
    }

    // The page: no console message, one inline chart per numeric axis at least.
    let page = out.join(REPORT_HTML);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(!html.contains("<script"), "no script");
    assert!(
        html.matches("<figure><svg").count() >= 3,
        "the sweeps' charts"
    );
    let (_, console) = browse(&page, &["--dump-dom"]);
    assert!(console.is_empty(), "console messages: {console:#?}");
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
    refused(&["--budget", "0"], "--budget");
    refused(&["--budget", "ten minutes"], "--budget");
    refused(&["--seeds", "1"], "--seeds");
    let broken = dir.join("broken");
    std::fs::create_dir_all(&broken).unwrap();
    std::fs::write(broken.join(JSON_FILE), "{\"device\": 1}").unwrap();
    refused(&["--reference", broken.to_str().unwrap()], "reproduce.json");
}
