//! The rows of a sweep's `points.csv` and `samples.csv`, as types: written with serde,
//! read back by column name.

use serde::{Deserialize, Serialize};

use super::config::Point;
use super::gpu_state::{slowed, GpuState};
use super::measure::Measurement;
use super::pipes::BandwidthShare;
use super::results::Meta;
use super::settings::switch;
use super::stability::Judgement;
use crate::erosion::pipes::BalanceCheck;
use crate::erosion::pipes::{Advection, Fusion, Packing, Tiles, WorkgroupShape};
use crate::erosion::{
    Algorithm, AtomicMode, Contention, DropletShader, Lever, Physics, Rounding, SpawnMode,
    SpirvBuild, TileOrder, WorkCount,
};
use crate::gpu::{statistics_summary, CompilerStatistic, DeviceInfo};
use crate::terrain::metrics::Landform;

/// One row of points.csv: identification, the point's settings (every axis is one of
/// them), then its figures.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PointRow {
    pub experiment: String,
    pub device: String,
    pub driver: String,
    pub commit: String,
    pub point: usize,
    /// Which of `sweep --devices` measured it: its position in that list (0 for one
    /// device); meta.json's `devices` says which device each is.
    pub worker: usize,
    /// droplets or pipes. `steps` and `steps_per_s` count each algorithm's own step:
    /// droplet-steps, or cell-steps (cells times time steps) for the grid; the droplet
    /// settings of a grid row are unused, and the other way round.
    pub algorithm: Algorithm,
    pub size: u32,
    pub seed: u32,
    pub relief: f32,
    pub droplets: u32,
    pub droplet_seed: u32,
    pub lifetime: u32,
    pub inertia: f32,
    pub capacity: f32,
    pub erosion: f32,
    pub deposition: f32,
    pub evaporation: f32,
    pub scale: f32,
    pub physics: Physics,
    pub rounding: Rounding,
    pub workgroup: u32,
    pub batch: u32,
    pub batches: u32,
    pub variant: DropletShader,
    pub atomics: AtomicMode,
    pub spawn: SpawnMode,
    pub tile: u32,
    pub tile_order: TileOrder,
    pub phases: u32,
    pub passes: u32,
    #[serde(with = "switch")]
    pub stagger: bool,
    pub spirv: SpirvBuild,
    pub shared_kib: u32,
    pub lever: Lever,
    pub pipes_steps: u32,
    pub pipes_dt: f32,
    pub pipes_rain: f32,
    pub pipes_evaporation: f32,
    pub pipes_area: f32,
    pub pipes_capacity: f32,
    pub pipes_dissolving: f32,
    pub pipes_deposition: f32,
    pub pipes_advection: Advection,
    pub pipes_fusion: Fusion,
    pub pipes_packing: Packing,
    pub pipes_tiles: Tiles,
    pub pipes_workgroup: WorkgroupShape,
    /// The module that ran (the grid's first pass).
    pub kernel: String,
    pub compiler_stats: String,
    pub dispatches: usize,
    pub reps: usize,
    pub stop_reason: String,
    pub gpu_ms_median: f64,
    pub gpu_ms_min: f64,
    pub gpu_ms_max: f64,
    pub gpu_ms_q1: f64,
    pub gpu_ms_q3: f64,
    pub gpu_ms_rel_iqr: f64,
    /// 95% confidence interval of the median GPU time (empty for one repetition).
    pub gpu_ms_ci_low: Option<f64>,
    pub gpu_ms_ci_high: Option<f64>,
    /// Repetitions beyond 1.5 IQR of the quartiles (kept; marked in samples.csv).
    pub outliers: usize,
    pub wall_ms_median: f64,
    pub steps: u64,
    pub atomic_adds: u64,
    pub droplets_per_s: f64,
    pub steps_per_s: f64,
    pub steps_per_s_q1: f64,
    pub steps_per_s_q3: f64,
    /// The median's confidence interval as rates.
    pub steps_per_s_ci_low: Option<f64>,
    pub steps_per_s_ci_high: Option<f64>,
    pub atomics_per_s: f64,
    pub peak_walk_steps_per_s: Option<f64>,
    /// Of the droplet-shaped walk ceiling, or of the grid's bandwidth ceiling.
    pub percent_of_peak: Option<f64>,
    /// The grid's bandwidth: bytes a step moves per cell in its variant, those bytes
    /// per second, and `vkerode peak`'s streaming copy (read + written per second).
    pub bytes_per_cell_step: Option<u64>,
    pub bandwidth_bytes_per_s: Option<f64>,
    pub peak_copy_bytes_per_s: Option<f64>,
    /// The grid's counted run: water - (initial + rain - evaporation), and the
    /// advection's drift of terrain + sediment, at its last check.
    pub water_error: Option<f64>,
    pub advection_drift: Option<f64>,
    pub total_height_change: f64,
    pub max_cell_change: f64,
    pub in_flight_per_cell: f64,
    /// The largest cell change and the spread of cell changes over the baseline's
    /// (the CPU reference of the same droplet job); unstable past UNSTABLE_FACTOR.
    /// Empty for the grid, which has no such baseline.
    pub change_max_ratio: Option<f64>,
    pub change_spread_ratio: Option<f64>,
    pub unstable: Option<bool>,
    pub hits_max: u32,
    pub hits_p99: u32,
    pub hottest_1pct_share: f64,
    pub subgroup_conflicts_per_1000: f64,
    pub zero_add_share: f64,
    pub mass_intended: f64,
    pub mass_applied: f64,
    pub mass_received: f64,
    pub mass_truncated: f64,
    pub mass_lost: f64,
    pub mass_eroded: f64,
    pub mass_deposited: f64,
    pub mass_at_death: f64,
    pub mass_off_edge: f64,
    pub balance_terrain: f64,
    pub balance_sediment: f64,
    /// Landform metrics before the run and after it (terrain/metrics.rs).
    pub hypsometric_integral_before: f64,
    pub hypsometric_integral_after: f64,
    pub mean_slope_before: f64,
    pub mean_slope_after: f64,
    pub drainage_density_before: f64,
    pub drainage_density_after: f64,
    pub concavity_before: Option<f64>,
    pub concavity_after: Option<f64>,
    pub channel_incision_before: f64,
    pub channel_incision_after: f64,
    pub rerun_cells_differing: usize,
    pub rerun_max_difference: f64,
    /// The GPU's state before and after the timed repetitions (NVML; empty elsewhere).
    pub sm_mhz_before: Option<u32>,
    pub sm_mhz_after: Option<u32>,
    pub memory_mhz_after: Option<u32>,
    pub temperature_c_after: Option<u32>,
    pub power_w_after: Option<f64>,
    /// Slowing throttle reasons set after the repetitions, '+'-joined; `none` when NVML
    /// reported none (empty means no NVML).
    pub throttle_after: Option<String>,
    /// The SM clock fell over 5% or a slowing throttle reason was set.
    pub slowed: Option<bool>,
    /// `sweep --replicate`: (largest - smallest) / mean of the point's median GPU time
    /// over the devices, in percent; empty until every device has measured the point.
    pub device_spread_percent: Option<f64>,
}

/// One timed repetition of a point.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SampleRow {
    pub experiment: String,
    pub point: usize,
    pub worker: usize,
    pub rep: usize,
    pub gpu_ms: f64,
    pub wall_ms: f64,
    /// Beyond 1.5 IQR of the point's quartiles.
    pub outlier: bool,
}

/// A point that failed on the GPU (out of memory, device lost, a hung submission),
/// with the error; failed.csv. `--resume` measures it again.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
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

/// The column names of a row type, in order, as serde writes them.
pub fn columns_of<T: Serialize + Default>() -> Vec<String> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer
        .serialize(T::default())
        .expect("a row serializes to CSV");
    let bytes = writer.into_inner().expect("a Vec takes every byte");
    let mut reader = csv::Reader::from_reader(bytes.as_slice());
    let headers = reader.headers().expect("the header just written");
    headers.iter().map(str::to_string).collect()
}

/// The columns of points.csv.
pub fn point_columns() -> Vec<String> {
    columns_of::<PointRow>()
}

/// The columns of samples.csv.
pub fn sample_columns() -> Vec<String> {
    columns_of::<SampleRow>()
}

/// What a grid point adds to its row.
#[derive(Clone, Copy, Debug)]
pub struct GridFigures {
    pub bandwidth: BandwidthShare,
    /// The counted run's last check, if it ran.
    pub last_check: Option<BalanceCheck>,
}

/// The figures of one measured point.
pub struct PointOutcome<'a> {
    pub point: &'a Point,
    /// The worker (position in `--devices`) and its device.
    pub worker: usize,
    pub device: &'a DeviceInfo,
    /// The module that ran.
    pub kernel: String,
    pub measurement: &'a Measurement,
    pub work: WorkCount,
    pub dispatches: usize,
    pub batch: u32,
    /// The timed pipeline's compiler statistics; empty where the driver has none.
    pub compiler_statistics: &'a [CompilerStatistic],
    /// Droplet-shaped walk steps/s at this map size, if measured.
    pub peak_walk_steps_per_s: Option<f64>,
    pub total_height_change: f64,
    /// The largest change of one cell, in height units (instrumented run).
    pub max_cell_change: f64,
    pub contention: Contention,
    /// The run's cell changes against the baseline's (experiment/stability.rs), for
    /// droplets.
    pub stability: Option<Judgement>,
    /// The grid's bandwidth and balance, for pipes.
    pub grid: Option<GridFigures>,
    /// The terrain's landform before the run and after the instrumented run.
    pub landform: (Landform, Landform),
    /// Two runs of the same job: cells that differ, and the largest difference in
    /// height units.
    pub rerun_cells_differing: usize,
    pub rerun_max_difference: f64,
    /// NVML's reads around the timed repetitions, where there is NVML.
    pub gpu_before: Option<GpuState>,
    pub gpu_after: Option<GpuState>,
}

impl PointOutcome<'_> {
    pub fn row(&self, meta: &Meta) -> PointRow {
        let s = &self.point.settings;
        let m = self.measurement;
        let c = &self.contention;
        let (before, after) = &self.landform;
        let per_s = |count: u64, ms: f64| count as f64 / (ms / 1e3);
        let steps_per_s = per_s(self.work.steps, m.gpu_ms.median);
        PointRow {
            experiment: meta.experiment.clone(),
            device: self.device.name.clone(),
            driver: self.device.driver_info.clone(),
            commit: meta.git_commit.clone(),
            point: self.point.index,
            worker: self.worker,
            algorithm: s.algorithm,
            size: s.size,
            seed: s.seed,
            relief: s.terrain().relief,
            droplets: s.droplets,
            droplet_seed: s.job().seed,
            lifetime: s.lifetime,
            inertia: s.inertia,
            capacity: s.capacity,
            erosion: s.erosion,
            deposition: s.deposition,
            evaporation: s.evaporation,
            scale: s.scale,
            physics: s.physics,
            rounding: s.rounding,
            workgroup: s.workgroup,
            batch: self.batch,
            batches: s
                .droplets
                .checked_div(self.batch)
                .map_or(0, |_| s.droplets.div_ceil(self.batch)),
            variant: s.variant,
            atomics: s.atomic_mode(),
            spawn: s.spawn,
            tile: s.tile,
            tile_order: s.tile_order,
            phases: s.phases,
            passes: s.passes,
            stagger: s.stagger,
            spirv: s.spirv,
            shared_kib: s.shared_kib,
            lever: s.lever,
            pipes_steps: s.pipes_steps,
            pipes_dt: s.pipes_dt,
            pipes_rain: s.pipes_rain,
            pipes_evaporation: s.pipes_evaporation,
            pipes_area: s.pipes_area,
            pipes_capacity: s.pipes_capacity,
            pipes_dissolving: s.pipes_dissolving,
            pipes_deposition: s.pipes_deposition,
            pipes_advection: s.pipes_advection,
            pipes_fusion: s.pipes_fusion,
            pipes_packing: s.pipes_packing,
            pipes_tiles: s.pipes_tiles,
            pipes_workgroup: s.pipes_workgroup,
            kernel: self.kernel.clone(),
            compiler_stats: statistics_summary(self.compiler_statistics),
            dispatches: self.dispatches,
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
            steps: self.work.steps,
            atomic_adds: self.work.atomics,
            droplets_per_s: per_s(self.work.droplets, m.gpu_ms.median),
            steps_per_s,
            // Longer times mean lower rates: q3 of the time gives q1 of the rate.
            steps_per_s_q1: per_s(self.work.steps, m.gpu_ms.q3),
            steps_per_s_q3: per_s(self.work.steps, m.gpu_ms.q1),
            steps_per_s_ci_low: m.gpu_ms_ci.map(|(_, high)| per_s(self.work.steps, high)),
            steps_per_s_ci_high: m.gpu_ms_ci.map(|(low, _)| per_s(self.work.steps, low)),
            atomics_per_s: per_s(self.work.atomics, m.gpu_ms.median),
            peak_walk_steps_per_s: self.peak_walk_steps_per_s,
            percent_of_peak: match &self.grid {
                Some(g) => Some(g.bandwidth.percent_of_ceiling),
                None => self
                    .peak_walk_steps_per_s
                    .map(|peak| 100.0 * steps_per_s / peak),
            },
            bytes_per_cell_step: self.grid.map(|g| g.bandwidth.bytes_per_cell_step),
            bandwidth_bytes_per_s: self.grid.map(|g| g.bandwidth.bytes_per_s),
            peak_copy_bytes_per_s: self.grid.map(|g| g.bandwidth.ceiling_bytes_per_s),
            water_error: self.grid.and_then(|g| g.last_check).map(|c| c.water_error),
            advection_drift: self
                .grid
                .and_then(|g| g.last_check)
                .map(|c| c.advection_drift),
            total_height_change: self.total_height_change,
            max_cell_change: self.max_cell_change,
            in_flight_per_cell: f64::from(self.batch.min(s.droplets)) / f64::from(s.size).powi(2),
            change_max_ratio: self.stability.map(|j| j.max_ratio),
            change_spread_ratio: self.stability.map(|j| j.spread_ratio),
            unstable: self.stability.map(|j| j.unstable),
            hits_max: c.hits_max,
            hits_p99: c.hits_p99,
            hottest_1pct_share: c.hottest_1pct_share,
            subgroup_conflicts_per_1000: c.subgroup_conflicts_per_1000,
            zero_add_share: c.zero_add_share,
            mass_intended: c.mass_intended,
            mass_applied: c.mass_applied,
            mass_received: c.mass_received,
            mass_truncated: c.mass_truncated,
            mass_lost: c.mass_lost,
            mass_eroded: c.mass_eroded,
            mass_deposited: c.mass_deposited,
            mass_at_death: c.mass_at_death,
            mass_off_edge: c.mass_off_edge,
            balance_terrain: c.balance_terrain,
            balance_sediment: c.balance_sediment,
            hypsometric_integral_before: before.hypsometric_integral,
            hypsometric_integral_after: after.hypsometric_integral,
            mean_slope_before: before.mean_slope,
            mean_slope_after: after.mean_slope,
            drainage_density_before: before.drainage_density,
            drainage_density_after: after.drainage_density,
            concavity_before: before.concavity,
            concavity_after: after.concavity,
            channel_incision_before: before.channel_incision,
            channel_incision_after: after.channel_incision,
            rerun_cells_differing: self.rerun_cells_differing,
            rerun_max_difference: self.rerun_max_difference,
            sm_mhz_before: self.gpu_before.map(|g| g.sm_mhz),
            sm_mhz_after: self.gpu_after.map(|g| g.sm_mhz),
            memory_mhz_after: self.gpu_after.map(|g| g.memory_mhz),
            temperature_c_after: self.gpu_after.map(|g| g.temperature_c),
            power_w_after: self.gpu_after.map(|g| g.power_w),
            throttle_after: self.gpu_after.map(|g| g.slowing_reasons_text()),
            slowed: self
                .gpu_before
                .zip(self.gpu_after)
                .map(|(before, after)| slowed(&before, &after)),
            device_spread_percent: None,
        }
    }

    pub fn samples<'m>(&'m self, meta: &'m Meta) -> impl Iterator<Item = SampleRow> + 'm {
        let (point, worker) = (self.point.index, self.worker);
        self.measurement
            .samples
            .iter()
            .enumerate()
            .map(move |(rep, sample)| SampleRow {
                experiment: meta.experiment.clone(),
                point,
                worker,
                rep,
                gpu_ms: sample.gpu_ms,
                wall_ms: sample.wall_ms,
                outlier: sample.outlier,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn column_names_are_unique() {
        let mut names = point_columns();
        let count = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), count);
    }

    #[test]
    fn a_row_reads_back_by_name_as_it_was_written() {
        let row = PointRow {
            experiment: "e".into(),
            point: 7,
            relief: 2048.5,
            stagger: true,
            variant: DropletShader::FastQuads,
            peak_walk_steps_per_s: Some(1.5e9),
            steps_per_s: 0.1 + 0.2,
            ..PointRow::default()
        };
        let mut writer = csv::Writer::from_writer(Vec::new());
        writer.serialize(&row).unwrap();
        let bytes = writer.into_inner().unwrap();
        let text = String::from_utf8(bytes.clone()).unwrap();
        assert!(
            text.contains(",on,") && text.contains(",fast-quads,"),
            "{text}"
        );
        let mut reader = csv::Reader::from_reader(bytes.as_slice());
        let back: PointRow = reader.deserialize().next().unwrap().unwrap();
        assert_eq!(back, row);
    }
}
