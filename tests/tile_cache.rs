//! The tile-cache kernel (glsl/droplet_tilecache.comp) against the paper's, on lavapipe
//! under validation: lone droplets bit for bit, inside and outside the cached window;
//! a full run's mass account; the rules on its window.

mod common;

use vkerode::erosion::droplets::{
    AtomicMode, CacheWindow, DropletJob, DropletKernel, DropletSettings, DropletShader,
    FixedHeightfield, KernelParams, KernelVariant, Lever, Passes, Spawn, SpawnMode, SpirvBuild,
    TileOrder,
};
use vkerode::erosion::ErosionError;

use common::{
    assert_runs_once_and_closes_mass, assert_validation_clean, fixed_terrain, validated_device,
    SCALE,
};

const SIZE: u32 = 128;

fn tiled_job(droplets: u32, seed: u32, tile: u32, phases: u32) -> DropletJob {
    DropletJob {
        droplets,
        seed,
        params: KernelParams::default(),
        spawn: Spawn {
            mode: SpawnMode::Tiled,
            tile,
            order: TileOrder::Linear,
            phases,
        },
        passes: Passes::default(),
    }
}

fn tile_cache(tile: u32, margin: u32) -> KernelVariant {
    KernelVariant {
        shader: DropletShader::TileCache,
        cache: CacheWindow { tile, margin },
        ..KernelVariant::paper(AtomicMode::Int, SpawnMode::Tiled)
    }
}

#[test]
fn a_lone_droplet_leaves_the_paper_kernels_heights_inside_and_outside_the_window() {
    let ctx = validated_device();
    let paper = DropletKernel::new(
        &ctx,
        64,
        SCALE,
        KernelVariant::paper(AtomicMode::Int, SpawnMode::Tiled),
    )
    .unwrap();
    let initial = fixed_terrain(SIZE, 21);
    let map = FixedHeightfield::new(SIZE, SIZE, &initial);
    // Tile 4 with no margin: droplets leave the window within a few steps; tile 16
    // with margin 7: most stay in it.
    let variants = [
        tile_cache(4, 0),
        tile_cache(16, 7),
        KernelVariant {
            spirv: SpirvBuild::Optimised,
            ..tile_cache(4, 1)
        },
        KernelVariant {
            lever: Lever::Image,
            ..tile_cache(4, 1)
        },
    ];
    let mut escaped_somewhere = false;
    let mut stayed_inside = false;
    for variant in variants {
        let kernel = DropletKernel::new(&ctx, 64, SCALE, variant).unwrap();
        for seed in 1..=8 {
            let one = tiled_job(1, seed, variant.cache.tile, 4);
            let (expected, got) = common::assert_lone_droplet_matches(&paper, &kernel, &map, &one);
            let escapes = got.contention.unwrap().cache_escaped_adds;
            assert_eq!(expected.contention.unwrap().cache_escaped_adds, None);
            let escapes = escapes.expect("the tile-cache kernel counts escapes");
            escaped_somewhere |= escapes > 0;
            stayed_inside |= escapes == 0;
        }
    }
    // Both paths ran: droplets that left the window (margin 1) and droplets that
    // never did.
    assert!(escaped_somewhere, "no droplet left its window");
    assert!(stayed_inside, "every droplet left its window");
    assert_validation_clean(&ctx);
}

#[test]
fn a_full_run_with_several_workgroups_per_tile_closes_the_mass_account() {
    let ctx = validated_device();
    let initial = fixed_terrain(SIZE, 22);
    let map = FixedHeightfield::new(SIZE, SIZE, &initial);
    // Tile 32 on 128 cells: 4 tiles a colour; one dispatch a colour of 1000 droplets in
    // workgroups of 32 puts 8 workgroups on each tile at once, and droplets leave
    // their windows (margin 4) into others'.
    let kernel = DropletKernel::new(&ctx, 32, SCALE, tile_cache(32, 4)).unwrap();
    let job = tiled_job(4000, 3, 32, 4);
    let run = kernel.run_counted(&map, &job, 4000).unwrap();
    assert_runs_once_and_closes_mass(&run, 4000);
    let mass = run.contention.as_ref().unwrap();
    // Int atomics lose nothing: the write-back adds (final - initial), so the map
    // received exactly what the droplets' adds carried.
    assert!(mass.mass_lost.abs() < 1e-6, "{mass:?}");
    assert!(mass.balance_terrain.abs() < 1e-6, "{mass:?}");
    let escaped = mass.cache_escaped_adds.unwrap();
    let share = mass.cache_escape_share.unwrap();
    assert!(escaped > 0 && share > 0.0 && share < 1.0, "{mass:?}");
    // The same job with 9 phases and a wider margin.
    let nine = DropletKernel::new(&ctx, 32, SCALE, tile_cache(32, 12)).unwrap();
    let run = nine
        .run_counted(&map, &tiled_job(3000, 4, 32, 9), 3000)
        .unwrap();
    assert_runs_once_and_closes_mass(&run, 3000);
    assert!(run.contention.unwrap().mass_lost.abs() < 1e-6);
    assert_validation_clean(&ctx);
}

#[test]
fn windows_that_meet_or_do_not_fit_are_refused() {
    let ctx = validated_device();
    let initial = fixed_terrain(SIZE, 23);
    let map = FixedHeightfield::new(SIZE, SIZE, &initial);
    let kernel = DropletKernel::new(&ctx, 64, SCALE, tile_cache(16, 7)).unwrap();
    let refusal = |job: &DropletJob| match kernel.run(&map, job, 64) {
        Err(mismatch @ ErosionError::TileMismatch { .. }) => mismatch.to_string(),
        Err(ErosionError::CacheWindow(rule)) => rule.to_string(),
        Err(other) => panic!("unexpected error {other}"),
        Ok(_) => panic!("{job:?} ran"),
    };
    assert!(refusal(&tiled_job(64, 1, 32, 4)).contains("tile"));
    assert!(refusal(&tiled_job(64, 1, 16, 1)).contains("phases"));

    // A window past the device's shared memory: the kernel and the settings refuse it.
    let limit = u64::from(ctx.info().max_shared_memory_bytes);
    let too_wide = (0..200)
        .map(|margin| CacheWindow { tile: 64, margin })
        .find(|w| w.shared_bytes() > limit)
        .expect("a margin past the limit");
    match DropletKernel::new(&ctx, 64, SCALE, tile_cache(64, too_wide.margin)) {
        Err(ErosionError::SharedMemory { cached, .. }) => {
            assert_eq!(cached, too_wide.shared_bytes())
        }
        Err(other) => panic!("unexpected error {other}"),
        Ok(_) => panic!("a window past the shared memory limit was built"),
    }
    let settings = DropletSettings {
        variant: DropletShader::TileCache,
        spawn: SpawnMode::Tiled,
        tile: 64,
        cache_margin: too_wide.margin,
        phases: 9,
        ..DropletSettings::default()
    };
    assert!(
        too_wide.rule(9).is_ok(),
        "only the shared memory is at fault"
    );
    let error = settings.check_job(Some(ctx.info())).unwrap_err();
    assert_eq!(error.key, "cache_margin", "{error:?}");
    assert!(error.reason.contains("shared memory"), "{error:?}");
    assert_validation_clean(&ctx);
}
