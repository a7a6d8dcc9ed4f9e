//! Analytic cases of the droplet kernel, where the answer is known without running it:
//! a lone droplet on a tilted plane goes straight downhill, and mirroring the plane
//! (with the droplet's start) mirrors its change map; a lone droplet on a cone moves
//! radially away from the apex; and the material balance closes on both surfaces. The
//! paper's kernel on the default device under validation, the CPU reference beside it.

mod common;

use vkerode::erosion::droplets::cpu::erode_sequential;
use vkerode::erosion::droplets::{droplet_start, AtomicMode, DropletJob, FixedHeightfield};
use vkerode::hash::pcg_hash;

use common::{assert_validation_clean, default_job, paper_kernel, validated_device, SCALE};

/// A map of `width` x `height` fixed-point cells of `height_at` (height units).
struct Map {
    width: usize,
    height: usize,
    cells: Vec<i32>,
}

impl Map {
    fn of(width: usize, height: usize, height_at: impl Fn(f32, f32) -> f32) -> Self {
        let cells = (0..width * height)
            .map(|i| {
                let (x, y) = ((i % width) as f32, (i / width) as f32);
                (height_at(x, y) * SCALE).round() as i32
            })
            .collect();
        Self {
            width,
            height,
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

/// One droplet on the GPU (which follows the CPU reference bit for bit for one
/// droplet), with its balance; returns the heights after.
fn lone_droplet(
    ctx: &std::sync::Arc<vkerode::gpu::Context>,
    map: &Map,
    job: &DropletJob,
) -> Vec<i32> {
    let kernel = paper_kernel(ctx, 8, AtomicMode::Int);
    let run = kernel.run_counted(&map.field(), job, 1).unwrap();
    let mut cpu = map.cells.clone();
    erode_sequential(&mut cpu, map.width, map.height, job);
    assert!(run.cells == cpu, "the GPU follows the CPU reference");
    assert_balance_closes(map, &run);
    run.cells
}

/// What the droplets took is what they gave back, carried off at death or off the
/// edge, or lost to truncation (the counted build's balance); and the terrain received
/// exactly deposited - eroded, to the fixed-point unit.
fn assert_balance_closes(map: &Map, run: &vkerode::erosion::droplets::GpuRun) {
    let mass = run.contention.as_ref().expect("a counted run");
    let received: i64 = change(&map.cells, &run.cells).iter().sum();
    let net = ((mass.mass_deposited - mass.mass_eroded) * f64::from(SCALE)).round() as i64;
    assert_eq!(received, net, "the terrain's balance: {mass:?}");
    assert!(mass.mass_eroded > 0.0, "{mass:?}");
    let carried = mass.mass_at_death + mass.mass_off_edge + mass.mass_truncated;
    let taken = mass.mass_eroded - mass.mass_deposited;
    assert!(
        (taken - carried).abs() <= 1e-4 * mass.mass_eroded,
        "eroded - deposited {taken} against carried and truncated {carried}: {mass:?}"
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
    let after = lone_droplet(&ctx, &downhill, &job);
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
    let mirror_after = lone_droplet(&ctx, &uphill, &job);
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

#[test]
fn a_lone_droplet_on_a_cone_moves_radially_away_from_the_apex() {
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
        let after = lone_droplet(&ctx, &cone, &job);
        let moved = change(&cone.cells, &after);
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
        checked += 1;
        if checked == 4 {
            break;
        }
    }
    assert_eq!(checked, 4, "four starts near the apex");
    assert_validation_clean(&ctx);
}

#[test]
fn many_droplets_on_a_plane_and_a_cone_close_their_material_balance() {
    let ctx = validated_device();
    let side = 64;
    let centre = (side as f32 - 1.0) / 2.0;
    let plane = Map::of(side, side, |x, y| 0.4 * (63.0 - x) + 0.1 * y);
    let cone = Map::of(side, side, |x, y| {
        0.5 * (45.0 - ((x - centre).powi(2) + (y - centre).powi(2)).sqrt())
    });
    let kernel = paper_kernel(&ctx, 64, AtomicMode::Int);
    for (name, map) in [("plane", &plane), ("cone", &cone)] {
        let job = default_job(4000, 9);
        let run = kernel.run_counted(&map.field(), &job, 256).unwrap();
        assert_eq!(run.work.unwrap().droplets, 4000, "{name}");
        assert_balance_closes(map, &run);
    }
    assert_validation_clean(&ctx);
}
