//! The fast variant against the paper's kernel, on lavapipe under validation.

mod common;

use vkerode::erosion::droplets::{
    AtomicMode, DropletKernel, DropletShader, FixedHeightfield, KernelVariant, NoBuild, SpawnMode,
    SpirvBuild,
};
use vkerode::erosion::ErosionError;

use common::{
    assert_lone_droplets_match, assert_runs_once_and_closes_mass, assert_validation_clean,
    default_job, fixed_terrain, paper_kernel, validated_device, SCALE,
};

const SIZE: u32 = 128;

fn fast(atomics: AtomicMode) -> KernelVariant {
    KernelVariant {
        shader: DropletShader::Fast,
        ..KernelVariant::paper(atomics, SpawnMode::Global)
    }
}

#[test]
fn a_lone_droplet_leaves_the_paper_kernels_heights_bit_for_bit() {
    let ctx = validated_device();
    let paper = KernelVariant::paper(AtomicMode::Int, SpawnMode::Global);
    let reference = paper_kernel(&ctx, 64, AtomicMode::Int);
    let initial = fixed_terrain(SIZE, 11);
    let map = FixedHeightfield::new(SIZE, SIZE, &initial);
    let candidates = [
        DropletShader::Fast,
        DropletShader::FastSkipOnly,
        DropletShader::FastReuseOnly,
    ]
    .map(|shader| KernelVariant { shader, ..paper });
    let optimised = [paper, candidates[0]].map(|v| KernelVariant {
        spirv: SpirvBuild::Optimised,
        ..v
    });
    for variant in candidates.into_iter().chain(optimised) {
        let kernel = DropletKernel::new(&ctx, 64, SCALE, variant).unwrap();
        assert_lone_droplets_match(&reference, &kernel, &map, 1..=12);
    }
    // Truncation to zero happens, so the skipped atomics are exercised.
    let truncated = reference.run_counted(&map, &default_job(1, 1), 1).unwrap();
    assert!(truncated.contention.unwrap().mass_truncated > 0.0);
    assert_validation_clean(&ctx);
}

#[test]
fn many_droplets_run_once_each_and_close_the_mass_account() {
    let ctx = validated_device();
    let kernel = DropletKernel::new(&ctx, 32, SCALE, fast(AtomicMode::Int)).unwrap();
    let initial = fixed_terrain(SIZE, 12);
    let map = FixedHeightfield::new(SIZE, SIZE, &initial);
    let run = kernel
        .run_counted(&map, &default_job(4000, 2), 256)
        .unwrap();
    assert_runs_once_and_closes_mass(&run, 4000);
    assert_validation_clean(&ctx);
}

#[test]
fn the_fast_kernel_refuses_other_atomic_modes() {
    let ctx = validated_device();
    for mode in [
        AtomicMode::Float,
        AtomicMode::Racy,
        AtomicMode::Deterministic,
    ] {
        match DropletKernel::new(&ctx, 64, SCALE, fast(mode)) {
            Err(ErosionError::NoBuild(NoBuild::FastAtomics(refused))) => assert_eq!(refused, mode),
            Err(other) => panic!("{mode:?}: unexpected error {other}"),
            Ok(_) => panic!("{mode:?}: the fast kernel has no such build"),
        }
    }
}

#[test]
fn reserved_shared_memory_changes_occupancy_not_results() {
    let ctx = validated_device();
    let limit = ctx.info().max_shared_memory_bytes;
    let reference = paper_kernel(&ctx, 64, AtomicMode::Int);
    let initial = fixed_terrain(SIZE, 13);
    let map = FixedHeightfield::new(SIZE, SIZE, &initial);
    let reserving = |bytes| KernelVariant {
        reserved_shared_bytes: bytes,
        ..KernelVariant::paper(AtomicMode::Int, SpawnMode::Global)
    };
    let kernel = DropletKernel::new(&ctx, 64, SCALE, reserving(limit)).unwrap();
    for seed in 1..=4 {
        let one = default_job(1, seed);
        let expected = reference.run(&map, &one, 1).unwrap();
        assert!(
            kernel.run(&map, &one, 1).unwrap().cells == expected.cells,
            "seed {seed}"
        );
    }
    match DropletKernel::new(&ctx, 64, SCALE, reserving(limit + 4)) {
        Err(ErosionError::SharedMemory {
            reserved,
            cached: 0,
            ..
        }) => assert_eq!(reserved, limit + 4),
        Err(other) => panic!("unexpected error {other}"),
        Ok(_) => panic!("more shared memory than the device allows was accepted"),
    }
    assert_validation_clean(&ctx);
}
