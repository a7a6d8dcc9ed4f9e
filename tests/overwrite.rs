//! One overwrite rule: every output, file or folder, that exists is refused unless
//! `--force` replaces it, and a refusal leaves the file as it was.

mod common;

use std::path::Path;

use common::{assert_clean_success, scratch, stderr, vkerode};

/// A committed set small enough for report, compare and plot.
const SET: &str = "results/workgroup/nvidia-h200";

/// Runs `args` + `output` over a file already at `output`: refused without --force
/// (naming the file and the flag, the file untouched), replaced with it.
fn assert_refused_then_forced(args: &[&str], output: &Path) {
    let planted = b"an earlier file";
    std::fs::write(output, planted).unwrap();
    let refused = vkerode(args);
    assert!(
        !refused.status.success(),
        "{args:?} replaced {}",
        output.display()
    );
    let message = stderr(&refused);
    assert!(
        message.contains(&output.display().to_string()) && message.contains("--force"),
        "{args:?}: {message}"
    );
    assert_eq!(
        std::fs::read(output).unwrap(),
        planted,
        "{args:?} touched it"
    );
    let forced = vkerode(&[args, &["--force"]].concat());
    assert_clean_success(&forced);
    assert_ne!(std::fs::read(output).unwrap(), planted, "{args:?} --force");
}

#[test]
fn terrain_and_convert_refuse_an_existing_heightmap_without_force() {
    let dir = scratch("overwrite", "terrain");
    let tif = dir.join("terrain.tif");
    let tif_arg = tif.to_str().unwrap();
    let terrain = ["terrain", "--cpu", "--size", "64", tif_arg];
    assert_refused_then_forced(&terrain, &tif);
    let png = dir.join("terrain.png");
    assert_refused_then_forced(&["convert", tif_arg, png.to_str().unwrap()], &png);
}

#[test]
fn maps_refuses_an_existing_picture_without_force() {
    let dir = scratch("overwrite", "maps");
    let tif = dir.join("terrain.tif");
    let tif_arg = tif.to_str().unwrap();
    assert_clean_success(&vkerode(&["terrain", "--cpu", "--size", "64", tif_arg]));
    let png = dir.join("maps.png");
    assert_refused_then_forced(&["maps", tif_arg, tif_arg, png.to_str().unwrap()], &png);
}

#[test]
fn report_refuses_existing_html_and_markdown_without_force() {
    let dir = scratch("overwrite", "report");
    let html = dir.join("report.html");
    let html_args = ["report", SET, "--html", html.to_str().unwrap()];
    assert_refused_then_forced(&html_args, &html);
    let markdown = dir.join("report.md");
    let markdown_args = ["report", SET, "--markdown", markdown.to_str().unwrap()];
    assert_refused_then_forced(&markdown_args, &markdown);
}

#[test]
fn compare_refuses_an_existing_markdown_without_force() {
    let dir = scratch("overwrite", "compare");
    let markdown = dir.join("compare.md");
    let args = [
        "compare",
        SET,
        SET,
        "--markdown",
        markdown.to_str().unwrap(),
    ];
    assert_refused_then_forced(&args, &markdown);
}

#[test]
fn plot_refuses_a_chart_of_the_same_name_without_force_and_keeps_other_files() {
    let dir = scratch("overwrite", "plot");
    let csv = format!("{SET}/points.csv");
    let out = dir.to_str().unwrap();
    let plot = |name| {
        [
            "plot",
            csv.as_str(),
            "--x",
            "workgroup",
            "--out",
            out,
            "--name",
            name,
        ]
    };
    let args = plot("chart");
    // Either of the two files plot writes is refused.
    assert_refused_then_forced(&args, &dir.join("chart.svg"));
    std::fs::remove_file(dir.join("chart.svg")).unwrap();
    assert_refused_then_forced(&args, &dir.join("chart.png"));
    // Another chart beside them is no clash.
    let other = plot("other");
    assert_clean_success(&vkerode(&other));
    assert!(dir.join("chart.png").is_file() && dir.join("other.png").is_file());
}

#[test]
fn docs_refuses_existing_references_without_force() {
    let dir = scratch("overwrite", "docs");
    let cli_md = dir.join("cli.md");
    assert_refused_then_forced(&["docs", "--out", dir.to_str().unwrap()], &cli_md);
}
