//! The grid-centric strategy (virtual pipes): every variant of the GPU passes against
//! the CPU reference, conservation and its checks, and the parameters' rules. On the
//! default device under validation.

mod common;

use vkerode::erosion::pipes::{
    run_pipes_on_cpu, Advection, Boundary, Fusion, Packing, PipesFields, PipesKernel, PipesParams,
    PipesRunner, PipesSettings, PipesState, PipesVariant, Tiles, WorkgroupShape,
};
use vkerode::erosion::GridSettings;

use common::{assert_validation_clean, cpu_terrain, validated_device};

/// Generated terrain cropped to `width` x `height`, in cells, with 0.3 of water
/// standing on it.
fn wet_terrain(width: usize, height: usize) -> PipesState {
    let map = cpu_terrain(width.max(height) as u32, 4);
    let side = map.width();
    let terrain = (0..height)
        .flat_map(|y| map.data()[y * side..y * side + width].to_vec())
        .collect();
    let mut state = PipesState::dry(width, height, terrain);
    state.water.fill(0.3);
    state
}

fn worst(a: &[f32], b: &[f32]) -> f32 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

/// `variant`'s kernel ready on `start`'s terrain and water.
fn prepared(
    ctx: &std::sync::Arc<vkerode::gpu::Context>,
    variant: PipesVariant,
    params: &PipesParams,
    start: &PipesState,
) -> PipesRunner {
    PipesKernel::new(ctx, variant, params)
        .unwrap()
        .prepare(
            start.width,
            start.height,
            &start.terrain,
            Some(&start.water),
        )
        .unwrap()
}

fn run_gpu(
    ctx: &std::sync::Arc<vkerode::gpu::Context>,
    variant: PipesVariant,
    params: &PipesParams,
    start: &PipesState,
    steps: u32,
) -> PipesFields {
    let mut runner = prepared(ctx, variant, params, start);
    runner.run(steps).unwrap();
    runner.read().unwrap()
}

fn variant(fusion: Fusion, packing: Packing, tiles: Tiles, shape: (u32, u32)) -> PipesVariant {
    PipesVariant {
        fusion,
        packing,
        tiles,
        workgroup: WorkgroupShape {
            x: shape.0,
            y: shape.1,
        },
    }
}

#[test]
fn every_variant_follows_the_cpu_reference() {
    let ctx = validated_device();
    // Not a multiple of any workgroup side: the last workgroups hang over the edges.
    let start = wet_terrain(50, 37);
    // Few steps: where water thins to the velocity cut-off (1e-4), a last-bit difference
    // flips a cell's velocity, and two runs part ways over hundreds of steps.
    let steps = 10;
    let reference = |advection| {
        let mut cpu = start.clone();
        let params = PipesParams {
            advection,
            ..PipesParams::DEFAULT
        };
        run_pipes_on_cpu(&mut cpu, &params, steps);
        (params, cpu)
    };
    let (semi, upwind) = (Advection::SemiLagrangian, Advection::Upwind);
    let variants = [
        (
            variant(Fusion::None, Packing::F32, Tiles::None, (16, 16)),
            semi,
        ),
        (
            variant(Fusion::None, Packing::Half, Tiles::None, (8, 4)),
            semi,
        ),
        (
            variant(Fusion::Fused, Packing::F32, Tiles::None, (32, 8)),
            semi,
        ),
        (
            variant(Fusion::Fused, Packing::F32, Tiles::Shared, (8, 8)),
            semi,
        ),
        (
            variant(Fusion::Fused, Packing::Half, Tiles::Shared, (16, 4)),
            semi,
        ),
        (
            variant(Fusion::Fused, Packing::F32, Tiles::None, (16, 16)),
            upwind,
        ),
        (
            variant(Fusion::Fused, Packing::F32, Tiles::Shared, (8, 4)),
            upwind,
        ),
        (
            variant(Fusion::Fused, Packing::Half, Tiles::Shared, (32, 8)),
            upwind,
        ),
    ];
    for (v, advection) in variants {
        let (params, cpu) = reference(advection);
        let g = run_gpu(&ctx, v, &params, &start, steps);
        // Half floats round the flux and velocity to 11 bits; the capacity follows the
        // velocity, so the sediment and terrain take the rounding too.
        let tolerance = if v.packing == Packing::Half {
            5e-2
        } else {
            1e-4
        };
        let report = format!(
            "{v} {advection:?}: water {} sediment {} terrain {}",
            worst(&g.water, &cpu.water),
            worst(&g.sediment, &cpu.sediment),
            worst(&g.terrain, &cpu.terrain)
        );
        assert!(worst(&g.water, &cpu.water) < tolerance, "{report}");
        assert!(worst(&g.sediment, &cpu.sediment) < tolerance, "{report}");
        assert!(
            worst(&g.terrain, &cpu.terrain) < 10.0 * tolerance,
            "{report}"
        );
        // Something happened: water moved and terrain eroded.
        assert!(worst(&g.water, &start.water) > 0.05, "{report}");
        assert!(worst(&g.terrain, &start.terrain) > 1e-3, "{report}");
        assert!(
            g.water.iter().chain(&g.sediment).all(|&v| v >= 0.0),
            "{v}: never negative"
        );
    }
    assert_validation_clean(&ctx);
}

#[test]
fn a_run_checked_in_chunks_ends_where_one_run_does() {
    let ctx = validated_device();
    let start = wet_terrain(40, 40);
    let params = PipesParams::DEFAULT;
    let upwind = PipesParams {
        advection: Advection::Upwind,
        ..params
    };
    for (fusion, params) in [
        (Fusion::None, params),
        (Fusion::Fused, params),
        (Fusion::Fused, upwind),
    ] {
        let v = variant(fusion, Packing::F32, Tiles::None, (16, 16));
        let mut runner = prepared(&ctx, v, &params, &start);
        let checks = runner.run_checked(25, 7).unwrap();
        assert_eq!(
            checks.iter().map(|c| c.step).collect::<Vec<_>>(),
            [7, 14, 21, 25]
        );
        let chunked = runner.read().unwrap();
        runner.run(25).unwrap();
        assert_eq!(runner.read().unwrap(), chunked, "{v}");
    }
    assert_validation_clean(&ctx);
}

#[test]
fn water_is_conserved_and_the_counted_run_accounts_for_rain_and_evaporation() {
    let ctx = validated_device();
    let start = wet_terrain(64, 64);
    let closed = PipesParams {
        rain: 0.0,
        evaporation: 0.0,
        ..PipesParams::DEFAULT
    };
    for fusion in [Fusion::None, Fusion::Fused] {
        let v = variant(fusion, Packing::F32, Tiles::None, (16, 16));
        let run = run_gpu(&ctx, v, &closed, &start, 200);
        let (before, after) = (start.totals(), run.totals());
        // The pipes move water between cells and never out of the map.
        assert!(
            (after.water - before.water).abs() < 1e-4 * before.water,
            "{v}: water {} -> {}",
            before.water,
            after.water
        );
        assert!(after.sediment > 0.0, "{v}: some terrain was dissolved");
        assert!(run.water.iter().chain(&run.sediment).all(|&v| v >= 0.0));

        // Open: what rain adds and evaporation takes, the counted build sums.
        let open = PipesParams {
            rain: 0.5,
            evaporation: 0.5,
            ..PipesParams::DEFAULT
        };
        let mut runner = prepared(&ctx, v, &open, &start);
        let checks = runner.run_checked(100, 20).unwrap();
        assert_eq!(checks.len(), 5);
        for c in &checks {
            assert!(c.rain > 0.0 && c.evaporated > 0.0, "{v}: {c:?}");
            assert!(
                c.water_error.abs() < 1e-5 * (before.water + c.rain),
                "{v}: {c:?}"
            );
            // The advection's drift is measured, not bounded: run.json reports it.
            assert!(c.advection_drift.is_finite(), "{v}: {c:?}");
        }
    }
    assert_validation_clean(&ctx);
}

#[test]
fn the_upwind_transport_conserves_sediment_where_the_semi_lagrangian_loses_it() {
    let ctx = validated_device();
    let start = wet_terrain(64, 64);
    let fused = variant(Fusion::Fused, Packing::F32, Tiles::None, (16, 16));
    let drift = |advection| {
        let params = PipesParams {
            rain: 0.0,
            evaporation: 0.0,
            advection,
            ..PipesParams::DEFAULT
        };
        let (before, after) = (
            start.totals(),
            run_gpu(&ctx, fused, &params, &start, 200).totals(),
        );
        assert!(
            after.sediment > 0.0,
            "{advection:?}: something was dissolved"
        );
        (
            after.terrain + after.sediment - before.terrain - before.sediment,
            before.terrain,
        )
    };
    let (upwind, terrain) = drift(Advection::Upwind);
    let (semi, _) = drift(Advection::SemiLagrangian);
    // float32 rounding of the sums over 4096 cells and 200 steps, nothing more.
    assert!(upwind.abs() < 1e-6 * terrain, "upwind drift {upwind}");
    assert!(
        semi.abs() > 100.0 * upwind.abs(),
        "semi-Lagrangian {semi}, upwind {upwind}"
    );
    assert_validation_clean(&ctx);
}

#[test]
fn parameters_and_variants_that_cannot_run_are_refused_by_their_setting() {
    let params = PipesParams {
        dt: 0.2,
        ..PipesParams::DEFAULT
    };
    let error = params.check().unwrap_err();
    assert_eq!(error.key, "pipes_dt");
    assert!(error.reason.contains("at most 0.03569"), "{error}");
    assert!(PipesParams::DEFAULT.check().is_ok());
    let negative = PipesParams {
        rain: -1.0,
        ..PipesParams::DEFAULT
    };
    assert_eq!(negative.check().unwrap_err().key, "pipes_rain");
    let dissolving = PipesParams {
        dissolving: 100.0,
        ..PipesParams::DEFAULT
    };
    let error = dissolving.check().unwrap_err();
    assert_eq!(error.key, "pipes_dissolving");
    assert!(error.reason.contains("1 / time step = 50"), "{error}");
    let deposition = PipesParams {
        deposition: 51.0,
        ..PipesParams::DEFAULT
    };
    assert_eq!(deposition.check().unwrap_err().key, "pipes_deposition");
    // Ks Kc l = 0.5 carves half a height unit a step at most: within any relief.
    assert!(PipesParams::DEFAULT.check_relief(0.0).is_ok());
    let carving = PipesParams {
        capacity: 1e30,
        ..PipesParams::DEFAULT
    };
    assert!(carving.check().is_ok(), "finite and positive on its own");
    let error = carving.check_relief(128.0).unwrap_err();
    assert_eq!(error.key, "pipes_capacity");
    assert!(error.reason.contains("at most 256"), "{error}");
    let flooding = PipesParams {
        rain: 1e5,
        ..PipesParams::DEFAULT
    };
    assert_eq!(flooding.check_relief(128.0).unwrap_err().key, "pipes_rain");
    for (params, key, says) in [
        (
            PipesParams {
                friction: 51.0,
                ..PipesParams::DEFAULT
            },
            "pipes_friction",
            "1 / time step = 50",
        ),
        (
            PipesParams {
                friction: -1.0,
                ..PipesParams::DEFAULT
            },
            "pipes_friction",
            "zero or more",
        ),
        (
            PipesParams {
                base_level: f32::NAN,
                ..PipesParams::DEFAULT
            },
            "pipes_base_level",
            "finite",
        ),
        (
            PipesParams {
                sediment_cap: Some(0.0),
                ..PipesParams::DEFAULT
            },
            "pipes_sediment_cap",
            "positive",
        ),
        (
            PipesParams {
                min_tilt: 1.5,
                ..PipesParams::DEFAULT
            },
            "pipes_min_tilt",
            "at most 1",
        ),
    ] {
        let error = params.check().unwrap_err();
        assert_eq!(error.key, key, "{error}");
        assert!(error.reason.contains(says), "{error}");
    }
    let settings = PipesSettings {
        pipes_friction: 2.0,
        pipes_boundary: Boundary::Open,
        pipes_base_level: -3.0,
        pipes_sediment_cap: Some(0.5),
        pipes_min_tilt: 0.05,
        ..PipesSettings::DEFAULT
    };
    assert!(settings.check(None, None).is_ok());
    let p = settings.params();
    assert_eq!(
        (
            p.friction,
            p.boundary,
            p.base_level,
            p.sediment_cap,
            p.min_tilt
        ),
        (2.0, Boundary::Open, -3.0, Some(0.5), 0.05)
    );

    let tiles_unfused = variant(Fusion::None, Packing::F32, Tiles::Shared, (16, 16));
    let semi = Advection::SemiLagrangian;
    assert_eq!(
        tiles_unfused.check(semi, None).unwrap_err().key,
        "pipes_tiles"
    );
    let plain = variant(Fusion::None, Packing::F32, Tiles::None, (16, 16));
    let error = plain.check(Advection::Upwind, None).unwrap_err();
    assert_eq!(error.key, "pipes_advection");
    let ctx = validated_device();
    let huge = variant(Fusion::Fused, Packing::F32, Tiles::None, (4096, 4096));
    let error = PipesKernel::new(&ctx, huge, &PipesParams::DEFAULT)
        .err()
        .expect("a workgroup past the limits is refused")
        .to_string();
    assert!(error.contains("pipes_workgroup"), "{error}");
    assert_eq!("8x4".parse::<WorkgroupShape>().unwrap().y, 4);
    assert!("8by4".parse::<WorkgroupShape>().is_err());
    assert!("0x4".parse::<WorkgroupShape>().is_err());
}

/// A flat bed under `depth` of water, each cell off by up to `perturbation`
/// (xorshift, so the test is the same everywhere).
fn perturbed_lake(side: usize, depth: f32, perturbation: f32) -> PipesState {
    let mut lake = PipesState::dry(side, side, vec![0.0; side * side]);
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for w in &mut lake.water {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let unit = (x >> 40) as f32 / (1u64 << 24) as f32;
        *w = depth + perturbation * (2.0 * unit - 1.0);
    }
    lake
}

/// The largest departure from the mean depth after `time` time units, over the
/// perturbation it started with, and the cells that ran dry.
fn lake_after(dt: f32, time: f32) -> (f64, usize) {
    let params = PipesParams {
        dt,
        rain: 0.0,
        evaporation: 0.0,
        capacity: 0.0,
        ..PipesParams::DEFAULT
    };
    let perturbation = 1e-3;
    let mut lake = perturbed_lake(48, 0.3, perturbation);
    run_pipes_on_cpu(&mut lake, &params, (time / dt).ceil() as u32);
    let mean = lake.water.iter().map(|&w| f64::from(w)).sum::<f64>() / lake.water.len() as f64;
    let departure = lake
        .water
        .iter()
        .map(|&w| (f64::from(w) - mean).abs())
        .fold(0.0, f64::max);
    let dry = lake.water.iter().filter(|&&w| w <= 0.0).count();
    (departure / f64::from(perturbation), dry)
}

#[test]
fn a_lake_at_rest_stays_at_rest_at_every_accepted_time_step_and_not_past_them() {
    let largest = PipesParams::DEFAULT.largest_stable_dt();
    let accepted = PipesParams {
        dt: largest,
        ..PipesParams::DEFAULT
    };
    assert!(
        accepted.check().is_ok(),
        "the largest stable dt is accepted"
    );
    let past = PipesParams {
        dt: largest * 1.01,
        ..PipesParams::DEFAULT
    };
    let refusal = past.check().unwrap_err();
    assert_eq!(refusal.key, "pipes_dt", "{refusal}");
    for dt in [PipesParams::DEFAULT.dt, largest] {
        let (growth, dry) = lake_after(dt, 150.0);
        assert!(
            growth <= 1.0 && dry == 0,
            "dt {dt}: the perturbation grew {growth:.2}-fold, {dry} cells dry"
        );
    }
    // The bound is the model's own: just past it the lake does not stay at rest.
    let (growth, dry) = lake_after(largest * 1.01, 150.0);
    assert!(
        growth > 100.0 && dry > 0,
        "dt {}: the perturbation grew only {growth:.2}-fold ({dry} cells dry)",
        largest * 1.01
    );
}

/// The CPU reference and the GPU's counted build from `start`: the GPU's fields and
/// its last balance check.
fn run_both(
    ctx: &std::sync::Arc<vkerode::gpu::Context>,
    v: PipesVariant,
    params: &PipesParams,
    start: &PipesState,
    steps: u32,
) -> (
    PipesState,
    PipesFields,
    vkerode::erosion::pipes::BalanceCheck,
) {
    let mut cpu = start.clone();
    run_pipes_on_cpu(&mut cpu, params, steps);
    let mut runner = prepared(ctx, v, params, start);
    let checks = runner.run_checked(steps, steps).unwrap();
    (cpu, runner.read().unwrap(), *checks.last().unwrap())
}

fn relative(a: f64, b: f64) -> f64 {
    (a - b).abs() / a.abs().max(b.abs()).max(f64::MIN_POSITIVE)
}

#[test]
fn friction_open_edges_and_the_cap_follow_the_cpu_reference() {
    let ctx = validated_device();
    let start = wet_terrain(50, 37);
    let lowest = start.terrain.iter().copied().fold(f32::MAX, f32::min);
    let steps = 10;
    for (v, advection) in [
        (
            variant(Fusion::None, Packing::F32, Tiles::None, (16, 16)),
            Advection::SemiLagrangian,
        ),
        (
            variant(Fusion::Fused, Packing::F32, Tiles::None, (16, 16)),
            Advection::Upwind,
        ),
        (
            variant(Fusion::Fused, Packing::F32, Tiles::Shared, (8, 4)),
            Advection::Upwind,
        ),
    ] {
        let params = PipesParams {
            advection,
            friction: 2.0,
            boundary: Boundary::Open,
            base_level: lowest - 0.5,
            sediment_cap: Some(0.02),
            ..PipesParams::DEFAULT
        };
        let (cpu, g, check) = run_both(&ctx, v, &params, &start, steps);
        let report = format!(
            "{v} {advection:?}: water {} sediment {} terrain {}; outflow {} / {}, sediment out {} / {}",
            worst(&g.water, &cpu.water),
            worst(&g.sediment, &cpu.sediment),
            worst(&g.terrain, &cpu.terrain),
            check.outflow,
            cpu.left.outflow,
            check.sediment_outflow,
            cpu.left.sediment_outflow
        );
        assert!(worst(&g.water, &cpu.water) < 1e-4, "{report}");
        assert!(worst(&g.sediment, &cpu.sediment) < 1e-4, "{report}");
        assert!(worst(&g.terrain, &cpu.terrain) < 1e-3, "{report}");
        // Water left by the edges, and the ledgers agree to float rounding.
        assert!(cpu.left.outflow > 1.0, "{report}");
        assert!(relative(check.outflow, cpu.left.outflow) < 1e-4, "{report}");
        assert!(
            relative(check.evaporated, cpu.left.evaporated) < 1e-4,
            "{report}"
        );
        if advection == Advection::Upwind {
            assert!(cpu.left.sediment_outflow > 0.0, "{report}");
            assert!(
                relative(check.sediment_outflow, cpu.left.sediment_outflow) < 1e-3,
                "{report}"
            );
        } else {
            assert_eq!(cpu.left.sediment_outflow, 0.0, "{report}");
            assert_eq!(check.sediment_outflow, 0.0, "{report}");
        }
    }
    assert_validation_clean(&ctx);
}

/// A bed of `relief` (xorshift noise, the same everywhere), dry.
fn rough_bed(side: usize, relief: f32) -> PipesState {
    let mut bed = perturbed_lake(side, 0.5 * relief, 0.5 * relief);
    bed.terrain = std::mem::take(&mut bed.water);
    bed.water = vec![0.0; side * side];
    bed
}

fn relief(v: &[f32]) -> f32 {
    v.iter().copied().fold(f32::MIN, f32::max) - v.iter().copied().fold(f32::MAX, f32::min)
}

/// Uniform rain on a flat bed moves no water but what its 0.007 of relief sends, which
/// has nothing to carry: at the defaults (no minimum tilt) the bed keeps its relief to
/// 20% over 2,000 steps (40 time units; the water reaches 0.36 deep), and with friction
/// to 3%. The open implementations' minimum tilt of 0.05 gave the sloshing water a
/// capacity on the flat: the relief grows about fiftyfold (0.007 to 0.39) in those
/// steps, and without end.
#[test]
fn a_flat_bed_under_uniform_rain_does_not_erode() {
    let ctx = validated_device();
    let side = 64;
    let bed = rough_bed(side, 0.007);
    let start = relief(&bed.terrain);
    let steps = 2000;
    let defaults = PipesSettings::DEFAULT.params();
    assert_eq!(defaults.min_tilt, 0.0);
    let fused = PipesSettings::DEFAULT.variant();
    let (cpu, g, check) = run_both(&ctx, fused, &defaults, &bed, steps);
    for (name, terrain, sediment) in [
        ("cpu", &cpu.terrain, &cpu.sediment),
        ("gpu", &g.terrain, &g.sediment),
    ] {
        let change = worst(terrain, &bed.terrain);
        let after = relief(terrain);
        assert!(
            change < 0.2 * start && after < 1.2 * start,
            "{name}: largest change {change}, relief {start} -> {after}"
        );
        // What little the water dissolves comes out of the bed: between closed edges,
        // the bed's loss is the sediment it carries (with the sign of erosion flipped,
        // the bed would gain it).
        let lost: f64 = (bed.terrain.iter().zip(terrain.iter()))
            .map(|(&b, &a)| f64::from(b) - f64::from(a))
            .sum();
        let carried: f64 = sediment.iter().map(|&s| f64::from(s)).sum();
        assert!(
            carried > 0.0 && (lost / carried - 1.0).abs() < 0.01,
            "{name}: the bed lost {lost}, the water carries {carried}"
        );
    }
    assert!(check.water_error.abs() < 1e-4 * check.rain, "{check:?}");
    let with = |friction: f32, min_tilt: f32| {
        let mut state = bed.clone();
        let params = PipesParams {
            friction,
            min_tilt,
            ..defaults
        };
        run_pipes_on_cpu(&mut state, &params, steps);
        (worst(&state.terrain, &bed.terrain), relief(&state.terrain))
    };
    let (change, _) = with(1.0, 0.0);
    assert!(change < 0.03 * start, "friction 1: largest change {change}");
    let (change, after) = with(0.0, 0.05);
    assert!(
        after > 10.0 * start,
        "the old minimum tilt: relief {start} -> {after}, largest change {change}"
    );
    assert_validation_clean(&ctx);
}

/// A plane tilted 0.05 along x, 1 above the base level at its low edge, open on every
/// side, under rain and no evaporation: its stored water settles and its outflow comes
/// to the rain it receives, rain x area, to 1e-4 from 10 time units on (measured: to
/// 2e-6 from 2 on). Closed, it only fills. With evaporation the balance still closes.
#[test]
fn a_tilted_plane_with_open_edges_reaches_a_steady_outflow_of_rain_times_area() {
    let ctx = validated_device();
    let (width, height) = (48, 24);
    let terrain: Vec<f32> = (0..width * height)
        .map(|i| 1.0 + 0.05 * (i % width) as f32)
        .collect();
    let plane = PipesState::dry(width, height, terrain);
    let rain = 0.012;
    let cells = (width * height) as f64;
    let inflow = f64::from(rain) * cells;
    for friction in [0.0, 1.0] {
        let params = PipesParams {
            rain,
            evaporation: 0.0,
            // The water alone: an eroding plane would store water in what it carves.
            capacity: 0.0,
            friction,
            boundary: Boundary::Open,
            base_level: 0.0,
            advection: Advection::Upwind,
            ..PipesParams::DEFAULT
        };
        let kernel = PipesKernel::new(
            &ctx,
            variant(Fusion::Fused, Packing::F32, Tiles::None, (16, 16)),
            &params,
        )
        .unwrap();
        let mut runner = kernel.prepare(width, height, &plane.terrain, None).unwrap();
        let every = 100;
        let checks = runner.run_checked(1000, every).unwrap();
        let window = f64::from(every) * f64::from(params.dt);
        for pair in checks.windows(2) {
            let rate = (pair[1].outflow - pair[0].outflow) / window;
            println!(
                "friction {friction}, steps {} to {}: outflow / (rain x area) - 1 = {:.2e}",
                pair[0].step,
                pair[1].step,
                rate / inflow - 1.0
            );
        }
        for pair in checks.windows(2).skip(4) {
            let rate = (pair[1].outflow - pair[0].outflow) / window;
            assert!(
                relative(rate, inflow) < 1e-4,
                "friction {friction}, step {}: outflow {rate} per time unit, rain x area {inflow}",
                pair[1].step
            );
        }
        let last = checks.last().unwrap();
        assert!(last.water_error.abs() < 1e-4 * last.rain, "{last:?}");
        // The CPU reference agrees.
        let mut cpu = plane.clone();
        run_pipes_on_cpu(&mut cpu, &params, 1000);
        assert!(relative(cpu.left.outflow, last.outflow) < 1e-4, "{last:?}");
        let stored = cpu.totals().water;
        assert!(
            relative(stored + cpu.left.outflow, last.rain) < 1e-5,
            "rain {} = stored {stored} + outflow {}",
            last.rain,
            cpu.left.outflow
        );
    }
    // Closed, nothing leaves: the rain fills the low edge.
    let closed = PipesParams {
        rain,
        evaporation: 0.0,
        capacity: 0.0,
        ..PipesParams::DEFAULT
    };
    let mut cpu = plane.clone();
    run_pipes_on_cpu(&mut cpu, &closed, 1000);
    assert_eq!(cpu.left.outflow, 0.0);
    assert!(relative(cpu.totals().water, inflow * 20.0) < 1e-4);
    // With evaporation: rain in = water stored + evaporated + outflow.
    let evaporating = PipesParams {
        rain,
        boundary: Boundary::Open,
        ..PipesParams::DEFAULT
    };
    let mut cpu = plane.clone();
    run_pipes_on_cpu(&mut cpu, &evaporating, 1000);
    let rained = inflow * 1000.0 * f64::from(evaporating.dt);
    let accounted = cpu.totals().water + cpu.left.evaporated + cpu.left.outflow;
    assert!(cpu.left.evaporated > 0.0 && cpu.left.outflow > 0.0);
    assert!(
        relative(accounted, rained) < 1e-5,
        "rain {rained}, accounted {accounted}: {:?}",
        cpu.left
    );
    assert_validation_clean(&ctx);
}

/// The largest departure of the water from its mean depth at each of `steps` steps.
fn departures(state: &mut PipesState, params: &PipesParams, steps: u32) -> Vec<f32> {
    (0..steps)
        .map(|_| {
            run_pipes_on_cpu(state, params, 1);
            let mean = state.water.iter().sum::<f32>() / state.water.len() as f32;
            state
                .water
                .iter()
                .map(|w| (w - mean).abs())
                .fold(0.0, f32::max)
        })
        .collect()
}

/// A basin 32 cells long holding its first mode: water 1 deep, tilted by 0.05 end to
/// end.
fn sloshing_basin() -> PipesState {
    let (width, height) = (32, 4);
    let mut basin = PipesState::dry(width, height, vec![0.0; width * height]);
    for (i, w) in basin.water.iter_mut().enumerate() {
        let x = (i % width) as f32 + 0.5;
        *w = 1.0 + SLOSH * (std::f32::consts::PI * x / width as f32).cos();
    }
    basin
}

/// The first mode's amplitude at the start.
const SLOSH: f32 = 0.025;

/// The slosh's peaks from `from` on, in time units, as (t, ln(departure / SLOSH)).
fn peaks(series: &[f32], dt: f32, from: f32) -> Vec<(f64, f64)> {
    (1..series.len() - 1)
        .filter(|&k| series[k] >= series[k - 1] && series[k] > series[k + 1])
        .map(|k| (f64::from(dt) * k as f64, f64::from(series[k] / SLOSH).ln()))
        .filter(|&(t, _)| t >= f64::from(from))
        .collect()
}

/// A basin's slosh under linear drag, the flux update keeping 1 - friction dt of the
/// previous flux. With one net flux per pair of cells, flux and depth updates
/// linearise to the damped wave d_tt + friction d_t = c^2 d_xx: a mode of angular
/// frequency w decays as exp(-friction t / 2) while friction < 2 w, and as
/// exp(-(friction / 2 - sqrt(friction^2 / 4 - w^2)) t) past it. Mei et al.'s pipes are
/// one-way, two to a pair of cells, and where the surface drop turns against the flow
/// (the half of each swing where the flow slows) the backward pipe opens while the
/// forward one still carries: the net flux then changes twice as fast. This test holds
/// the model to each regime:
///
/// - From rest without friction, both pipes of every pair carry water after the first
///   swing, for good: the slosh runs sqrt(2) times as fast as the linear wave (period
///   2 l width / (c sqrt(2)) = 3.23, not 4.57, to 1%) and keeps 1/sqrt(2) of its
///   amplitude (0.706; the rest stays as flow through both pipes of each pair, which
///   moves no water), to 1%.
/// - With both pipes of every pair held open (a common flux of 10 through every pipe,
///   which friction cannot drain in the run), the flow is the linear damped wave of
///   doubled stiffness: peaks decay as exp(-friction t / 2), as src/erosion/pipes/
///   params.rs states, to 2% (measured 0.3%), at friction 0.05, 0.1 and 0.2.
/// - Overdamped (friction 10, w = 1.37): the flow never turns against the drop, one pipe
///   carries it, and the mode decays at the damped wave's slow root, 0.193 per time
///   unit, to 1% (measured 0.2%).
/// - From rest with friction, the model does not meet exp(-friction t / 2): friction
///   drains the common flow of each pair twice as fast as the slosh, the backward pipes
///   close, and each swing's clamp takes a share: peaks from t = 5 to 40 decay as
///   exp(-0.74 friction t) at friction 0.02 to 0.2 (asserted 0.70 to 0.78). The pipes
///   settings doc's exp(-0.66 friction t) is 11% slower than that; params.rs's
///   exp(-friction t / 2) holds only while both pipes of every pair flow.
#[test]
fn friction_damps_a_slosh_at_half_its_rate_while_both_pipes_flow_and_faster_from_rest() {
    let basin = sloshing_basin();
    let width = basin.width;
    let still = PipesParams {
        rain: 0.0,
        evaporation: 0.0,
        capacity: 0.0,
        ..PipesParams::DEFAULT
    };
    let (time, dt) = (40.0, still.dt);
    let steps = (time / dt).round() as u32;
    let c = f64::from(still.pipe_area * still.gravity / still.cell_length).sqrt();
    let linear_period = 2.0 * width as f64 / c;
    // The common flux through both pipes of every pair inside the basin.
    let primed = |common: f32| {
        let mut b = basin.clone();
        for (i, f) in b.flux.iter_mut().enumerate() {
            let x = i % width;
            *f = [
                if x > 0 { common } else { 0.0 },
                if x + 1 < width { common } else { 0.0 },
                0.0,
                0.0,
            ];
        }
        b
    };
    let run = |start: &PipesState, friction: f32| {
        let params = PipesParams { friction, ..still };
        departures(&mut start.clone(), &params, steps)
    };

    let free = peaks(&run(&basin, 0.0), dt, 5.0);
    let spacing = (free[free.len() - 1].0 - free[0].0) / (free.len() - 1) as f64;
    let kept = free.iter().map(|p| p.1.exp()).sum::<f64>() / free.len() as f64;
    println!(
        "friction 0: period {:.3} (linear wave {linear_period:.3}), keeps {kept:.4}",
        2.0 * spacing
    );
    assert!(
        relative(2.0 * spacing, linear_period / 2f64.sqrt()) < 0.01,
        "the free slosh's period {} against {linear_period} / sqrt(2)",
        2.0 * spacing
    );
    assert!(
        relative(kept, 0.5f64.sqrt()) < 0.01,
        "the free slosh keeps {kept}"
    );

    for friction in [0.05f32, 0.1, 0.2] {
        let rate = -slope(&peaks(&run(&primed(10.0), friction), dt, 5.0));
        let half = f64::from(friction) / 2.0;
        println!(
            "friction {friction}, both pipes open: decays at {rate:.5}, friction / 2 = {half}"
        );
        assert!(
            relative(rate, half) < 0.02,
            "friction {friction}, both pipes open: decays at {rate}, not friction / 2"
        );
    }

    let friction = 10.0f32;
    let series = run(&basin, friction);
    let tail: Vec<(f64, f64)> = series
        .iter()
        .enumerate()
        .map(|(k, &d)| (f64::from(dt) * (k + 1) as f64, f64::from(d / SLOSH).ln()))
        .filter(|&(t, _)| (5.0..=20.0).contains(&t))
        .collect();
    let rate = -slope(&tail);
    // The discrete mode's frequency: c times the grid's wavenumber for cos(pi x / width).
    let w = 2.0 * c * (std::f64::consts::PI / (2.0 * width as f64)).sin();
    let k = f64::from(friction);
    let root = k / 2.0 - (k * k / 4.0 - w * w).sqrt();
    println!("friction {friction}: decays at {rate:.5}, the slow root {root:.5}");
    assert!(
        relative(rate, root) < 0.01,
        "overdamped: decays at {rate}, the slow root {root}"
    );

    for friction in [0.02f32, 0.05, 0.1, 0.2] {
        let rate = -slope(&peaks(&run(&basin, friction), dt, 5.0));
        let share = rate / f64::from(friction);
        println!("friction {friction}, from rest: decays at {rate:.5}, {share:.3} friction");
        assert!(
            (0.70..=0.78).contains(&share),
            "friction {friction}, from rest: decays as exp(-{share} friction t)"
        );
    }

    // The GPU damps the same.
    let ctx = validated_device();
    let params = PipesParams {
        friction: 1.0,
        ..still
    };
    let (cpu, g, _) = run_both(
        &ctx,
        variant(Fusion::Fused, Packing::F32, Tiles::None, (16, 4)),
        &params,
        &basin,
        steps,
    );
    assert!(worst(&g.water, &cpu.water) < 1e-5);
    assert!(relief(&g.water) < 1e-4 * SLOSH, "{}", relief(&g.water));
    assert_validation_clean(&ctx);
}

/// With a cap, no cell ever holds more suspended sediment than the cap times its water
/// (the excess is deposited, so terrain + sediment is still conserved); without one the
/// wet terrain's sediment passes that cap.
#[test]
fn sediment_never_exceeds_the_cap() {
    let ctx = validated_device();
    let start = wet_terrain(64, 64);
    let cap = 0.02;
    // The largest concentration where there is water to speak of.
    let concentration = |s: &[f32], w: &[f32]| {
        s.iter()
            .zip(w)
            .filter(|(_, &w)| w > 1e-3)
            .map(|(&s, &w)| s / w)
            .fold(0.0, f32::max)
    };
    // Everywhere, to float rounding: cap times the water (times the cell's area, 1).
    let within = |s: &[f32], w: &[f32]| {
        s.iter()
            .zip(w)
            .all(|(&s, &w)| s <= cap * w * (1.0 + 1e-6) + f32::MIN_POSITIVE)
    };
    let free = PipesParams {
        rain: 0.0,
        evaporation: 0.0,
        advection: Advection::Upwind,
        ..PipesParams::DEFAULT
    };
    let mut uncapped = start.clone();
    run_pipes_on_cpu(&mut uncapped, &free, 100);
    let most = concentration(&uncapped.sediment, &uncapped.water);
    assert!(
        most > 5.0 * cap,
        "uncapped, the sediment reaches {most} of the water"
    );
    let capped = PipesParams {
        sediment_cap: Some(cap),
        evaporation: PipesParams::DEFAULT.evaporation,
        ..free
    };
    let fused = variant(Fusion::Fused, Packing::F32, Tiles::None, (16, 16));
    let mut cpu = start.clone();
    let mut runner = prepared(&ctx, fused, &capped, &start);
    for chunk in [1u32, 9, 90] {
        run_pipes_on_cpu(&mut cpu, &capped, chunk);
        assert!(within(&cpu.sediment, &cpu.water), "cpu, {chunk}");
    }
    let checks = runner.run_checked(100, 10).unwrap();
    let g = runner.read().unwrap();
    assert!(within(&g.sediment, &g.water), "gpu");
    let held = concentration(&g.sediment, &g.water);
    assert!(held > 0.5 * cap, "the cap binds: {held}");
    let drift = checks.last().unwrap().advection_drift;
    assert!(drift.abs() < 1e-6 * start.totals().terrain, "drift {drift}");
    assert_validation_clean(&ctx);
}

/// The dam-break channel: `length` cells in one row, `h0` deep left of the dam (at
/// `dam`, in cells from the left wall) and dry right of it, on a flat bed, with no rain,
/// evaporation or erosion.
fn dam_break(length: usize, dam: usize, h0: f32) -> PipesState {
    let mut channel = PipesState::dry(length, 1, vec![0.0; length]);
    for w in &mut channel.water[..dam] {
        *w = h0;
    }
    channel
}

/// Where the wet front stands, in cells past the dam: the far side of the last cell
/// deeper than `threshold`; and where the rarefaction's head stands (negative: behind
/// the dam), the near side of the first cell shallower than h0 - threshold.
fn fronts(water: &[f32], dam: usize, h0: f32, threshold: f32) -> (f64, f64) {
    let wet = water.iter().rposition(|&w| w > threshold).unwrap_or(0);
    let drawn = water
        .iter()
        .position(|&w| w < h0 - threshold)
        .unwrap_or(dam);
    (wet as f64 + 1.0 - dam as f64, drawn as f64 - dam as f64)
}

/// Least-squares slope of `y` against `x`.
fn slope(points: &[(f64, f64)]) -> f64 {
    let n = points.len() as f64;
    let (mx, my) = points
        .iter()
        .fold((0.0, 0.0), |(a, b), (x, y)| (a + x / n, b + y / n));
    let (sxy, sxx) = points.iter().fold((0.0, 0.0), |(a, b), (x, y)| {
        (a + (x - mx) * (y - my), b + (x - mx) * (x - mx))
    });
    sxy / sxx
}

/// Where the water surface of `water` (one row) crosses `level` going down, in cells
/// from the dam (cell centres at i + 1/2, linear between them): the last crossing for
/// the front, the first for the rarefaction's head.
fn crossing(water: &[f32], dam: usize, level: f32, last: bool) -> f64 {
    let above = |i: usize| water[i] > level;
    let i = if last {
        (0..water.len() - 1)
            .rev()
            .find(|&i| above(i) && !above(i + 1))
    } else {
        (0..water.len() - 1).find(|&i| above(i) && !above(i + 1))
    }
    .expect("the surface crosses the level");
    let (a, b) = (f64::from(water[i]), f64::from(water[i + 1]));
    i as f64 + 0.5 + (a - f64::from(level)) / (a - b) - dam as f64
}

/// The dam break in the model's own terms. Linearised, the flux update
/// Q += dt A g (surface drop) / l and the depth update d += dt (inflow - outflow) / l^2
/// are the wave equation d_tt = (g A / l) d_xx: waves at c = sqrt(g A / l), in cells
/// (l = 1) 14.01 per time unit at the default A = 20, whatever the depth. Its dam break
/// (d = h0 behind the dam, dry beyond, at rest) is two steps of h0 / 2, one running
/// downstream at c and one upstream at -c: the depth at the dam is h0 / 2 from the
/// start, and the volume past it grows at c h0 / 2. The depth's departure from h0 / 2 is
/// odd about the dam, and the scheme keeps it odd: its pipes see only surface drops,
/// which the mirror image (x to -x, d to h0 - d) leaves as they are, and the limits that
/// see the depth itself (the outflow limit, the depth's floor at 0) stay idle here. So
/// the two cells beside the dam sum to h0, to float rounding. The discrete
/// waves spread as t^(1/3) (the scheme's dispersion), with their midpoints (h0 / 4 and
/// 3 h0 / 4) lagging c t by under a cell: while they run 14 to 56 cells from the dam
/// they move at c to 1.1% (measured); asserted to 2%, at h0 = 0.25, 1 and 4 (the model
/// is linear in the depth) and at A = 5 (half the speed). The volume past the dam grows
/// at c h0 / 2 to 1.2%, asserted to 2%.
///
/// The model does not meet Ritter's solution of the shallow-water equations, and the
/// test asserts by how much: Ritter's dam-site depth is 4/9 h0, the model's h0 / 2 is
/// 12.5% deeper (to 1e-4); Ritter's front runs at 2 sqrt(g h0) (6.26 cells per time unit
/// at h0 = 1), the model's at c, at the default A 2.2 times that at h0 = 1, 4.4 at 0.25
/// and 1.1 at 4 (asserted more than 10% off). The pipes have no advection of momentum
/// and a fixed cross-section A, where the shallow-water equations push through h l
/// (results/analytic/dam-break.md).
#[test]
fn a_dam_break_runs_as_the_pipes_linear_wave_and_not_as_ritters_solution() {
    let (length, dam) = (160, 80);
    let base = PipesParams {
        rain: 0.0,
        evaporation: 0.0,
        capacity: 0.0,
        ..PipesParams::DEFAULT
    };
    let g = f64::from(base.gravity);
    for (h0, pipe_area) in [(1.0f32, 20.0f32), (0.25, 20.0), (4.0, 20.0), (1.0, 5.0)] {
        let params = PipesParams { pipe_area, ..base };
        params.check().unwrap();
        let c = (g * f64::from(pipe_area) / f64::from(params.cell_length)).sqrt();
        // Read while the waves run 14 to 56 cells from the dam, whatever their speed.
        let times: Vec<f64> = (2..=8).map(|k| f64::from(k) * 7.0 / c).collect();
        let name = format!("h0 {h0}, A {pipe_area}, c {c:.3}");
        let mut channel = dam_break(length, dam, h0);
        let (mut front, mut head, mut past) = (Vec::new(), Vec::new(), Vec::new());
        let mut done = 0;
        for &t in &times {
            let steps = (t / f64::from(params.dt)).round() as u32;
            run_pipes_on_cpu(&mut channel, &params, steps - done);
            done = steps;
            let w = &channel.water;
            front.push((t, crossing(w, dam, 0.25 * h0, true)));
            head.push((t, crossing(w, dam, 0.75 * h0, false)));
            past.push((t, w[dam..].iter().map(|&d| f64::from(d)).sum::<f64>()));
            // The depth at the dam: the mean of the cells on either side.
            let at_dam = 0.5 * (f64::from(w[dam - 1]) + f64::from(w[dam]));
            let h0 = f64::from(h0);
            assert!(
                (at_dam - 0.5 * h0).abs() < 1e-5 * h0,
                "{name}, t {t}: depth at the dam {at_dam}, linear wave h0 / 2"
            );
            let ritter = 4.0 / 9.0 * h0;
            assert!(
                (at_dam / ritter - 1.125).abs() < 1e-4,
                "{name}, t {t}: depth at the dam {at_dam}, Ritter's 4/9 h0 = {ritter}"
            );
        }
        let (front, head, past) = (slope(&front), -slope(&head), slope(&past));
        let flow = c * f64::from(h0) / 2.0;
        let ritter = 2.0 * (g * f64::from(h0)).sqrt();
        println!(
            "{name}: front {front:.3} ({:+.2}% of c), head {head:.3} ({:+.2}%), volume past the dam {past:.3} a time unit ({:+.2}% of c h0 / 2); Ritter's front {ritter:.3}, the model's {:.2} times it",
            100.0 * (front / c - 1.0),
            100.0 * (head / c - 1.0),
            100.0 * (past / flow - 1.0),
            front / ritter
        );
        assert!(relative(front, c) < 0.02, "{name}: front {front}");
        assert!(relative(head, c) < 0.02, "{name}: rarefaction {head}");
        assert!(
            relative(past, flow) < 0.02,
            "{name}: volume past the dam {past} a time unit"
        );
        if pipe_area == PipesParams::DEFAULT.pipe_area {
            assert!(
                (front / ritter - 1.0).abs() > 0.1,
                "{name}: front {front}, Ritter's {ritter}"
            );
        }
    }
    // The GPU's fused passes run it as the CPU reference does.
    let ctx = validated_device();
    let params = PipesParams {
        rain: 0.0,
        evaporation: 0.0,
        capacity: 0.0,
        ..PipesSettings::DEFAULT.params()
    };
    let start = dam_break(length, dam, 1.0);
    let steps = 100;
    let mut cpu = start.clone();
    run_pipes_on_cpu(&mut cpu, &params, steps);
    let gpu = run_gpu(
        &ctx,
        PipesSettings::DEFAULT.variant(),
        &params,
        &start,
        steps,
    );
    let off = worst(&gpu.water, &cpu.water);
    assert!(off < 1e-5, "the GPU's water is off by {off}");
    assert_validation_clean(&ctx);
}

/// Writes results/analytic/dam-break.md and dam-break.csv: the model's dam break
/// against Ritter's solution at depths 0.25, 1 and 4. Regenerate with
/// `cargo test --release --test pipes -- --ignored --exact dam_break_page`.
#[test]
#[ignore]
fn dam_break_page() {
    use std::fmt::Write;
    let ctx = validated_device();
    let (length, dam) = (800, 400);
    let base = PipesParams {
        rain: 0.0,
        evaporation: 0.0,
        capacity: 0.0,
        ..PipesSettings::DEFAULT.params()
    };
    let g = f64::from(base.gravity);
    let relative_threshold = 1e-3;
    let times: Vec<f64> = (4..=20).map(|k| f64::from(k) * 0.5).collect();
    let mut csv = String::from(
        "h0,pipe_area,time,front_model,front_ritter_threshold,front_ritter,rarefaction_model,rarefaction_ritter\n",
    );
    let mut rows = Vec::new();
    for (h0, area_label) in [
        (0.25f32, "20"),
        (1.0, "20"),
        (4.0, "20"),
        (0.25, "h0 l"),
        (1.0, "h0 l"),
        (4.0, "h0 l"),
    ] {
        let pipe_area = if area_label == "20" { 20.0 } else { h0 };
        let params = PipesParams { pipe_area, ..base };
        params.check().unwrap();
        let threshold = relative_threshold * h0;
        let c = (g * f64::from(h0)).sqrt();
        let mut channel = dam_break(length, dam, h0);
        let (mut wet, mut drawn) = (Vec::new(), Vec::new());
        let mut done = 0;
        for &t in &times {
            let steps = (t / f64::from(params.dt)).round() as u32;
            run_pipes_on_cpu(&mut channel, &params, steps - done);
            done = steps;
            let (front, head) = fronts(&channel.water, dam, h0, threshold);
            let ritter_threshold = t * (2.0 * c - 3.0 * (g * f64::from(threshold)).sqrt());
            writeln!(
                csv,
                "{h0},{pipe_area},{t},{front},{ritter_threshold:.4},{:.4},{head},{:.4}",
                2.0 * c * t,
                -c * t
            )
            .unwrap();
            wet.push((t, front));
            drawn.push((t, head));
        }
        // The GPU's fused passes after the last time: the same fronts.
        let kernel = PipesKernel::new(&ctx, PipesSettings::DEFAULT.variant(), &params).unwrap();
        let mut runner = kernel
            .prepare(
                length,
                1,
                &vec![0.0; length],
                Some(&dam_break(length, dam, h0).water),
            )
            .unwrap();
        runner.run(done).unwrap();
        let gpu = fronts(&runner.read().unwrap().water, dam, h0, threshold);
        let cpu = fronts(&channel.water, dam, h0, threshold);
        rows.push((
            h0,
            area_label,
            slope(&wet),
            2.0 * c,
            2.0 * c - 3.0 * (g * f64::from(threshold)).sqrt(),
            -slope(&drawn),
            c,
            (f64::from(params.gravity) * f64::from(pipe_area) / f64::from(params.cell_length))
                .sqrt(),
            (cpu, gpu),
        ));
    }
    assert_validation_clean(&ctx);
    let mut table = String::new();
    for (h0, area, front, ritter, ritter_threshold, head, c, pipes, (cpu, gpu)) in &rows {
        writeln!(
            table,
            "| {h0} | {area} | {front:.2} | {ritter:.2} | {ritter_threshold:.2} | {:.2} | {head:.2} | {c:.2} | {pipes:.2} | {:.0} / {:.0} |",
            front / ritter,
            cpu.0,
            gpu.0
        )
        .unwrap();
    }
    let fixed: Vec<f64> = rows.iter().take(3).map(|r| r.2).collect();
    let page = format!(
        r#"# Dam break: the virtual-pipe model against Ritter's solution

*Generated by `cargo test --release --test pipes -- --ignored --exact dam_break_page`
(tests/pipes.rs), which also writes [dam-break.csv](dam-break.csv). Issue #25's analytic
suite: the model's wave speed, shown and explained.*

## The case

A channel of {length} cells in one row (l = 1), closed at both ends, flat bed, water
h0 deep over the {dam} cells left of a dam at x = 0 and dry to its right; the dam
vanishes at t = 0. No rain, evaporation or erosion (Kc = 0); g = {gravity}, dt = {dt},
frictionless (`pipes_friction` 0). The CPU reference (src/erosion/pipes/cpu.rs) runs
it; the GPU's fused passes give the same fronts at t = {tend} (last column: CPU / GPU,
cells past the dam).

Ritter (1892): on a dry frictionless bed, the depth between the rarefaction's head and
the front is h = (2 sqrt(g h0) - x/t)^2 / (9 g). The front runs at 2 sqrt(g h0), the
head at sqrt(g h0) upstream. A front is a depth threshold in a model, so beside the
front's speed is the speed of Ritter's depth contour at the threshold the model's front
is read at, {rel} h0: 2 sqrt(g h0) - 3 sqrt(g {rel} h0). The model's fronts are
least-squares slopes of the wet front (the far side of the last cell deeper than
{rel} h0) and of the rarefaction's head (the first cell shallower than h0 (1 - {rel}))
over t = {t0} to {tend}, sampled every 0.5.

## Front speed, cells per time unit

| h0 | pipe area A | model front | Ritter front 2 sqrt(g h0) | Ritter at the threshold | model / Ritter | model rarefaction | Ritter rarefaction sqrt(g h0) | sqrt(g A / l) | front at t = {tend}, CPU / GPU |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
{table}
## Why the model deviates

At the default pipe area (A = 20 cell areas) the front runs at {f0:.2}, {f1:.2} and
{f2:.2} cells per time unit for h0 = 0.25, 1 and 4: the same speed whatever the depth,
where Ritter's front runs at 3.13, 6.26 and 12.53. The model's flux equation is
df/dt = A g (surface drop) / l, and its depth equation dd/dt = (inflow - outflow) /
l^2: linearised, a wave equation whose speed is sqrt(g A / l) = {pipes:.2} cells per
time unit, set by the pipe's cross-section A and not by the water's depth. The
shallow-water equations push the discharge by g h (surface slope): their pipe area is
the depth times the cell's width, h l, and changes with the water. Holding A fixed
makes the model linear in the depth: every depth's dam break is the same flow scaled
by h0, so a front read at a share of h0 moves at one speed for all h0, and a linear
wave sends the rarefaction upstream at the front's speed. (Both, read at {rel} h0,
run a little ahead of sqrt(g A / l): the scheme's leading edge, a dispersive precursor
of the discrete wave, is already past the threshold.)

With A = h0 l, the pipe area the shallow-water equations would give the still water,
the model's waves run at sqrt(g h0): the rarefaction's head then runs at {r3:.2},
{r4:.2} and {r5:.2} against Ritter's {c3:.2}, {c4:.2} and {c5:.2} (the same precursor,
larger where the channel is fewer cells long for the wave), but the front runs at that
speed too ({f3:.2}, {f4:.2}, {f5:.2}), about half of Ritter's 2 sqrt(g h0). Ritter's
front is the water's own speed where its depth runs out: the water accelerates into
the dry bed, and u + 2 sqrt(g h) stays 2 sqrt(g h0) along the flow, so u reaches
2 sqrt(g h0) as h goes to 0. That takes the advection of momentum and a pipe area
that shrinks with the depth, and the pipe model has neither: its flux remembers only
itself and the surface drop. So the model reproduces neither Ritter's front nor its depth
scaling at the default A; choosing A per run sets one wave speed, right for small
waves on water about A / l deep. Erosion under the model is not time-accurate
hydraulics: its time scale is the pipes', and docs/kernel.md states it.
"#,
        dt = base.dt,
        gravity = base.gravity,
        rel = relative_threshold,
        t0 = times[0],
        tend = times[times.len() - 1],
        f0 = fixed[0],
        f1 = fixed[1],
        f2 = fixed[2],
        pipes = rows[0].7,
        r3 = rows[3].5,
        r4 = rows[4].5,
        r5 = rows[5].5,
        c3 = rows[3].6,
        c4 = rows[4].6,
        c5 = rows[5].6,
        f3 = rows[3].2,
        f4 = rows[4].2,
        f5 = rows[5].2,
    );
    let out = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("results/analytic");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("dam-break.md"), page).unwrap();
    std::fs::write(out.join("dam-break.csv"), csv).unwrap();
    for (h0, area, _, _, _, _, _, _, (cpu, gpu)) in &rows {
        assert!(
            (cpu.0 - gpu.0).abs() <= 1.0,
            "h0 {h0}, A {area}: {cpu:?} {gpu:?}"
        );
    }
}
