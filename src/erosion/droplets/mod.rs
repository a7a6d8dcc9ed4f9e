//! The paper's strategy: one thread per droplet, atomicAdd on an int32 fixed-point
//! heightfield. `params.rs` and `settings.rs` hold its parameters and rules,
//! `variant.rs` which compiled kernel a run needs, `kernel.rs` and `runner.rs` drive
//! glsl/droplet*.comp (spawning in `spawn.rs`, dispatches in `batches.rs`, the counted
//! build's figures in `contention.rs`), `cpu.rs` is its reference and `stability.rs`
//! judges a run against it; this file is its [`Strategy`].

mod batches;
mod cell_index;
mod contention;
pub mod cpu;
mod error;
mod kernel;
mod occupancy;
mod params;
mod record;
pub mod replay;
mod runner;
mod settings;
mod spawn;
pub mod stability;
mod variant;

pub use batches::{default_batch, plan_batches, plan_phased, Batch, DEFAULT_CELLS_PER_DROPLET};
pub use cell_index::{computed_cells, ComputedCell};
pub use contention::{
    Contention, MASS_INTENDED, MASS_LOST, MASS_TRUNCATED, SUBGROUP_CONFLICTS_PER_1000,
};
pub use error::ParamError;
pub use kernel::{DropletKernel, FixedHeightfield};
pub use occupancy::OccupancyChoice;
pub use params::{
    AtomicMode, DropletJob, KernelParams, Model, Passes, Physics, Rounding, WorkCount,
    ATOMICS_PER_STEP, SPAWN_WATER,
};
pub use record::{record_slot, StepAddresses};
pub use replay::DropletReplay;
pub use runner::{submission_starts, DropletRunner, GpuRun, RunMode};
pub use settings::{key, DropletSettings, SharedKib, SharedKibError, OCCUPANCY_CANDIDATES_KIB};
pub use spawn::{droplet_start, Spawn, SpawnMode, TileOrder};
pub use variant::{
    CacheWindow, CacheWindowError, DropletShader, KernelVariant, Lever, NoBuild, NoReplay,
    SpirvBuild,
};

use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;

use crate::erosion::{
    report_of, Algorithm, Ceiling, CountedRun, CpuEngine, CpuRun, ErosionError, Figures, Prepared,
    Replay, RunSettings, SettingError, Strategy, TimedRun, WorkUnit,
};
use crate::gpu::{CompilerStatistic, Context, DeviceInfo};
use crate::table::{values_of, Column, Section};
use crate::terrain::units::HeightUnit;
use crate::terrain::{Arithmetic, Cells, MapInfo, Values};
use stability::{
    cached_reference, concurrency_error, judge, ChangeSpread, ConcurrencyError, Judgement,
};

/// The droplet strategy.
pub struct Droplets;

impl Strategy for Droplets {
    fn algorithm(&self) -> Algorithm {
        Algorithm::Droplets
    }

    fn smoke_args(&self) -> &'static [&'static str] {
        &["--algorithm", "droplets", "--droplets", "300"]
    }

    fn unit(&self) -> WorkUnit {
        WorkUnit::DropletSteps
    }

    fn settings_units(&self) -> &'static [(&'static str, &'static str)] {
        DropletSettings::UNITS
    }

    fn gpu_only_keys(&self) -> &'static [&'static str] {
        DropletSettings::GPU_ONLY
    }

    fn dose_key(&self) -> &'static str {
        "droplets"
    }

    fn dose(&self, settings: &RunSettings) -> u64 {
        u64::from(settings.droplets.droplets)
    }

    fn with_dose(&self, settings: &RunSettings, dose: u64) -> RunSettings {
        let mut s = settings.clone();
        s.droplets.droplets = u32::try_from(dose).unwrap_or(u32::MAX);
        s
    }

    fn work_bound(&self, settings: &RunSettings, _map: MapInfo) -> u64 {
        let d = &settings.droplets;
        u64::from(d.droplets).saturating_mul(u64::from(d.lifetime))
    }

    fn water_per_dose(&self, _settings: &RunSettings, map: MapInfo) -> Option<f64> {
        // A droplet's water counts as a volume of one height unit over one cell, as the
        // sediment it carries does (its capacity is in height units over its cell).
        Some(f64::from(SPAWN_WATER) / map.cells() as f64)
    }

    fn water_lifetime(&self, settings: &RunSettings) -> Option<f64> {
        Some(f64::from(settings.droplets.lifetime))
    }

    fn check(
        &self,
        settings: &RunSettings,
        map: Option<MapInfo>,
        device: Option<&DeviceInfo>,
    ) -> Result<(), SettingError> {
        let d = &settings.droplets;
        d.check_job(device)?;
        match map {
            Some(map) => d.check_map(map, device),
            None => Ok(()),
        }
    }

    fn missing_feature(
        &self,
        settings: &RunSettings,
        map: MapInfo,
        device: &DeviceInfo,
    ) -> Option<String> {
        settings.droplets.missing_feature(map, device)
    }

    fn arithmetic(&self, settings: &RunSettings) -> Arithmetic {
        Arithmetic::Fixed {
            scale: settings.droplets.scale,
        }
    }

    fn prepare<'a>(
        &self,
        ctx: &Arc<Context>,
        settings: &RunSettings,
        initial: &'a Cells,
    ) -> Result<Box<dyn Prepared + 'a>, ErosionError> {
        let d = &settings.droplets;
        let job = d.job(settings.noise.seed);
        let variant = d.kernel_variant().for_map(initial.len() as u64, ctx.info());
        let (cells, _) = fixed_cells(initial)?;
        let map = FixedHeightfield::new(initial.width() as u32, initial.height() as u32, cells);
        let batch = d.droplets_per_dispatch(initial.len() as u64);
        let (kernel, occupancy) = match d.shared_kib {
            SharedKib::Kib(_) => (
                DropletKernel::for_params(ctx, d.workgroup, &job.params, variant)?,
                None,
            ),
            SharedKib::Auto => {
                let (kernel, choice) =
                    occupancy::fastest(ctx, d.workgroup, &job, variant, &map, batch)?;
                (kernel, Some(choice))
            }
        };
        Ok(Box::new(DropletsPrepared {
            runner: kernel.into_runner(&map)?,
            batch,
            figures: DropletFigures {
                occupancy,
                ..DropletFigures::new(settings, initial.len() as u64)
            },
            job,
            dispatches: 0,
            initial,
        }))
    }

    fn run_on_cpu(
        &self,
        engine: CpuEngine,
        settings: &RunSettings,
        initial: &Cells,
    ) -> Result<CpuRun, ErosionError> {
        let job = settings.droplets.job(settings.noise.seed);
        let (cells, scale) = fixed_cells(initial)?;
        let mut cells = cells.to_vec();
        let (w, h) = (initial.width(), initial.height());
        let started = Instant::now();
        let (work, threads) = match engine {
            CpuEngine::Sequential => (cpu::erode_sequential(&mut cells, w, h, &job), 1),
            CpuEngine::Parallel => (
                cpu::erode_parallel(&mut cells, w, h, &job),
                rayon::current_num_threads(),
            ),
        };
        let wall_time = started.elapsed();
        let figures = DropletFigures {
            work,
            job: Some(job),
            on_gpu: false,
            in_flight: threads.min(job.droplets as usize) as u32,
            ..DropletFigures::new(settings, initial.len() as u64)
        };
        Ok(CpuRun {
            cells: Cells::new(w, h, Values::Fixed { cells, scale })?,
            work: work.steps,
            wall_time,
            threads,
            figures: Box::new(figures),
        })
    }

    fn ceiling(&self, _settings: &RunSettings, map: MapInfo) -> Ceiling {
        Ceiling::Walk {
            side: (map.cells() as f64).sqrt().round() as u32,
        }
    }

    fn plan(&self, settings: &RunSettings, map: MapInfo, device: &DeviceInfo) -> String {
        let d = &settings.droplets;
        let limit = device.max_storage_buffer_range;
        let heights = map.cells() * 4;
        let per_droplet = u64::from(d.droplets) * 4;
        let variant = d.kernel_variant().for_map(map.cells(), device);
        let wide = variant.lever == Lever::Wide;
        let fits = if wide && per_droplet <= limit {
            "fits (the heights by address)"
        } else if heights <= limit && per_droplet <= limit {
            "fits"
        } else {
            "PAST THE LIMIT"
        };
        format!(
            "{} droplets, {} per dispatch, kernel {}; heights {heights} bytes, per-droplet {per_droplet} bytes: {fits} (maxStorageBufferRange {limit} bytes)",
            d.droplets,
            d.droplets_per_dispatch(map.cells()),
            variant.module_name(),
        )
    }

    fn settings_columns(&self) -> Vec<Column> {
        crate::erosion::keys::columns_of::<DropletSettings>(DropletSettings::UNITS)
    }

    fn settings_values(&self, settings: &RunSettings, map: MapInfo) -> Vec<String> {
        values_of(&settings.droplets.resolved(map.cells(), settings.noise.seed))
    }

    fn figures_columns(&self) -> Vec<Column> {
        [DropletColumns::columns(), Contention::columns()].concat()
    }

    fn report_fields(&self) -> &'static [(&'static str, &'static str, &'static str)] {
        REPORT_FIELDS
    }
}

fn fixed_cells(cells: &Cells) -> Result<(&[i32], f32), ErosionError> {
    cells.fixed().ok_or(ErosionError::Heights {
        kernels: "the droplet kernels",
        heights: "fixed-point",
    })
}

/// A droplet kernel with one map's buffers, and the job it runs.
struct DropletsPrepared<'a> {
    runner: DropletRunner<'static>,
    job: DropletJob,
    batch: u32,
    /// Of the last run.
    dispatches: usize,
    /// What every counted run's figures start from.
    figures: DropletFigures,
    initial: &'a Cells,
}

impl DropletsPrepared<'_> {
    fn cells(&self, run: &mut GpuRun) -> Result<Cells, ErosionError> {
        let scale = self.job.params.fixed_point_scale;
        let (w, h) = (self.initial.width(), self.initial.height());
        Ok(Cells::new(
            w,
            h,
            Values::Fixed {
                // Taken, not copied: a 65536^2 map is 16 GiB.
                cells: std::mem::take(&mut run.cells),
                scale,
            },
        )?)
    }
}

impl Prepared for DropletsPrepared<'_> {
    fn kernel(&self) -> String {
        self.runner.kernel().variant().module_name()
    }

    fn statistics(&self) -> &[CompilerStatistic] {
        self.runner.kernel().statistics()
    }

    fn dispatches(&self) -> usize {
        self.dispatches
    }

    fn run_timed(&mut self, read_back: bool) -> Result<TimedRun, ErosionError> {
        let mode = if read_back {
            RunMode::TIMED
        } else {
            RunMode::TIMED_ONLY
        };
        let mut run = self.runner.execute(&self.job, self.batch, mode)?;
        self.dispatches = run.dispatches;
        Ok(TimedRun {
            gpu_time: run.gpu_time,
            wall_time: run.wall_time,
            submissions: run.submissions,
            cells: if read_back {
                Some(self.cells(&mut run)?)
            } else {
                None
            },
        })
    }

    /// The instrumented build: it races as the timed run does but is not the same run,
    /// so its counts estimate the timed run's.
    fn record_replay(&mut self) -> Result<Option<Box<dyn Replay + '_>>, ErosionError> {
        if self.runner.kernel().variant().no_replay().is_some() {
            return Ok(None);
        }
        let replay = DropletReplay::record(&mut self.runner, self.job, self.batch)?;
        Ok(Some(Box::new(replay)))
    }

    fn run_counted(&mut self) -> Result<CountedRun, ErosionError> {
        let mut run = self
            .runner
            .execute(&self.job, self.batch, RunMode::COUNTED)?;
        self.dispatches = run.dispatches;
        let work = run.work.unwrap_or_default();
        let figures = DropletFigures {
            work,
            contention: run.contention.clone(),
            job: Some(self.job),
            in_flight: run.batches.iter().map(|b| b.size).max().unwrap_or(0),
            ..self.figures.clone()
        };
        Ok(CountedRun {
            cells: self.cells(&mut run)?,
            work: work.steps,
            figures: Box::new(figures),
        })
    }
}

/// What a droplet run says beyond the common figures (run.json's `job`, `workgroup`,
/// `batch`, `atomics`, `lever`, `work`, `contention`).
#[derive(Clone, Debug, Serialize)]
pub struct DropletFigures {
    /// The job that ran; absent on the CPU, where the settings say it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job: Option<DropletJob>,
    pub workgroup: u32,
    /// Droplets per dispatch at most.
    pub batch: u32,
    pub atomics: AtomicMode,
    pub lever: Lever,
    /// From the instrumented run on the GPU (its counts estimate the timed run's), or
    /// the reference's on the CPU.
    pub work: WorkCount,
    /// From the instrumented run (GPU only): hits per cell, subgroup conflicts, mass.
    pub contention: Option<Contention>,
    /// What `shared_kib = "auto"` chose, and its probe.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub occupancy: Option<OccupancyChoice>,
    /// A sweep's reruns against the CPU reference of the same job.
    #[serde(skip)]
    stability: Option<Judgement>,
    /// The same runs against the reference's heights.
    #[serde(skip)]
    concurrency: Option<ConcurrencyError>,
    #[serde(skip)]
    in_flight_per_cell: f64,
    /// Droplets that may run at once: the largest dispatch's on the GPU, the threads
    /// on the CPU.
    #[serde(skip)]
    in_flight: u32,
    /// Whether the GPU ran it (dispatches and workgroups mean nothing on the CPU).
    #[serde(skip)]
    on_gpu: bool,
}

impl DropletFigures {
    fn new(settings: &RunSettings, cells: u64) -> Self {
        let d = &settings.droplets;
        let batch = d.droplets_per_dispatch(cells);
        Self {
            job: None,
            workgroup: d.workgroup,
            batch,
            atomics: d.atomic_mode(),
            lever: d.lever,
            work: WorkCount::default(),
            contention: None,
            occupancy: None,
            stability: None,
            concurrency: None,
            in_flight_per_cell: f64::from(batch.min(d.droplets)) / cells.max(1) as f64,
            in_flight: batch.min(d.droplets),
            on_gpu: true,
        }
    }
}

/// A droplet point's own columns of points.csv, before its contention figures.
#[derive(Clone, Debug, Default, Serialize)]
struct DropletColumns {
    droplets_per_s: Option<f64>,
    atomic_adds: Option<u64>,
    atomics_per_s: Option<f64>,
    in_flight_per_cell: Option<f64>,
    change_max_ratio: Option<f64>,
    change_spread_ratio: Option<f64>,
    unstable: Option<bool>,
    droplets_in_flight: Option<u32>,
    concurrency_reference: Option<&'static str>,
    net_change_vs_sequential: Option<f64>,
    eroded_vs_sequential: Option<f64>,
    change_map_rmse_vs_sequential: Option<f64>,
    change_map_rel_rmse_vs_sequential: Option<f64>,
    shared_kib_chosen: Option<u32>,
}

/// A point's answer against its CPU reference, as points.csv names it: `report` and a
/// sweep's table mark the rows beyond their margin by it.
pub const NET_CHANGE_VS_REFERENCE: (&str, &str, &str) = (
    "net_change_vs_sequential",
    "ratio",
    "the net change (sum of after - before) of the point's two timed runs, their mean, over concurrency_reference's: the concurrency error of the kernel as timed (the counted build, another program, races otherwise and is left out); empty where the reference's is zero",
);

/// Whether a point ran unstable, as points.csv names it (readers judge by it).
pub const UNSTABLE: (&str, &str, &str) = (
    "unstable",
    "true/false",
    "a ratio above 4 (UNSTABLE_FACTOR), or a cell within 2^24 of the int32 limits",
);

impl Section for DropletColumns {
    const COLUMNS: &'static [(&'static str, &'static str, &'static str)] = &[
        ("droplets_per_s", "droplets/s", "droplets over the median GPU time"),
        ("atomic_adds", "count", "atomicAdds the instrumented run issued (4 per droplet-step)"),
        ("atomics_per_s", "atomic adds/s", "atomic adds over the median GPU time"),
        (
            "in_flight_per_cell",
            "droplets per cell",
            "droplets of one dispatch per map cell: how densely droplets race",
        ),
        (
            "change_max_ratio",
            "ratio",
            "the largest cell change of the point's runs (counted and two timed) over the CPU reference's of the same job",
        ),
        (
            "change_spread_ratio",
            "ratio",
            "the standard deviation of the cell changes of the point's runs over the CPU reference's",
        ),
        UNSTABLE,
        (
            "droplets_in_flight",
            "droplets",
            "droplets the configuration lets run at once: those of the largest dispatch (after the batch, the device's workgroup-count limit and checkerboard colours), a bound: how many of them the device holds resident is not known to Vulkan; 1 on the sequential CPU reference, its threads on the parallel one",
        ),
        (
            "concurrency_reference",
            "text",
            "the CPU reference of the same job (terrain, droplets, seed, parameters) the *_vs_sequential columns are against, whatever their name says: cpu-sequential (--engine cpu-sequential) up to 50M droplet-steps (SEQUENTIAL_STEPS), past them cpu-parallel (--engine cpu, every core: a handful of droplets in flight on a map that size; checked on the H200 at 4096^2, seed 1: its net change 0.28% from the sequential one's); the stability judge's reference, computed once per job and terrain in a sweep",
        ),
        NET_CHANGE_VS_REFERENCE,
        (
            "eroded_vs_sequential",
            "ratio",
            "the eroded volume (summed lowering of the cells that went down) of the point's two timed runs, their mean, over concurrency_reference's; empty where the reference eroded nothing",
        ),
        (
            "change_map_rmse_vs_sequential",
            "height units",
            "the root mean square over the cells of a run's change minus concurrency_reference's (equally of their after-maps), over the point's two timed runs",
        ),
        (
            "change_map_rel_rmse_vs_sequential",
            "ratio",
            "change_map_rmse_vs_sequential over the root mean square of the reference's change; empty where the reference changed nothing",
        ),
        (
            "shared_kib_chosen",
            "KiB per workgroup",
            "what shared_kib = auto chose: the fastest candidate of a probe of three interleaved timed runs each (run.json's occupancy has their times); empty where shared_kib was set",
        ),
    ];
}

impl Figures for DropletFigures {
    fn report(&self) -> serde_json::Map<String, serde_json::Value> {
        report_of(self)
    }

    fn values(&self, seconds: f64) -> Vec<String> {
        let per_s = |n: u64| n as f64 / seconds;
        let own = DropletColumns {
            droplets_per_s: Some(per_s(self.work.droplets)),
            atomic_adds: Some(self.work.atomics),
            atomics_per_s: Some(per_s(self.work.atomics)),
            in_flight_per_cell: Some(self.in_flight_per_cell),
            change_max_ratio: self.stability.map(|j| j.max_ratio),
            change_spread_ratio: self.stability.map(|j| j.spread_ratio),
            unstable: self.stability.map(|j| j.unstable),
            droplets_in_flight: Some(self.in_flight),
            concurrency_reference: self.concurrency.map(|c| c.reference.name()),
            net_change_vs_sequential: self.concurrency.and_then(|c| c.net_change_ratio),
            eroded_vs_sequential: self.concurrency.and_then(|c| c.eroded_ratio),
            change_map_rmse_vs_sequential: self.concurrency.map(|c| c.change_map_rmse),
            change_map_rel_rmse_vs_sequential: self
                .concurrency
                .and_then(|c| c.change_map_relative_rmse),
            shared_kib_chosen: self.occupancy.as_ref().map(|o| o.chosen_kib),
        };
        let contention = match &self.contention {
            Some(c) => values_of(c),
            None => vec![String::new(); Contention::COLUMNS.len()],
        };
        [values_of(&own), contention].concat()
    }

    fn rates(&self, seconds: f64) -> Vec<(&'static str, f64)> {
        let per_s = |n: u64| n as f64 / seconds.max(f64::MIN_POSITIVE);
        vec![
            ("droplets_per_s", per_s(self.work.droplets)),
            ("atomics_per_s", per_s(self.work.atomics)),
        ]
    }

    fn summary(&self, unit: &HeightUnit) -> Vec<String> {
        let job = if self.on_gpu {
            format!(
                "at most {} per dispatch, workgroup {}, {} atomics, lever {}",
                self.batch,
                self.workgroup,
                self.atomics.as_str(),
                self.lever.as_str()
            )
        } else {
            "on the CPU reference".into()
        };
        let mut lines = vec![format!("{} droplets, {job}", self.work.droplets)];
        if let Some(c) = &self.contention {
            lines.push(format!(
                "contention: busiest cell {} adds, {:.2} subgroup conflicts per 1000 adds, {:.1}% adds of zero; sediment left {} at death, {} off the edge (summed over cells)",
                c.hits_max,
                c.subgroup_conflicts_per_1000,
                100.0 * c.zero_add_share,
                unit.show_sum(c.mass_at_death, 1),
                unit.show_sum(c.mass_off_edge, 1)
            ));
        }
        lines
    }

    fn sediment_left(&self) -> f64 {
        self.contention
            .as_ref()
            .map_or(0.0, |c| c.mass_at_death + c.mass_off_edge)
    }

    /// Each rerun's change against the CPU reference's of the same job on the same
    /// terrain (computed once for points that share them): its stability, and its
    /// concurrency error.
    fn judge_reruns(&mut self, initial: &Cells, counted: &Cells, timed: &[&Cells]) {
        let Some(job) = &self.job else { return };
        // A sequential CPU run on a copy of the map, kept in the references' cache.
        if initial.len() as u64 > stability::REFERENCE_MAX_CELLS {
            return;
        }
        let Some(reference) = cached_reference(initial, job) else {
            return;
        };
        let spreads: Option<Vec<ChangeSpread>> = std::iter::once(counted)
            .chain(timed.iter().copied())
            .map(|run| ChangeSpread::of(initial, run))
            .collect();
        if let Some(spreads) = spreads {
            self.stability = Some(judge(&spreads, &reference.spread));
        }
        self.concurrency = concurrency_error(initial, &reference, timed);
    }
}

/// Its fields of run.json (beside the common ones): path, unit, meaning.
const REPORT_FIELDS: &[(&str, &str, &str)] = &[
    (
        "occupancy.chosen_kib",
        "KiB per workgroup",
        "shared_kib = auto: the reserved shared memory the probe chose (absent where shared_kib was set)",
    ),
    (
        "occupancy.probe_ms[]",
        "KiB per workgroup, ms",
        "each candidate and the median GPU time of its three probe runs",
    ),
    (
        "figures.droplets_per_s",
        "droplets/s",
        "droplets started over the GPU time",
    ),
    (
        "figures.atomics_per_s",
        "atomic adds/s",
        "atomicAdds issued over the GPU time",
    ),
    ("job.droplets", "droplets", "droplets of the run"),
    ("job.seed", "seed", "their spawn seed"),
    ("job.params.inertia", "share", "INERTIA"),
    (
        "job.params.capacity",
        "kernel height units per unit of slope, speed and water",
        "CAPACITY_FACTOR",
    ),
    ("job.params.erosion", "share per step", "EROSION_RATE"),
    ("job.params.deposition", "share per step", "DEPOSITION_RATE"),
    (
        "job.params.evaporation",
        "share per step",
        "EVAPORATION_RATE",
    ),
    ("job.params.lifetime", "steps", "MAX_LIFETIME"),
    (
        "job.params.fixed_point_scale",
        "fixed-point units per height unit",
        "the scale of modifyHeight's int()",
    ),
    (
        "job.params.physics",
        "text",
        "paper or corrected speed update",
    ),
    (
        "job.params.rounding",
        "text",
        "trunc, nearest or stochastic fixed-point rounding",
    ),
    ("job.spawn.mode", "text", "global or tiled spawning"),
    ("job.spawn.tile", "cells", "tile side of tiled spawning"),
    (
        "job.spawn.order",
        "text",
        "which tile consecutive workgroups get",
    ),
    (
        "job.spawn.phases",
        "colours",
        "checkerboard colours, each its own dispatch",
    ),
    (
        "job.passes.count",
        "dispatch passes",
        "passes each droplet's life is split over",
    ),
    (
        "job.passes.stagger",
        "true/false",
        "droplet i starts in pass i mod passes",
    ),
    ("workgroup", "invocations", "the workgroup size"),
    (
        "batch",
        "droplets per dispatch",
        "droplets per dispatch at most",
    ),
    ("atomics", "text", "int, float, racy or deterministic"),
    ("lever", "text", "the L1 lever"),
    (
        "work.droplets",
        "droplets",
        "droplets started (instrumented run)",
    ),
    ("work.steps", "droplet-steps", "steps taken"),
    (
        "work.atomics",
        "atomic adds",
        "atomicAdds issued (4 per step)",
    ),
    (
        "contention.hits_max",
        "atomic adds",
        "atomic adds the busiest cell received (GPU runs)",
    ),
    (
        "contention.hits_p99",
        "atomic adds",
        "99th percentile of atomic adds per cell (GPU runs)",
    ),
    (
        "contention.hottest_1pct_share",
        "share",
        "share of all atomic adds on the hottest 1% of cells (GPU runs)",
    ),
    (
        "contention.subgroup_conflicts_per_1000",
        "per 1000 atomic adds",
        "adds whose cell another active lane of the subgroup targeted at the same call (GPU runs)",
    ),
    (
        "contention.zero_add_share",
        "share",
        "modifyHeight calls that change no cell (GPU runs)",
    ),
    (
        "contention.mass_intended",
        "height units x cells",
        "height change the droplets asked for (GPU runs)",
    ),
    (
        "contention.mass_applied",
        "height units x cells",
        "what the adds carried, after fixed-point rounding (GPU runs)",
    ),
    (
        "contention.mass_received",
        "height units x cells",
        "what the heightmap received (GPU runs)",
    ),
    (
        "contention.mass_truncated",
        "height units x cells",
        "intended - applied (GPU runs)",
    ),
    (
        "contention.mass_lost",
        "height units x cells",
        "applied - received (GPU runs)",
    ),
    (
        "contention.mass_eroded",
        "height units x cells",
        "what the adds took from the terrain (GPU runs)",
    ),
    (
        "contention.mass_deposited",
        "height units x cells",
        "what the adds gave the terrain (GPU runs)",
    ),
    (
        "contention.mass_at_death",
        "height units x cells",
        "sediment droplets carried when they died on the map (GPU runs)",
    ),
    (
        "contention.mass_off_edge",
        "height units x cells",
        "sediment droplets carried when they died off its interior (GPU runs)",
    ),
    (
        "contention.balance_terrain",
        "height units x cells",
        "received - (deposited - eroded) (GPU runs)",
    ),
    (
        "contention.balance_sediment",
        "height units x cells",
        "(eroded - deposited) - (at death + off edge + truncated) (GPU runs)",
    ),
    (
        "contention.cache_escaped_adds",
        "modifyHeight calls",
        "tile-cache kernel: calls on a cell outside the workgroup's cached window, sent to the global heightfield (GPU runs; null for other kernels)",
    ),
    (
        "contention.cache_escape_share",
        "share",
        "those calls over all modifyHeight calls (GPU runs; null for other kernels)",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kernel_spawns_its_droplets_with_the_water_a_dose_counts() {
        let statement = format!("float water = {SPAWN_WATER:?};");
        for (name, source) in [
            ("droplet.comp", include_str!("../../../glsl/droplet.comp")),
            (
                "droplet_fast.comp",
                include_str!("../../../glsl/droplet_fast.comp"),
            ),
            (
                "droplet_stepped.comp",
                include_str!("../../../glsl/droplet_stepped.comp"),
            ),
            (
                "droplet_tilecache.comp",
                include_str!("../../../glsl/droplet_tilecache.comp"),
            ),
        ] {
            assert!(source.contains(&statement), "{name} lacks `{statement}`");
        }
        // The staggered passes spawn a DropletState: its water field's argument.
        let bindings = include_str!("../../../glsl/include/droplet_bindings.glsl");
        let passes = include_str!("../../../glsl/droplet_passes.comp");
        let body = |text: &'static str, open: &str, close: char| -> &'static str {
            let start = text.find(open).expect("found") + open.len();
            &text[start..start + text[start..].find(close).expect("closed")]
        };
        let fields: Vec<&str> = body(bindings, "struct DropletState {", '}')
            .split(';')
            .filter_map(|f| f.split_whitespace().last())
            .collect();
        let water = fields
            .iter()
            .position(|f| *f == "water")
            .expect("a water field");
        let spawn = body(passes, "s = DropletState(getRandomPosition(id), ", ';');
        // The arguments after the position: dir is one vec2(0.0).
        let args: Vec<&str> = spawn.trim_end_matches(')').split(", ").collect();
        assert_eq!(args[water - 1], format!("{SPAWN_WATER:?}"), "{spawn}");
    }

    #[test]
    fn the_droplet_columns_are_documented() {
        assert_eq!(crate::table::undocumented::<DropletColumns>(), None);
        assert_eq!(crate::table::undocumented::<Contention>(), None);
    }
}
