//! The paper's droplet kernel on the GPU against the CPU reference of the same
//! algorithm, on lavapipe (or whatever the default device is) under validation.

mod common;

use vkerode::erosion::droplets::cpu::{erode_parallel, erode_sequential};
use vkerode::erosion::droplets::{AtomicMode, FixedHeightfield, RunMode};
use vkerode::experiment::ChangeFigures;
use vkerode::terrain::image::CellSize;
use vkerode::terrain::units::HeightUnit;
use vkerode::terrain::{Cells, Values};
use vkerode::terrain::{Heightmap, FIXED_POINT_LIMIT};

use common::{
    assert_validation_clean, default_job, fixed_terrain, paper_kernel, validated_device, SCALE,
};

#[test]
fn one_droplet_on_the_gpu_follows_the_cpu_reference_path() {
    let ctx = validated_device();
    let kernel = paper_kernel(&ctx, 64, AtomicMode::Int);
    let initial = fixed_terrain(128, 3);
    let map = FixedHeightfield::new(128, 128, &initial);
    for seed in 1..=8 {
        let one = default_job(1, seed);
        let mut expected = initial.clone();
        let cpu_work = erode_sequential(&mut expected, 128, 128, &one);
        assert!(
            cpu_work.steps >= 3,
            "seed {seed}: the droplet should travel, took {} steps",
            cpu_work.steps
        );

        let gpu = kernel.run(&map, &one, 1).unwrap();
        let counted = kernel.run_counted(&map, &one, 1).unwrap();
        let gpu_work = counted.work.unwrap();
        assert_eq!(gpu_work.droplets, 1);
        assert_eq!(gpu_work.steps, cpu_work.steps, "seed {seed}: steps taken");

        let mut touched = 0;
        let mut worst = (0, 0);
        for (i, (&g, &c)) in gpu.cells.iter().zip(&expected).enumerate() {
            if (g - c).abs() > worst.0 {
                worst = ((g - c).abs(), i);
            }
            touched += usize::from(g != initial[i]);
        }
        let differing = gpu
            .cells
            .iter()
            .zip(&expected)
            .filter(|(g, c)| g != c)
            .count();
        assert!(
            worst.0 <= 1,
            "seed {seed}: {differing} cells differ, worst by {} units at cell {}",
            worst.0,
            worst.1
        );
        assert!(
            touched >= 4,
            "seed {seed}: the droplet changed only {touched} cells"
        );
        assert_eq!(
            gpu.cells, counted.cells,
            "seed {seed}: one droplet has no races"
        );
    }
    assert_validation_clean(&ctx);
}

#[test]
fn a_hundred_thousand_droplets_stay_in_range_lower_hillslopes_and_fill_channels() {
    let ctx = validated_device();
    let kernel = paper_kernel(&ctx, 64, AtomicMode::Int);
    let size = 256usize;
    let initial = fixed_terrain(size as u32, 5);
    let before = Heightmap::from_fixed(size, size, &initial, SCALE).unwrap();
    let map = FixedHeightfield::new(size as u32, size as u32, &initial);
    let work = default_job(100_000, 11);
    let gpu = kernel.run(&map, &work, 16_384).unwrap();
    let mut reference = initial.clone();
    erode_sequential(&mut reference, size, size, &work);

    let stats = before.stats();
    let relief = stats.max - stats.min;
    for (i, &cell) in gpu.cells.iter().enumerate() {
        let h = cell as f32 / SCALE;
        assert!(
            f64::from(cell.unsigned_abs()) < FIXED_POINT_LIMIT,
            "cell {i} = {cell}"
        );
        assert!(
            h > stats.min - relief && h < stats.max + relief,
            "cell {i} left the terrain's range: {h}"
        );
    }

    let cells = |c: &[i32]| {
        let values = Values::Fixed {
            cells: c.to_vec(),
            scale: SCALE,
        };
        Cells::new(size, size, values).unwrap()
    };
    let start = cells(&initial);
    let gpu_change = ChangeFigures::between(
        &start,
        &cells(&gpu.cells),
        CellSize::UNIT,
        &HeightUnit::cells(),
        &[],
    )
    .unwrap();
    let cpu_change = ChangeFigures::between(
        &start,
        &cells(&reference),
        CellSize::UNIT,
        &HeightUnit::cells(),
        &[],
    )
    .unwrap();
    let gross = cpu_change.mean_abs_change * (size * size) as f64;
    assert!(
        (gpu_change.total_change - cpu_change.total_change).abs() < 0.03 * gross,
        "total height change: GPU {} vs CPU {} (gross movement {gross})",
        gpu_change.total_change,
        cpu_change.total_change
    );
    assert!(
        gpu_change.changed_cells_share > 0.2,
        "only {:.1}% of cells changed",
        gpu_change.changed_cells_share * 100.0
    );
    // The paper's kernel loses speed going downhill (`+ deltaH * 9.81`), so droplets
    // erode near where they spawn and drop their load where they converge: hillslopes
    // are lowered and channels fill, and their incision shrinks. The CPU reference of
    // the same algorithm agrees.
    for (name, change) in [("GPU", &gpu_change), ("CPU", &cpu_change)] {
        let routed = |figure: Option<f64>| figure.expect("a small map's channels are routed");
        let hillslope = routed(change.hillslope_mean_change);
        assert!(
            hillslope < -0.01,
            "{name}: hillslopes should be lowered, mean change {hillslope}"
        );
        let channel = routed(change.channel_mean_change);
        assert!(
            channel > 0.0,
            "{name}: channels should fill, mean change {channel}"
        );
        let (before, after) = (
            routed(change.channel_incision_before),
            routed(change.channel_incision_after),
        );
        assert!(
            after < 0.9 * before,
            "{name}: channel incision {before} before, {after} after"
        );
    }
    assert_validation_clean(&ctx);
}

#[test]
fn more_droplets_than_one_dispatch_can_hold_all_run() {
    let ctx = validated_device();
    let max_groups = ctx.info().max_workgroup_count[0];
    // Workgroup size 1: one group per droplet, so the group-count limit is the cap.
    let kernel = paper_kernel(&ctx, 1, AtomicMode::Int);
    let droplets = 70_000;
    let initial = fixed_terrain(128, 9);
    let map = FixedHeightfield::new(128, 128, &initial);
    let work = default_job(droplets, 2);
    let run = kernel.run_counted(&map, &work, u32::MAX).unwrap();
    let count = run.work.unwrap();
    assert_eq!(count.droplets, u64::from(droplets));
    assert!(run.batches.iter().all(|b| b.groups <= max_groups));
    if droplets > max_groups {
        assert!(
            run.batches.len() >= 2,
            "{droplets} droplets need two dispatches"
        );
    }
    let mut reference = initial.clone();
    let cpu = erode_parallel(&mut reference, 128, 128, &work);
    let ratio = count.steps as f64 / cpu.steps as f64;
    assert!(
        (0.9..1.1).contains(&ratio),
        "GPU steps {} vs CPU {}",
        count.steps,
        cpu.steps
    );
    assert_validation_clean(&ctx);
}

#[test]
fn a_run_split_into_many_submissions_equals_one_submission() {
    let ctx = validated_device();
    let kernel = paper_kernel(&ctx, 64, AtomicMode::Int);
    let initial = fixed_terrain(64, 4);
    let map = FixedHeightfield::new(64, 64, &initial);
    // One droplet per dispatch: no races, so every split must give the same heights.
    let job = default_job(48, 6);
    let mut runner = kernel.prepare(&map).unwrap();
    let first = runner.execute(&job, 1, RunMode::TIMED).unwrap();
    assert_eq!(
        first.submissions, 48,
        "until a rate is measured, each dispatch is its own submission"
    );
    let second = runner.execute(&job, 1, RunMode::TIMED).unwrap();
    assert_eq!(
        second.submissions, 1,
        "48 tiny dispatches fit in one second"
    );
    assert_eq!(first.cells, second.cells);
    let mut expected = initial.clone();
    erode_sequential(&mut expected, 64, 64, &job);
    let worst = common::largest_difference(&first.cells, &expected);
    assert!(
        worst <= 1,
        "the split run follows the CPU reference: {worst}"
    );
    assert_validation_clean(&ctx);
}
