//! Thermal erosion: every variant of the GPU kernels against the CPU reference, the two
//! CPU engines against each other, conservation of mass, analytic cases (a column and
//! a cliff relax to the talus; a slope below it stays put), and the strategy end to
//! end through erode and sweep. On the default device under validation.

mod common;

use std::sync::Arc;

use vkerode::erosion::thermal::{
    mass_of, rounding_bound, run_thermal_on_cpu, steepness, Fusion, ThermalKernel, ThermalParams,
    ThermalSettings, ThermalVariant, WorkgroupShape, STEEP_SLACK,
};
use vkerode::erosion::CpuEngine;
use vkerode::erosion::GridSettings;
use vkerode::gpu::Context;

use common::{
    assert_clean_success, assert_erode_outputs, assert_only_its_own_columns_are_filled,
    assert_validation_clean, cpu_terrain, results_dir, scratch, stderr, sweep_into,
    validated_device, vkerode,
};

/// A map and its shape.
#[derive(Clone)]
struct Map {
    width: usize,
    height: usize,
    heights: Vec<f32>,
}

/// Generated terrain (relief 2 x its side, a mean slope of about one per cell: mostly
/// past the 35 degree talus's 0.7) cropped to `width` x `height`.
fn noise_map(width: usize, height: usize) -> Map {
    let map = cpu_terrain(width.max(height) as u32, 4);
    let side = map.width();
    let heights = (0..height)
        .flat_map(|y| map.data()[y * side..y * side + width].to_vec())
        .collect();
    Map {
        width,
        height,
        heights,
    }
}

fn map_of(width: usize, height: usize, height_at: impl Fn(usize, usize) -> f32) -> Map {
    let heights = (0..height)
        .flat_map(|y| (0..width).map(move |x| (x, y)))
        .map(|(x, y)| height_at(x, y))
        .collect();
    Map {
        width,
        height,
        heights,
    }
}

/// The model with `neighbours`, at the largest rate its rule allows: the fastest
/// relaxation that cannot overshoot.
fn params(neighbours: u32) -> ThermalParams {
    let p = ThermalParams {
        neighbours,
        ..ThermalParams::DEFAULT
    };
    ThermalParams {
        rate: p.largest_rate(),
        ..p
    }
}

fn variant(fusion: Fusion, shape: (u32, u32)) -> ThermalVariant {
    ThermalVariant {
        fusion,
        workgroup: WorkgroupShape {
            x: shape.0,
            y: shape.1,
        },
    }
}

fn worst(a: &[f32], b: &[f32]) -> f32 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

fn relief(map: &Map) -> f32 {
    let (lo, hi) = map
        .heights
        .iter()
        .fold((f32::MAX, f32::MIN), |(lo, hi), &h| (lo.min(h), hi.max(h)));
    hi - lo
}

/// The CPU reference: the heights after `steps` steps and what each cell sent.
fn run_cpu(map: &Map, p: &ThermalParams, steps: u32, engine: CpuEngine) -> (Vec<f32>, Vec<f32>) {
    let mut heights = map.heights.clone();
    let sent = run_thermal_on_cpu(&mut heights, map.width, map.height, p, steps, engine);
    (heights, sent)
}

/// The counted build's heights and what each cell sent, after `steps` steps checked
/// every `every`; the checks' drifts must stay within float rounding's bound.
fn run_gpu(
    ctx: &Arc<Context>,
    v: ThermalVariant,
    p: &ThermalParams,
    map: &Map,
    steps: u32,
    every: u32,
) -> (Vec<f32>, Vec<f32>) {
    let kernel = ThermalKernel::new(ctx, v, p).unwrap();
    let mut runner = kernel.prepare(map.width, map.height, &map.heights).unwrap();
    let checks = runner.run_checked(steps, every).unwrap();
    assert_eq!(checks.last().map(|c| c.step), Some(steps));
    vkerode::erosion::thermal::check_mass(&checks).unwrap();
    (runner.read_heights().unwrap(), runner.read_sent().unwrap())
}

/// The timed build's heights after `steps` steps.
fn run_gpu_timed(
    ctx: &Arc<Context>,
    v: ThermalVariant,
    p: &ThermalParams,
    map: &Map,
    steps: u32,
) -> Vec<f32> {
    let kernel = ThermalKernel::new(ctx, v, p).unwrap();
    let mut runner = kernel.prepare(map.width, map.height, &map.heights).unwrap();
    runner.run(steps).unwrap();
    runner.read_heights().unwrap()
}

#[test]
fn every_variant_follows_the_cpu_reference() {
    let ctx = validated_device();
    // Not a multiple of any workgroup side: the last workgroups hang over the edges.
    let map = noise_map(50, 37);
    let steps = 60;
    let relief = relief(&map);
    for neighbours in [4, 8] {
        let p = params(neighbours);
        let (cpu, cpu_sent) = run_cpu(&map, &p, steps, CpuEngine::Sequential);
        assert!(
            worst(&cpu, &map.heights) > 0.05,
            "{neighbours} neighbours: the terrain moved"
        );
        for v in [
            variant(Fusion::None, (16, 16)),
            variant(Fusion::None, (8, 4)),
            variant(Fusion::Fused, (16, 16)),
            variant(Fusion::Fused, (32, 8)),
        ] {
            let (gpu, gpu_sent) = run_gpu(&ctx, v, &p, &map, steps, 25);
            // The same f32 arithmetic in the same order; the device may round its
            // division differently (Vulkan allows 2.5 ulp), and a flow's ulp moves
            // with it. Each step is a contraction of such differences (a cell sends
            // at most half its excess), so they stay at a few ulp of the heights
            // (2^-23 x 100 ~ 1e-5): 1e-6 of the relief is about 10 of them.
            let tolerance = 1e-6 * relief;
            let (heights, sent) = (worst(&gpu, &cpu), worst(&gpu_sent, &cpu_sent));
            println!("{v}, {neighbours} neighbours: heights {heights:e}, sent {sent:e}");
            assert!(heights <= tolerance, "{v}, {neighbours}: heights {heights}");
            assert!(
                sent <= tolerance * steps as f32,
                "{v}, {neighbours}: sent {sent}"
            );
            // The timed build ends where the counted one does, bit for bit.
            assert!(
                run_gpu_timed(&ctx, v, &p, &map, steps) == gpu,
                "{v}, {neighbours}: timed and counted builds agree"
            );
        }
    }
    assert_validation_clean(&ctx);
}

#[test]
fn the_parallel_cpu_engine_equals_the_sequential_one_bit_for_bit() {
    let map = noise_map(97, 61);
    for neighbours in [4, 8] {
        let p = params(neighbours);
        let sequential = run_cpu(&map, &p, 80, CpuEngine::Sequential);
        let parallel = run_cpu(&map, &p, 80, CpuEngine::Parallel);
        assert!(sequential.0 != map.heights, "the terrain moved");
        assert!(sequential == parallel, "{neighbours} neighbours");
    }
}

/// Relative drift of the heights' sum, and float rounding's bound on it, relative too.
fn drift(before: &[f32], after: &[f32], steps: u32) -> (f64, f64) {
    let ((start, highest), (end, highest_after)) = (mass_of(before), mass_of(after));
    let highest = 2.0 * highest.max(highest_after);
    let bound = rounding_bound(u64::from(steps), before.len() as u64, highest);
    ((end - start).abs() / start, bound / start)
}

#[test]
fn mass_is_conserved_within_float_rounding_on_gpu_and_cpu() {
    let ctx = validated_device();
    let map = noise_map(64, 64);
    let steps = 300;
    for neighbours in [4, 8] {
        let p = params(neighbours);
        let (cpu, cpu_sent) = run_cpu(&map, &p, steps, CpuEngine::Parallel);
        let moved: f64 = cpu_sent.iter().map(|&s| f64::from(s)).sum();
        let (relative, bound) = drift(&map.heights, &cpu, steps);
        println!("cpu, {neighbours} neighbours: drift {relative:e} of the mass, bound {bound:e}, moved {moved}");
        assert!(relative <= bound, "cpu: {relative} past {bound}");
        assert!(moved > 100.0, "material moved: {moved}");
        for fusion in [Fusion::None, Fusion::Fused] {
            let v = variant(fusion, (16, 16));
            let (gpu, _) = run_gpu(&ctx, v, &p, &map, steps, 100);
            let (relative, bound) = drift(&map.heights, &gpu, steps);
            println!(
                "{v}, {neighbours} neighbours: drift {relative:e} of the mass, bound {bound:e}"
            );
            assert!(relative <= bound, "{v}: {relative} past {bound}");
        }
    }
    assert_validation_clean(&ctx);
}

/// The excess of the steepest slope left, for `map` after `steps` steps on the CPU and
/// on every GPU variant, which must agree.
fn relaxed(ctx: &Arc<Context>, map: &Map, p: &ThermalParams, steps: u32) -> Vec<f32> {
    let (cpu, _) = run_cpu(map, p, steps, CpuEngine::Sequential);
    for fusion in [Fusion::None, Fusion::Fused] {
        let (gpu, _) = run_gpu(ctx, variant(fusion, (8, 8)), p, map, steps, steps);
        assert!(worst(&gpu, &cpu) <= 1e-5 * relief(map), "{fusion:?}");
        let (relative, bound) = drift(&map.heights, &gpu, steps);
        assert!(relative <= bound, "{fusion:?}: drift {relative}");
    }
    cpu
}

/// The largest drop between two cells side by side along x or y.
fn largest_axial_drop(width: usize, heights: &[f32]) -> f32 {
    let mut largest = 0.0f32;
    for (i, &h) in heights.iter().enumerate() {
        for j in [i + 1, i + width] {
            let beside = j < heights.len() && (j == i + width || j % width != 0);
            if beside {
                largest = largest.max((h - heights[j]).abs());
            }
        }
    }
    largest
}

#[test]
fn a_column_and_a_cliff_relax_to_the_talus() {
    let ctx = validated_device();
    for neighbours in [4, 8] {
        let p = params(neighbours);
        // A column 40 cells high on flat ground: a cone at the talus, about 3 cells
        // high, is what holds its volume.
        let column = map_of(25, 25, |x, y| if (x, y) == (12, 12) { 40.0 } else { 0.0 });
        // A cliff 12 cells high: a ramp at the talus, 17 cells long.
        let cliff = map_of(40, 6, |x, _| if x < 20 { 12.0 } else { 0.0 });
        for (name, map, steps) in [("column", &column, 400), ("cliff", &cliff, 2500)] {
            let before = steepness(&map.heights, map.width, map.height, &p);
            assert!(before.steepest_excess > 10.0, "{name}: far past the talus");
            let after = relaxed(&ctx, map, &p, steps);
            let rest = steepness(&after, map.width, map.height, &p);
            println!("{name}, {neighbours} neighbours, {steps} steps: {rest:?}");
            assert_eq!(rest.steep_cells, 0, "{name}, {neighbours}: {rest:?}");
            assert!(rest.steepest_excess <= STEEP_SLACK, "{name}: {rest:?}");
            let fell = worst(&after, &map.heights);
            assert!(fell > 0.25 * relief(map), "{name}: it came down ({fell})");
            // At rest on the talus, not below it: the slope stands at the angle.
            let talus = p.talus_drops()[0];
            let steepest = largest_axial_drop(map.width, &after);
            assert!(
                steepest >= 0.9 * talus && steepest <= talus + STEEP_SLACK,
                "{name}, {neighbours}: steepest drop {steepest}, talus {talus}"
            );
        }
    }
    assert_validation_clean(&ctx);
}

#[test]
fn a_pit_that_its_neighbours_fill_at_once_never_overshoots_them() {
    let ctx = validated_device();
    for neighbours in [4, 8] {
        let p = params(neighbours);
        // One cell 10 deep in a plateau: every neighbour sends to it in the same step.
        let pit = map_of(9, 9, |x, y| if (x, y) == (4, 4) { 0.0 } else { 10.0 });
        for steps in [1, 2, 5, 20] {
            let (cpu, _) = run_cpu(&pit, &p, steps, CpuEngine::Sequential);
            let (gpu, _) = run_gpu(&ctx, variant(Fusion::Fused, (8, 8)), &p, &pit, steps, steps);
            for heights in [&cpu, &gpu] {
                let highest = heights.iter().fold(f32::MIN, |a, &b| a.max(b));
                assert!(
                    highest <= 10.0,
                    "{neighbours}, {steps} steps: a spike of {highest}"
                );
                assert!(heights[4 * 9 + 4] <= 10.0 && heights[4 * 9 + 4] >= 0.0);
            }
        }
    }
    assert_validation_clean(&ctx);
}

#[test]
fn a_surface_below_the_talus_does_not_change_at_all() {
    let ctx = validated_device();
    for neighbours in [4, 8] {
        let p = params(neighbours);
        let slope = p.talus_drops()[0];
        // A tilted plane with ripples, every drop well below the talus's.
        let gentle = map_of(37, 23, |x, y| {
            let (x, y) = (x as f32, y as f32);
            0.5 * slope * x + 0.2 * slope * y + 0.1 * (0.7 * x).sin() * (0.3 * y).cos()
        });
        let rest = steepness(&gentle.heights, gentle.width, gentle.height, &p);
        assert_eq!(rest.steepest_excess, 0.0, "below the talus everywhere");
        let (cpu, cpu_sent) = run_cpu(&gentle, &p, 30, CpuEngine::Sequential);
        assert!(cpu == gentle.heights, "cpu: unchanged");
        assert!(cpu_sent.iter().all(|&s| s == 0.0));
        for fusion in [Fusion::None, Fusion::Fused] {
            let (gpu, sent) = run_gpu(&ctx, variant(fusion, (16, 16)), &p, &gentle, 30, 30);
            assert!(gpu == gentle.heights, "{fusion:?}: unchanged");
            assert!(sent.iter().all(|&s| s == 0.0), "{fusion:?}: nothing sent");
        }
    }
    assert_validation_clean(&ctx);
}

#[test]
fn the_rules_refuse_settings_by_their_key() {
    let refused = |p: ThermalParams| p.check().unwrap_err().key;
    let d = ThermalParams::DEFAULT;
    assert!(d.check().is_ok());
    for talus in [0.0, 90.0, 95.0, -1.0, f32::NAN] {
        let p = ThermalParams {
            talus_degrees: talus,
            ..d
        };
        assert_eq!(refused(p), "thermal_talus", "{talus}");
    }
    for rate in [0.0, 0.12, 0.51, -0.1, f32::INFINITY] {
        assert_eq!(
            refused(ThermalParams { rate, ..d }),
            "thermal_rate",
            "{rate}"
        );
    }
    assert!(ThermalParams {
        rate: 1.0 / 9.0,
        ..d
    }
    .check()
    .is_ok());
    let four = ThermalParams { neighbours: 4, ..d };
    assert!(ThermalParams { rate: 0.2, ..four }.check().is_ok());
    assert_eq!(
        refused(ThermalParams { rate: 0.21, ..four }),
        "thermal_rate"
    );
    for neighbours in [0, 6, 9] {
        let p = ThermalParams { neighbours, ..d };
        assert_eq!(refused(p), "thermal_neighbours", "{neighbours}");
    }
    let ctx = validated_device();
    let huge = variant(Fusion::Fused, (4096, 4096));
    let error = ThermalKernel::new(&ctx, huge, &d)
        .err()
        .expect("a workgroup past the limits is refused")
        .to_string();
    assert!(error.contains("thermal_workgroup"), "{error}");
}

fn read_json(path: &std::path::Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn erode_with_thermal_writes_its_maps_and_figures_and_refuses_bad_settings() {
    let dir = scratch("thermal", "erode");
    for engine in ["gpu", "cpu"] {
        let out = dir.join(engine);
        let result = vkerode(&[
            "erode",
            "--algorithm",
            "thermal",
            "--size",
            "48",
            "--thermal-steps",
            "40",
            "--thermal-neighbours",
            "4",
            "--engine",
            engine,
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_clean_success(&result);
        assert_erode_outputs(&out);
        let report = read_json(&out.join("run.json"));
        assert_eq!(report["algorithm"], "thermal");
        assert_eq!(report["time_steps"], 40);
        assert_eq!(report["params"]["neighbours"], 4);
        assert_eq!(report["figures"]["unit"], "cell-steps");
        assert!(report["figures"]["steps_per_s"].as_f64().unwrap() > 0.0);
        assert!(report["material_moved"].as_f64().unwrap() > 0.0, "{engine}");
        let mass = &report["mass"];
        let drift = mass["drift"].as_f64().unwrap();
        assert!(
            drift.abs() <= mass["rounding_bound"].as_f64().unwrap(),
            "{mass}"
        );
        assert!(report["steepness"]["steep_cells"].as_u64().is_some());
        if engine == "gpu" {
            assert_eq!(report["mass_checks"].as_array().unwrap().len(), 1);
            // The default build, with 4 neighbours.
            let first_pass = ThermalSettings::DEFAULT.variant().passes()[0].stem;
            assert!(
                report["kernel"]
                    .as_str()
                    .unwrap()
                    .starts_with(&format!("{first_pass}_four")),
                "{}",
                report["kernel"]
            );
        }
    }
    for (flag, value, key) in [
        ("--thermal-talus", "95", "thermal_talus"),
        ("--thermal-talus", "0", "thermal_talus"),
        ("--thermal-rate", "0.6", "thermal_rate"),
        ("--thermal-neighbours", "6", "thermal_neighbours"),
    ] {
        let out = dir.join(format!("refused-{key}-{value}"));
        let result = vkerode(&[
            "erode",
            "--algorithm",
            "thermal",
            "--size",
            "48",
            flag,
            value,
            "--out",
            out.to_str().unwrap(),
        ]);
        let err = stderr(&result);
        assert_eq!(result.status.code(), Some(1), "{flag} {value}: {err}");
        assert!(
            err.contains(flag),
            "{flag} {value}: the flag named in: {err}"
        );
        assert!(!err.contains("panicked"), "{err}");
        assert!(!out.exists(), "{flag} {value}: nothing written");
    }
}

#[test]
fn a_thermal_sweep_records_cell_steps_bandwidth_and_its_own_columns() {
    let dir = scratch("thermal", "sweep");
    let config = dir.join("thermal.toml");
    std::fs::write(
        &config,
        "name = \"thermal\"\ndescription = \"test\"\n[fixed]\nalgorithm = \"thermal\"\nsize = 40\n\
         thermal_steps = 10\nthermal_check_every = 4\n[axes]\nthermal_fusion = [\"none\", \"fused\"]\n\
         thermal_neighbours = [4, 8]\nthermal_workgroup = [\"8x8\"]\n[measure]\nwarmup = 1\n\
         min_reps = 3\nmax_reps = 4\ntarget_rel_iqr = 0.5\ntime_budget_s = 2\n",
    )
    .unwrap();
    let root = dir.join("results");
    sweep_into(&config, &root, &[]);
    let rows = common::csv_rows(&results_dir(&root, "thermal").join("points.csv"));
    assert_eq!(rows.len(), 4);
    for row in &rows {
        assert_eq!(row["algorithm"], "thermal");
        assert_eq!(row["cell_steps"], (40 * 40 * 10).to_string(), "cell-steps");
        assert!(row["cell_steps_per_s"].parse::<f64>().unwrap() > 0.0);
        assert_only_its_own_columns_are_filled(row, "thermal");
        let bytes: u64 = row["bytes_per_cell_step"].parse().unwrap();
        let expected = match (
            row["thermal_fusion"].as_str(),
            row["thermal_neighbours"].as_str(),
        ) {
            ("none", "4") => 44,
            ("none", _) => 76,
            _ => 8,
        };
        assert_eq!(bytes, expected, "{row:?}");
        assert!(row["percent_of_peak"].parse::<f64>().unwrap() > 0.0);
        assert!(row["thermal_moved"].parse::<f64>().unwrap() > 0.0);
        let drift: f64 = row["thermal_mass_drift"].parse().unwrap();
        assert!(drift.abs() < 1e-6 * 40.0 * 40.0 * 80.0, "{drift}");
        assert!(row["thermal_steep_cells"].parse::<u64>().unwrap() > 0);
        assert!(row["thermal_steepest_excess"].parse::<f64>().unwrap() > 0.0);
        // No atomics: two timed runs end at the same state.
        assert_eq!(row["rerun_cells_differing"], "0");
        assert!(row["kernel"].starts_with("thermal_"), "{}", row["kernel"]);
    }
    // A setting past its rule, fixed or on an axis: refused by its key, before any
    // results are written.
    let head = "description = \"x\"\n[fixed]\nalgorithm = \"thermal\"\n";
    for (name, key, rest) in [
        ("steep", "thermal_talus", "thermal_talus = 95.0\n"),
        (
            "wide",
            "thermal_neighbours",
            "[axes]\nthermal_neighbours = [4, 6]\n",
        ),
    ] {
        let config = dir.join(format!("{name}.toml"));
        std::fs::write(&config, format!("name = \"{name}\"\n{head}{rest}")).unwrap();
        let results = dir.join(format!("{name}-results"));
        let out = vkerode(&[
            "sweep",
            config.to_str().unwrap(),
            "--out",
            &common::sweep_out(&results),
        ]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{name}: {err}");
        assert!(err.contains(key), "{name}: {key} named in: {err}");
        assert!(!results.exists(), "{name}: no results written");
    }
}
