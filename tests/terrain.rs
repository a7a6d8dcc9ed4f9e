//! glsl/terrain.comp against the CPU port of the same erosion noise.

mod common;

use vkerode::terrain::{generate_on_cpu, generate_on_gpu, TerrainSpec};

use common::{assert_validation_clean, validated_device};

#[test]
fn gpu_terrain_matches_the_cpu_port_to_a_ten_thousandth_of_the_relief() {
    let ctx = validated_device();
    for spec in [
        TerrainSpec::square(256, 0),
        TerrainSpec {
            width: 200,
            height: 120,
            seed: 42,
            relief: 37.5,
        },
    ] {
        let gpu = generate_on_gpu(&ctx, &spec).unwrap();
        let cpu = generate_on_cpu(&spec).unwrap();
        let worst = gpu
            .data()
            .iter()
            .zip(cpu.data())
            .map(|(g, c)| (g - c).abs())
            .fold(0.0f32, f32::max);
        assert!(
            worst < 1e-4 * spec.relief,
            "{}x{} seed {}: largest difference {worst} for relief {}",
            spec.width,
            spec.height,
            spec.seed,
            spec.relief
        );
        let stats = cpu.stats();
        assert!(
            stats.min >= 0.0 && stats.max <= spec.relief,
            "heights within [0, relief]: {stats:?}"
        );
        assert!(
            stats.max - stats.min > 0.1 * spec.relief,
            "the terrain has relief: {stats:?}"
        );
    }
    assert_validation_clean(&ctx);
}

#[test]
fn different_seeds_give_different_terrain() {
    let a = generate_on_cpu(&TerrainSpec::square(64, 1)).unwrap();
    let b = generate_on_cpu(&TerrainSpec::square(64, 2)).unwrap();
    let differing = a
        .data()
        .iter()
        .zip(b.data())
        .filter(|(x, y)| x != y)
        .count();
    assert!(
        differing > 64 * 64 * 9 / 10,
        "only {differing} cells differ"
    );
}
