//! Staggered dispatch passes and deterministic mode, on lavapipe under validation.

mod common;

use vkerode::erosion::droplets::{
    AtomicMode, DropletJob, DropletKernel, DropletShader, FixedHeightfield, KernelParams,
    KernelVariant, Passes, RunMode, Spawn, SpawnMode,
};

use common::{assert_validation_clean, fixed_terrain, paper_kernel, validated_device, SCALE};

const SIZE: u32 = 128;
/// One droplet per 64 cells per dispatch: the default density.
const BATCH: u32 = SIZE * SIZE / 64;

fn job(droplets: u32, seed: u32, passes: u32, stagger: bool) -> DropletJob {
    DropletJob {
        droplets,
        seed,
        params: KernelParams::default(),
        spawn: Spawn::default(),
        passes: Passes {
            count: passes,
            stagger,
        },
    }
}

fn passes_kernel(
    ctx: &std::sync::Arc<vkerode::gpu::Context>,
    atomics: AtomicMode,
) -> DropletKernel {
    let variant = KernelVariant {
        shader: DropletShader::Passes,
        ..KernelVariant::paper(atomics, SpawnMode::Global)
    };
    DropletKernel::new(ctx, 64, SCALE, variant).unwrap()
}

#[test]
fn one_pass_one_batch_is_the_paper_kernel_bit_for_bit() {
    let ctx = validated_device();
    let paper = paper_kernel(&ctx, 64, AtomicMode::Int);
    let passes = passes_kernel(&ctx, AtomicMode::Int);
    let initial = fixed_terrain(SIZE, 5);
    let map = FixedHeightfield::new(SIZE, SIZE, &initial);
    for seed in 1..=6 {
        let one = job(1, seed, 1, false);
        let expected = paper.run(&map, &one, 1).unwrap();
        let got = passes.run_counted(&map, &one, 1).unwrap();
        assert!(
            expected.cells != initial,
            "seed {seed}: the droplet should change the map"
        );
        assert_eq!(got.cells, expected.cells, "seed {seed}");
        assert_eq!(got.work.unwrap().droplets, 1);
    }
    assert_validation_clean(&ctx);
}

#[test]
fn a_droplets_state_survives_the_passes() {
    let ctx = validated_device();
    let kernel = passes_kernel(&ctx, AtomicMode::Int);
    let initial = fixed_terrain(SIZE, 6);
    let map = FixedHeightfield::new(SIZE, SIZE, &initial);
    for seed in 1..=4 {
        let whole = kernel.run(&map, &job(1, seed, 1, false), 1).unwrap();
        let whole_steps = kernel
            .run_counted(&map, &job(1, seed, 1, false), 1)
            .unwrap()
            .work
            .unwrap()
            .steps;
        assert!(whole_steps >= 3, "seed {seed}: the droplet should travel");
        // 7 does not divide the lifetime of 30: the last pass is short.
        for (count, stagger) in [(2, false), (7, false), (30, false), (3, true)] {
            let split = job(1, seed, count, stagger);
            let run = kernel.run_counted(&map, &split, 1).unwrap();
            assert_eq!(run.cells, whole.cells, "seed {seed}, {count} passes");
            assert_eq!(run.work.unwrap().steps, whole_steps);
            assert_eq!(run.dispatches, split.passes.dispatches() as usize);
        }
    }
    assert_validation_clean(&ctx);
}

#[test]
fn staggered_passes_in_batches_run_every_droplet_once() {
    let ctx = validated_device();
    let kernel = passes_kernel(&ctx, AtomicMode::Int);
    let initial = fixed_terrain(SIZE, 7);
    let map = FixedHeightfield::new(SIZE, SIZE, &initial);
    let staggered = job(5000, 2, 5, true);
    let run = kernel.run_counted(&map, &staggered, 1024).unwrap();
    let work = run.work.unwrap();
    assert_eq!(work.droplets, 5000);
    assert_eq!(run.batches.len(), 5);
    assert_eq!(run.dispatches, 5 * 9, "5 batches of 2 x 5 - 1 passes");
    assert!(work.steps > 5000 && work.steps <= 5000 * 30, "{work:?}");
    assert_validation_clean(&ctx);
}

#[test]
fn deterministic_mode_reruns_bit_identically() {
    let ctx = validated_device();
    let initial = fixed_terrain(SIZE, 8);
    let map = FixedHeightfield::new(SIZE, SIZE, &initial);
    let paper = KernelVariant::paper(AtomicMode::Deterministic, SpawnMode::Global);
    let passes = KernelVariant {
        shader: DropletShader::Passes,
        ..paper
    };
    for (variant, work) in [
        (paper, job(5_000, 3, 1, false)),
        (passes, job(5_000, 3, 3, true)),
    ] {
        let kernel = DropletKernel::new(&ctx, 64, SCALE, variant).unwrap();
        let mut runner = kernel.prepare(&map).unwrap();
        // Enough droplets per dispatch for int atomics to race, few enough to stay stable.
        let first = runner.execute(&work, BATCH, RunMode::TIMED).unwrap();
        let second = runner.execute(&work, BATCH, RunMode::TIMED).unwrap();
        let counted = runner.execute(&work, BATCH, RunMode::COUNTED).unwrap();
        let recounted = runner.execute(&work, BATCH, RunMode::COUNTED).unwrap();
        let name = variant.module_name();
        assert!(
            first.cells != initial,
            "{name}: the droplets change the map"
        );
        assert!(first.cells == second.cells, "{name}: reruns differ");
        // The instrumented build is another binary, whose float code may round
        // differently; it too must rerun bit-identically.
        assert!(
            counted.cells == recounted.cells,
            "{name}: instrumented reruns differ"
        );
        let mass = counted.contention.unwrap();
        assert!(
            (mass.mass_intended - mass.mass_received - mass.mass_truncated).abs()
                <= 1e-3 * mass.mass_intended.abs().max(1.0),
            "{name}: {mass:?}"
        );
    }
    assert_validation_clean(&ctx);
}

#[test]
fn a_lone_deterministic_droplet_sees_its_own_changes_as_the_paper_kernel_does() {
    let ctx = validated_device();
    let variant = |atomics| KernelVariant::paper(atomics, SpawnMode::Global);
    let paper = DropletKernel::new(&ctx, 64, SCALE, variant(AtomicMode::Int)).unwrap();
    let frozen = DropletKernel::new(&ctx, 64, SCALE, variant(AtomicMode::Deterministic)).unwrap();
    let initial = fixed_terrain(SIZE, 9);
    let map = FixedHeightfield::new(SIZE, SIZE, &initial);
    for seed in 1..=8 {
        let one = job(1, seed, 1, false);
        let expected = paper.run(&map, &one, 1).unwrap();
        let got = frozen.run(&map, &one, 1).unwrap();
        assert!(expected.cells != initial, "seed {seed}: the droplet moved");
        let differing: Vec<(usize, i32)> = (0..initial.len())
            .filter(|&i| got.cells[i] != expected.cells[i])
            .map(|i| (i, got.cells[i] - expected.cells[i]))
            .collect();
        assert!(differing.is_empty(), "seed {seed}: {differing:?}");
    }
    assert_validation_clean(&ctx);
}
