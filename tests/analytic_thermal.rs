//! Analytic cases of thermal erosion through its strategy (the path erode and sweep
//! take), on the CPU reference and the GPU kernels: a steep pile keeps its volume and
//! relaxes to the talus angle, and to the top its volume gives at that angle, whatever
//! the angle; and a symmetric pile stays symmetric. On the default device under
//! validation.

mod common;

use vkerode::erosion::thermal::{rounding_bound, ThermalParams, ThermalSettings, STEEP_SLACK};
use vkerode::erosion::{initial_cells, Algorithm, CpuEngine, RunSettings};
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

/// The top of a pile of `volume` at rest with slope `tan` (the talus's tangent), on
/// three cones of that volume: V = a H^3 / (3 tan^2) for a cone of height H whose
/// footprint at height 0 has area a (H / tan)^2. Circular (a = pi): slope tan in every
/// direction; the pile's volume 1071.6 (the 41 x 41 grid's sum of 16 - 2 r) gives tops
/// 5.137, 7.946 and 11.327 at 20, 35 and 50 degrees. Octagonal (a = 2 sqrt(2), the
/// regular octagon inscribed in the unit circle): slope tan toward the 8 neighbours and
/// steeper between them, 3.6% higher. Diamond (a = 2): h = H - tan (|x| + |y|), the
/// highest pile whose drops between axial neighbours are all at most tan, so no pile
/// at rest under the 4-neighbour rule stands higher: 16% above the circular cone.
struct Tops {
    circle: f64,
    octagon: f64,
    diamond: f64,
}

impl Tops {
    fn of(volume: f64, tan: f32) -> Self {
        let top = |area: f64| (3.0 * volume * f64::from(tan).powi(2) / area).cbrt();
        Self {
            circle: top(std::f64::consts::PI),
            octagon: top(2.0 * std::f64::consts::SQRT_2),
            diamond: top(2.0),
        }
    }

    /// With 8 neighbours the pile meets the circular cone's top: it stands 1.1%, 1.2% and
    /// 1.6% above it at 20, 35 and 50 degrees (the octagonal neighbourhood lets it stand
    /// up to 3.6% higher), asserted to 2.5%. With 4 it does not: it rests at 15%, 14% and
    /// 8% above the circular top, 1%, 2% and 7% below the diamond's, the most it could
    /// stand; asserted between 5% above the circle and the diamond.
    fn assert_meets(&self, top: f64, neighbours: u32, name: &str) {
        if neighbours == 8 {
            assert!(
                (top / self.circle - 1.0).abs() <= 0.025,
                "{name}: top {top}, the circular cone's {}",
                self.circle
            );
        } else {
            assert!(
                top >= 1.05 * self.circle && top <= self.diamond,
                "{name}: top {top}, between 1.05 x the circular cone's {} and the diamond's {}",
                self.circle,
                self.diamond
            );
        }
    }
}

#[test]
fn a_steep_pile_keeps_its_volume_and_relaxes_to_the_talus_and_the_top_its_volume_gives() {
    let ctx = validated_device();
    let terrain = pile();
    let steps = 1500;
    for neighbours in [4, 8] {
        for talus in [20.0f32, 35.0, 50.0] {
            let s = settings(talus, neighbours, steps);
            let strategy = s.strategy();
            strategy.check(&s, None, Some(ctx.info())).unwrap();
            let initial = initial_cells(&terrain, strategy.arithmetic(&s)).unwrap();
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
                // The pile came down to the top its volume gives at the talus.
                let top = after.iter().fold(0.0f32, |a, &b| a.max(b));
                let tops = Tops::of(sum(start), tan);
                println!(
                    "{name}: top {top}; circular cone {:.3} ({:+.1}%), octagonal {:.3}, diamond {:.3}",
                    tops.circle,
                    100.0 * (f64::from(top) / tops.circle - 1.0),
                    tops.octagon,
                    tops.diamond
                );
                tops.assert_meets(f64::from(top), neighbours, &name);
                // And spread: its foot is wider.
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
        let initial = initial_cells(&terrain, strategy.arithmetic(&s)).unwrap();
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
