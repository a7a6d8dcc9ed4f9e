//! The model's switches (physics: paper | corrected; rounding: trunc | nearest |
//! stochastic) in every kernel against the CPU reference, and the closed mass balance
//! of the counted build. The paper's kernel runs the corrected physics as
//! glsl/droplet_stepped.comp (glsl/droplet.comp keeps the paper's speed update), the
//! module that `DropletShader::for_job` picks. On the default device under validation;
//! and, analytically, the two speed updates of a lone droplet on an inclined plane.

mod common;

use std::collections::HashMap;

use vkerode::erosion::droplets::cpu::{erode_sequential, lone_droplet_speeds};
use vkerode::erosion::droplets::{
    AtomicMode, DropletJob, DropletKernel, DropletSettings, DropletShader, FixedHeightfield,
    KernelParams, KernelVariant, Passes, Physics, Rounding, SpawnMode,
};

use common::{assert_validation_clean, default_job, fixed_terrain, validated_device};

const SIZE: u32 = 96;
const ROUNDINGS: [Rounding; 3] = [Rounding::Trunc, Rounding::Nearest, Rounding::Stochastic];

/// The variant that runs `job`, as the run path picks it: for the paper's kernel, the
/// stepped module where the physics is corrected.
fn for_job(variant: KernelVariant, job: &DropletJob) -> KernelVariant {
    let picked = KernelVariant {
        shader: variant.shader.for_job(job),
        ..variant
    };
    if variant.shader == DropletShader::Paper {
        let name = picked.module_name();
        let stepped = job.params.physics == Physics::Corrected;
        assert_eq!(name.starts_with("droplet_stepped"), stepped, "{name}");
    }
    picked
}

#[test]
fn the_paper_kernel_picks_the_stepped_module_for_the_corrected_physics() {
    for (atomics, suffix) in [
        (AtomicMode::Int, ""),
        (AtomicMode::Racy, "_racy"),
        (AtomicMode::Deterministic, "_deterministic"),
    ] {
        let settings = |physics| DropletSettings {
            physics,
            atomics,
            ..DropletSettings::DEFAULT
        };
        let paper = settings(Physics::Paper).kernel_variant();
        let corrected = settings(Physics::Corrected).kernel_variant();
        assert_eq!(paper.shader, DropletShader::Paper);
        assert_eq!(corrected.shader, DropletShader::Stepped);
        let (paper, corrected) = (paper.module_name(), corrected.module_name());
        assert_eq!(paper, format!("droplet{suffix}"));
        assert_eq!(corrected, format!("droplet_stepped{suffix}"));
        // droplet.comp ignores PHYSICS_SIGN: it must refuse a corrected job.
        let job = settings(Physics::Corrected).job(1);
        let kernel = settings(Physics::Paper).kernel_variant();
        assert!(!kernel.runs(&job), "{paper} runs the corrected physics");
    }
}

fn job_with(droplets: u32, seed: u32, physics: Physics, rounding: Rounding) -> DropletJob {
    let mut job = default_job(droplets, seed);
    job.params = KernelParams {
        physics,
        rounding,
        ..job.params
    };
    job
}

#[test]
fn every_kernel_follows_the_cpu_reference_for_lone_droplets_in_both_physics_and_every_rounding() {
    let ctx = validated_device();
    let initial = fixed_terrain(SIZE, 12);
    let map = FixedHeightfield::new(SIZE, SIZE, &initial);
    let paper = KernelVariant::paper(AtomicMode::Int, SpawnMode::Global);
    let kernels = [
        (paper, Passes::default()),
        (
            KernelVariant {
                atomics: AtomicMode::Racy,
                ..paper
            },
            Passes::default(),
        ),
        (
            KernelVariant {
                atomics: AtomicMode::Deterministic,
                ..paper
            },
            Passes::default(),
        ),
        (
            KernelVariant {
                shader: DropletShader::Fast,
                ..paper
            },
            Passes::default(),
        ),
        (
            KernelVariant {
                shader: DropletShader::Passes,
                ..paper
            },
            Passes {
                count: 3,
                stagger: false,
            },
        ),
    ];
    let mut cpu_results = HashMap::new();
    for physics in [Physics::Paper, Physics::Corrected] {
        for rounding in ROUNDINGS {
            for seed in 1..=5 {
                let job = job_with(1, seed, physics, rounding);
                let mut expected = initial.clone();
                let cpu = erode_sequential(&mut expected, SIZE as usize, SIZE as usize, &job);
                cpu_results.insert((physics, rounding, seed), expected.clone());
                for (variant, passes) in kernels {
                    let job = DropletJob { passes, ..job };
                    let variant = for_job(variant, &job);
                    let kernel = DropletKernel::for_params(&ctx, 64, &job.params, variant).unwrap();
                    let gpu = kernel.run_counted(&map, &job, 1).unwrap();
                    let name = format!(
                        "{} {physics:?} {rounding:?} seed {seed}",
                        variant.module_name()
                    );
                    assert_eq!(gpu.work.unwrap().steps, cpu.steps, "{name}: steps");
                    let worst = common::largest_difference(&gpu.cells, &expected);
                    assert!(worst <= 1, "{name}: a cell differs by {worst}");
                }
            }
        }
    }
    // The switches change what happens.
    let heights = |physics, rounding| -> Vec<&Vec<i32>> {
        (1..=5)
            .map(|seed| &cpu_results[&(physics, rounding, seed)])
            .collect()
    };
    let paper = heights(Physics::Paper, Rounding::Trunc);
    assert_ne!(paper, heights(Physics::Corrected, Rounding::Trunc));
    assert_ne!(paper, heights(Physics::Paper, Rounding::Stochastic));
    assert_validation_clean(&ctx);
}

#[test]
fn the_mass_balance_closes_and_stochastic_rounding_keeps_what_truncation_drops() {
    let ctx = validated_device();
    let initial = fixed_terrain(128, 5);
    let map = FixedHeightfield::new(128, 128, &initial);
    let paper = KernelVariant::paper(AtomicMode::Int, SpawnMode::Global);
    for physics in [Physics::Paper, Physics::Corrected] {
        let mut truncated = Vec::new();
        for rounding in [Rounding::Trunc, Rounding::Stochastic] {
            let job = job_with(20_000, 3, physics, rounding);
            let variant = for_job(paper, &job);
            let kernel = DropletKernel::for_params(&ctx, 64, &job.params, variant).unwrap();
            let run = kernel.run_counted(&map, &job, 4096).unwrap();
            let mass = run.contention.unwrap();
            let name = format!("{} {physics:?} {rounding:?}", variant.module_name());
            // The terrain: initial + deposited - eroded == final, to the fixed-point unit.
            let received: i64 = run
                .cells
                .iter()
                .zip(&initial)
                .map(|(&a, &b)| i64::from(a) - i64::from(b))
                .sum();
            let net_fixed = ((mass.mass_deposited - mass.mass_eroded) * 1000.0).round() as i64;
            assert_eq!(
                received, net_fixed,
                "{name}: terrain balance in fixed units"
            );
            assert!(mass.balance_terrain.abs() < 1e-6, "{name}: {mass:?}");
            // The sediment: eroded - deposited == at death + off the edge + truncated,
            // up to the float32 sums of each droplet.
            assert!(
                mass.mass_eroded > 0.0 && mass.mass_at_death > 0.0,
                "{name}: {mass:?}"
            );
            assert!(
                mass.balance_sediment.abs() <= 1e-4 * mass.mass_eroded,
                "{name}: sediment balance off by {} of {}",
                mass.balance_sediment,
                mass.mass_eroded
            );
            truncated.push((mass.mass_truncated, run.work.unwrap().atomics));
        }
        // Truncation toward zero drops a share of every change. Stochastic rounding's
        // errors have mean zero and a spread of at most half a unit per add, so their
        // sum stays within 4 standard deviations of zero.
        let (trunc, (stochastic, adds)) = (truncated[0].0, truncated[1]);
        let bound = 4.0 * 0.5 * (adds as f64).sqrt() / 1000.0;
        assert!(
            stochastic.abs() < bound && stochastic.abs() < trunc.abs(),
            "{physics:?}: truncated {trunc} (trunc) against {stochastic} (stochastic, bound {bound})"
        );
    }
    assert_validation_clean(&ctx);
}

/// A lone droplet on a plane that rises `DROP` height units a cell along x, with erosion
/// off so that the plane stays a plane: it runs straight down the slope one cell a step,
/// each step drops it exactly `DROP`, and so after n steps its speed is
/// sqrt(1 + n g DROP) in the corrected physics (it gains speed going down) and
/// sqrt(max(0, 1 - n g DROP)) in the paper's (it loses it). Analytic, in f64, against
/// the CPU reference, which the tests above hold every kernel to.
#[test]
fn a_lone_droplet_on_an_inclined_plane_follows_each_physics_speed_update() {
    const DROP: f64 = 0.01;
    const G: f64 = 9.81;
    let scale = f64::from(KernelParams::default().fixed_point_scale);
    let plane: Vec<i32> = (0..SIZE * SIZE)
        .map(|i| (f64::from(i % SIZE) * DROP * scale).round() as i32)
        .collect();
    // A seed whose droplet starts far up the slope, so that it lives its whole life.
    let seed = (1..)
        .find(|&seed| vkerode::erosion::droplets::droplet_start(0, seed, SIZE, SIZE).0 > 60.0)
        .unwrap();
    for (physics, expected) in [
        (
            Physics::Corrected,
            (|n: f64| (1.0 + n * G * DROP).sqrt()) as fn(f64) -> f64,
        ),
        (Physics::Paper, |n: f64| {
            (1.0 - n * G * DROP).max(0.0).sqrt()
        }),
    ] {
        let mut job = job_with(1, seed, physics, Rounding::Nearest);
        job.params.erosion = 0.0;
        job.params.deposition = 0.0;
        let speeds = lone_droplet_speeds(&plane, SIZE as usize, SIZE as usize, &job, 0);
        assert_eq!(
            speeds.len(),
            job.params.lifetime as usize,
            "{physics:?}: {speeds:?}"
        );
        for (n, &speed) in speeds.iter().enumerate() {
            let want = expected(n as f64 + 1.0);
            assert!(
                (f64::from(speed) - want).abs() < 1e-4 * want.max(1.0),
                "{physics:?}, step {}: speed {speed}, the update gives {want}",
                n + 1
            );
        }
    }
}
