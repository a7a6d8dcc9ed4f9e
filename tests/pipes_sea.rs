//! The grid as the comparison of strategies runs it (issue 40): open edges into one sea,
//! the upwind transport, the sediment capped. No cell erodes below the sea, on the CPU
//! reference and the GPU; and thin water erodes alike at dt and dt/2, which it did not
//! while water of mean depth 1e-4 or less had no speed. On the default device under
//! validation.

mod common;

use vkerode::erosion::pipes::{
    run_pipes_on_cpu, Advection, Boundary, PipesKernel, PipesParams, PipesSettings, PipesState,
};
use vkerode::erosion::GridSettings;

use vkerode::studies::strategy_comparison::BaseLevel;
use vkerode::terrain::Heightmap;

use common::{assert_validation_clean, cpu_terrain, validated_device};

/// The comparison's grid: upwind, open edges at `sea`, sediment capped at 1, no minimum
/// tilt (vkerode's default), raining `rain` per time unit.
fn comparison(sea: f32, rain: f32, dt: f32) -> PipesParams {
    PipesParams {
        dt,
        rain,
        advection: Advection::Upwind,
        boundary: Boundary::Open,
        base_level: sea,
        sediment_cap: Some(1.0),
        ..PipesSettings::DEFAULT.params()
    }
}

/// 64² erosion noise lowered so that its lowest cell is at 0: heights of tens, whose
/// float32 steps (about 4e-6) stay well under a step's erosion at every dt tried.
fn noise() -> PipesState {
    let map = cpu_terrain(64, 2);
    let lowest = map.data().iter().copied().fold(f32::MAX, f32::min);
    PipesState::dry(64, 64, map.data().iter().map(|h| h - lowest).collect())
}

/// What the cells that went down lost, and what the map lost in all (their loss less
/// what the others gained).
fn eroded(before: &[f32], after: &[f32]) -> (f64, f64) {
    let changes = before.iter().zip(after).map(|(b, a)| f64::from(b - a));
    (changes.clone().map(|c| c.max(0.0)).sum(), changes.sum())
}

#[test]
fn no_cell_erodes_below_the_sea_on_the_cpu_and_the_gpu() {
    let start = noise();
    // The sea a third of the way up the relief: the cells below it are many.
    let mut sorted = start.terrain.clone();
    sorted.sort_by(f32::total_cmp);
    let sea = sorted[sorted.len() / 3];
    // Heavy rain, so that the flow would cut down past the sea within the run.
    let params = comparison(sea, 0.5, 0.02);
    let steps = 1000;
    let mut cpu = start.clone();
    run_pipes_on_cpu(&mut cpu, &params, steps);
    let ctx = validated_device();
    let mut runner = PipesKernel::new(&ctx, PipesSettings::DEFAULT.variant(), &params)
        .unwrap()
        .prepare(64, 64, &start.terrain, None)
        .unwrap();
    runner.run(steps).unwrap();
    let gpu = runner.read().unwrap().terrain;
    assert_validation_clean(&ctx);
    for (engine, after) in [("cpu", &cpu.terrain), ("gpu", &gpu)] {
        let mut at_the_sea = 0;
        for (i, (&b, &a)) in start.terrain.iter().zip(after.iter()).enumerate() {
            // A cell above the sea may come down to it, never past; one below only fills.
            let floor = b.min(sea);
            assert!(
                a >= floor - 1e-4,
                "{engine}: cell {i} from {b} to {a}, sea {sea}"
            );
            if b > sea + 1e-3 && (a - sea).abs() < 1e-3 {
                at_the_sea += 1;
            }
        }
        // The floor binds: cells that started above the sea were cut down to it.
        assert!(
            at_the_sea > 20,
            "{engine}: {at_the_sea} cells reached the sea"
        );
    }
}

#[test]
fn thin_water_erodes_alike_at_dt_and_half_of_it() {
    // A sixteenth of a height unit of water over 30 time units, as the comparison's
    // smallest dose: with a depth floor of 1e-4 under any speed, each halving of dt
    // from 0.02 took 2 to 6% off the erosion (tools/pipes_numpy.py, 128² noise).
    let start = noise();
    let map = Heightmap::new(64, 64, start.terrain.clone()).unwrap();
    let sea = BaseLevel::LowestEdge.on(&map);
    let time = 30.0;
    let rain = 0.0625 / time;
    let steps = |dt: f32| (time / dt).round() as u32;
    let on_the_cpu = |dt: f32| {
        let mut state = start.clone();
        run_pipes_on_cpu(&mut state, &comparison(sea, rain, dt), steps(dt));
        eroded(&start.terrain, &state.terrain)
    };
    let ctx = validated_device();
    let on_the_gpu = |dt: f32| {
        let params = comparison(sea, rain, dt);
        let mut runner = PipesKernel::new(&ctx, PipesSettings::DEFAULT.variant(), &params)
            .unwrap()
            .prepare(64, 64, &start.terrain, None)
            .unwrap();
        runner.run(steps(dt)).unwrap();
        eroded(&start.terrain, &runner.read().unwrap().terrain)
    };
    let runs = [0.02, 0.01, 0.005].map(on_the_cpu);
    let gpu_runs = [0.02, 0.01].map(on_the_gpu);
    assert_validation_clean(&ctx);
    // It erodes: the map loses what the water carries off or holds (with the sign of
    // erosion flipped, it would gain it).
    for (eroded, net) in runs.iter().chain(&gpu_runs) {
        assert!(
            *eroded > 0.0 && *net > 0.5 * eroded,
            "eroded {eroded}, net loss {net}"
        );
    }
    let [coarse, half, quarter] = runs.map(|(eroded, _)| eroded);
    let [gpu_coarse, gpu_half] = gpu_runs.map(|(eroded, _)| eroded);
    for (what, a, b) in [
        ("cpu 0.02 / 0.01", coarse, half),
        ("cpu 0.01 / 0.005", half, quarter),
        ("gpu 0.02 / 0.01", gpu_coarse, gpu_half),
    ] {
        let ratio = a / b;
        assert!(
            (ratio - 1.0).abs() < 0.01,
            "eroded at dt {what}: {a} / {b} = {ratio}"
        );
    }
}
