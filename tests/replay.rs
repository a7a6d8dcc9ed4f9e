//! The recording build and the replays of the time split (src/erosion/droplets/replay.rs):
//! what a run records is the cells its droplets touched, as the CPU reference walks them,
//! and a replay makes its atomics at exactly those cells.

mod common;

use std::collections::BTreeMap;

use common::{assert_validation_clean, default_job, fixed_terrain, paper_kernel, validated_device};
use vkerode::erosion::droplets::cpu::lone_droplet_addresses;
use vkerode::erosion::droplets::{
    AtomicMode, DropletKernel, DropletReplay, DropletShader, FixedHeightfield, KernelVariant,
    RunMode, StepAddresses,
};
use vkerode::erosion::ReplayTraffic;

const SIZE: u32 = 64;

/// The atomics at each cell a record asks for.
fn adds_per_cell(record: &[StepAddresses]) -> Vec<i32> {
    let mut adds = vec![0; (SIZE * SIZE) as usize];
    for step in record {
        for cell in step.cells(SIZE).1 {
            adds[cell as usize] += 1;
        }
    }
    adds
}

#[test]
fn a_lone_droplets_record_is_the_cpu_references_walk_and_its_replay_adds_there() {
    let ctx = validated_device();
    let cells = fixed_terrain(SIZE, 3);
    let map = FixedHeightfield::new(SIZE, SIZE, &cells);
    for seed in 1..=4 {
        let job = default_job(1, seed);
        let lifetime = job.params.lifetime as usize;
        let mut runner = paper_kernel(&ctx, 64, AtomicMode::Int)
            .into_runner(&map)
            .unwrap();
        let run = runner.execute(&job, 1, RunMode::RECORDED).unwrap();
        let record = run.addresses.expect("a recording run keeps its addresses");
        let walked = lone_droplet_addresses(&cells, SIZE as usize, SIZE as usize, &job, 0);
        assert!(walked.len() > 3, "seed {seed}: the droplet walks");
        let taken: Vec<StepAddresses> = record[..lifetime]
            .iter()
            .copied()
            .take_while(StepAddresses::taken)
            .collect();
        assert_eq!(
            taken, walked,
            "seed {seed}: the kernel's record is the CPU's walk"
        );
        assert!(record[taken.len()..].iter().all(|s| !s.taken()));
        let steps = walked.iter().filter(|s| s.made & 0xF0 != 0).count() as u64;
        assert_eq!(run.work.unwrap().steps, steps, "seed {seed}: counted steps");

        let expected = adds_per_cell(&walked);
        let mut replay = DropletReplay::record(&mut runner, job, 1).unwrap();
        for traffic in [
            ReplayTraffic::InOrder,
            ReplayTraffic::Atomics,
            ReplayTraffic::ShuffledAtomics,
        ] {
            // One droplet takes each step alone: the shuffle moves nothing.
            assert_eq!(
                replay.adds_per_cell(traffic).unwrap(),
                expected,
                "{traffic:?}"
            );
        }
        let loads = replay.adds_per_cell(ReplayTraffic::Loads).unwrap();
        assert!(
            loads.iter().all(|&a| a == 0),
            "the loads replay adds nothing"
        );
    }
    assert_validation_clean(&ctx);
}

#[test]
fn a_records_adds_are_the_instrumented_runs_and_the_replays_make_them_shuffled_or_not() {
    let ctx = validated_device();
    let cells = fixed_terrain(SIZE, 5);
    let map = FixedHeightfield::new(SIZE, SIZE, &cells);
    let job = default_job(512, 9);
    for shader in [DropletShader::Paper, DropletShader::Fast] {
        let variant = KernelVariant {
            shader,
            ..KernelVariant::paper(AtomicMode::Int, Default::default())
        };
        let mut runner = DropletKernel::new(&ctx, 32, common::SCALE, variant)
            .unwrap()
            .into_runner(&map)
            .unwrap();
        let run = runner.execute(&job, 128, RunMode::RECORDED).unwrap();
        let record = run.addresses.clone().unwrap();
        let record = &record[..(job.droplets * job.params.lifetime) as usize];
        let expected = adds_per_cell(record);
        // The fast kernel skips adds of zero; the record says which it made.
        assert_eq!(
            expected.iter().map(|&a| a as u64).sum::<u64>(),
            run.work.unwrap().atomics - skipped(shader, &run),
            "{shader:?}: the record's adds are the counted run's atomics"
        );
        let mut replay = DropletReplay::record(&mut runner, job, 128).unwrap();
        // Its own recording run, which raced as it liked.
        let expected = adds_per_cell(replay.recorded());
        for traffic in [ReplayTraffic::InOrder, ReplayTraffic::ShuffledAtomics] {
            let made = replay.adds_per_cell(traffic).unwrap();
            let total = |v: &[i32]| v.iter().map(|&a| i64::from(a)).sum::<i64>();
            assert_eq!(total(&made), total(&expected), "{shader:?} {traffic:?}");
            if traffic == ReplayTraffic::InOrder {
                assert_eq!(
                    made, expected,
                    "{shader:?}: in order, at the recorded cells"
                );
            }
        }
    }
    assert_validation_clean(&ctx);
}

/// Adds the fast kernel counted but skipped: those of zero.
fn skipped(shader: DropletShader, run: &vkerode::erosion::droplets::GpuRun) -> u64 {
    let atomics = run.work.unwrap().atomics as f64;
    match (shader, &run.contention) {
        (DropletShader::Fast, Some(c)) => (c.zero_add_share * atomics).round() as u64,
        _ => 0,
    }
}

/// The rows of a small sweep on lavapipe with the time split on: experiment `name`,
/// its `[fixed]` and `[axes]` in `body`, two repetitions a point.
fn replay_sweep(name: &str, body: &str, extra: &[&str]) -> Vec<BTreeMap<String, String>> {
    let root = common::scratch("replay", name);
    let config = root.join(format!("{name}.toml"));
    let measure = "[measure]\nwarmup = 1\nmin_reps = 2\nmax_reps = 2\nreplay = true\n";
    let text = format!("name = \"{name}\"\ndescription = \"on lavapipe\"\n{body}{measure}");
    std::fs::write(&config, text).unwrap();
    common::sweep_into(&config, &root, extra);
    common::csv_rows(&common::results_dir(&root, name).join("points.csv"))
}

#[test]
fn a_sweep_with_replay_splits_each_points_time_and_leaves_gpm_empty_without_nvidia() {
    let body = "[fixed]\nsize = 64\ndroplets = 500\n[axes]\nshared_kib = [0, \"auto\"]\n";
    let rows = replay_sweep("split", body, &[]);
    assert_eq!(rows.len(), 2);
    let number = |row: &BTreeMap<String, String>, column: &str| -> f64 {
        row[column]
            .parse()
            .unwrap_or_else(|_| panic!("{column}: {:?}", row[column]))
    };
    for row in &rows {
        let run = number(row, "gpu_ms_median");
        let replay = number(row, "replay_ms");
        assert!(replay > 0.0);
        let parts = replay + number(row, "arithmetic_and_latency_ms");
        assert!((parts - run).abs() <= 1e-9 * run, "{parts} vs {run}");
        let surcharge =
            number(row, "replay_atomics_ms") - number(row, "replay_shuffled_atomics_ms");
        assert!((surcharge - number(row, "contention_surcharge_ms")).abs() < 1e-9);
        for column in [
            "gpm_sm_occupancy_percent",
            "gpm_dram_bandwidth_percent",
            "gpm_window_ms",
        ] {
            assert_eq!(
                row[column], "",
                "{column}: no GPM on lavapipe, nothing invented"
            );
        }
    }
    assert_eq!(rows[0]["shared_kib_chosen"], "", "set, not chosen");
    let chosen: u32 = rows[1]["shared_kib_chosen"]
        .parse()
        .expect("auto records its choice");
    assert!(vkerode::erosion::droplets::OCCUPANCY_CANDIDATES_KIB.contains(&chosen));
}

#[test]
fn builds_without_a_replay_leave_the_split_empty_and_judge_off_leaves_the_cpus_share_empty() {
    let body = r#"[fixed]
size = 64
droplets = 500
spawn = "tiled"
tile = 16
phases = 4
cache_margin = 3
[axes]
variant = ["paper", "tile-cache"]
"#;
    let judged_columns = [
        "unstable",
        "net_change_vs_sequential",
        "hypsometric_integral_before",
        "hypsometric_integral_after",
    ];
    for judge in [true, false] {
        let set = format!("measure.judge={judge}");
        let rows = replay_sweep(&format!("judged-{judge}"), body, &["--set", &set]);
        assert_eq!(rows.len(), 2, "both points ran, neither failed");
        let (paper, cached) = (&rows[0], &rows[1]);
        assert_eq!(cached["variant"], "tile-cache");
        assert!(paper["replay_ms"].parse::<f64>().unwrap() > 0.0);
        for column in [
            "replay_ms",
            "contention_surcharge_ms",
            "arithmetic_and_latency_ms",
        ] {
            assert_eq!(
                cached[column], "",
                "{column}: the tile-cache kernel has no replay"
            );
        }
        for row in &rows {
            assert!(row["gpu_ms_median"].parse::<f64>().unwrap() > 0.0);
            for column in judged_columns {
                assert_eq!(
                    row[column].is_empty(),
                    !judge,
                    "{column} with judge {judge}: {:?}",
                    row[column]
                );
            }
        }
    }
}
