//! Analytic cases of the droplet kernel, where the answer is known without running it:
//! a lone droplet on a tilted plane goes straight downhill, and mirroring the plane
//! (with the droplet's start) mirrors its change map; on a plane it erodes and deposits
//! what the kernel's equations give in closed form; a lone droplet on a cone moves
//! radially away from the apex, eroding where it starts and depositing beyond; droplets
//! far apart leave the CPU reference's map; and what the map loses, the droplets carry
//! away. The paper's kernel on the default device under validation, the CPU reference
//! beside it.

mod common;

use vkerode::erosion::droplets::cpu::{erode_sequential, lone_droplet_addresses};
use vkerode::erosion::droplets::{
    droplet_start, AtomicMode, DropletJob, DropletKernel, FixedHeightfield, GpuRun, KernelParams,
    KernelVariant, SpawnMode,
};
use vkerode::hash::pcg_hash;

use common::{assert_validation_clean, default_job, validated_device, SCALE};

/// A map of `width` x `height` fixed-point cells of `height_at` (height units), at
/// `scale` fixed-point units per height unit.
struct Map {
    width: usize,
    height: usize,
    scale: f32,
    cells: Vec<i32>,
}

impl Map {
    /// At the paper's scale.
    fn of(width: usize, height: usize, height_at: impl Fn(f32, f32) -> f32) -> Self {
        Self::at_scale(width, height, SCALE, height_at)
    }

    fn at_scale(
        width: usize,
        height: usize,
        scale: f32,
        height_at: impl Fn(f32, f32) -> f32,
    ) -> Self {
        let cells = (0..width * height)
            .map(|i| {
                let (x, y) = ((i % width) as f32, (i / width) as f32);
                (height_at(x, y) * scale).round() as i32
            })
            .collect();
        Self {
            width,
            height,
            scale,
            cells,
        }
    }

    fn field(&self) -> FixedHeightfield<'_> {
        FixedHeightfield::new(self.width as u32, self.height as u32, &self.cells)
    }

    /// Its cells mirrored left to right: column x becomes column width - 1 - x.
    fn mirrored(&self, cells: &[i32]) -> Vec<i32> {
        (0..cells.len())
            .map(|i| {
                let (x, y) = (i % self.width, i / self.width);
                cells[y * self.width + self.width - 1 - x]
            })
            .collect()
    }
}

/// The change of every cell, in fixed-point units.
fn change(before: &[i32], after: &[i32]) -> Vec<i64> {
    before
        .iter()
        .zip(after)
        .map(|(&b, &a)| i64::from(a) - i64::from(b))
        .collect()
}

/// The spawn seed whose droplet 0 starts at x = (width - 1) / 2 exactly, on a column
/// boundary's middle (fract 0.5): there, mirroring the map left to right mirrors the
/// droplet's start, so the mirrored run is the same run seen in a mirror. Droplet 0's
/// x is 1 + h / 2^32 (width - 3) for its hash h, which is exactly half-way for an h
/// that rounds to 2^31 in f32: about one seed in 2^25.
fn centred_seed() -> u32 {
    (0..u32::MAX)
        .find(|&seed| pcg_hash(seed.wrapping_mul(0x9E37_79B9)) as f32 == 2_147_483_648.0)
        .expect("some seed's hash rounds to 2^31")
}

/// The paper's kernel with global spawning and integer atomics, at `scale`.
fn kernel_at(
    ctx: &std::sync::Arc<vkerode::gpu::Context>,
    workgroup: u32,
    scale: f32,
) -> DropletKernel {
    let variant = KernelVariant::paper(AtomicMode::Int, SpawnMode::Global);
    DropletKernel::new(ctx, workgroup, scale, variant).expect("the paper's kernel builds")
}

/// `job` at `map`'s fixed-point scale.
fn job_for(map: &Map, droplets: u32, seed: u32) -> DropletJob {
    let mut job = default_job(droplets, seed);
    job.params.fixed_point_scale = map.scale;
    job
}

/// One droplet on the GPU's counted build, which follows the CPU reference bit for bit
/// for one droplet.
fn lone_droplet(
    ctx: &std::sync::Arc<vkerode::gpu::Context>,
    map: &Map,
    job: &DropletJob,
) -> GpuRun {
    assert_eq!(job.params.fixed_point_scale, map.scale);
    let run = kernel_at(ctx, 8, map.scale)
        .run_counted(&map.field(), job, 1)
        .unwrap();
    let mut cpu = map.cells.clone();
    erode_sequential(&mut cpu, map.width, map.height, job);
    assert!(run.cells == cpu, "the GPU follows the CPU reference");
    run
}

/// What the map lost, in height units: the sum of its cells before minus after.
fn lost(map: &Map, after: &[i32]) -> f64 {
    -(change(&map.cells, after).iter().sum::<i64>() as f64) / f64::from(map.scale)
}

/// The sediment the droplets of a counted run carried when they died, on the map or
/// off it.
fn carried(run: &GpuRun) -> f64 {
    let mass = run.contention.as_ref().expect("a counted run");
    mass.mass_at_death + mass.mass_off_edge
}

/// What the map lost is what the droplets carried away, but for what the fixed point
/// dropped: each add truncates toward zero, so loses less than one unit. An independent
/// sum on each side: the map's cells, and each droplet's own sediment at its death.
/// `after`: the map after the droplets of `run`. The load must stand clear of the bound
/// (20 times it), or the check would say nothing.
fn assert_the_map_loses_what_the_droplets_carry(
    map: &Map,
    after: &[i32],
    run: &GpuRun,
    name: &str,
) {
    let adds = run.work.expect("a counted run").atomics;
    let bound = adds as f64 / f64::from(map.scale);
    let (lost, carried) = (lost(map, after), carried(run));
    println!("{name}: the map lost {lost}, the droplets carried {carried} (bound {bound})");
    assert!(
        carried > 20.0 * bound,
        "{name}: they carried {carried}, bound {bound}"
    );
    assert!(
        (lost - carried).abs() <= bound,
        "{name}: the map lost {lost}, the droplets carried {carried}; truncation explains {bound} at most"
    );
}

#[test]
fn a_lone_droplet_on_a_tilted_plane_goes_straight_downhill_and_its_mirror_image_mirrors() {
    let ctx = validated_device();
    let (width, height) = (96, 32);
    let seed = centred_seed();
    let start = droplet_start(0, seed, width as u32, height as u32);
    assert_eq!(start.0, 47.5, "droplet 0 starts half-way across");
    // Falling 0.5 per cell toward +x, and its mirror image falling toward -x.
    let downhill = Map::of(width, height, |x, _| 0.5 * (95.0 - x));
    let uphill = Map::of(width, height, |x, _| 0.5 * x);
    assert_eq!(uphill.cells, downhill.mirrored(&downhill.cells));
    let job = default_job(1, seed);
    let after = lone_droplet(&ctx, &downhill, &job).cells;
    let moved = change(&downhill.cells, &after);
    let touched: Vec<(usize, usize)> = (0..moved.len())
        .filter(|&i| moved[i] != 0)
        .map(|i| (i % width, i / width))
        .collect();
    let (x0, y0) = (start.0 as usize, start.1 as usize);
    println!("start {start:?}: {} cells touched", touched.len());
    // Straight downhill: every change at or past the start's column, along it, in the
    // start's two rows and at most one beside them (erosion's bilinear weights are
    // uneven across the rows unless the start is mid-row, which tilts the trench).
    assert!(touched.len() >= 8, "the droplet went some way: {touched:?}");
    for &(x, y) in &touched {
        assert!(x >= x0, "nothing changes uphill of the start: ({x}, {y})");
        assert!(
            y + 1 >= y0 && y <= y0 + 2,
            "({x}, {y}) strays from the start's rows {y0} and {}",
            y0 + 1
        );
    }
    let far = touched.iter().map(|&(x, _)| x).max().unwrap();
    let columns: std::collections::BTreeSet<usize> = touched.iter().map(|&(x, _)| x).collect();
    assert_eq!(
        columns.len(),
        far - x0 + 1,
        "one unbroken path: {columns:?}"
    );
    // The mirror image: the same change map, mirrored, but for the order of the float
    // sums of the bilinear height (a unit of the fixed point, here and there).
    let mirror_after = lone_droplet(&ctx, &uphill, &job).cells;
    let mirror_moved = change(&uphill.cells, &mirror_after);
    let expected = downhill.mirrored(&after);
    let expected = change(&uphill.cells, &expected);
    let largest = moved.iter().map(|d| d.abs()).max().unwrap();
    let off = mirror_moved
        .iter()
        .zip(&expected)
        .map(|(a, b)| (a - b).abs())
        .max()
        .unwrap();
    println!("mirror: largest change {largest}, largest difference {off} fixed-point units");
    assert!(
        off <= (largest / 100).max(2),
        "the mirrored change map differs by {off} of {largest}"
    );
    let total = |d: &[i64]| d.iter().sum::<i64>();
    let (net, mirror_net) = (total(&moved), total(&mirror_moved));
    assert!(
        (net - mirror_net).abs() <= net.abs() / 100 + 2,
        "net {net} against {mirror_net}"
    );
    assert_validation_clean(&ctx);
}

/// A lone droplet falling 0.5 a cell (the plane's or the cone's slope) at the paper's
/// parameters: its first step erodes the whole drop (the capacity times the erosion
/// rate, 4 x 0.5 x 0.3 = 0.6, exceeds it) and ends its speed (1 - 9.81 x 0.5 < 0, the
/// paper's speed update), so every later step deposits 0.3 of what it carries: it dies
/// holding 0.7^(steps - 1) of the first drop, to the truncation of its first adds. The
/// drop is 0.5 on the plane, less the truncation (0.498 at the paper's scale), and 0.495
/// to 0.501 on the cone's bilinear surface from the starts below: asserted 0.48 to 0.51.
/// `along(i)`: how far cell i lies past the start, downhill. Erosion only at the start's
/// 2x2 cells (within 1.5 cells of it: the map lost there), deposits only past them.
fn assert_it_takes_the_first_drop_and_lays_it_down(
    run: &GpuRun,
    map: &Map,
    moved: &[i64],
    along: impl Fn(usize) -> f32,
) {
    let mass = run.contention.as_ref().expect("a counted run");
    let steps = run.work.expect("a counted run").steps;
    // The first step's four adds truncate toward zero: less than a unit each.
    let unit = 1.0 / f64::from(map.scale);
    let first = mass.mass_eroded;
    println!(
        "first drop {first}, {steps} steps, carried {}",
        carried(run)
    );
    assert!(
        (0.48..=0.51).contains(&first),
        "it eroded {first}, not the first step's drop of about 0.5: {mass:?}"
    );
    let held = 0.7f64.powi(steps as i32 - 1);
    let carried = carried(run);
    assert!(
        (carried - first * held).abs() <= 4.0 * unit * held + 1e-6,
        "after {steps} steps it carried {carried}, not 0.7^{} of {first}",
        steps - 1
    );
    let near: i64 = (0..moved.len())
        .filter(|&i| along(i) < 0.5)
        .map(|i| moved[i])
        .sum();
    assert!(near < 0, "the start's cells lost {near}");
    for (i, &d) in moved.iter().enumerate() {
        assert!(
            along(i) <= 1.5 || d >= 0,
            "a loss of {d} at {} cells past the start",
            along(i)
        );
    }
}

/// What the paper's equations give a lone droplet starting at (x0 + 1/2, y0 + fy) on a
/// plane falling `slope` a cell toward +x, with `params`: the height it adds each step,
/// negative where it erodes, and the sediment it holds at the end. On the plane its
/// direction is +x and each step moves it one cell, so step k spreads its add half on
/// column x0 + k and half on x0 + k + 1 (fract(x) = 1/2), and its height
/// drop is the plane's but for its own last add: the height at its position takes half
/// the add of its last step, times (1 - fy)^2 + fy^2 across the rows (q below), while the
/// height a cell ahead is the plane's. The recurrence is main()'s, with these drops:
/// deltaH_k = -slope - q c_(k-1) / 4, capacity = max(-deltaH, 0.01) speed water 4;
/// erosion min((capacity - sediment) 0.3, -deltaH) while the sediment is below the
/// capacity, else deposition (sediment - capacity) 0.3; speed^2 += 9.81 deltaH (the
/// paper's sign), at least 0; water *= 0.99.
fn plane_adds(slope: f64, fy: f64, params: &KernelParams) -> (Vec<f64>, f64) {
    let q = (1.0 - fy).powi(2) + fy.powi(2);
    let (mut speed, mut water, mut sediment, mut last) = (1.0f64, 1.0f64, 0.0f64, 0.0f64);
    let mut adds = Vec::new();
    for _ in 0..params.lifetime {
        let delta_h = -slope - q * last / 4.0;
        let capacity = (-delta_h).max(0.01) * speed * water * f64::from(params.capacity);
        last = if sediment > capacity || delta_h > 0.0 {
            let deposit = if delta_h > 0.0 {
                delta_h.min(sediment)
            } else {
                (sediment - capacity) * f64::from(params.deposition)
            };
            sediment -= deposit;
            deposit
        } else {
            let erode = ((capacity - sediment) * f64::from(params.erosion)).min(-delta_h);
            sediment += erode;
            -erode
        };
        adds.push(last);
        speed = (speed * speed + delta_h * 9.81).max(0.0).sqrt();
        water *= 1.0 - f64::from(params.evaporation);
    }
    (adds, sediment)
}

/// A lone droplet on a plane changes each cell column along its path by what
/// [`plane_adds`] gives, (c_(k-1) + c_k) / 2 at column x0 + k: to the four truncations a
/// column takes (less than a unit each) and 1e-5 for float32 sums of heights up to 50
/// and the path's slight turn across the rows. Two planes, from the centred start
/// (47.5, 17.52):
///
/// - Falling 0.5 a cell, at the paper's scale: the first step takes the whole drop,
///   0.5, from columns 47 and 48 (a quarter each); the speed is gone, and it lays down
///   0.15, 0.105, ... (0.3 x 0.7^(k-1) x 0.5) downstream, holding 0.5 x 0.7^29 at its
///   death.
/// - Falling 0.05 a cell, at 10^6 units a height unit (to see the rates past the
///   truncation) and a lifetime of 10: the first step takes the whole drop, 0.05; the
///   second, at speed sqrt(1 - 9.81 x 0.05) = 0.714, erodes 0.3 of its capacity's gap,
///   0.0221; the third deposits, its speed near 0, and the rest lay down 0.3 of the load
///   a step. It dies holding 0.00545, and the map lost that, to the truncation of its 40
///   adds.
///
/// Each erodes on the slope where it starts and deposits where it has stopped, and its
/// counted erosion is what the equations erode, to the truncation.
#[test]
fn a_lone_droplet_on_a_plane_erodes_and_deposits_what_the_kernels_equations_give() {
    let ctx = validated_device();
    let (width, height) = (96, 32);
    let seed = centred_seed();
    let start = droplet_start(0, seed, width as u32, height as u32);
    let (x0, fy) = (start.0 as usize, f64::from(start.1.fract()));
    for (slope, scale, lifetime) in [(0.5f32, SCALE, 30u32), (0.05, 1e6, 10)] {
        let name = format!("slope {slope}");
        let plane = Map::at_scale(width, height, scale, |x, _| slope * (95.0 - x));
        let mut job = job_for(&plane, 1, seed);
        job.params.lifetime = lifetime;
        let run = lone_droplet(&ctx, &plane, &job);
        let moved = change(&plane.cells, &run.cells);
        let column = |x: usize| -> f64 {
            (0..height).map(|y| moved[y * width + x]).sum::<i64>() as f64 / f64::from(scale)
        };
        let (adds, held) = plane_adds(f64::from(slope), fy, &job.params);
        let tolerance = 4.0 / f64::from(scale) + 1e-5;
        let reach = x0 + adds.len();
        for x in 0..width {
            let k = x.wrapping_sub(x0);
            let expected = if x < x0 || x > reach {
                0.0
            } else {
                let at = |k: usize| adds.get(k).copied().unwrap_or(0.0);
                0.5 * (at(k) + if k > 0 { at(k - 1) } else { 0.0 })
            };
            let got = column(x);
            assert!(
                (got - expected).abs() <= tolerance,
                "{name}: column {x} changed {got}, the equations {expected}"
            );
        }
        // Erodes on the slope where it starts, deposits where it has stopped.
        assert!(adds[0] < 0.0 && column(x0) < 0.0, "{name}: {adds:?}");
        let stopped = adds.iter().position(|&c| c > 0.0).expect("it deposits");
        assert!(
            adds[stopped..].iter().all(|&c| c > 0.0) && column(x0 + stopped + 1) > 0.0,
            "{name}: {adds:?}"
        );
        let mass = run.contention.as_ref().unwrap();
        let eroded: f64 = -adds.iter().filter(|&&c| c < 0.0).sum::<f64>();
        let erosions = adds.iter().filter(|&&c| c < 0.0).count() as f64;
        println!(
            "{name}: eroded {} (equations {eroded}), holds {} at death (equations {held})",
            mass.mass_eroded, mass.mass_at_death
        );
        assert!(
            (mass.mass_eroded - eroded).abs() <= 4.0 * erosions / f64::from(scale) + 1e-5,
            "{name}: eroded {}, the equations {eroded}",
            mass.mass_eroded
        );
        assert!(
            (mass.mass_at_death - held).abs() <= 1e-6 + 1e-4 * held && mass.mass_off_edge == 0.0,
            "{name}: holds {} at death, the equations {held}",
            mass.mass_at_death
        );
        if scale > SCALE {
            assert_the_map_loses_what_the_droplets_carry(&plane, &run.cells, &run, &name);
        } else {
            let along = |i: usize| (i % width) as f32 - start.0;
            assert_it_takes_the_first_drop_and_lays_it_down(&run, &plane, &moved, along);
        }
    }
    assert_validation_clean(&ctx);
}

#[test]
fn a_lone_droplet_on_a_cone_moves_radially_away_from_the_apex_and_lays_its_first_drop_down_beyond()
{
    let ctx = validated_device();
    let side = 64;
    let centre = (side as f32 - 1.0) / 2.0;
    let radius = |x: f32, y: f32| ((x - centre).powi(2) + (y - centre).powi(2)).sqrt();
    // A cone falling 0.5 per cell from its apex at the centre.
    let cone = Map::of(side, side, |x, y| 0.5 * (45.0 - radius(x, y)));
    let mut checked = 0;
    for seed in 1..200u32 {
        let start = droplet_start(0, seed, side as u32, side as u32);
        let r0 = radius(start.0, start.1);
        if !(4.0..12.0).contains(&r0) {
            continue;
        }
        let job = default_job(1, seed);
        let run = lone_droplet(&ctx, &cone, &job);
        let moved = change(&cone.cells, &run.cells);
        // The unit vector from the apex through the start.
        let ray = ((start.0 - centre) / r0, (start.1 - centre) / r0);
        let mut reach = 0.0f32;
        for (i, _) in moved.iter().enumerate().filter(|(_, d)| **d != 0) {
            // A change lies on the 2x2 cells around the droplet: its cell's centre is
            // within 1.5 cells of the droplet's position, which the discrete cone's
            // gradient may turn by a little from the radius.
            let (x, y) = ((i % side) as f32 - centre, (i / side) as f32 - centre);
            let along = x * ray.0 + y * ray.1;
            let across = (-x * ray.1 + y * ray.0).abs();
            assert!(
                across <= 2.0,
                "seed {seed}: a change {across} cells off the radius through {start:?}"
            );
            assert!(
                along >= r0 - 1.5,
                "seed {seed}: a change at {along} from the apex, inward of the start's {r0}"
            );
            reach = reach.max(along);
        }
        assert!(
            reach >= r0 + 6.0,
            "seed {seed}: the droplet moved outward ({r0} to {reach})"
        );
        assert_it_takes_the_first_drop_and_lays_it_down(&run, &cone, &moved, |i| {
            let (x, y) = ((i % side) as f32 - centre, (i / side) as f32 - centre);
            x * ray.0 + y * ray.1 - r0
        });
        checked += 1;
        if checked == 4 {
            break;
        }
    }
    assert_eq!(checked, 4, "four starts near the apex");
    assert_validation_clean(&ctx);
}

/// The cells each of `job`'s droplets reads (and so every cell it adds to), alone on
/// `map`, from the CPU reference's address trace.
fn footprints(map: &Map, job: &DropletJob) -> Vec<std::collections::BTreeSet<u32>> {
    (0..job.droplets)
        .map(|id| {
            lone_droplet_addresses(&map.cells, map.width, map.height, job, id)
                .iter()
                .flat_map(|step| {
                    let (loads, adds) = step.cells(map.width as u32);
                    loads.into_iter().chain(adds)
                })
                .collect()
        })
        .collect()
}

/// The plane and the cone of the tests below, 64 x 64, at `scale`.
fn plane_and_cone(scale: f32) -> [(&'static str, Map); 2] {
    let side = 64;
    let centre = (side as f32 - 1.0) / 2.0;
    [
        (
            "plane",
            Map::at_scale(side, side, scale, |x, y| 0.4 * (63.0 - x) + 0.1 * y),
        ),
        (
            "cone",
            Map::at_scale(side, side, scale, |x, y| {
                0.5 * (45.0 - ((x - centre).powi(2) + (y - centre).powi(2)).sqrt())
            }),
        ),
    ]
}

/// Eight droplets whose paths never come near each other (the first seed whose
/// droplets, each alone on the map, read disjoint cells) run at once on the GPU, in one
/// workgroup: they leave the CPU reference's map, which runs them one after another,
/// cell for cell. And what that map lost is what the GPU's droplets carried when they
/// died, to the truncation of their adds (at 10^6 units a height unit, so that the
/// truncation is small beside the load).
#[test]
fn droplets_far_apart_leave_the_cpu_references_map_and_it_loses_what_they_carry_away() {
    let ctx = validated_device();
    let kernel = kernel_at(&ctx, 64, 1e6);
    for (name, map) in plane_and_cone(1e6) {
        let droplets = 8;
        let seed = (1..10_000u32)
            .find(|&seed| {
                let reads = footprints(&map, &job_for(&map, droplets, seed));
                (0..reads.len())
                    .all(|i| (i + 1..reads.len()).all(|j| reads[i].is_disjoint(&reads[j])))
            })
            .expect("some seed's droplets stay apart");
        let job = job_for(&map, droplets, seed);
        let run = kernel.run_counted(&map.field(), &job, 256).unwrap();
        assert_eq!(run.work.unwrap().droplets, u64::from(droplets), "{name}");
        let mut cpu = map.cells.clone();
        erode_sequential(&mut cpu, map.width, map.height, &job);
        assert!(
            run.cells == cpu,
            "{name}, seed {seed}: the GPU leaves the CPU's map"
        );
        let name = format!("{name}, seed {seed}");
        assert_the_map_loses_what_the_droplets_carry(&map, &cpu, &run, &name);
    }
    assert_validation_clean(&ctx);
}

/// 4000 droplets on 64 x 64 cells, crossing each other's paths and contending for
/// cells: what the map lost is what they carried when they died, to the truncation of
/// their adds (at 10^5 units a height unit).
#[test]
fn many_droplets_on_a_plane_and_a_cone_take_from_the_map_what_they_carry_away() {
    let ctx = validated_device();
    let kernel = kernel_at(&ctx, 64, 1e5);
    for (name, map) in plane_and_cone(1e5) {
        let job = job_for(&map, 4000, 9);
        let run = kernel.run_counted(&map.field(), &job, 256).unwrap();
        assert_eq!(run.work.unwrap().droplets, 4000, "{name}");
        assert_the_map_loses_what_the_droplets_carry(&map, &run.cells, &run, name);
    }
    assert_validation_clean(&ctx);
}
