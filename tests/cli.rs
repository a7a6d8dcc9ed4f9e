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
    // The mass balance is the instrumented run's; run.json says how far the heights
    // written lie from it.
    let instrumented = &report["instrumented_run"];
    let number = |v: &serde_json::Value| v.as_f64().unwrap();
    assert_eq!(
        instrumented["written_total_change"],
        report["change"]["total_change"]
    );
    let (counted, written) = (
        number(&instrumented["total_change"]),
        number(&instrumented["written_total_change"]),
    );
    let relative = number(&instrumented["relative_difference"]);
    assert!(
        (relative - (written - counted) / counted.abs()).abs() < 1e-12,
        "{instrumented}"
    );
    let received = number(&report["contention"]["mass_received"]);
    assert!(
        (received - counted).abs() < 1e-6 * counted.abs(),
        "{instrumented}: the balance's run"
    );
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
    // `devices` too, where it once listed every device and exited 0.
    let listed = vkerode(&["devices", "--device", "99"]);
    assert_eq!(
        listed.status.code(),
        Some(1),
        "devices --device 99: exit status"
    );
    assert!(
        text(&listed.stderr).contains("no Vulkan device matches"),
        "{}",
        text(&listed.stderr)
    );
    assert!(listed.stdout.is_empty(), "nothing listed");
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
    assert!(err.contains("--out: writing /proc/vkerode-test"), "{err}");
    let out = String::from_utf8_lossy(&result.stdout);
    assert!(!out.contains("device:"), "no device was opened: {out}");
}

/// The names in `dir`, sorted.
fn names_in(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn a_reused_out_folder_is_refused_or_with_force_replaced_whole() {
    let parent = scratch("reused-out");
    let out = parent.join("run");
    let out_str = out.to_str().unwrap();
    let erode = |extra: &[&str]| {
        let mut args = vec!["erode", "--size", "32", "--droplets", "300", "--no-images"];
        args.extend(["--out", out_str]);
        args.extend_from_slice(extra);
        vkerode(&args)
    };
    common::assert_clean_success(&erode(&[]));
    let first_report = std::fs::read(out.join("run.json")).unwrap();
    std::fs::write(out.join("notes.txt"), "mine").unwrap();

    let again = erode(&["--seed", "9"]);
    let err = common::stderr(&again);
    assert_eq!(again.status.code(), Some(1), "{err}");
    assert!(
        err.contains("already holds files") && err.contains("--force"),
        "{err}"
    );
    assert_eq!(std::fs::read(out.join("run.json")).unwrap(), first_report);
    assert!(
        out.join("notes.txt").exists(),
        "a refused run touches nothing"
    );

    common::assert_clean_success(&erode(&["--force", "--format", "png16"]));
    assert_eq!(
        names_in(&out),
        [
            ".vkerode-output",
            "after.png",
            "after.png.aux.xml",
            "after.png.json",
            "before.png",
            "before.png.aux.xml",
            "before.png.json",
            "erosion.tif",
            "run.json"
        ],
        "replaced whole: no file of the first run is left"
    );
    assert_eq!(
        names_in(&parent),
        ["run"],
        "no staging folder or lock is left"
    );
}

#[test]
fn a_gpu_fault_during_erode_fails_cleanly_and_leaves_no_output() {
    let parent = scratch("erode-fault");
    let out = parent.join("run");
    for (fault, message) in [
        ("allocation:heightData:1", "out of device memory"),
        ("fence-timeout:2", "the device is treated as lost"),
    ] {
        let result = common::vkerode_command(&[
            "erode",
            "--size",
            "32",
            "--droplets",
            "300",
            "--out",
            out.to_str().unwrap(),
        ])
        .env("VKERODE_FAULT", fault)
        .output()
        .unwrap();
        let err = common::stderr(&result);
        assert_eq!(result.status.code(), Some(1), "{fault}: {err}");
        assert!(err.contains(message), "{fault}: {err}");
        assert!(!err.contains("panicked"), "{fault}: {err}");
        assert!(
            names_in(&parent).is_empty(),
            "{fault}: nothing is left behind"
        );
    }
}

#[test]
fn erode_with_the_pipe_model_writes_its_maps_and_balance() {
    let out = scratch("pipes");
    let result = vkerode(&[
        "erode",
        "--algorithm",
        "pipes",
        "--size",
        "48",
        "--pipes-steps",
        "40",
        "--out",
        out.to_str().unwrap(),
        "--force",
    ]);
    common::assert_clean_success(&result);
    assert_erode_outputs(&out);
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    assert_eq!(report["algorithm"], "pipes");
    assert_eq!(report["time_steps"], 40);
    let balance = &report["balance"];
    let rained = balance["rain_added"].as_f64().unwrap();
    let water = balance["water_after"].as_f64().unwrap();
    assert!(water > 0.0 && water <= rained, "{balance}");
    assert_eq!(report["figures"]["unit"], "cell-steps");
    assert!(report["figures"]["steps_per_s"].as_f64().unwrap() > 0.0);

    let unstable = vkerode(&[
        "erode",
        "--algorithm",
        "pipes",
        "--size",
        "48",
        "--pipes-dt",
        "0.5",
    ]);
    assert_eq!(unstable.status.code(), Some(1));
    assert!(
        common::stderr(&unstable).contains("stability"),
        "{}",
        common::stderr(&unstable)
    );
}

#[test]
fn gpu_only_flags_with_a_cpu_engine_are_refused_naming_both() {
    assert_refused(
        &[
            "erode",
            "--size",
            "32",
            "--droplets",
            "100",
            "--engine",
            "cpu",
            "--lever",
            "image",
        ],
        "--lever conflicts with --engine cpu",
    );
    assert_refused(
        &[
            "erode",
            "--algorithm",
            "thermal",
            "--size",
            "32",
            "--engine",
            "cpu-sequential",
            "--thermal-workgroup",
            "8x8",
        ],
        "--thermal-workgroup conflicts with --engine cpu-sequential",
    );
}

#[test]
fn another_strategys_flags_are_refused_naming_the_flag_and_the_algorithm() {
    assert_refused(
        &[
            "erode",
            "--algorithm",
            "pipes",
            "--size",
            "32",
            "--pipes-steps",
            "2",
            "--variant",
            "fast",
            "--deterministic",
        ],
        "--variant conflicts with --algorithm pipes",
    );
    assert_refused(
        &[
            "erode",
            "--size",
            "32",
            "--droplets",
            "100",
            "--thermal-steps",
            "3",
        ],
        "--thermal-steps conflicts with --algorithm droplets",
    );
}

#[test]
fn a_size_for_an_input_that_states_its_own_is_refused() {
    assert_refused(
        &[
            "erode",
            "--input",
            "tests/data/jacksboro_fault_dem.tif",
            "--width",
            "10",
            "--height",
            "10",
            "--droplets",
            "100",
        ],
        "--width and --height",
    );
}

#[test]
fn peak_force_without_out_is_refused_naming_both() {
    let result = vkerode(&["peak", "--force"]);
    let err = common::stderr(&result);
    assert_eq!(result.status.code(), Some(2), "{err}");
    assert!(err.contains("--out") && err.contains("--force"), "{err}");
}

#[test]
fn a_pipe_capacity_that_carves_past_the_relief_is_refused() {
    // Unbounded, 1e6 drove this map to -2.7e8 in 50 steps.
    assert_refused(
        &[
            "erode",
            "--algorithm",
            "pipes",
            "--size",
            "64",
            "--pipes-steps",
            "50",
            "--pipes-capacity",
            "1e6",
        ],
        "--pipes-capacity: 1000000 lets one step carve",
    );
}

#[test]
fn a_run_past_the_work_bound_is_refused_before_it_starts_unless_asked_for() {
    let parent = scratch("work-bound");
    let out = parent.join("run");
    let args = |extra: &[&str]| {
        let mut args = vec![
            "erode",
            "--algorithm",
            "pipes",
            "--size",
            "64",
            "--pipes-steps",
            "4000000000",
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        args.into_iter().map(String::from).collect::<Vec<_>>()
    };
    let refused = vkerode(&args(&[]).iter().map(String::as_str).collect::<Vec<_>>());
    let err = common::stderr(&refused);
    assert_eq!(refused.status.code(), Some(1), "{err}");
    assert!(
        err.contains("pipes_steps: 4000000000 makes up to 1.64e13 cell-steps on a 64x64 map")
            && err.contains("--allow-long-runs"),
        "{err}"
    );
    assert!(names_in(&parent).is_empty(), "nothing written: {err}");
    // Asked for, it starts: the bound is the only thing in its way.
    let mut allowed = common::vkerode_command(
        &args(&["--allow-long-runs"])
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    )
    .stderr(std::process::Stdio::null())
    .stdout(std::process::Stdio::null())
    .spawn()
    .unwrap();
    std::thread::sleep(std::time::Duration::from_secs(3));
    let still_running = allowed.try_wait().unwrap().is_none();
    let _ = allowed.kill();
    let _ = allowed.wait();
    assert!(still_running, "--allow-long-runs let it run");
}

#[test]
fn a_bad_relief_is_refused_naming_relief_not_size() {
    for relief in ["nan", "0", "-1", "inf"] {
        let flag = format!("--relief={relief}");
        assert_refused(
            &["erode", "--size", "32", &flag],
            "--relief: relief must be finite and positive",
        );
    }
}

#[test]
fn a_pipes_time_step_too_small_to_move_water_is_refused_with_its_bound() {
    // Subnormal (1e-40, 1e-45) or with subnormal flux increments (1e-21): GPUs flush
    // those to zero, so the run changed nothing or failed its balance check.
    for dt in ["1e-45", "1e-40", "1e-21"] {
        let flag = format!("--pipes-dt={dt}");
        assert_refused(
            &["erode", "--algorithm", "pipes", "--size", "16", &flag],
            "--pipes-dt: time step",
        );
    }
    let refused = scratch("pipes-tiny-dt");
    let result = vkerode(&[
        "erode",
        "--algorithm",
        "pipes",
        "--size",
        "16",
        "--pipes-dt=1e-21",
        "--out",
        refused.to_str().unwrap(),
    ]);
    assert!(
        text(&result.stderr).contains("at least 7.74"),
        "{}",
        text(&result.stderr)
    );
    // Just above the bound still runs and passes its balance checks.
    let out = scratch("pipes-small-dt");
    let result = vkerode(&[
        "erode",
        "--algorithm",
        "pipes",
        "--size",
        "16",
        "--pipes-dt=1e-20",
        "--pipes-steps=20",
        "--pipes-check-every=10",
        "--no-images",
        "--out",
        out.to_str().unwrap(),
    ]);
    common::assert_clean_success(&result);
}

#[test]
fn device_flags_are_refused_by_clap_on_commands_that_open_no_device() {
    for args in [
        &["compare", "a", "b", "--device", "0"][..],
        &["plot", "a.csv", "--x", "size", "--out", "o", "--validate"],
        &["report", "r", "--max-submission-ms", "10"],
        &["merge", "a", "--out", "o", "--device", "0"],
        &["convert", "a.tif", "b.tif", "--validate"],
    ] {
        let result = vkerode(args);
        let stderr = text(&result.stderr);
        assert_eq!(result.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("unexpected argument"), "{args:?}: {stderr}");
    }
    // And taken where a device is opened, after the command as before it.
    let result = vkerode(&["devices", "--device", "0", "--quiet"]);
    assert!(result.status.success(), "{}", text(&result.stderr));
}

#[test]
fn quiet_keeps_results_and_drops_notes_and_verbose_adds_detail() {
    let run = |flag: &str, name: &str| {
        let out = scratch(name);
        let mut args = vec!["erode", "--size", "32", "--droplets", "500", "--no-images"];
        args.extend(["--out", out.to_str().unwrap()]);
        if !flag.is_empty() {
            args.push(flag);
        }
        let result = vkerode(&args);
        assert!(result.status.success(), "{}", text(&result.stderr));
        (text(&result.stdout), text(&result.stderr))
    };
    let (normal, _) = run("", "verbosity-normal");
    let (quiet, quiet_err) = run("--quiet", "verbosity-quiet");
    let (verbose, _) = run("--verbose", "verbosity-verbose");
    // The result lines in all three; the notes (device, files written) not when quiet.
    for out in [&normal, &quiet, &verbose] {
        assert!(out.contains("droplet-steps/s:"), "{out}");
    }
    assert!(
        normal.contains("device: ") && normal.contains("wrote "),
        "{normal}"
    );
    assert!(
        !quiet.contains("device: ") && !quiet.contains("wrote "),
        "{quiet}"
    );
    // No progress bar: nothing drawn on stderr (no terminal, and quiet).
    assert!(!quiet_err.contains("GPU submissions"), "{quiet_err}");
    assert!(verbose.contains("device chosen by"), "{verbose}");
    // The droplet runs' progress counts droplets, every one of both runs.
    for stage in ["counted run (1 of 2)", "timed run (2 of 2)"] {
        let line = format!("droplets: {stage}: 500 of 500 droplets in ");
        assert!(verbose.contains(&line), "{line:?} not in\n{verbose}");
    }
    assert!(!normal.contains("device chosen by"), "{normal}");
    let both = vkerode(&["devices", "--quiet", "--verbose"]);
    assert_eq!(both.status.code(), Some(2));
    assert!(text(&both.stderr).contains("cannot be used with"));
}

/// The grid strategies' first timed run is split at the pace the counted run before it
/// showed, not at a GPU's assumed pace: on lavapipe that would be one long submission,
/// past --max-submission-ms and with nothing for the progress bar to count. The chunk
/// before any pace is known, counted or not, is split into ten at least.
#[test]
fn a_grid_run_on_a_slow_device_is_split_at_the_counted_runs_pace() {
    let grids = vkerode::erosion::ALL_STRATEGIES
        .iter()
        .filter(|s| s.unit() == vkerode::erosion::WorkUnit::CellSteps);
    for strategy in grids {
        let algorithm = strategy.algorithm().as_str();
        let out = scratch(&format!("split-{algorithm}"));
        let steps = format!("--{}", strategy.dose_key().replace('_', "-"));
        let result = vkerode(&[
            "erode",
            "--algorithm",
            algorithm,
            "--size",
            "128",
            &steps,
            "60",
            "--max-submission-ms",
            "20",
            "--no-images",
            "--force",
            "--verbose",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(result.status.success(), "{}", common::stderr(&result));
        let report: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
        let submissions = report["submissions"].as_u64().unwrap();
        assert!(submissions > 1, "{algorithm}: {submissions} submission(s)");
        // The progress counts each stage's steps, all of them, over its submissions.
        let stdout = text(&result.stdout);
        let counted = format!("{algorithm}: counted run (1 of 2): 60 of 60 steps in ");
        let timed = format!(
            "{algorithm}: timed run (2 of 2): 60 of 60 steps in {submissions} GPU submission(s)"
        );
        for line in [&counted, &timed] {
            assert!(stdout.contains(line), "{line:?} not in\n{stdout}");
        }
        // The counted run's first chunk, its pace unknown, is heard of as it goes.
        assert!(submissions_of(&stdout, &counted) >= 10, "{stdout}");
    }
    // Where a run counts nothing, its first timed run is the chunk of unknown pace.
    let out = scratch("split-pipes-unchecked");
    let result = vkerode(&[
        "erode",
        "--algorithm",
        "pipes",
        "--size",
        "128",
        "--pipes-steps",
        "60",
        "--pipes-check-every",
        "0",
        "--no-images",
        "--verbose",
        "--out",
        out.to_str().unwrap(),
    ]);
    let stdout = text(&result.stdout);
    let first = "pipes: counted run (1 of 2): 60 of 60 steps in ";
    assert!(submissions_of(&stdout, first) >= 10, "{stdout}");
}

/// The GPU submissions `stdout` says follow `line`.
fn submissions_of(stdout: &str, line: &str) -> usize {
    stdout
        .split(line)
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{line:?} not in\n{stdout}"))
}
