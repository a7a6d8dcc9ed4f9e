//! The one interface every erosion strategy implements. A strategy says what its work
//! is counted in, which settings are its own and what rules they obey on a device,
//! which ceiling bounds its rate, and which columns its results add; it builds its
//! pipelines and buffers for one map and runs them, timed or counted. The harness
//! above (erode, sweep, strategies, plot, report) never asks which one it holds.

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

use super::algorithm::Algorithm;
use super::error::ErosionError;
use super::keys::SettingError;
use super::settings::RunSettings;
use crate::gpu::{CompilerStatistic, Context, DeviceInfo};
use crate::table::Column;
use crate::terrain::units::HeightUnit;
use crate::terrain::{Arithmetic, Cells, Heightmap, MapInfo};

/// What a strategy counts as one unit of work.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum WorkUnit {
    /// One step of one droplet.
    DropletSteps,
    /// One time step over one cell of a grid.
    CellSteps,
}

impl WorkUnit {
    pub const ALL: [WorkUnit; 2] = [WorkUnit::DropletSteps, WorkUnit::CellSteps];

    /// As results and labels name it: `droplet-steps`, `cell-steps`.
    pub fn name(self) -> &'static str {
        match self {
            WorkUnit::DropletSteps => "droplet-steps",
            WorkUnit::CellSteps => "cell-steps",
        }
    }

    /// What a run's dose counts, one of which is a droplet or a time step over the
    /// whole grid: `droplets`, `steps`. Progress is told in it.
    pub fn dose_name(self) -> &'static str {
        match self {
            WorkUnit::DropletSteps => "droplets",
            WorkUnit::CellSteps => "steps",
        }
    }

    /// The stem of its columns in points.csv: `droplet_steps`, `cell_steps`.
    pub fn column(self) -> &'static str {
        match self {
            WorkUnit::DropletSteps => "droplet_steps",
            WorkUnit::CellSteps => "cell_steps",
        }
    }
}

/// The device ceiling a strategy's rate is held against (`vkerode peak`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Ceiling {
    /// The droplet-shaped walk (2x2 atomicAdd per step, no erosion arithmetic) on a
    /// map of this side, in walk-steps per second.
    Walk { side: u32 },
    /// The streaming copy's bandwidth, of which each unit of work must move this many
    /// bytes.
    Bandwidth { bytes_per_step: u64 },
}

impl Ceiling {
    /// As results name it: `droplet-walk`, `streaming-copy`.
    pub fn name(&self) -> &'static str {
        match self {
            Ceiling::Walk { .. } => "droplet-walk",
            Ceiling::Bandwidth { .. } => "streaming-copy",
        }
    }

    /// What a share of it is a share of, for labels.
    pub fn label(&self) -> &'static str {
        match self {
            Ceiling::Walk { .. } => "droplet-shaped atomic peak",
            Ceiling::Bandwidth { .. } => "copy bandwidth",
        }
    }

    /// The label of the ceiling results name `name`.
    pub fn label_of(name: &str) -> Option<&'static str> {
        [
            Ceiling::Walk { side: 0 },
            Ceiling::Bandwidth { bytes_per_step: 0 },
        ]
        .iter()
        .find(|c| c.name() == name)
        .map(Ceiling::label)
    }
}

/// Which CPU implementation runs a strategy's reference.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpuEngine {
    /// Every core, racing as GPU threads do where the strategy races at all.
    Parallel,
    /// One core, in a fixed order: deterministic.
    Sequential,
}

impl CpuEngine {
    /// As results name it: `cpu-parallel` (`--engine cpu`), `cpu-sequential`.
    pub fn name(self) -> &'static str {
        match self {
            CpuEngine::Parallel => "cpu-parallel",
            CpuEngine::Sequential => "cpu-sequential",
        }
    }
}

/// An erosion strategy: one folder of `erosion/`, listed once in the registry.
pub trait Strategy: Sync {
    fn algorithm(&self) -> Algorithm;

    /// What its work is counted in.
    fn unit(&self) -> WorkUnit;

    /// The `erode` flags of a tiny, quick run of it (its choice and a small dose), on
    /// top of a small map's: what the tests run of every strategy.
    fn smoke_args(&self) -> &'static [&'static str];

    /// The setting that says how much erosion a run does (its dose): droplets, time
    /// steps.
    fn dose_key(&self) -> &'static str;
    fn dose(&self, settings: &RunSettings) -> u64;
    /// `settings` with the dose set to `dose` (saturating at the setting's type).
    fn with_dose(&self, settings: &RunSettings, dose: u64) -> RunSettings;
    /// The most units of work a run on `map` can do (saturating): what bounds its
    /// length before it starts.
    fn work_bound(&self, settings: &RunSettings, map: MapInfo) -> u64;
    /// The water one unit of its dose brings onto `map`, as a depth over every cell in
    /// kernel height units: what a comparison at matched water input holds equal.
    /// `None` for a strategy that moves no water.
    fn water_per_dose(&self, settings: &RunSettings, map: MapInfo) -> Option<f64>;
    /// How long its water lives, in time units (a droplet's step counts as one: both
    /// move about a cell in one): `None` where water stays until it leaves the map.
    fn water_lifetime(&self, _settings: &RunSettings) -> Option<f64> {
        None
    }
    /// `settings` raining `water_per_cell` (a depth over every cell, kernel height units)
    /// over `duration` time units, dose included: what a comparison at matched water
    /// routed holds equal. `None` for a strategy whose water has its own lifetime.
    fn raining_within(
        &self,
        _settings: &RunSettings,
        _water_per_cell: f64,
        _duration: f64,
    ) -> Option<RunSettings> {
        None
    }
    /// Its settings in a comparison of strategies, where the water of every strategy,
    /// and the sediment it carries, leaves past the map's edges into one sea whose
    /// surface is `sea` (kernel height units): the same boundary for all. Default: a
    /// strategy whose water leaves at the edges whatever their height.
    fn in_comparison(&self, settings: &RunSettings, _sea: f32) -> RunSettings {
        settings.clone()
    }
    /// The keys that [`Strategy::in_comparison`] sets, which a comparison's table may not.
    fn comparison_keys(&self) -> &'static [&'static str] {
        &[]
    }

    /// Its own settings' keys with their units (its settings struct's `UNITS`): a key
    /// of another strategy is ignored by this one.
    fn settings_units(&self) -> &'static [(&'static str, &'static str)];

    /// The keys of its settings that only its GPU kernels use: its CPU reference
    /// ignores them.
    fn gpu_only_keys(&self) -> &'static [&'static str];

    /// Every rule its settings obey, checked once: between themselves, with the map
    /// where it is known, and with the device where there is one. Errors name the key.
    fn check(
        &self,
        settings: &RunSettings,
        map: Option<MapInfo>,
        device: Option<&DeviceInfo>,
    ) -> Result<(), SettingError>;

    /// What the device lacks to run these settings, if anything: sweeps skip such
    /// points with a note, so that one sweep can run on devices of different features.
    fn missing_feature(
        &self,
        settings: &RunSettings,
        map: MapInfo,
        device: &DeviceInfo,
    ) -> Option<String>;

    /// The arithmetic its kernels keep the heights in: [`initial_cells`] makes the
    /// initial state in it, so that points that share it share one conversion.
    fn arithmetic(&self, settings: &RunSettings) -> Arithmetic;

    /// Its pipelines and the map's buffers on `ctx`; each run starts from `initial`.
    fn prepare<'a>(
        &self,
        ctx: &Arc<Context>,
        settings: &RunSettings,
        initial: &'a Cells,
    ) -> Result<Box<dyn Prepared + 'a>, ErosionError>;

    /// Its CPU reference, where it has one for `engine`.
    fn run_on_cpu(
        &self,
        engine: CpuEngine,
        settings: &RunSettings,
        initial: &Cells,
    ) -> Result<CpuRun, ErosionError>;

    fn ceiling(&self, settings: &RunSettings, map: MapInfo) -> Ceiling;

    /// One line of what a run on `map` does and needs of `device`, for `sweep
    /// --dry-run`.
    fn plan(&self, settings: &RunSettings, map: MapInfo, device: &DeviceInfo) -> String;

    /// The columns of its settings in points.csv, and their values for a run on `map`
    /// (derived defaults resolved).
    fn settings_columns(&self) -> Vec<Column>;
    fn settings_values(&self, settings: &RunSettings, map: MapInfo) -> Vec<String>;

    /// The columns of its figures in points.csv ([`Figures::values`]).
    fn figures_columns(&self) -> Vec<Column>;

    /// Its own fields of run.json ([`Figures::report`], [`Figures::rates`]): path
    /// (objects joined by `.`, arrays as `[]`), unit, meaning; a test holds them to
    /// real files.
    fn report_fields(&self) -> &'static [(&'static str, &'static str, &'static str)];
}

/// The initial state of a run: `terrain` in `arithmetic`, refused where it cannot hold
/// it, or where its relief rounds away in fixed point (a tiny vertical scale): the
/// kernels would erode a flat plane.
pub fn initial_cells(terrain: &Heightmap, arithmetic: Arithmetic) -> Result<Cells, ErosionError> {
    let cells = Cells::in_arithmetic(terrain, arithmetic)?;
    if let Some((fixed, _)) = cells.fixed() {
        let stats = terrain.stats();
        let (low, high) = fixed
            .iter()
            .fold((i32::MAX, i32::MIN), |(lo, hi), &c| (lo.min(c), hi.max(c)));
        if stats.max > stats.min && low == high {
            return Err(SettingError::new(
                "vertical_scale",
                format!(
                    "the relief of {} kernel height units vanishes in the fixed point (every cell is {low}); raise --vertical-scale or --scale",
                    crate::readable_number(f64::from(stats.max - stats.min))
                ),
            )
            .into());
        }
    }
    Ok(cells)
}

/// A strategy's pipelines with one map's buffers, ready to run many times.
pub trait Prepared {
    /// The module(s) that run, as build.rs named them.
    fn kernel(&self) -> String;
    /// The driver's compiler statistics of its main pipeline; empty where there are none.
    fn statistics(&self) -> &[CompilerStatistic];
    /// Dispatches of one run.
    fn dispatches(&self) -> usize;
    /// One run from the initial map with the uninstrumented build, timed with GPU
    /// timestamps; the heights read back if `read_back`.
    fn run_timed(&mut self, read_back: bool) -> Result<TimedRun, ErosionError>;
    /// One run from the initial map with the instrumented build: the heights, the work
    /// done and the strategy's own figures.
    fn run_counted(&mut self) -> Result<CountedRun, ErosionError>;
    /// A run recorded for replay (see [`Replay`]), where the strategy and its build have
    /// one; `None` leaves the time split empty.
    fn record_replay(&mut self) -> Result<Option<Box<dyn Replay + '_>>, ErosionError> {
        Ok(None)
    }
}

/// Which of a recorded run's memory traffic a replay makes: the run's loads and atomics
/// at its addresses, without its arithmetic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplayTraffic {
    /// All of it, in the run's order: the run's own ceiling.
    InOrder,
    /// The atomics alone.
    Atomics,
    /// The loads alone.
    Loads,
    /// The atomics, each step's addresses shuffled between the units of work that made
    /// that step side by side: the same footprint and addresses, without their
    /// collisions.
    ShuffledAtomics,
}

impl ReplayTraffic {
    pub const ALL: [ReplayTraffic; 4] = [
        ReplayTraffic::InOrder,
        ReplayTraffic::Atomics,
        ReplayTraffic::Loads,
        ReplayTraffic::ShuffledAtomics,
    ];
}

/// A recorded run, replayed: each call one replay of `traffic`, its GPU time between
/// timestamps (`None` without them) and its wall time.
pub trait Replay {
    fn run(&mut self, traffic: ReplayTraffic)
        -> Result<(Option<Duration>, Duration), ErosionError>;
}

/// What a timed run gave.
#[derive(Clone, Debug)]
pub struct TimedRun {
    /// Between GPU timestamps around the dispatches; `None` without timestamps.
    pub gpu_time: Option<Duration>,
    /// Host time from submission to completion, upload and read-back included.
    pub wall_time: Duration,
    /// GPU submissions the dispatches were split into.
    pub submissions: usize,
    pub cells: Option<Cells>,
}

/// What an instrumented run gave.
pub struct CountedRun {
    pub cells: Cells,
    /// Units of work done ([`Strategy::unit`]).
    pub work: u64,
    pub figures: Box<dyn Figures>,
}

/// What the CPU reference gave.
pub struct CpuRun {
    pub cells: Cells,
    pub work: u64,
    pub wall_time: Duration,
    pub threads: usize,
    pub figures: Box<dyn Figures>,
}

/// A strategy's own figures of a counted run: what run.json and its points.csv columns
/// say beyond the harness's common ones.
pub trait Figures: Send {
    /// Its fields of run.json, beside the common ones.
    fn report(&self) -> serde_json::Map<String, serde_json::Value>;
    /// Its columns' values ([`Strategy::figures_columns`]) for a run whose median GPU
    /// time was `seconds`.
    fn values(&self, seconds: f64) -> Vec<String>;
    /// Its own rates over a run of `seconds` (GPU time; wall time on the CPU), which
    /// run.json's `figures` holds beside the rate in its unit: droplets/s, ms per step.
    fn rates(&self, seconds: f64) -> Vec<(&'static str, f64)>;
    /// Lines for the console: what the strategy did beyond the common figures, its
    /// heights in `unit`.
    fn summary(&self, unit: &HeightUnit) -> Vec<String>;
    /// Eroded material still in transport at the end (sediment droplets carried when
    /// they died, the grid's suspended sediment), in height units summed over cells.
    fn sediment_left(&self) -> f64;
    /// A sweep's reruns of the same job, judged against the strategy's own
    /// expectations, where it has any: the droplets' stability over every run (the
    /// counted one and the timed ones), and the concurrency error of the timed kernel,
    /// from the `timed` runs alone (the counted build is another program, with another
    /// error), against their CPU reference.
    fn judge_reruns(&mut self, _initial: &Cells, _counted: &Cells, _timed: &[&Cells]) {}
}

/// The serde struct `value` as run.json fields, each number as serde writes it.
pub fn report_of<T: Serialize>(value: &T) -> serde_json::Map<String, serde_json::Value> {
    // Through text: a Value holds f64, and an f32 widened to f64 would be written with
    // the digits of its binary value (0.02 as 0.019999999552965164).
    serde_json::to_string(value)
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default()
}
