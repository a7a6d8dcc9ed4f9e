//! One point of a sweep, measured the same way whatever its strategy: timed
//! repetitions between two reads of the GPU's state, GPM's counters over a window of
//! further runs, the replays of the time split where `measure.replay` asks, the
//! instrumented run, two timed reruns, then the CPU's share where `measure.judge` asks
//! (the strategy's own judgement of the reruns, and the landform unless
//! `measure.landform` is off), and the point's samples
//! and row recorded.

use std::sync::{Arc, Mutex};

use super::config::{Experiment, MeasureSettings, Point};
use super::measure::measure_runs;
use super::SweepError;
use crate::erosion::{ErosionError, Prepared, ReplayTraffic};
use crate::experiment::results::{point_row, InputRecord, PointValues, ResultsWriter, SampleRow};
use crate::experiment::run::{gpm_counters, CeilingShare, InvariantError, RunError, TimeSplit};
use crate::gpu::Context;
use crate::probes::ceilings::Ceilings;
use crate::probes::gpu_state::GpuMonitor;
use crate::table::Row;
use crate::terrain::metrics::Landform;
use crate::terrain::units::{GridUnits, HeightUnit};
use crate::terrain::MapInfo;
use crate::terrain::{generate_on_gpu, Cells, Change, Heightmap, TerrainSpec};

/// The initial terrain of the last point and the landform of the last initial state,
/// reused while points share them.
#[derive(Default)]
pub(super) struct TerrainCache {
    heights: Option<(TerrainSpec, Heightmap)>,
    landform: Option<(u64, Landform)>,
}

impl TerrainCache {
    /// The erosion noise of `spec`, in height units.
    fn heights(&mut self, ctx: &Arc<Context>, spec: TerrainSpec) -> Result<&Heightmap, RunError> {
        if self.heights.as_ref().is_none_or(|(s, _)| *s != spec) {
            self.heights = Some((spec, generate_on_gpu(ctx, &spec)?));
        }
        Ok(&self.heights.as_ref().expect("generated above").1)
    }

    /// The landform of `initial` (kernel units), in the map's units.
    fn landform(&mut self, initial: &Cells, units: &GridUnits) -> Landform {
        let key = initial.checksum();
        match self.landform {
            Some((k, landform)) if k == key => landform,
            _ => {
                let landform = Landform::of_kernel(&initial.heightmap(), units);
                self.landform = Some((key, landform));
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

fn read_back(cells: Option<Cells>) -> Result<Cells, RunError> {
    Ok(cells.ok_or(InvariantError::NoHeightsBack)?)
}

fn change(before: &Cells, after: &Cells) -> Result<Change, RunError> {
    Ok(Change::between(before, after).ok_or(InvariantError::ShapeOrArithmeticChanged)?)
}

impl PointContext<'_> {
    /// Measures one point and records its samples and row.
    pub(super) fn measure(
        &self,
        point: &Point,
        terrain: &mut TerrainCache,
        ceilings: &mut Ceilings,
        writer: &Mutex<ResultsWriter>,
    ) -> Result<String, SweepError> {
        let (row, samples, line) = self.run(point, terrain, ceilings, &writer_commit(writer))?;
        let mut writer = writer.lock().unwrap_or_else(|e| e.into_inner());
        writer.record((point.index, self.worker), &row, &samples)?;
        Ok(line)
    }

    /// The point's runs: its row, its samples and what `--verbose` tells of it.
    fn run(
        &self,
        point: &Point,
        terrain: &mut TerrainCache,
        ceilings: &mut Ceilings,
        commit: &str,
    ) -> Result<(Row, Vec<SampleRow>, String), RunError> {
        let (ctx, s) = (self.ctx, &point.settings);
        let judge = self.experiment.config.measure.judge;
        let strategy = s.strategy();
        let heights = match &point.input {
            // Read and prepared at load, for every point that shares it.
            Some(input) => &input.heights,
            None => terrain.heights(ctx, s.terrain())?,
        };
        let map = MapInfo::of(heights);
        let (units, height_unit) = match &point.input {
            Some(input) => (input.units, input.height_unit.clone()),
            None => (GridUnits::default(), HeightUnit::cells()),
        };
        let initial = strategy.initial(s, heights)?;
        let mut prepared = strategy.prepare(ctx, s, &initial)?;
        let gpu_before = self.monitor.and_then(GpuMonitor::read);
        let measurement = measure_runs(&self.experiment.config.measure, || {
            let run = prepared.run_timed(false)?;
            Ok::<_, ErosionError>((run.gpu_time, run.wall_time))
        })?;
        let gpu_after = self.monitor.and_then(GpuMonitor::read);
        let gpm = match self.monitor {
            Some(monitor) => gpm_counters(monitor, prepared.as_mut())?,
            None => None,
        };
        let run_ms = measurement.gpu_ms.median;
        let split = match self.experiment.config.measure.replay {
            true => time_split(prepared.as_mut(), run_ms, &self.experiment.config.measure)?,
            false => None,
        };
        let mut counted = prepared.run_counted()?;
        let first = read_back(prepared.run_timed(true)?.cells)?;
        let second = read_back(prepared.run_timed(true)?.cells)?;
        // The CPU's share last: the GPU work above runs without pauses.
        if judge {
            counted
                .figures
                .judge_reruns(&initial, &counted.cells, &[&first, &second]);
        }
        let rate = counted.work as f64 / (measurement.gpu_ms.median / 1e3);
        let values = PointValues {
            experiment: &self.experiment.config.name,
            commit,
            point: point.index,
            worker: self.worker,
            device: ctx.info(),
            settings: s,
            input: point.input.as_ref().map(|input| InputRecord {
                path: &input.written,
                hash: &input.hash,
            }),
            map,
            kernel: prepared.kernel(),
            compiler_statistics: prepared.statistics(),
            dispatches: prepared.dispatches(),
            measurement: &measurement,
            work: counted.work,
            ceiling: CeilingShare::of(strategy.ceiling(s, map), rate, ceilings)?,
            split,
            figures: counted.figures.as_ref(),
            change: change(&initial, &counted.cells)?,
            rerun: change(&first, &second)?,
            height_unit,
            landform: (judge
                && self.experiment.config.measure.landform
                && Landform::feasible(initial.len() as u64))
            .then(|| {
                (
                    terrain.landform(&initial, &units),
                    Landform::of_kernel(&counted.cells.heightmap(), &units),
                )
            }),
            gpu_before,
            gpu_after,
            gpm,
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
        Ok((row, samples, line))
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
fn writer_commit(writer: &Mutex<ResultsWriter>) -> String {
    let writer = writer.lock().unwrap_or_else(|e| e.into_inner());
    writer.meta().git_commit.clone()
}
