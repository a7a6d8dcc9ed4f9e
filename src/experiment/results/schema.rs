//! The columns of a sweep's files, built from typed sections: a point's row is the
//! common sections (identity, the terrain's settings, timing, throughput, ceiling,
//! change, landform, reruns, the GPU's state) plus each strategy's settings and figures,
//! empty where they do not apply. The same code gives the header, the rows and the
//! results reference (docs/results.md), so they cannot part ways.

use serde::{Deserialize, Serialize};

use super::columns::{
    ColumnDeclaration, ALGORITHM, COMMIT, DEVICE, DEVICE_SPREAD_PERCENT, DRIVER, EXPERIMENT,
    GPU_MS_CI_HIGH, GPU_MS_CI_LOW, GPU_MS_MEDIAN, GPU_MS_Q1, GPU_MS_Q3, GPU_MS_REL_IQR,
    HEIGHT_UNIT, OUTLIERS, POINT, REPS, SLOWED, STOP_REASON, WALL_MS_MEDIAN, WORKER,
};
use super::measurement::Measurement;
use crate::erosion::{Figures, RunSettings, WorkUnit, ALL_STRATEGIES};
use crate::experiment::run::{CeilingShare, TimeSplit};
use crate::gpu::{statistics_summary, CompilerStatistic, DeviceInfo};
use crate::probes::gpu_state::{slowed, GpmCounters, GpuState};
use crate::table::{Column, Row, Section};
use crate::terrain::image::CellSize;
use crate::terrain::metrics::Landform;
use crate::terrain::units::HeightUnit;
use crate::terrain::Change;
use crate::terrain::MapInfo;

/// The version of the columns of points.csv (and meta.json's fields) this vkerode
/// writes; meta.json records it. Files without one are version 1: one `steps` column
/// for every strategy's unit, and defaults in the columns of other strategies.
/// Version 3 adds a point's stage times (`point_gpu_s`, `stage_*_s`), empty in rows of
/// older files; version 4 an input's cell size and vertical scale (`cell_size_x`,
/// `cell_size_y`, `vertical_scale`), which older files left unsaid: read as empty, so
/// their rows tell a DEM's scales apart by nothing but their answers. Version 5 takes
/// `total_height_change`, `max_cell_change` and the landform from the first timed
/// rerun, where older files took them from the counted run, which keeps
/// `counted_height_change` (empty in older rows).
pub const SCHEMA_VERSION: u32 = 5;
/// The first version whose height change and landform are a timed run's: an older set
/// is not resumed, so that no set holds rows of both kinds.
pub const TIMED_CHANGE_SINCE: u32 = 5;

/// Which point of which sweep, measured where.
#[derive(Clone, Debug, Default, Serialize)]
struct Identity {
    experiment: String,
    device: String,
    driver: String,
    commit: String,
    point: usize,
    worker: usize,
    algorithm: String,
}

impl Section for Identity {
    const COLUMNS: &'static [(&'static str, &'static str, &'static str)] =
        &[EXPERIMENT, DEVICE, DRIVER, COMMIT, POINT, WORKER, ALGORITHM];
}

/// The noise terrain's settings, as the run used them; empty for an input.
#[derive(Clone, Debug, Default, Serialize)]
struct TerrainColumns {
    size: u32,
    seed: u32,
    relief: f32,
}

impl Section for TerrainColumns {
    const COLUMNS: &'static [(&'static str, &'static str, &'static str)] = &[
        (
            "size",
            "cells",
            "side of the square erosion-noise map (empty for an input)",
        ),
        (
            "seed",
            "seed",
            "the noise terrain's seed (empty for an input)",
        ),
        (
            "relief",
            "height units",
            "noise heights in [0, 1] times this (default 2 x size; empty for an input)",
        ),
    ];
}

/// The map a point ran on: its shape, and the heightmap file it came from.
#[derive(Clone, Debug, Default, Serialize)]
struct MapColumns {
    width: u32,
    height: u32,
    input: String,
    input_hash: String,
    cell_size_x: Option<f32>,
    cell_size_y: Option<f32>,
    vertical_scale: Option<f32>,
}

impl Section for MapColumns {
    const COLUMNS: &'static [(&'static str, &'static str, &'static str)] = &[
        ("width", "cells", "the map's width: size for noise, the file's for an input"),
        ("height", "cells", "the map's height"),
        (
            "input",
            "path",
            "the heightmap the point eroded, as the config wrote it (relative to its folder); empty for noise",
        ),
        (
            "input_hash",
            "FNV-1a hex",
            "the file's shape, elevations and stated cell size, hashed (as meta.json's config.input_hashes); empty for noise",
        ),
        (
            "cell_size_x",
            "m",
            "the input's cell width east-west as the point used it (the config's cell_size or assume_cell_size, else the file's); empty for noise",
        ),
        ("cell_size_y", "m", "its cell height north-south; empty for noise"),
        (
            "vertical_scale",
            "factor",
            "what the input's elevations were multiplied by (the config's vertical_scale); empty for noise",
        ),
    ];
}

/// A heightmap input as points.csv records it.
pub struct InputRecord<'a> {
    /// As the config wrote it.
    pub path: &'a str,
    pub hash: &'a str,
    pub cell_size: CellSize,
    pub vertical_scale: f32,
}

/// The timed repetitions.
#[derive(Clone, Debug, Default, Serialize)]
struct Timing {
    kernel: String,
    compiler_stats: String,
    dispatches: usize,
    reps: usize,
    stop_reason: String,
    gpu_ms_median: f64,
    gpu_ms_min: f64,
    gpu_ms_max: f64,
    gpu_ms_q1: f64,
    gpu_ms_q3: f64,
    gpu_ms_rel_iqr: f64,
    gpu_ms_ci_low: Option<f64>,
    gpu_ms_ci_high: Option<f64>,
    outliers: usize,
    wall_ms_median: f64,
}

impl Section for Timing {
    const COLUMNS: &'static [(&'static str, &'static str, &'static str)] = &[
        ("kernel", "text", "the module(s) that ran, as build.rs named them (a grid step's passes joined by +)"),
        ("compiler_stats", "text", "the driver's compiler statistics of its main pipeline (registers, ...); empty where there are none"),
        ("dispatches", "count", "dispatches of one run"),
        REPS,
        STOP_REASON,
        GPU_MS_MEDIAN,
        ("gpu_ms_min", "ms", "the fastest repetition"),
        ("gpu_ms_max", "ms", "the slowest repetition"),
        GPU_MS_Q1,
        GPU_MS_Q3,
        GPU_MS_REL_IQR,
        GPU_MS_CI_LOW,
        GPU_MS_CI_HIGH,
        OUTLIERS,
        WALL_MS_MEDIAN,
    ];
}

/// The change a timed run made, how two timed reruns differ, and the counted run's
/// net change.
#[derive(Clone, Debug, Default, Serialize)]
struct ChangeColumns {
    height_unit: String,
    total_height_change: f64,
    max_cell_change: f64,
    rerun_cells_differing: usize,
    rerun_max_difference: f64,
    counted_height_change: f64,
}

/// The net change of a point's first timed rerun, and its reruns' differing cells.
pub const TOTAL_HEIGHT_CHANGE: ColumnDeclaration = (
    "total_height_change",
    "height units x cells",
    "sum of (after - before) over the cells, in the first of two timed reruns: the program the times are of",
);
pub const RERUN_CELLS_DIFFERING: ColumnDeclaration = (
    "rerun_cells_differing",
    "cells",
    "cells whose heights differ between two timed runs of the same job",
);

impl Section for ChangeColumns {
    const COLUMNS: &'static [(&'static str, &'static str, &'static str)] = &[
        HEIGHT_UNIT,
        TOTAL_HEIGHT_CHANGE,
        (
            "max_cell_change",
            "height units",
            "the largest |after - before| of one cell in that run",
        ),
        RERUN_CELLS_DIFFERING,
        (
            "rerun_max_difference",
            "height units",
            "the largest difference of one cell between them",
        ),
        (
            "counted_height_change",
            "height units x cells",
            "sum of (after - before) in the counted run: the instrumented build, another program, whose run the work count and the strategy's own figures (mass_*, hits_*, contention) are of",
        ),
    ];
}

/// The GPU's state around the timed repetitions (NVML; empty elsewhere).
#[derive(Clone, Debug, Default, Serialize)]
struct GpuColumns {
    sm_mhz_before: Option<u32>,
    sm_mhz_after: Option<u32>,
    memory_mhz_after: Option<u32>,
    temperature_c_after: Option<u32>,
    power_w_after: Option<f64>,
    throttle_after: Option<String>,
    slowed: Option<bool>,
    device_spread_percent: Option<f64>,
}

impl Section for GpuColumns {
    const COLUMNS: &'static [(&'static str, &'static str, &'static str)] = &[
        (
            "sm_mhz_before",
            "MHz",
            "SM clock before the timed repetitions (NVML; empty without it)",
        ),
        ("sm_mhz_after", "MHz", "SM clock after them"),
        ("memory_mhz_after", "MHz", "memory clock after them"),
        (
            "temperature_c_after",
            "degrees C",
            "GPU temperature after them",
        ),
        ("power_w_after", "W", "board power after them"),
        (
            "throttle_after",
            "text",
            "slowing throttle reasons set after them, '+'-joined; none when NVML reported none",
        ),
        SLOWED,
        DEVICE_SPREAD_PERCENT,
    ];
}

/// NVML GPM's counters over a window of back-to-back timed runs after the repetitions
/// (Hopper and newer; empty elsewhere).
#[derive(Clone, Debug, Default, Serialize)]
struct GpmColumns {
    gpm_sm_occupancy_percent: f64,
    gpm_sm_util_percent: f64,
    gpm_integer_util_percent: f64,
    gpm_fp32_util_percent: f64,
    gpm_dram_bandwidth_percent: f64,
    gpm_window_ms: f64,
    gpm_busy_percent: f64,
}

impl GpmColumns {
    fn of(c: &GpmCounters) -> Self {
        Self {
            gpm_sm_occupancy_percent: c.sm_occupancy_percent,
            gpm_sm_util_percent: c.sm_util_percent,
            gpm_integer_util_percent: c.integer_util_percent,
            gpm_fp32_util_percent: c.fp32_util_percent,
            gpm_dram_bandwidth_percent: c.dram_bandwidth_percent,
            gpm_window_ms: c.window_ms,
            gpm_busy_percent: c.busy_percent,
        }
    }
}

impl Section for GpmColumns {
    const COLUMNS: &'static [(&'static str, &'static str, &'static str)] = &[
        ("gpm_sm_occupancy_percent", "%", "NVML GPM: resident warps over the SMs' maximum, averaged over the SMs, over a window of back-to-back timed runs after the repetitions (Hopper and newer; empty elsewhere)"),
        ("gpm_sm_util_percent", "%", "NVML GPM: time each SM had a warp, averaged over the SMs"),
        ("gpm_integer_util_percent", "%", "NVML GPM: time the SMs issued integer instructions"),
        ("gpm_fp32_util_percent", "%", "NVML GPM: time the SMs issued FP32 instructions"),
        ("gpm_dram_bandwidth_percent", "%", "NVML GPM: DRAM bandwidth used over its peak"),
        ("gpm_window_ms", "ms", "wall time between GPM's two samples, over back-to-back runs"),
        ("gpm_busy_percent", "%", "GPU time of the runs over the window: the counters are averages over the window, diluted by the rest"),
    ];
}

/// Where a point's time went: the GPU time its statistics rest on, and the wall time
/// of each of its stages in the order they run. The CPU's share (`judge`, `landform`)
/// runs on other cores while the GPU measures the next point, so the stages of a
/// sweep add up to more than its wall time.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct StageTimes {
    pub point_gpu_s: f64,
    pub stage_terrain_s: f64,
    pub stage_prepare_s: f64,
    pub stage_warmup_s: f64,
    pub stage_timed_s: f64,
    pub stage_gpm_s: f64,
    pub stage_replay_s: f64,
    pub stage_counted_s: f64,
    pub stage_reruns_s: f64,
    pub stage_judge_s: f64,
    pub stage_landform_s: f64,
}

impl StageTimes {
    /// Each stage's name (its column's, less `stage_` and `_s`) and wall seconds.
    pub fn stages(&self) -> [(&'static str, f64); 10] {
        [
            ("terrain", self.stage_terrain_s),
            ("prepare", self.stage_prepare_s),
            ("warmup", self.stage_warmup_s),
            ("timed", self.stage_timed_s),
            ("gpm", self.stage_gpm_s),
            ("replay", self.stage_replay_s),
            ("counted", self.stage_counted_s),
            ("reruns", self.stage_reruns_s),
            ("judge", self.stage_judge_s),
            ("landform", self.stage_landform_s),
        ]
    }
}

impl Section for StageTimes {
    const COLUMNS: &'static [(&'static str, &'static str, &'static str)] = &[
        ("point_gpu_s", "s", "GPU-timestamp time of the runs the statistics rest on: the warm-up and the timed repetitions (the GPU's busy time of the point)"),
        ("stage_terrain_s", "s", "wall time making the point's terrain and its initial state in the strategy's arithmetic (near 0 where an earlier point's are reused)"),
        ("stage_prepare_s", "s", "wall time building its pipelines (from the pipeline cache where it holds them) and uploading its map"),
        ("stage_warmup_s", "s", "wall time of the warm-up runs"),
        ("stage_timed_s", "s", "wall time of the timed repetitions"),
        ("stage_gpm_s", "s", "wall time of NVML GPM's window (0 without GPM)"),
        ("stage_replay_s", "s", "wall time recording and timing the replays of the time split (0 without measure.replay)"),
        ("stage_counted_s", "s", "wall time of the counted (instrumented) run and its read-back"),
        ("stage_reruns_s", "s", "wall time of the two timed reruns and their read-backs"),
        ("stage_judge_s", "s", "wall time of the strategy's judgement of the reruns against its CPU reference (on other cores while the GPU measures the next point)"),
        ("stage_landform_s", "s", "wall time of the landform figures (on other cores while the GPU measures the next point)"),
    ];
}

/// The throughput columns of one unit of work: `droplet_steps`, `droplet_steps_per_s`
/// and its quartiles and interval, and likewise `cell_steps`.
fn throughput_columns(unit: WorkUnit) -> Vec<Column> {
    let stem = unit.column();
    let name = unit.name();
    vec![
        Column::new(
            stem,
            name,
            format!("{name} of one run (the counted run's count)"),
        ),
        Column::new(
            format!("{stem}_per_s"),
            format!("{name}/s"),
            "over the median GPU time",
        ),
        Column::new(
            format!("{stem}_per_s_q1"),
            format!("{name}/s"),
            "over the third quartile of the GPU times",
        ),
        Column::new(
            format!("{stem}_per_s_q3"),
            format!("{name}/s"),
            "over the first quartile of the GPU times",
        ),
        Column::new(
            format!("{stem}_per_s_ci_low"),
            format!("{name}/s"),
            "over the high end of the median's interval",
        ),
        Column::new(
            format!("{stem}_per_s_ci_high"),
            format!("{name}/s"),
            "over the low end of the median's interval",
        ),
    ]
}

fn throughput_values(steps: u64, m: &Measurement) -> Vec<String> {
    let per_s = |ms: f64| (steps as f64 / (ms / 1e3)).to_string();
    let optional = |ms: Option<f64>| ms.map(per_s).unwrap_or_default();
    vec![
        steps.to_string(),
        per_s(m.gpu_ms.median),
        // Longer times mean lower rates: q3 of the time gives q1 of the rate.
        per_s(m.gpu_ms.q3),
        per_s(m.gpu_ms.q1),
        optional(m.gpu_ms_ci.map(|(_, high)| high)),
        optional(m.gpu_ms_ci.map(|(low, _)| low)),
    ]
}

/// Everything a measured point's row is made of.
pub struct PointValues<'a> {
    pub experiment: &'a str,
    pub commit: &'a str,
    pub point: usize,
    /// Its worker (position in `--devices`) and that worker's device.
    pub worker: usize,
    pub device: &'a DeviceInfo,
    pub settings: &'a RunSettings,
    /// The heightmap the point eroded instead of noise, if any.
    pub input: Option<InputRecord<'a>>,
    pub map: MapInfo,
    pub kernel: String,
    pub compiler_statistics: &'a [CompilerStatistic],
    pub dispatches: usize,
    pub measurement: &'a Measurement,
    /// Units of work of one run, in the strategy's unit.
    pub work: u64,
    pub ceiling: Option<CeilingShare>,
    /// Its time against its replays' (`measure.replay`).
    pub split: Option<TimeSplit>,
    pub figures: &'a dyn Figures,
    /// The change of the first timed rerun (the program the times are of), the
    /// difference of two timed reruns, and the counted (instrumented) run's net change,
    /// in kernel height units; reported in `height_unit`.
    pub change: Change,
    pub rerun: Change,
    pub counted_total: f64,
    pub height_unit: HeightUnit,
    /// The terrain's landform before and after the first timed rerun; `None` (empty columns)
    /// past [`crate::terrain::metrics::LANDFORM_MAX_CELLS`].
    pub landform: Option<(Landform, Landform)>,
    /// NVML's reads around the timed repetitions, where there is NVML.
    pub gpu_before: Option<GpuState>,
    pub gpu_after: Option<GpuState>,
    pub gpm: Option<GpmCounters>,
    pub stages: &'a StageTimes,
}

/// The row of a measured point, or with `None` the columns alone.
pub fn point_row(point: Option<&PointValues>) -> Row {
    let mut row = Row::default();
    row.push(
        point
            .map(|p| Identity {
                experiment: p.experiment.to_string(),
                device: p.device.name.clone(),
                driver: p.device.driver_info.clone(),
                commit: p.commit.to_string(),
                point: p.point,
                worker: p.worker,
                algorithm: p.settings.algorithm.as_str().to_string(),
            })
            .as_ref(),
    );
    row.push(
        point
            .filter(|p| p.input.is_none())
            .map(|p| TerrainColumns {
                size: p.settings.noise.size,
                seed: p.settings.noise.seed,
                relief: p.settings.terrain().relief,
            })
            .as_ref(),
    );
    row.push(
        point
            .map(|p| MapColumns {
                width: p.map.width,
                height: p.map.height,
                input: p.input.as_ref().map(|i| i.path.into()).unwrap_or_default(),
                input_hash: p.input.as_ref().map(|i| i.hash.into()).unwrap_or_default(),
                cell_size_x: p.input.as_ref().map(|i| i.cell_size.x),
                cell_size_y: p.input.as_ref().map(|i| i.cell_size.y),
                vertical_scale: p.input.as_ref().map(|i| i.vertical_scale),
            })
            .as_ref(),
    );
    let own = |strategy: &dyn crate::erosion::Strategy| {
        point.filter(|p| p.settings.algorithm == strategy.algorithm())
    };
    for strategy in ALL_STRATEGIES.iter() {
        let values = own(*strategy).map(|p| strategy.settings_values(p.settings, p.map));
        row.push_columns(strategy.settings_columns(), values);
    }
    row.push(
        point
            .map(|p| {
                let m = p.measurement;
                Timing {
                    kernel: p.kernel.clone(),
                    compiler_stats: statistics_summary(p.compiler_statistics),
                    dispatches: p.dispatches,
                    reps: m.samples.len(),
                    stop_reason: m.stop.as_str().to_string(),
                    gpu_ms_median: m.gpu_ms.median,
                    gpu_ms_min: m.gpu_ms.min,
                    gpu_ms_max: m.gpu_ms.max,
                    gpu_ms_q1: m.gpu_ms.q1,
                    gpu_ms_q3: m.gpu_ms.q3,
                    gpu_ms_rel_iqr: m.gpu_ms.rel_iqr(),
                    gpu_ms_ci_low: m.gpu_ms_ci.map(|(low, _)| low),
                    gpu_ms_ci_high: m.gpu_ms_ci.map(|(_, high)| high),
                    outliers: m.outliers(),
                    wall_ms_median: m.wall_ms.median,
                }
            })
            .as_ref(),
    );
    for unit in WorkUnit::ALL {
        let values = point
            .filter(|p| p.settings.strategy().unit() == unit)
            .map(|p| throughput_values(p.work, p.measurement));
        row.push_columns(throughput_columns(unit), values);
    }
    row.push(point.and_then(|p| p.ceiling.as_ref()));
    row.push(point.and_then(|p| p.split.as_ref()));
    for strategy in ALL_STRATEGIES.iter() {
        let columns = strategy.figures_columns();
        let values = own(*strategy).map(|p| {
            let mut values = p.figures.values(p.measurement.gpu_ms.median / 1e3);
            p.height_unit.convert_values(&columns, &mut values);
            values
        });
        row.push_columns(columns, values);
    }
    row.push(
        point
            .map(|p| ChangeColumns {
                height_unit: p.height_unit.name.clone(),
                total_height_change: p.height_unit.of(p.change.total),
                max_cell_change: p.height_unit.of(p.change.max_abs()),
                rerun_cells_differing: p.rerun.changed,
                rerun_max_difference: p.height_unit.of(p.rerun.max_abs()),
                counted_height_change: p.height_unit.of(p.counted_total),
            })
            .as_ref(),
    );
    let landform = point.and_then(|p| p.landform);
    row.push_suffixed(
        landform.as_ref().map(|l| &l.0),
        "_before",
        "of the initial terrain",
    );
    row.push_suffixed(
        landform.as_ref().map(|l| &l.1),
        "_after",
        "after the first timed rerun",
    );
    row.push(
        point
            .map(|p| GpuColumns {
                sm_mhz_before: p.gpu_before.map(|g| g.sm_mhz),
                sm_mhz_after: p.gpu_after.map(|g| g.sm_mhz),
                memory_mhz_after: p.gpu_after.map(|g| g.memory_mhz),
                temperature_c_after: p.gpu_after.map(|g| g.temperature_c),
                power_w_after: p.gpu_after.map(|g| g.power_w),
                throttle_after: p.gpu_after.map(|g| g.slowing_reasons_text()),
                slowed: p
                    .gpu_before
                    .zip(p.gpu_after)
                    .map(|(before, after)| slowed(&before, &after)),
                device_spread_percent: None,
            })
            .as_ref(),
    );
    row.push(
        point
            .and_then(|p| p.gpm.as_ref())
            .map(GpmColumns::of)
            .as_ref(),
    );
    row.push(point.map(|p| p.stages));
    row
}

/// The columns that say which heightmap file a point eroded and how it was read (not
/// its shape, which follows from them): empty for noise.
pub fn input_columns() -> impl Iterator<Item = &'static str> {
    MapColumns::COLUMNS
        .iter()
        .map(|(name, ..)| *name)
        .filter(|name| !["width", "height"].contains(name))
}

/// The columns of points.csv, with their units and meanings.
pub fn point_columns() -> Vec<Column> {
    point_row(None).columns
}

/// The column names of points.csv.
pub fn point_header() -> Vec<String> {
    point_row(None).header()
}

/// Which strategy's section a column of points.csv belongs to, if any: its values are
/// empty in the rows of every other strategy.
pub fn owner_of(column: &str) -> Option<crate::erosion::Algorithm> {
    ALL_STRATEGIES.iter().find_map(|s| {
        let mine = s
            .settings_columns()
            .into_iter()
            .chain(s.figures_columns())
            .any(|c| c.name == column);
        mine.then(|| s.algorithm())
    })
}

/// One timed repetition of a point; samples.csv, written and read back by these names
/// (`results::read_samples`). Files of every version read: those from before
/// `--devices` have no `worker` (one device: worker 0), older ones no `outlier` (none
/// was marked).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SampleRow {
    #[serde(default)]
    pub experiment: String,
    pub point: usize,
    #[serde(default)]
    pub worker: usize,
    pub rep: usize,
    pub gpu_ms: f64,
    pub wall_ms: f64,
    /// Beyond 1.5 IQR of the point's quartiles.
    #[serde(default, deserialize_with = "marked")]
    pub outlier: bool,
}

/// A samples.csv flag: `true` marks it, anything else (`false`, empty) does not.
fn marked<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<bool, D::Error> {
    Ok(String::deserialize(deserializer)? == "true")
}

impl Section for SampleRow {
    const COLUMNS: &'static [(&'static str, &'static str, &'static str)] = &[
        ("experiment", "text", "the config's name"),
        (
            "point",
            "index",
            "the point it is a repetition of (points.csv)",
        ),
        ("worker", "index", "the worker that measured it"),
        (
            "rep",
            "index",
            "its position among the point's timed repetitions, from 0",
        ),
        (
            "gpu_ms",
            "ms",
            "GPU time of the repetition (timestamps; wall time without them)",
        ),
        ("wall_ms", "ms", "host time of its submission"),
        (
            "outlier",
            "true/false",
            "beyond 1.5 IQR of the point's quartiles: kept, and marked",
        ),
    ];
}

/// A point that failed on the GPU (out of memory, device lost, a hung submission),
/// with the error; failed.csv. `--resume` measures it again.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FailedRow {
    pub experiment: String,
    pub point: usize,
    pub worker: usize,
    /// The point's axes, "key=value" joined by spaces.
    pub settings: String,
    pub error: String,
    /// The device was lost with it, which stops that device's worker.
    pub device_lost: bool,
}

impl Section for FailedRow {
    const COLUMNS: &'static [(&'static str, &'static str, &'static str)] = &[
        ("experiment", "text", "the config's name"),
        ("point", "index", "the point that failed"),
        ("worker", "index", "the worker it failed on"),
        (
            "settings",
            "text",
            "the point's axes, key=value joined by spaces",
        ),
        ("error", "text", "the error and its causes"),
        (
            "device_lost",
            "true/false",
            "the device was lost with it, which stopped that worker",
        ),
    ];
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::undocumented;

    #[test]
    fn every_section_is_documented_and_every_column_is_unique() {
        assert_eq!(undocumented::<Identity>(), None);
        assert_eq!(undocumented::<TerrainColumns>(), None);
        assert_eq!(undocumented::<Timing>(), None);
        assert_eq!(undocumented::<ChangeColumns>(), None);
        assert_eq!(undocumented::<GpuColumns>(), None);
        assert_eq!(undocumented::<GpmColumns>(), None);
        assert_eq!(undocumented::<SampleRow>(), None);
        assert_eq!(undocumented::<FailedRow>(), None);
        assert_eq!(undocumented::<Landform>(), None);
        let mut names = point_header();
        let count = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), count, "unique column names");
        for column in point_columns() {
            assert!(!column.unit.is_empty(), "{} has a unit", column.name);
            assert!(!column.meaning.is_empty(), "{} has a meaning", column.name);
        }
    }

    #[test]
    fn droplet_steps_and_cell_steps_are_never_one_column() {
        let header = point_header();
        for column in ["droplet_steps_per_s", "cell_steps_per_s"] {
            assert!(header.contains(&column.to_string()), "{column}");
        }
        assert!(!header.contains(&"steps_per_s".to_string()));
        assert!(!header.contains(&"steps".to_string()));
    }
}
