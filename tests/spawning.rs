//! Tiled spawning and checkerboard phases, on the default device under validation.

mod common;

use vkerode::erosion::droplets::{
    AtomicMode, DropletJob, DropletKernel, FixedHeightfield, KernelParams, KernelVariant, Passes,
    Spawn, SpawnMode, TileOrder,
};

use common::{assert_validation_clean, fixed_terrain, paper_kernel, validated_device, SCALE};

const SIDE: u32 = 128;
const TILE: u32 = 16;

fn tiled_job(droplets: u32, order: TileOrder, phases: u32, lifetime: u32) -> DropletJob {
    DropletJob {
        droplets,
        seed: 5,
        params: KernelParams {
            lifetime,
            ..KernelParams::default()
        },
        spawn: Spawn {
            mode: SpawnMode::Tiled,
            tile: TILE,
            order,
            phases,
        },
        passes: Passes::default(),
    }
}

#[test]
fn tiled_spawning_starts_every_droplet_inside_its_workgroups_tile() {
    let ctx = validated_device();
    let kernel = DropletKernel::new(
        &ctx,
        64,
        SCALE,
        KernelVariant::paper(AtomicMode::Int, SpawnMode::Tiled),
    )
    .unwrap();
    let initial = fixed_terrain(SIDE, 7);
    let map = FixedHeightfield::new(SIDE, SIDE, &initial);
    for order in [
        TileOrder::Linear,
        TileOrder::Morton,
        TileOrder::Scattered,
        TileOrder::Sweep,
    ] {
        // Three workgroups, one step each: every atomic lands on the 2x2 cells at a
        // droplet's start.
        let job = tiled_job(3 * 64, order, 1, 1);
        let run = kernel.run_counted(&map, &job, 3 * 64).unwrap();
        let tiles: Vec<(u32, u32)> = (0..3)
            .map(|g| {
                job.spawn
                    .tile_of(SIDE, SIDE, 0, g, 3)
                    .expect("every colour has tiles")
            })
            .collect();
        let moved: Vec<usize> = (0..initial.len())
            .filter(|&i| run.cells[i] != initial[i])
            .collect();
        assert!(!moved.is_empty(), "{order:?}: the droplets did something");
        for i in moved {
            let (x, y) = ((i as u32) % SIDE, (i as u32) / SIDE);
            // The 2x2 stencil reaches one cell past a start at the tile's far edge.
            let inside = tiles.iter().any(|&(tx, ty)| {
                (tx * TILE..=(tx + 1) * TILE).contains(&x)
                    && (ty * TILE..=(ty + 1) * TILE).contains(&y)
            });
            assert!(
                inside,
                "{order:?}: cell ({x}, {y}) changed outside tiles {tiles:?}"
            );
        }
    }
    assert_validation_clean(&ctx);
}

#[test]
fn checkerboard_phases_and_batches_run_every_droplet_once() {
    let ctx = validated_device();
    let kernel = DropletKernel::new(
        &ctx,
        32,
        SCALE,
        KernelVariant::paper(AtomicMode::Int, SpawnMode::Tiled),
    )
    .unwrap();
    let initial = fixed_terrain(SIDE, 8);
    let map = FixedHeightfield::new(SIDE, SIDE, &initial);
    for (phases, batch) in [(1, 10_000), (4, 2_500), (9, 1_000)] {
        let job = tiled_job(10_007, TileOrder::Scattered, phases, 30);
        let run = kernel.run_counted(&map, &job, batch).unwrap();
        assert_eq!(
            run.work.unwrap().droplets,
            10_007,
            "phases {phases}, batch {batch}"
        );
        let colours: std::collections::BTreeSet<u32> =
            run.batches.iter().map(|b| b.phase).collect();
        assert_eq!(colours.len() as u32, phases);
    }
    let global = tiled_job(10, TileOrder::Linear, 1, 30);
    let plain = paper_kernel(&ctx, 32, AtomicMode::Int);
    assert!(
        plain.run(&map, &global, 10).is_err(),
        "a global kernel refuses a tiled job"
    );
    assert_validation_clean(&ctx);
}

#[test]
fn the_runner_refuses_tiles_that_leave_a_colour_without_a_tile() {
    let ctx = validated_device();
    let variant = KernelVariant::paper(AtomicMode::Int, SpawnMode::Tiled);
    let kernel = DropletKernel::new(&ctx, 64, SCALE, variant).unwrap();
    let cells = fixed_terrain(SIDE, 3);
    let map = FixedHeightfield::new(SIDE, SIDE, &cells);
    let mut job = tiled_job(1000, TileOrder::Linear, 9, 30);
    job.spawn.tile = SIDE / 2;
    let error = kernel
        .run_counted(&map, &job, 1000)
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("tile must be small enough for 3 tiles"),
        "{error}"
    );
    job.spawn.phases = 4;
    assert_eq!(
        kernel
            .run_counted(&map, &job, 1000)
            .unwrap()
            .work
            .unwrap()
            .droplets,
        1000
    );
    assert_validation_clean(&ctx);
}
