//! One point of a sweep, measured the same way whatever its strategy. Its GPU share:
//! timed repetitions between two reads of the GPU's state, GPM's counters over a window
//! of further runs, the replays of the time split where `measure.replay` asks, the
//! instrumented run and two timed reruns. Then its CPU share where `measure.judge`
//! asks (the strategy's own judgement of the reruns, and the landform unless
//! `measure.landform` is off), and its samples and row recorded. On a GPU the CPU share
//! of one point runs on another core while the GPU measures the next (`workers.rs`).

use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::config::{Experiment, MeasureSettings, Point};
use super::input::PointInput;
use super::measure::measure_runs;
use super::SweepError;
use crate::erosion::{initial_cells, CountedRun, ErosionError, Prepared, ReplayTraffic};
use crate::experiment::results::{
    point_row, InputRecord, Measurement, PointValues, ResultsWriter, SampleRow, StageTimes,
};
use crate::experiment::run::{gpm_counters, CeilingShare, InvariantError, RunError, TimeSplit};
use crate::gpu::{CompilerStatistic, Context};
use crate::probes::ceilings::Ceilings;
use crate::probes::gpu_state::{GpmCounters, GpuMonitor, GpuState};
use crate::table::Row;
use crate::terrain::metrics::Landform;
use crate::terrain::units::{GridUnits, HeightUnit};
use crate::terrain::MapInfo;
use crate::terrain::{generate_on_gpu, Arithmetic, Cells, Change, Heightmap, TerrainSpec};

/// The initial terrain of the last points: its heights, and its initial state in the
/// last arithmetic asked for, reused while points share them (a 4096² map's conversion
/// took a quarter of a second a point, in the GPU's share).
#[derive(Default)]
pub(super) struct TerrainCache {
    heights: Option<(TerrainSpec, Heightmap)>,
    initial: Option<KeptInitial>,
}

struct KeptInitial {
    source: MapSource,
    arithmetic: Arithmetic,
    map: MapInfo,
    cells: Arc<Cells>,
}

/// The map a point starts from: erosion noise, or an input loaded once for every point
/// that names it (the same load is the same `Arc`).
#[derive(Clone)]
enum MapSource {
    Noise(TerrainSpec),
    Input(Arc<PointInput>),
}

impl PartialEq for MapSource {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (MapSource::Noise(a), MapSource::Noise(b)) => a == b,
            (MapSource::Input(a), MapSource::Input(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

impl TerrainCache {
    /// The initial state of `point` in `arithmetic`, and its map.
    fn initial(
        &mut self,
        ctx: &Arc<Context>,
        point: &Point,
        arithmetic: Arithmetic,
    ) -> Result<(Arc<Cells>, MapInfo), RunError> {
        let source = match &point.input {
            Some(input) => MapSource::Input(Arc::clone(input)),
            None => MapSource::Noise(point.settings.terrain()),
        };
        if let Some(kept) = &self.initial {
            if kept.source == source && kept.arithmetic == arithmetic {
                return Ok((kept.cells.clone(), kept.map));
            }
        }
        self.initial = None;
        let heights = match &point.input {
            // Read and prepared at load, for every point that shares it.
            Some(input) => &input.heights,
            None => self.heights(ctx, point.settings.terrain())?,
        };
        let map = MapInfo::of(heights);
        let cells = Arc::new(initial_cells(heights, arithmetic)?);
        self.initial = Some(KeptInitial {
            source,
            arithmetic,
            map,
            cells: cells.clone(),
        });
        Ok((cells, map))
    }

    /// The erosion noise of `spec`, in height units.
    fn heights(&mut self, ctx: &Arc<Context>, spec: TerrainSpec) -> Result<&Heightmap, RunError> {
        if self.heights.as_ref().is_none_or(|(s, _)| *s != spec) {
            self.heights = Some((spec, generate_on_gpu(ctx, &spec)?));
        }
        Ok(&self.heights.as_ref().expect("generated above").1)
    }
}

/// The landform of the last initial state, reused while points share it; the threads
/// that finish points share it, and one computes it while the others wait.
#[derive(Default)]
pub(super) struct LandformCache(Mutex<Option<(u64, Landform)>>);

impl LandformCache {
    /// The landform of `initial` (kernel units), in the map's units.
    fn of(&self, initial: &Cells, units: &GridUnits) -> Landform {
        let key = initial.checksum();
        let mut kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
        match *kept {
            Some((k, landform)) if k == key => landform,
            _ => {
                let landform = Landform::of_kernel(&initial.heightmap(), units);
                *kept = Some((key, landform));
                landform
            }
        }
    }
}

/// What every point of a sweep is measured with.
pub(super) struct PointContext<'a> {
    pub(super) ctx: &'a Arc<Context>,
    pub(super) experiment: &'a Experiment,
    pub(super) monitor: Option<&'a GpuMonitor>,
    /// Its position in `--devices`.
    pub(super) worker: usize,
}

/// A point whose GPU share is done: what its CPU share and its row need.
pub(super) struct MeasuredPoint<'p> {
    pub(super) point: &'p Point,
    map: MapInfo,
    units: GridUnits,
    height_unit: HeightUnit,
    initial: Arc<Cells>,
    counted: CountedRun,
    reruns: [Cells; 2],
    kernel: String,
    statistics: Vec<CompilerStatistic>,
    dispatches: usize,
    measurement: Measurement,
    ceiling: Option<CeilingShare>,
    split: Option<TimeSplit>,
    gpu_before: Option<GpuState>,
    gpu_after: Option<GpuState>,
    gpm: Option<GpmCounters>,
    stages: StageTimes,
}

impl MeasuredPoint<'_> {
    /// Cells of its map.
    pub(super) fn cells(&self) -> u64 {
        self.initial.len() as u64
    }
}

/// A point's row, its samples, what `--verbose` tells of it, and its stage times.
pub(super) struct FinishedPoint {
    row: Row,
    samples: Vec<SampleRow>,
    pub(super) line: String,
    pub(super) stages: StageTimes,
}

fn read_back(cells: Option<Cells>) -> Result<Cells, RunError> {
    Ok(cells.ok_or(InvariantError::NoHeightsBack)?)
}

fn change(before: &Cells, after: &Cells) -> Result<Change, RunError> {
    Ok(Change::between(before, after).ok_or(InvariantError::ShapeOrArithmeticChanged)?)
}

/// Seconds since `*clock`, which moves on to now: the stage just ended.
fn lap(clock: &mut Instant) -> f64 {
    let now = Instant::now();
    let seconds = (now - *clock).as_secs_f64();
    *clock = now;
    seconds
}

impl PointContext<'_> {
    /// The point's GPU share: every run on the device, and the figures that need it.
    pub(super) fn measure_on_gpu<'p>(
        &self,
        point: &'p Point,
        terrain: &mut TerrainCache,
        ceilings: &mut Ceilings,
    ) -> Result<MeasuredPoint<'p>, RunError> {
        let (ctx, s) = (self.ctx, &point.settings);
        let measure = &self.experiment.config.measure;
        let strategy = s.strategy();
        let mut stages = StageTimes::default();
        let mut clock = Instant::now();
        let (initial, map) = terrain.initial(ctx, point, strategy.arithmetic(s))?;
        let (units, height_unit) = match &point.input {
            Some(input) => (input.units, input.height_unit.clone()),
            None => (GridUnits::default(), HeightUnit::cells()),
        };
        stages.stage_terrain_s = lap(&mut clock);
        let mut prepared = strategy.prepare(ctx, s, &initial)?;
        stages.stage_prepare_s = lap(&mut clock);
        let gpu_before = self.monitor.and_then(GpuMonitor::read);
        let measurement = measure_runs(measure, || {
            let run = prepared.run_timed(false)?;
            Ok::<_, ErosionError>((run.gpu_time, run.wall_time))
        })?;
        let gpu_after = self.monitor.and_then(GpuMonitor::read);
        stages.point_gpu_s = measurement.gpu_s();
        stages.stage_warmup_s = measurement.warmup.wall_s;
        stages.stage_timed_s = lap(&mut clock) - measurement.warmup.wall_s;
        let gpm = match self.monitor {
            Some(monitor) => gpm_counters(monitor, prepared.as_mut())?,
            None => None,
        };
        stages.stage_gpm_s = lap(&mut clock);
        let split = match measure.replay {
            true => time_split(prepared.as_mut(), measurement.gpu_ms.median, measure)?,
            false => None,
        };
        stages.stage_replay_s = lap(&mut clock);
        let counted = prepared.run_counted()?;
        stages.stage_counted_s = lap(&mut clock);
        let first = read_back(prepared.run_timed(true)?.cells)?;
        let second = read_back(prepared.run_timed(true)?.cells)?;
        stages.stage_reruns_s = lap(&mut clock);
        let rate = counted.work as f64 / (measurement.gpu_ms.median / 1e3);
        let (kernel, statistics, dispatches) = (
            prepared.kernel(),
            prepared.statistics().to_vec(),
            prepared.dispatches(),
        );
        // The map's buffers go before its CPU share is handed on.
        drop(prepared);
        Ok(MeasuredPoint {
            point,
            map,
            units,
            height_unit,
            ceiling: CeilingShare::of(strategy.ceiling(s, map), rate, ceilings)?,
            initial,
            counted,
            reruns: [first, second],
            kernel,
            statistics,
            dispatches,
            measurement,
            split,
            gpu_before,
            gpu_after,
            gpm,
            stages,
        })
    }

    /// The point's CPU share, where `measure.judge` asks, then its row.
    pub(super) fn finish(
        &self,
        measured: MeasuredPoint,
        landforms: &LandformCache,
        commit: &str,
    ) -> Result<FinishedPoint, RunError> {
        let MeasuredPoint {
            point,
            initial,
            mut counted,
            reruns: [first, second],
            measurement,
            mut stages,
            ..
        } = measured;
        let measure = &self.experiment.config.measure;
        let mut clock = Instant::now();
        if measure.judge {
            counted
                .figures
                .judge_reruns(&initial, &counted.cells, &[&first, &second]);
        }
        stages.stage_judge_s = lap(&mut clock);
        let landform = (measure.judge
            && measure.landform
            && Landform::feasible(initial.len() as u64))
        .then(|| {
            (
                landforms.of(&initial, &measured.units),
                Landform::of_kernel(&first.heightmap(), &measured.units),
            )
        });
        stages.stage_landform_s = lap(&mut clock);
        let values = PointValues {
            experiment: &self.experiment.config.name,
            commit,
            point: point.index,
            worker: self.worker,
            device: self.ctx.info(),
            settings: &point.settings,
            input: point.input.as_ref().map(|input| InputRecord {
                path: &input.written,
                hash: &input.hash,
                cell_size: input.units.cell_size,
                vertical_scale: input.units.vertical_scale,
            }),
            map: measured.map,
            kernel: measured.kernel,
            compiler_statistics: &measured.statistics,
            dispatches: measured.dispatches,
            measurement: &measurement,
            work: counted.work,
            ceiling: measured.ceiling,
            split: measured.split,
            figures: counted.figures.as_ref(),
            change: change(&initial, &first)?,
            rerun: change(&first, &second)?,
            counted_total: change(&initial, &counted.cells)?.total,
            height_unit: measured.height_unit,
            landform,
            gpu_before: measured.gpu_before,
            gpu_after: measured.gpu_after,
            gpm: measured.gpm,
            stages: &stages,
        };
        let row = point_row(Some(&values));
        let samples: Vec<SampleRow> = measurement
            .samples
            .iter()
            .enumerate()
            .map(|(rep, sample)| SampleRow {
                experiment: self.experiment.config.name.clone(),
                point: point.index,
                worker: self.worker,
                rep,
                gpu_ms: sample.gpu_ms,
                wall_ms: sample.wall_ms,
                outlier: sample.outlier,
            })
            .collect();
        let line = format!(
            "{} repetitions ({}), median GPU time {:.3} ms",
            measurement.samples.len(),
            measurement.stop.as_str(),
            measurement.gpu_ms.median
        );
        Ok(FinishedPoint {
            row,
            samples,
            line,
            stages,
        })
    }

    /// Records a finished point's samples and row.
    pub(super) fn record(
        &self,
        point: &Point,
        finished: &FinishedPoint,
        writer: &Mutex<ResultsWriter>,
    ) -> Result<(), SweepError> {
        let mut writer = writer.lock().unwrap_or_else(|e| e.into_inner());
        writer.record((point.index, self.worker), &finished.row, &finished.samples)?;
        Ok(())
    }
}

/// The point's time against the replays of its recorded addresses, each measured as
/// its repetitions are; `None` for a strategy without a replay.
fn time_split(
    prepared: &mut dyn Prepared,
    run_ms: f64,
    measure: &MeasureSettings,
) -> Result<Option<TimeSplit>, ErosionError> {
    let Some(mut replay) = prepared.record_replay()? else {
        return Ok(None);
    };
    let mut medians = [0.0; 4];
    for (median, traffic) in medians.iter_mut().zip(ReplayTraffic::ALL) {
        *median = measure_runs(measure, || replay.run(traffic))?.gpu_ms.median;
    }
    Ok(Some(TimeSplit::of(run_ms, medians)))
}

/// The commit the results set records, which every row repeats.
pub(super) fn writer_commit(writer: &Mutex<ResultsWriter>) -> String {
    let writer = writer.lock().unwrap_or_else(|e| e.into_inner());
    writer.meta().git_commit.clone()
}
