//! The wide droplet build (heightfield by buffer device address, 64-bit cell indices)
//! against the SSBO build, on lavapipe under validation: the same heights bit for bit
//! on small maps, and chosen by itself where a map passes the device's storage range.

mod common;

use vkerode::erosion::droplets::{
    computed_cells, AtomicMode, DropletKernel, DropletShader, FixedHeightfield, KernelVariant,
    Lever, SpawnMode,
};

use common::{
    assert_lone_droplets_match, assert_runs_once_and_closes_mass, assert_validation_clean,
    default_job, fixed_terrain, validated_device, SCALE,
};

const SIZE: u32 = 96;

fn kernel(
    ctx: &std::sync::Arc<vkerode::gpu::Context>,
    shader: DropletShader,
    spawn: SpawnMode,
    lever: Lever,
) -> DropletKernel {
    let variant = KernelVariant {
        shader,
        lever,
        ..KernelVariant::paper(AtomicMode::Int, spawn)
    };
    DropletKernel::new(ctx, 64, SCALE, variant).expect("the kernel builds")
}

#[test]
fn the_wide_build_leaves_the_ssbo_builds_heights_bit_for_bit() {
    let ctx = validated_device();
    let initial = fixed_terrain(SIZE, 5);
    let map = FixedHeightfield::new(SIZE, SIZE, &initial);
    for shader in [DropletShader::Paper, DropletShader::Fast] {
        for spawn in [SpawnMode::Global, SpawnMode::Tiled] {
            let ssbo = kernel(&ctx, shader, spawn, Lever::None);
            let wide = kernel(&ctx, shader, spawn, Lever::Wide);
            assert!(wide.variant().module_name().ends_with("_wide"));
            if spawn == SpawnMode::Global {
                assert_lone_droplets_match(&ssbo, &wide, &map, 1..=3);
            }
            // A whole run, one droplet per dispatch: the dispatches run in order, so
            // the run is deterministic and the two builds must agree on every cell.
            let job = vkerode::erosion::droplets::DropletJob {
                spawn: vkerode::erosion::droplets::Spawn {
                    mode: spawn,
                    tile: 32,
                    ..Default::default()
                },
                ..default_job(48, 9)
            };
            let expected = ssbo.run_counted(&map, &job, 1).unwrap();
            let got = wide.run_counted(&map, &job, 1).unwrap();
            assert_runs_once_and_closes_mass(&got, 48);
            assert!(
                expected.cells != initial,
                "{shader:?} {spawn:?}: erosion ran"
            );
            assert!(
                got.cells == expected.cells,
                "{shader:?} {spawn:?}: the wide build's heights differ"
            );
            assert_eq!(got.work, expected.work, "{shader:?} {spawn:?}: same steps");
            let hits = |run: &vkerode::erosion::droplets::GpuRun| {
                run.contention.as_ref().map(|c| (c.hits_max, c.hits_p99))
            };
            assert_eq!(hits(&got), hits(&expected), "the same cells hit");
            let timed = wide.run(&map, &job, 1).unwrap();
            assert!(timed.cells == expected.cells, "the timed wide run too");
        }
    }
    assert_validation_clean(&ctx);
}

#[test]
fn a_map_past_the_storage_range_gets_the_wide_build_by_itself() {
    let ctx = validated_device();
    let info = ctx.info();
    let paper = KernelVariant::paper(AtomicMode::Int, SpawnMode::Global);
    // lavapipe's 128 MiB range: 6000^2 int32 cells (137 MB) pass it.
    let side = 6000u64;
    assert!(side * side * 4 > info.max_storage_buffer_range);
    assert_eq!(paper.for_map(side * side, info).lever, Lever::Wide);
    assert_eq!(paper.for_map(64 * 64, info).lever, Lever::None);
    // Another lever asked for stays, and the map's rule refuses it.
    let texel = KernelVariant {
        lever: Lever::Texel,
        ..paper
    };
    assert_eq!(texel.for_map(side * side, info).lever, Lever::Texel);
    // The wide build adds int atomics only.
    let float_wide = KernelVariant {
        lever: Lever::Wide,
        ..KernelVariant::paper(AtomicMode::Float, SpawnMode::Global)
    };
    assert!(float_wide.unsupported().is_some());
}

#[test]
fn the_wide_builds_cell_index_and_address_hold_past_2_31_cells() {
    let ctx = validated_device();
    // A 65536^2 map's cells, where lavapipe holds no such map: the index the kernels'
    // cellIndex computes, and the address their heights are reached at.
    let width = 65536i32;
    let cells = [
        [0, 0],
        [65535, 32767],
        [0, 32768],
        [65535, 32768],
        [12345, 40000],
        [65535, 65535],
    ];
    let base = 0x0000_7f00_0000_1000u64; // a device address past 4 GiB
    let wide = computed_cells(&ctx, true, width, base, &cells).expect("the wide probe runs");
    for (&[x, y], got) in cells.iter().zip(&wide) {
        let index = i64::from(y) * i64::from(width) + i64::from(x);
        assert_eq!(got.index, index, "cell ({x}, {y})");
        assert_eq!(
            got.address,
            base + index as u64 * 4,
            "cell ({x}, {y})'s address"
        );
    }
    assert_eq!(wide[5].index, (1 << 32) - 1, "the last of 2^32 cells");
    // The paper's 32-bit index wraps from row 32768: why the wide build exists.
    let narrow = computed_cells(&ctx, false, width, 0, &cells).expect("the 32-bit probe runs");
    assert_eq!(
        narrow[1].index,
        i64::from(i32::MAX),
        "the last cell below 2^31"
    );
    assert_eq!(narrow[2].index, i64::from(i32::MIN), "row 32768 wraps");
    assert_validation_clean(&ctx);
}
