//! A droplet run's own speed of light: a recording build writes the cells every step of
//! every droplet loaded and added to (glsl/include/droplet_bindings.glsl's
//! `AddressRecord`); glsl/droplet_replay.comp then makes those loads and atomics alone,
//! in the run's dispatches, with none of the erosion arithmetic and none of the
//! dependence of one step's addresses on the last step's heights. The replays time the
//! parts of a run: all its traffic, its atomics alone, its loads alone, and its atomics
//! with each step's addresses shuffled between the droplets that took that step in the
//! same dispatch and pass, which keeps the footprint and the multiset of addresses but
//! breaks the collisions of droplets that run side by side.

use super::batches::Batch;
use super::kernel::{
    DropletKernel, ReplayPushConstants, RESERVED_SHARED_WORDS_ID, WORKGROUP_SIZE_ID,
};
use super::params::DropletJob;
use super::record::StepAddresses;
use super::runner::{DropletRunner, ReplayRun};
use crate::erosion::{ErosionError, Replay, ReplayTraffic};
use crate::gpu::{
    shaders, Buffer, BufferKind, ComputePipeline, PipelineDesc, SpecConstant, SpecValue,
};
use crate::hash::pcg_hash;

/// The replay pipelines at one workgroup size.
struct ReplayKernel {
    in_order: ComputePipeline,
    atomics: ComputePipeline,
    loads: ComputePipeline,
}

impl ReplayKernel {
    fn new(kernel: &DropletKernel) -> Result<Self, ErosionError> {
        let reserved_words = (kernel.variant().reserved_shared_bytes / 4).max(1);
        let spec = [
            SpecConstant {
                id: WORKGROUP_SIZE_ID,
                value: SpecValue::U32(kernel.workgroup()),
            },
            SpecConstant {
                id: RESERVED_SHARED_WORDS_ID,
                value: SpecValue::U32(reserved_words),
            },
        ];
        let push = std::mem::size_of::<ReplayPushConstants>() as u32;
        let build = |module| {
            ComputePipeline::new(
                kernel.context(),
                &PipelineDesc::storage(module, &spec, 3, push),
            )
        };
        Ok(Self {
            in_order: build(shaders::DROPLET_REPLAY)?,
            atomics: build(shaders::DROPLET_REPLAY_ATOMICS)?,
            loads: build(shaders::DROPLET_REPLAY_LOADS)?,
        })
    }
}

/// A recorded droplet run, ready to replay.
pub struct DropletReplay<'r> {
    runner: &'r mut DropletRunner<'static>,
    job: DropletJob,
    batch: u32,
    kernel: ReplayKernel,
    in_order: Buffer,
    shuffled: Buffer,
    sink: Buffer,
    /// The record, as read back.
    recorded: Vec<StepAddresses>,
}

impl<'r> DropletReplay<'r> {
    /// Records `job`'s addresses with the counted build and uploads the record as run
    /// and shuffled.
    pub fn record(
        runner: &'r mut DropletRunner<'static>,
        job: DropletJob,
        batch: u32,
    ) -> Result<Self, ErosionError> {
        if let Some(reason) = runner.kernel().variant().no_replay() {
            return Err(reason.into());
        }
        let run = runner.execute(&job, batch, super::runner::RunMode::RECORDED)?;
        runner.release_record()?;
        let mut record = run
            .addresses
            .ok_or(ErosionError::NoRecord)?;
        record.truncate(job.droplets as usize * job.params.lifetime as usize);
        let start_passes = if job.passes.stagger {
            job.passes.count
        } else {
            1
        };
        let shuffled = shuffle_steps(&record, job.params.lifetime, &run.batches, start_passes);
        let kernel = ReplayKernel::new(runner.kernel())?;
        let in_order = runner.storage_from("addressRecord", &record)?;
        let shuffled = runner.storage_from("addressRecord shuffled", &shuffled)?;
        let sink = Buffer::new(
            runner.kernel().context(),
            "replay sink",
            16,
            BufferKind::Storage,
        )?;
        Ok(Self {
            runner,
            job,
            batch,
            kernel,
            in_order,
            shuffled,
            sink,
            recorded: record,
        })
    }

    /// The record as read back, laid out as [`super::record_slot`] says.
    pub fn recorded(&self) -> &[StepAddresses] {
        &self.recorded
    }
}

impl DropletReplay<'_> {
    fn replay(
        &mut self,
        traffic: ReplayTraffic,
        counts_adds: bool,
    ) -> Result<ReplayRun, ErosionError> {
        let (pipeline, record) = match traffic {
            ReplayTraffic::InOrder => (&self.kernel.in_order, &self.in_order),
            ReplayTraffic::Atomics => (&self.kernel.atomics, &self.in_order),
            ReplayTraffic::Loads => (&self.kernel.loads, &self.in_order),
            ReplayTraffic::ShuffledAtomics => (&self.kernel.atomics, &self.shuffled),
        };
        self.runner.replay(
            &self.job,
            self.batch,
            pipeline,
            record,
            &self.sink,
            counts_adds,
        )
    }

    /// The atomics one replay of `traffic` makes at each cell.
    pub fn adds_per_cell(&mut self, traffic: ReplayTraffic) -> Result<Vec<i32>, ErosionError> {
        let run = self.replay(traffic, true)?;
        Ok(run.adds_per_cell.unwrap_or_default())
    }
}

impl Replay for DropletReplay<'_> {
    fn run(
        &mut self,
        traffic: ReplayTraffic,
    ) -> Result<(Option<std::time::Duration>, std::time::Duration), ErosionError> {
        let run = self.replay(traffic, false)?;
        Ok((run.gpu_time, run.wall_time))
    }
}

/// The record with each step's entries permuted among the droplets that took that step
/// in the same dispatch and start pass (droplet id mod `start_passes`, so that each
/// entry stays in the pass that made it); every droplet keeps its number of steps.
/// Reproducible: the permutation is drawn from the PCG hash of the dispatch and step.
pub fn shuffle_steps(
    record: &[StepAddresses],
    lifetime: u32,
    batches: &[Batch],
    start_passes: u32,
) -> Vec<StepAddresses> {
    let mut shuffled = record.to_vec();
    let mut takers = Vec::new();
    for (b, batch) in batches.iter().enumerate() {
        let size = batch.size as usize;
        for step in 0..lifetime {
            let first = batch.base_id as usize * lifetime as usize + step as usize * size;
            let entries = &mut shuffled[first..first + size];
            for start in 0..start_passes {
                takers.clear();
                takers.extend((0..size).filter(|&i| {
                    (batch.base_id + i as u32) % start_passes == start && entries[i].taken()
                }));
                // Fisher-Yates on the takers' entries.
                let mut state = pcg_hash((b as u32) ^ pcg_hash(step ^ (start << 16)));
                for i in (1..takers.len()).rev() {
                    state = pcg_hash(state);
                    let j = state as usize % (i + 1);
                    entries.swap(takers[i], takers[j]);
                }
            }
        }
    }
    shuffled
}

#[cfg(test)]
mod tests {
    use super::super::record::record_slot;
    use super::*;

    fn step(cell: u32) -> StepAddresses {
        StepAddresses {
            samples: [cell, cell + 1],
            adds: cell,
            made: 0xF3,
        }
    }

    fn batch(base_id: u32, size: u32) -> Batch {
        Batch {
            base_id,
            size,
            groups: 1,
            phase: 0,
            group_base: 0,
        }
    }

    /// A record of `batches` whose droplet `d`'s step `s` is `entry(d, s)`.
    fn layout(
        batches: &[Batch],
        lifetime: u32,
        entry: impl Fn(u32, u32) -> StepAddresses,
    ) -> Vec<StepAddresses> {
        let droplets: u32 = batches.iter().map(|b| b.size).sum();
        let mut record = vec![StepAddresses::default(); (droplets * lifetime) as usize];
        for d in 0..droplets {
            for s in 0..lifetime {
                record[record_slot(batches, lifetime, d, s).unwrap()] = entry(d, s);
            }
        }
        record
    }

    #[test]
    fn a_shuffle_keeps_each_steps_addresses_and_each_droplets_steps() {
        let lifetime = 4;
        let batches = [batch(0, 32), batch(32, 32)];
        // 64 droplets of 1 to 4 steps, in two dispatches.
        let record = layout(&batches, lifetime, |d, s| {
            if s <= d % lifetime {
                step(d * 100 + s)
            } else {
                StepAddresses::default()
            }
        });
        let shuffled = shuffle_steps(&record, lifetime, &batches, 1);
        assert_ne!(shuffled, record, "a shuffle moves entries");
        let slot = |d, s| record_slot(&batches, lifetime, d, s).unwrap();
        for d in 0..64 {
            for s in 0..lifetime {
                let taken = |r: &[StepAddresses]| r[slot(d, s)].taken();
                assert_eq!(taken(&shuffled), taken(&record), "droplet {d} step {s}");
            }
        }
        for b in &batches {
            for s in 0..lifetime {
                let entries = |r: &[StepAddresses]| {
                    let mut v: Vec<u32> = (b.base_id..b.base_id + b.size)
                        .map(|d| r[slot(d, s)].adds)
                        .collect();
                    v.sort_unstable();
                    v
                };
                assert_eq!(
                    entries(&shuffled),
                    entries(&record),
                    "dispatch {} step {s}",
                    b.base_id
                );
            }
        }
    }

    #[test]
    fn staggered_entries_stay_with_droplets_of_their_start_pass_and_step() {
        let lifetime = 2;
        let batches = [batch(0, 16)];
        let record = layout(&batches, lifetime, |d, s| step(d * 10 + s));
        let shuffled = shuffle_steps(&record, lifetime, &batches, 4);
        assert_ne!(shuffled, record);
        for d in 0..16 {
            for s in 0..lifetime {
                let entry = shuffled[record_slot(&batches, lifetime, d, s).unwrap()];
                let (from, from_step) = (entry.adds / 10, entry.adds % 10);
                assert_eq!((from % 4, from_step), (d % 4, s), "droplet {d} step {s}");
            }
        }
    }
}
