//! The grid-centric strategy (virtual pipes): every variant of the GPU passes against
//! the CPU reference, conservation and its checks, and the parameters' rules. On the
//! default device under validation.

mod common;

use vkerode::erosion::pipes::{
    run_pipes_on_cpu, Advection, Fusion, Packing, PipesFields, PipesKernel, PipesParams,
    PipesState, PipesVariant, Tiles, WorkgroupShape,
};

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

fn run_gpu(
    ctx: &std::sync::Arc<vkerode::gpu::Context>,
    variant: PipesVariant,
    params: &PipesParams,
    start: &PipesState,
    steps: u32,
) -> PipesFields {
    let kernel = PipesKernel::new(ctx, variant, params).unwrap();
    let mut runner = kernel
        .prepare(
            start.width,
            start.height,
            &start.terrain,
            Some(&start.water),
        )
        .unwrap();
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
        let kernel = PipesKernel::new(&ctx, v, &params).unwrap();
        let mut runner = kernel
            .prepare(40, 40, &start.terrain, Some(&start.water))
            .unwrap();
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
        let kernel = PipesKernel::new(&ctx, v, &open).unwrap();
        let mut runner = kernel
            .prepare(64, 64, &start.terrain, Some(&start.water))
            .unwrap();
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
