//! The grid-centric strategy (virtual pipes): the GPU's five passes against the CPU
//! reference, conservation, and the time-step check. On the default device under
//! validation.

mod common;

use vkerode::erosion::pipes::{PipesKernel, PipesParams, PipesState};
use vkerode::erosion::pipes_cpu::run_pipes_on_cpu;

use common::{assert_validation_clean, cpu_terrain, validated_device};

/// Generated terrain, in cells, with 0.3 of water standing on it.
fn wet_terrain(size: u32) -> PipesState {
    let map = cpu_terrain(size, 4);
    let mut state = PipesState::dry(size as usize, size as usize, map.data().to_vec());
    state.water.fill(0.3);
    state
}

fn worst(a: &[f32], b: &[f32]) -> f32 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

#[test]
fn the_gpu_passes_follow_the_cpu_reference() {
    let ctx = validated_device();
    let kernel = PipesKernel::new(&ctx).unwrap();
    let start = wet_terrain(48);
    let params = PipesParams::DEFAULT;
    // Few steps: where water thins to the velocity cut-off (1e-4), a last-bit difference
    // flips a cell's velocity, and the two runs part ways over hundreds of steps.
    let steps = 10;
    let gpu = kernel.run(&start, &params, steps).unwrap();
    let mut cpu = start.clone();
    run_pipes_on_cpu(&mut cpu, &params, steps);
    let g = &gpu.state;
    assert!(
        worst(&g.water, &cpu.water) < 1e-4,
        "water {}",
        worst(&g.water, &cpu.water)
    );
    assert!(worst(&g.sediment, &cpu.sediment) < 1e-4, "sediment");
    assert!(worst(&g.terrain, &cpu.terrain) < 1e-3, "terrain");
    // Something happened: water moved and terrain eroded.
    assert!(worst(&g.water, &start.water) > 0.05);
    assert!(worst(&g.terrain, &start.terrain) > 1e-3);
    assert!(
        g.water.iter().chain(&g.sediment).all(|&v| v >= 0.0),
        "never negative"
    );
    assert_validation_clean(&ctx);
}

#[test]
fn water_is_conserved_and_never_negative() {
    let ctx = validated_device();
    let kernel = PipesKernel::new(&ctx).unwrap();
    let start = wet_terrain(64);
    let closed = PipesParams {
        rain: 0.0,
        evaporation: 0.0,
        ..PipesParams::DEFAULT
    };
    let run = kernel.run(&start, &closed, 200).unwrap();
    let (terrain0, sediment0, water0) = start.totals();
    let (terrain, sediment, water) = run.state.totals();
    // The pipes move water between cells and never out of the map.
    assert!(
        (water - water0).abs() < 1e-4 * water0,
        "water {water0} -> {water}"
    );
    assert!(sediment > 0.0, "some terrain was dissolved");
    let state = &run.state;
    assert!(state.water.iter().chain(&state.sediment).all(|&v| v >= 0.0));
    // Terrain and suspended sediment trade mass exactly in the erosion pass; the
    // semi-Lagrangian advection does not conserve it. Its drift is printed, not
    // bounded; run.json reports it (`balance.advection_drift`).
    let drift = (terrain + sediment) - (terrain0 + sediment0);
    println!("terrain + sediment drift over 200 steps: {drift}");
    assert_validation_clean(&ctx);
}

#[test]
fn a_time_step_past_the_stability_limit_is_refused() {
    let params = PipesParams {
        dt: 0.2,
        ..PipesParams::DEFAULT
    };
    let error = params.check().unwrap_err().to_string();
    assert!(error.contains("at most 0.05"), "{error}");
    assert!(PipesParams::DEFAULT.check().is_ok());
}
