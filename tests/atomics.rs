//! Atomic modes and the contention figures of the instrumented kernel, on the default
//! device under validation.

mod common;

use vkerode::erosion::droplets::{
    AtomicMode, DropletJob, DropletKernel, FixedHeightfield, KernelParams, KernelVariant, Passes,
    Spawn, SpawnMode,
};
use vkerode::erosion::ErosionError;

use common::{assert_validation_clean, fixed_terrain, paper_kernel, validated_device, SCALE};

fn job(droplets: u32, scale: f32) -> DropletJob {
    DropletJob {
        droplets,
        seed: 3,
        params: KernelParams {
            fixed_point_scale: scale,
            ..KernelParams::default()
        },
        spawn: Spawn::default(),
        passes: Passes::default(),
    }
}

#[test]
fn int_mode_mass_closes_and_truncation_shrinks_with_the_scale() {
    let ctx = validated_device();
    let mut truncated_share = Vec::new();
    for scale in [1000.0f32, 1048576.0] {
        let kernel = DropletKernel::new(
            &ctx,
            64,
            scale,
            KernelVariant::paper(AtomicMode::Int, SpawnMode::Global),
        )
        .unwrap();
        // Terrain heights fit 2^30 at both scales: relief 256 x 2^20 < 2^30.
        let initial: Vec<i32> = fixed_terrain(128, 4)
            .iter()
            .map(|&c| (c as f64 / f64::from(SCALE) * f64::from(scale) / 8.0) as i32)
            .collect();
        let map = FixedHeightfield::new(128, 128, &initial);
        let run = kernel.run_counted(&map, &job(4000, scale), 4000).unwrap();
        let c = run.contention.unwrap();
        let work = run.work.unwrap();
        // Atomic adds lose nothing: the map received exactly what the adds carried.
        assert!(
            c.mass_lost.abs() <= 1e-9 * c.mass_applied.abs().max(1.0),
            "lost {}",
            c.mass_lost
        );
        let closes = c.mass_received + c.mass_truncated + c.mass_lost - c.mass_intended;
        assert!(
            closes.abs() < 1e-6 * c.mass_intended.abs().max(1.0),
            "{c:?}"
        );
        assert!(c.mass_truncated != 0.0, "int() truncates: {c:?}");
        let hits_total: u64 = work.atomics;
        assert!(hits_total >= 4 * 4000, "{work:?}");
        assert!(u64::from(c.hits_max) <= hits_total && c.hits_max >= c.hits_p99);
        truncated_share.push((c.mass_truncated / c.mass_intended).abs());
    }
    assert!(
        truncated_share[1] < truncated_share[0] / 100.0,
        "truncation at 2^20 ({}) should be far below x1000 ({})",
        truncated_share[1],
        truncated_share[0]
    );
    assert_validation_clean(&ctx);
}

#[test]
fn one_droplet_has_no_conflicts_and_racy_mode_loses_nothing_without_races() {
    let ctx = validated_device();
    let initial = fixed_terrain(128, 6);
    let map = FixedHeightfield::new(128, 128, &initial);
    let one = job(1, SCALE);
    let int = paper_kernel(&ctx, 64, AtomicMode::Int);
    let racy = paper_kernel(&ctx, 64, AtomicMode::Racy);
    let a = int.run_counted(&map, &one, 1).unwrap();
    let b = racy.run_counted(&map, &one, 1).unwrap();
    assert_eq!(a.cells, b.cells, "with no races, racy adds are atomic adds");
    let (ca, cb) = (a.contention.unwrap(), b.contention.unwrap());
    assert_eq!(
        ca.subgroup_conflicts_per_1000, 0.0,
        "one lane cannot collide"
    );
    assert_eq!(cb.mass_lost, 0.0);
    assert_eq!(a.work.unwrap().atomics, 4 * a.work.unwrap().steps);
    assert_validation_clean(&ctx);
}

#[test]
fn racy_mode_with_many_droplets_loses_updates_that_int_mode_keeps() {
    let ctx = validated_device();
    let initial = fixed_terrain(64, 8);
    let map = FixedHeightfield::new(64, 64, &initial);
    let many = job(50_000, SCALE);
    let racy = paper_kernel(&ctx, 64, AtomicMode::Racy);
    let c = racy
        .run_counted(&map, &many, 50_000)
        .unwrap()
        .contention
        .unwrap();
    let closes = c.mass_received + c.mass_truncated + c.mass_lost - c.mass_intended;
    assert!(
        closes.abs() < 1e-6 * c.mass_intended.abs().max(1.0),
        "{c:?}"
    );
    assert!(
        c.subgroup_conflicts_per_1000 > 0.0,
        "50k droplets on 64x64 collide: {c:?}"
    );
    assert_validation_clean(&ctx);
}

#[test]
fn float_mode_runs_where_the_device_has_float_atomics_and_is_refused_where_not() {
    let ctx = validated_device();
    let initial = fixed_terrain(128, 2);
    let map = FixedHeightfield::new(128, 128, &initial);
    match DropletKernel::new(
        &ctx,
        64,
        SCALE,
        KernelVariant::paper(AtomicMode::Float, SpawnMode::Global),
    ) {
        Ok(kernel) => {
            assert!(ctx.info().float_atomic_add);
            let run = kernel.run_counted(&map, &job(4000, SCALE), 4000).unwrap();
            let c = run.contention.unwrap();
            assert_eq!(c.mass_truncated, 0.0, "no fixed point, no truncation");
            assert!(
                c.mass_lost.abs() < 1e-3 * c.mass_intended.abs().max(1.0),
                "{c:?}"
            );
            let changed = run
                .cells
                .iter()
                .zip(&initial)
                .filter(|(a, b)| a != b)
                .count();
            assert!(changed > 1000, "float mode eroded only {changed} cells");
        }
        Err(ErosionError::Unsupported(what)) => {
            assert!(!ctx.info().float_atomic_add);
            assert!(what.contains("float atomics"));
        }
        Err(other) => panic!("unexpected error: {other}"),
    }
    assert_validation_clean(&ctx);
}
