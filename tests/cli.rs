//! The command line as a user meets it: a clean run, and clear errors for bad input.

mod common;

use common::{assert_erode_outputs, vkerode};

/// An output folder that does not exist yet, in a clean scratch folder.
fn scratch(name: &str) -> std::path::PathBuf {
    common::scratch("cli", name).join("out")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn erode_writes_heightmaps_pictures_and_a_report_with_validation_silent() {
    let out = scratch("erode-ok");
    let result = vkerode(&[
        "erode",
        "--size",
        "96",
        "--droplets",
        "5000",
        "--out",
        out.to_str().unwrap(),
    ]);
    let stderr = text(&result.stderr);
    assert!(result.status.success(), "vkerode failed: {stderr}");
    assert!(
        !stderr.contains("validation"),
        "validation messages: {stderr}"
    );
    let stdout = text(&result.stdout);
    assert!(
        stdout.contains("droplet-steps/s"),
        "timings printed: {stdout}"
    );
    assert_erode_outputs(&out);
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    assert_eq!(report["work"]["droplets"], 5000);
    assert!(report["work"]["steps"].as_u64().unwrap() > 5000);
    assert!(report["figures"]["steps_per_s"].as_f64().unwrap() > 0.0);
}

/// Runs vkerode expecting failure; the message must name `needle`, and no output
/// folder may appear.
fn assert_refused(args: &[&str], needle: &str) {
    let out = scratch(&format!("refused-{}", needle.replace([' ', '-'], "_")));
    let mut full: Vec<&str> = args.to_vec();
    let out_str = out.to_str().unwrap().to_string();
    full.extend(["--out", &out_str]);
    let result = vkerode(&full);
    let stderr = text(&result.stderr);
    assert!(!result.status.success(), "{args:?} should fail");
    assert_eq!(result.status.code(), Some(1), "{args:?}: exit status");
    assert!(
        stderr.contains(needle),
        "{args:?}: expected {needle:?} in: {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{args:?} panicked: {stderr}");
    assert!(!out.exists(), "{args:?} left output behind");
}

#[test]
fn a_workgroup_above_the_device_limit_is_refused() {
    assert_refused(
        &["erode", "--size", "32", "--workgroup", "100000"],
        "workgroup size 100000",
    );
}

#[test]
fn zero_droplets_are_refused() {
    assert_refused(
        &["erode", "--size", "32", "--droplets", "0"],
        "droplets must be at least 1",
    );
}

#[test]
fn a_map_below_four_cells_is_refused() {
    assert_refused(&["erode", "--size", "3"], "below the minimum");
}

#[test]
fn non_finite_parameters_are_refused_by_name() {
    assert_refused(
        &["erode", "--size", "32", "--inertia", "NaN"],
        "inertia must be",
    );
    assert_refused(
        &["erode", "--size", "32", "--capacity", "inf"],
        "capacity must be",
    );
}

#[test]
fn an_unknown_device_is_refused_with_the_list_of_devices() {
    assert_refused(
        &["erode", "--size", "32", "--device", "no-such-gpu"],
        "no Vulkan device matches",
    );
}

#[test]
fn tiles_that_leave_a_colour_without_a_tile_are_refused() {
    // 64-cell tiles on a 64-cell map: three of the four colours would have no tile.
    assert_refused(
        &[
            "erode", "--size", "64", "--spawn", "tiled", "--tile", "64", "--phases", "4",
        ],
        "--tile: tile must be small enough for 2 tiles",
    );
}

#[test]
fn the_fast_kernel_with_passes_is_refused_before_any_gpu_work() {
    assert_refused(
        &[
            "erode",
            "--size",
            "32",
            "--variant",
            "fast",
            "--passes",
            "3",
        ],
        "--variant: the fast kernels run one pass",
    );
}

#[test]
fn an_unwritable_out_folder_is_refused_before_any_gpu_work() {
    // procfs refuses new files even to root.
    let result = vkerode(&["erode", "--size", "32", "--out", "/proc/vkerode-test/out"]);
    let err = common::stderr(&result);
    assert_eq!(result.status.code(), Some(1), "{err}");
    assert!(err.contains("--out cannot be written"), "{err}");
    let out = String::from_utf8_lossy(&result.stdout);
    assert!(!out.contains("device:"), "no device was opened: {out}");
}
