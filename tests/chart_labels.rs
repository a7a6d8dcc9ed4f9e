//! What a throughput chart tells its reader: its unit with a prefix chosen from the
//! data, what its bars and rings are, and the device once (drawn from committed
//! points.csv files, with no GPU).

mod common;

use std::path::{Path, PathBuf};

fn committed(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

/// The SVG's text elements, in the order drawn.
fn texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            let body = &t[t.find('>')? + 1..t.find("</text>")?];
            Some(body.trim().to_string())
        })
        .collect()
}

fn chart_texts(csvs: &[&str], name: &str, extra: &[&str]) -> Vec<String> {
    let chart = common::scratch("chart_labels", name).join("chart");
    let csv: Vec<PathBuf> = csvs.iter().map(|c| committed(c)).collect();
    let mut args: Vec<&str> = vec!["plot"];
    args.extend(csv.iter().map(|c| c.to_str().unwrap()));
    args.extend(extra);
    let folder = chart.parent().unwrap().to_str().unwrap();
    args.extend(["--out", folder, "--name", "chart"]);
    common::assert_clean_success(&common::vkerode(&args));
    texts(&std::fs::read_to_string(chart.with_extension("svg")).unwrap())
}

#[test]
fn a_throughput_chart_says_its_unit_its_intervals_its_rings_and_its_device_once() {
    let texts = chart_texts(
        &["results/redesign-22/session-2/ab-new/workgroup/nvidia-h200/points.csv"],
        "one-device",
        &["--x", "workgroup"],
    );
    // Rates of 6 to 15 billion: the prefix is G, on the unit, and the unit is named once.
    assert!(texts.iter().any(|t| t == "G droplet-steps/s"), "{texts:?}");
    assert!(!texts.iter().any(|t| t.contains("(G)")), "{texts:?}");
    assert!(
        texts.iter().any(|t| t == "bar: 95% interval of the median"),
        "{texts:?}"
    );
    assert!(
        texts.iter().any(|t| t.starts_with("ring: ")),
        "outliers are ringed in this file: {texts:?}"
    );
    let naming_device = texts.iter().filter(|t| t.contains("NVIDIA H200")).count();
    assert_eq!(naming_device, 1, "the device once, in the title: {texts:?}");
    assert!(texts[0].ends_with("on NVIDIA H200"), "{texts:?}");
}

#[test]
fn a_chart_of_two_devices_names_each_in_its_series_not_in_the_title() {
    let texts = chart_texts(
        &[
            "results/workgroup/nvidia-h200/points.csv",
            "results/workgroup/llvmpipe-llvm-15-0-6-256-bits/points.csv",
        ],
        "two-devices",
        &["--x", "workgroup", "--series", "variant"],
    );
    assert!(!texts[0].contains("NVIDIA"), "{texts:?}");
    assert!(
        texts.contains(&"NVIDIA H200, variant fast".to_string())
            && texts
                .iter()
                .any(|t| t.starts_with("llvmpipe") && t.ends_with("variant paper")),
        "{texts:?}"
    );
    // These older files have quartiles, not the median's interval: the legend says so.
    assert!(
        texts
            .iter()
            .any(|t| t == "bar: quartiles of the repetitions"),
        "{texts:?}"
    );
    assert!(!texts.iter().any(|t| t.starts_with("ring: ")), "{texts:?}");
}
