//! Analytic cases of thermal erosion through its strategy (the path erode and sweep
//! take), on the CPU reference and the GPU kernels: a steep pile keeps its volume and
//! relaxes to the talus angle, whatever the angle, and a symmetric pile stays
//! symmetric. On the default device under validation.

mod common;

use vkerode::erosion::thermal::{rounding_bound, ThermalParams, ThermalSettings, STEEP_SLACK};
use vkerode::erosion::{Algorithm, CpuEngine, RunSettings};
use vkerode::terrain::{Cells, Heightmap};

use common::{assert_validation_clean, validated_device};

/// The pile's map: a cone of slope 2 (63 degrees), 16 high, on flat ground. At a talus
/// of 20 degrees its volume spreads to a cone of radius 14, inside the map.
const SIDE: usize = 41;

fn pile() -> Heightmap {
    let centre = (SIDE as f32 - 1.0) / 2.0;
    let data = (0..SIDE * SIDE)
        .map(|i| {
            let (x, y) = ((i % SIDE) as f32 - centre, (i / SIDE) as f32 - centre);
            (16.0 - 2.0 * (x * x + y * y).sqrt()).max(0.0)
        })
        .collect();
    Heightmap::new(SIDE, SIDE, data).unwrap()
}

/// Thermal erosion at `talus` degrees over `neighbours` neighbours, at the largest rate
/// its rule allows, for `steps` steps.
fn settings(talus: f32, neighbours: u32, steps: u32) -> RunSettings {
    RunSettings {
        algorithm: Algorithm::Thermal,
        thermal: ThermalSettings {
            thermal_steps: steps,
            thermal_talus: talus,
            thermal_neighbours: neighbours,
            thermal_rate: 1.0 / (neighbours as f32 + 1.0),
            thermal_check_every: steps,
            ..ThermalSettings::DEFAULT
        },
        ..RunSettings::DEFAULT
    }
}

fn heights(cells: &Cells) -> &[f32] {
    cells.float().expect("thermal erosion runs in float32")
}

/// The steepest slope between neighbours the model compares (the axial ones, and the
/// diagonal ones over sqrt(2) cells with 8 neighbours): drop over distance.
/// `initial` eroded by the sequential CPU reference and by the GPU's counted run.
fn on_cpu_and_gpu(
    ctx: &std::sync::Arc<vkerode::gpu::Context>,
    s: &RunSettings,
    initial: &Cells,
) -> [(&'static str, Cells); 2] {
    let strategy = s.strategy();
    let cpu = strategy
        .run_on_cpu(CpuEngine::Sequential, s, initial)
        .unwrap();
    let mut prepared = strategy.prepare(ctx, s, initial).unwrap();
    let gpu = prepared.run_counted().unwrap();
    [("cpu", cpu.cells), ("gpu", gpu.cells)]
}

fn steepest_slope(h: &[f32], neighbours: u32) -> f32 {
    let mut offsets = vec![(1, 0, 1.0f32), (0, 1, 1.0)];
    if neighbours == 8 {
        offsets.extend([(1, 1, 2f32.sqrt()), (1, -1, 2f32.sqrt())]);
    }
    let mut steepest = 0.0f32;
    for y in 0..SIDE as i32 {
        for x in 0..SIDE as i32 {
            for &(dx, dy, distance) in &offsets {
                let (u, v) = (x + dx, y + dy);
                if u < 0 || v < 0 || u >= SIDE as i32 || v >= SIDE as i32 {
                    continue;
                }
                let here = h[(y as usize) * SIDE + x as usize];
                let there = h[(v as usize) * SIDE + u as usize];
                steepest = steepest.max((here - there).abs() / distance);
            }
        }
    }
    steepest
}

/// The largest difference between `h` and its mirror image left to right and its
/// transpose.
fn asymmetry(h: &[f32]) -> f32 {
    let at = |x: usize, y: usize| h[y * SIDE + x];
    let mut worst = 0.0f32;
    for y in 0..SIDE {
        for x in 0..SIDE {
            worst = worst
                .max((at(x, y) - at(SIDE - 1 - x, y)).abs())
                .max((at(x, y) - at(y, x)).abs());
        }
    }
    worst
}

fn sum(h: &[f32]) -> f64 {
    h.iter().map(|&v| f64::from(v)).sum()
}

#[test]
fn a_steep_pile_keeps_its_volume_and_relaxes_to_the_talus_at_every_angle() {
    let ctx = validated_device();
    let terrain = pile();
    let steps = 1500;
    for neighbours in [4, 8] {
        for talus in [20.0f32, 35.0, 50.0] {
            let s = settings(talus, neighbours, steps);
            let strategy = s.strategy();
            strategy.check(&s, None, Some(ctx.info())).unwrap();
            let initial = strategy.initial(&s, &terrain).unwrap();
            let start = heights(&initial);
            let tan = ThermalParams {
                talus_degrees: talus,
                ..ThermalParams::DEFAULT
            }
            .talus_drops()[0];
            assert!(
                steepest_slope(start, neighbours) > 1.5 * tan,
                "steep at first"
            );
            for (engine, after) in &on_cpu_and_gpu(&ctx, &s, &initial) {
                let after = heights(after);
                let name = format!("{engine}, {neighbours} neighbours, talus {talus}");
                // The volume: constant, within float rounding's bound.
                let bound = rounding_bound(u64::from(steps), start.len() as u64, 32.0);
                let drift = (sum(after) - sum(start)).abs();
                assert!(
                    drift <= bound,
                    "{name}: the volume drifted {drift} (bound {bound})"
                );
                // At rest on the talus: the steepest slope stands at it, within
                // STEEP_SLACK either way (the relaxation approaches it from above,
                // geometrically; lavapipe's runs end within 1e-4 of it).
                let steepest = steepest_slope(after, neighbours);
                println!("{name}: steepest slope {steepest}, tan(talus) {tan}, drift {drift:e}");
                assert!(
                    (steepest - tan).abs() <= STEEP_SLACK,
                    "{name}: steepest slope {steepest} against tan(talus) {tan}"
                );
                // The pile came down and spread: its top is lower, its foot wider.
                let top = after.iter().fold(0.0f32, |a, &b| a.max(b));
                assert!(top < 16.0 * 0.8, "{name}: the top came down to {top}");
                let covered = |h: &[f32]| h.iter().filter(|&&v| v > 1e-3).count();
                assert!(covered(after) > covered(start), "{name}: the foot spread");
            }
        }
    }
    assert_validation_clean(&ctx);
}

#[test]
fn a_symmetric_pile_stays_symmetric() {
    let ctx = validated_device();
    let terrain = pile();
    assert_eq!(asymmetry(terrain.data()), 0.0, "the pile is symmetric");
    for neighbours in [4, 8] {
        let s = settings(35.0, neighbours, 300);
        let strategy = s.strategy();
        let initial = strategy.initial(&s, &terrain).unwrap();
        for (engine, after) in &on_cpu_and_gpu(&ctx, &s, &initial) {
            // A mirrored cell sums its neighbours' flows in another order: float
            // rounding apart, the same height.
            let off = asymmetry(heights(after));
            println!("{engine}, {neighbours} neighbours: asymmetry {off:e}");
            assert!(off <= 1e-4, "{engine}, {neighbours}: asymmetry {off}");
        }
    }
    assert_validation_clean(&ctx);
}
