//! `vkerode equivalence`: its verdicts on synthetic samples (the statistics are
//! `stats`', tested against scipy there), and the command end to end on a tiny map (lavapipe, validation
//! on).

mod common;

use common::{scratch, stderr, vkerode};
use vkerode::reference::{is_listed, leaf_paths};
use vkerode::stats::{permutation_test, Verdict};
use vkerode::studies::equivalence::{judge, BySeed, FigureSamples, Groups, PairVerdict, Variant};

/// `n` values around `mean` with a spread of `sd` (a fixed pattern, not random).
fn sample(mean: f64, sd: f64, n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| mean + sd * ((i as f64 * 2.399).sin() * 1.4))
        .collect()
}

/// Runs of seeds `first`, `first + 1`, ... with `values`.
fn seeded(first: u32, values: &[f64]) -> BySeed<f64> {
    (first..).zip(values.iter().copied()).collect()
}

/// The pair's verdict on `total_change` and a figure the margins table does not list
/// (a thousandth of it), with one flat map a run.
fn judged(variant: BySeed<f64>, reference: BySeed<f64>) -> PairVerdict {
    let flat = vec![0.5f32; 16];
    let maps = |side: &BySeed<f64>| -> BySeed<&[f32]> {
        side.iter()
            .map(|&(seed, _)| (seed, flat.as_slice()))
            .collect()
    };
    let thousandth = |side: &BySeed<f64>| side.iter().map(|&(s, v)| (s, v / 1000.0)).collect();
    let groups = Groups {
        figures: vec![
            FigureSamples {
                figure: "total_change".into(),
                variant: variant.clone(),
                reference: reference.clone(),
            },
            FigureSamples {
                figure: "some_new_figure".into(),
                variant: thousandth(&variant),
                reference: thousandth(&reference),
            },
        ],
        variant_maps: maps(&variant),
        reference_maps: maps(&reference),
        map_shape: (4, 4, 1),
    };
    judge(&groups, 99, 7)
}

/// The verdict on `total_change` and the pair's, both sides at seeds 1, 2, ...
fn verdict_of(variant: Vec<f64>, reference: Vec<f64>) -> (Verdict, Verdict) {
    let pair = judged(seeded(1, &variant), seeded(1, &reference));
    (pair.figures[0].verdict, pair.verdict)
}

#[test]
fn identical_groups_are_equivalent_shifted_ones_different_tiny_noisy_ones_inconclusive() {
    // Spread of 0.1% of the mean, margin 1%: equivalent.
    let reference = sample(-1000.0, 1.0, 20);
    assert_eq!(
        verdict_of(reference.clone(), reference.clone()),
        (Verdict::Same, Verdict::Same)
    );
    // Shifted by 5 margins (5% of the mean): different.
    let shifted: Vec<f64> = reference.iter().map(|v| v - 50.0).collect();
    assert_eq!(
        verdict_of(shifted, reference.clone()),
        (Verdict::Lower, Verdict::Different)
    );
    // Three runs a side with a spread of 10%, the seeds' values unrelated across the
    // sides (one side reversed): neither.
    let mut unrelated = sample(-1010.0, 100.0, 3);
    unrelated.reverse();
    assert_eq!(
        verdict_of(sample(-1000.0, 100.0, 3), unrelated),
        (Verdict::Unclear, Verdict::Unclear)
    );
}

/// 20 seeds whose figure moves by 3% of its mean from seed to seed on both sides alike
/// (a seed is the droplets' positions), the variant `shift` away with a spread of its
/// own of 0.05%: the seeds' correlation is above 0.99.
fn seed_correlated(shift: f64) -> (Vec<f64>, Vec<f64>) {
    let reference = sample(-1000.0, 30.0, 20);
    let variant = reference
        .iter()
        .enumerate()
        .map(|(i, r)| r + shift + 0.5 * (i as f64 * 1.7).cos())
        .collect();
    (variant, reference)
}

#[test]
fn pairing_by_seed_decides_where_welch_is_inconclusive() {
    // Within the margin (0.2% against 1%), and 1.5 margins out.
    for (shift, paired_verdict) in [(2.0, Verdict::Same), (-15.0, Verdict::Lower)] {
        let (variant, reference) = seed_correlated(shift);
        let paired = judged(seeded(1, &variant), seeded(1, &reference));
        let f = &paired.figures[0];
        assert_eq!(f.verdict, paired_verdict, "{f:?}");
        // It is the paired test that decided: 20 pairs, 19 degrees of freedom, the
        // difference the mean of the pairs', inside a narrow interval.
        assert!(f.paired && f.pairs == 20 && f.df == Some(19.0), "{f:?}");
        let (low, high) = (f.interval_low.unwrap(), f.interval_high.unwrap());
        assert!(low < shift && shift < high && high - low < 1.0, "{f:?}");
        assert!(paired.map.test.unwrap().paired && paired.map.pairs == 20);
        // The same values at other seeds: Welch's, which the seeds' spread leaves
        // inconclusive.
        let welch = judged(seeded(101, &variant), seeded(1, &reference));
        let f = &welch.figures[0];
        assert_eq!(f.verdict, Verdict::Unclear, "{f:?}");
        assert!(!f.paired && f.pairs == 0, "{f:?}");
        assert!(f.df.is_some_and(|df| df != 19.0 && df > 30.0), "{f:?}");
        assert!(
            f.interval_high.unwrap() - f.interval_low.unwrap() > 20.0,
            "{f:?}"
        );
        assert!(!welch.map.test.unwrap().paired && welch.map.pairs == 0);
    }
}

#[test]
fn the_tests_pair_the_seeds_both_sides_have_and_fall_back_to_welch_below_two() {
    let (variant, reference) = seed_correlated(-15.0);
    let figure = |pair: &PairVerdict| pair.figures[0].clone();
    // Reference (b): the first 5 of the variant's 20 seeds.
    let pair = judged(seeded(1, &variant), seeded(1, &reference[..5]));
    let f = figure(&pair);
    assert!(f.paired && f.pairs == 5 && f.df == Some(4.0), "{f:?}");
    assert_eq!(
        (f.variant.n, f.reference.n),
        (20, 5),
        "each side's own runs"
    );
    assert_eq!(f.verdict, Verdict::Lower, "{f:?}");
    // Five pairs cannot take the map test to 0.05: it shuffles every map instead.
    assert!(!pair.map.test.unwrap().paired && pair.map.pairs == 5);
    let six = judged(seeded(1, &variant), seeded(1, &reference[..6]));
    assert!(six.map.test.unwrap().paired && six.map.pairs == 6);
    // A figure missing at two of the variant's seeds: the 18 others pair.
    let mut missing = seeded(1, &variant);
    missing.retain(|&(seed, _)| seed != 3 && seed != 7);
    let f = figure(&judged(missing, seeded(1, &reference)));
    assert!(f.paired && f.pairs == 18 && f.df == Some(17.0), "{f:?}");
    // One seed in common: Welch's, on every run of each side.
    let f = figure(&judged(seeded(20, &variant), seeded(1, &reference)));
    assert!(!f.paired && f.pairs == 1, "{f:?}");
    assert_eq!((f.variant.n, f.reference.n), (20, 20));
    let welch_df = f.df.unwrap();
    assert!(welch_df.fract() != 0.0, "Welch-Satterthwaite's: {welch_df}");
    // The difference Welch's tests is the means', not a pair's.
    assert!((f.difference - (f.variant.mean - f.reference.mean)).abs() < 1e-9);
}

fn slices(maps: &[Vec<f32>]) -> Vec<&[f32]> {
    maps.iter().map(Vec::as_slice).collect()
}

#[test]
fn the_map_test_tells_moved_erosion_from_reruns() {
    let a: Vec<Vec<f32>> = (0..6).map(|i| vec![1.0 + i as f32 * 0.01; 8]).collect();
    let same: Vec<Vec<f32>> = (0..6).map(|i| vec![1.0 + i as f32 * 0.01; 8]).collect();
    let moved: Vec<Vec<f32>> = (0..6)
        .map(|i| {
            (0..8)
                .map(|c| if c < 4 { 2.0 } else { 0.0 } + i as f32 * 0.01)
                .collect()
        })
        .collect();
    let rerun = permutation_test(&slices(&a), &slices(&same), 199, 1).unwrap();
    assert_eq!(rerun.p, 1.0, "the same maps: every labelling is as extreme");
    let apart = permutation_test(&slices(&a), &slices(&moved), 199, 1).unwrap();
    assert!(apart.p <= 0.01, "{apart:?}");
    assert!(permutation_test(&[], &slices(&a), 9, 1).is_none());
}

#[test]
fn variants_are_named_as_erode_names_their_settings() {
    let v = Variant::parse("fast+image").unwrap();
    assert_eq!(v.settings["variant"].as_str(), Some("fast"));
    assert_eq!(v.settings["lever"].as_str(), Some("image"));
    let v = Variant::parse("fast+spirv=optimised+shared_kib=8").unwrap();
    assert_eq!(v.settings["shared_kib"].as_integer(), Some(8));
    for (bad, names) in [
        ("fast+shiny", "\"shiny\""),
        ("fast+workgroup=8", "workgroup is not a speed setting"),
        ("fast+paper", "sets variant twice"),
        ("fast+", "an empty name"),
    ] {
        let e = Variant::parse(bad).unwrap_err().to_string();
        assert!(e.contains(names), "{bad}: {e}");
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn rows(path: &std::path::Path) -> Vec<csv::StringRecord> {
    csv::Reader::from_path(path)
        .unwrap()
        .records()
        .map(Result::unwrap)
        .collect()
}

#[test]
fn the_command_finds_no_difference_of_a_variant_from_itself_and_reuses_its_references() {
    let dir = scratch("equivalence", "end-to-end");
    let out = dir.join("out");
    let out_arg = out.to_str().unwrap();
    let tiny = [
        "equivalence",
        "--size",
        "64",
        "--droplets",
        "60000",
        "--seeds",
        "8",
        "--reference-seeds",
        "3",
        "--permutations",
        "99",
        "--variants",
        "paper",
        "--out",
        out_arg,
    ];
    let run = vkerode(&tiny);
    let err = stderr(&run);
    assert!(run.status.success(), "{err}");
    assert!(!err.contains("validation"), "validation messages: {err}");
    for file in [
        "runs.csv",
        "verdicts.csv",
        "verdicts.md",
        "equivalence.json",
    ] {
        assert!(out.join(file).is_file(), "{file}");
    }
    // 8 runs of the paper's kernel as reference (a), 8 as the variant, 3 sequential.
    let runs = rows(&out.join("runs.csv"));
    assert_eq!(runs.len(), 19);
    let header = csv::Reader::from_path(out.join("runs.csv"))
        .unwrap()
        .headers()
        .unwrap()
        .clone();
    for column in [
        "device",
        "driver",
        "commit",
        "config_hash",
        "total_change",
        "mean_slope",
    ] {
        assert!(header.iter().any(|h| h == column), "{column}: {header:?}");
    }
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("equivalence.json")).unwrap())
            .unwrap();
    let missing: Vec<String> = leaf_paths(&report)
        .into_iter()
        .filter(|p| !is_listed("equivalence.json", p))
        .collect();
    assert!(missing.is_empty(), "undocumented fields: {missing:?}");
    let pairs = report["configurations"][0]["pairs"].as_array().unwrap();
    let against_a = pairs.iter().find(|p| p["reference"] == "paper").unwrap();
    // The same kernel at the same seeds: no figure and no map differ, and the mass
    // figures lie well within their margins. (Whether TOST shows them equivalent on a
    // map this small depends on lavapipe's races, which alone set the pairs'
    // differences apart; the verdicts themselves are held on synthetic samples above.)
    let differs = |v: &serde_json::Value| {
        let verdict: Verdict = serde_json::from_value(v.clone()).unwrap();
        verdict.differs()
    };
    assert!(!differs(&against_a["verdict"]), "{against_a}");
    assert_eq!(against_a["map"]["different"], false);
    for f in against_a["figures"].as_array().unwrap() {
        assert!(!differs(&f["verdict"]), "{f}");
        if ["total_change", "eroded"].contains(&f["figure"].as_str().unwrap()) {
            let relative = f["relative_difference"].as_f64().unwrap().abs();
            assert!(relative < f["margin_relative"].as_f64().unwrap(), "{f}");
        }
    }
    // Paired by seed: against (a) at all 8 seeds, the map test too; against (b) at its 3
    // seeds, too few for the map test to pair.
    let against_b = pairs
        .iter()
        .find(|p| p["reference"] == "sequential")
        .unwrap();
    for (pair, seeds, map_paired) in [(against_a, 8, true), (against_b, 3, false)] {
        for f in pair["figures"].as_array().unwrap() {
            if ["total_change", "eroded"].contains(&f["figure"].as_str().unwrap()) {
                assert!(f["paired"] == true && f["pairs"] == seeds, "{f}");
                // Null where the pairs' differences have no spread at all.
                assert!(
                    f["df"].is_null() || f["df"].as_f64() == Some(f64::from(seeds - 1)),
                    "{f}"
                );
            }
        }
        assert_eq!(pair["map"]["pairs"], seeds);
        assert_eq!(pair["map"]["test"]["paired"], map_paired, "{pair}");
    }
    assert_eq!(report["references_run"], 3);
    let verdicts = rows(&out.join("verdicts.csv"));
    assert!(verdicts.iter().any(|r| &r[8] == "(all)"));
    // An occupied --out is refused; with --force the cached references are reused.
    let again = vkerode(&tiny);
    assert!(!again.status.success());
    assert!(stderr(&again).contains("--out"), "{}", stderr(&again));
    // Three seeds of the variant, whose three sequential runs are cached.
    let forced: Vec<&str> = tiny
        .iter()
        .map(|&a| if a == "8" { "3" } else { a })
        .chain(["--force"])
        .collect();
    let rerun = vkerode(&forced);
    assert!(rerun.status.success(), "{}", stderr(&rerun));
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("equivalence.json")).unwrap())
            .unwrap();
    assert_eq!(report["references_cached"], 3, "{}", text(&rerun.stdout));
    assert_eq!(report["references_run"], 0);
    assert!(out.join("reference-cache").read_dir().unwrap().count() == 3);
}

#[test]
fn bad_inputs_are_refused_by_name_before_any_run() {
    let dir = scratch("equivalence", "refusals");
    let out = dir.join("out");
    let out = out.to_str().unwrap();
    for (args, says) in [
        (vec!["--variants", "fast+shiny"], "\"shiny\""),
        (vec!["--seeds", "1"], "--seeds"),
        (vec!["--reference-seeds", "30"], "--reference-seeds"),
        (vec!["--variant", "fast"], "--variant"),
        (vec!["--droplet-seed", "3"], "--droplet-seed"),
        (vec!["--permutations", "5"], "--permutations"),
        (vec!["--algorithm", "pipes"], "algorithm"),
    ] {
        let mut all = vec![
            "equivalence",
            "--size",
            "32",
            "--droplets",
            "100",
            "--out",
            out,
        ];
        all.extend(args.iter().copied());
        let run = vkerode(&all);
        assert!(!run.status.success(), "{args:?}");
        let err = stderr(&run);
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!std::path::Path::new(out).exists(), "{args:?} made --out");
    }
    let config = dir.join("bad.toml");
    std::fs::write(
        &config,
        "name = \"bad\"\ndescription = \"d\"\n[equivalence]\nseeds = 4\n[fixed]\nsize = 32\nlever = \"image\"\n",
    )
    .unwrap();
    let run = vkerode(&["equivalence", config.to_str().unwrap(), "--out", out]);
    let err = stderr(&run);
    assert!(
        !run.status.success() && err.contains("lever") && err.contains("bad.toml"),
        "{err}"
    );
    std::fs::write(
        &config,
        "name = \"bad\"\ndescription = \"d\"\n[fixed]\nsize = 32\n[axes]\nworkgroup = [32, 32]\n",
    )
    .unwrap();
    let run = vkerode(&["equivalence", config.to_str().unwrap(), "--out", out]);
    let err = stderr(&run);
    assert!(
        !run.status.success() && err.contains("axes.workgroup[1]") && err.contains("repeats 32"),
        "{err}"
    );
}

#[test]
fn the_h200_config_loads() {
    let plan = vkerode::studies::equivalence::Plan::load(
        std::path::Path::new("experiments/equivalence-h200.toml"),
        &[],
        &Default::default(),
        &[],
        false,
    )
    .unwrap();
    assert_eq!(plan.configurations.len(), 4);
    assert_eq!(plan.options.seeds, 20);
    let labels: Vec<&str> = plan
        .configurations
        .iter()
        .map(|c| c.label.as_str())
        .collect();
    assert_eq!(
        labels,
        [
            "workgroup=8 batches=1",
            "workgroup=8 batches=16",
            "workgroup=64 batches=1",
            "workgroup=64 batches=16"
        ]
    );
}
