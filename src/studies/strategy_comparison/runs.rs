//! One run of a strategies comparison as a row of `strategies.csv`: the columns every
//! strategy shares, the landform before and after, and each strategy's own.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::erosion::{RunSettings, ALL_STRATEGIES};
use crate::experiment::results::columns::{
    ColumnDeclaration, ALGORITHM, DEPOSITED, ERODED, GPU_MS_CI_HIGH, GPU_MS_CI_LOW, HEIGHT_UNIT,
    STOP_REASON, TIMED_REPETITIONS,
};
use crate::experiment::results::{read_records, Measurement, ResultsError};
use crate::experiment::run::ErodeOutcome;
use crate::table::{Column, Row, Section};

/// Where a run sits in the comparison.
#[derive(Clone, Copy, Debug)]
pub struct RunAt<'a> {
    pub terrain: &'a str,
    pub seed: u32,
    /// The level of the dose axis asked for, and the water the whole dose rained.
    pub water_per_cell: f64,
    pub water_rained: f64,
    /// The comparison's sea (kernel height units).
    pub base_level: f32,
}

/// One run of the comparison: where it sits, what ran, what it cost and what it gave.
#[derive(Clone, Copy)]
pub struct Measured<'a> {
    pub at: RunAt<'a>,
    pub settings: &'a RunSettings,
    /// The timed repetitions of its cost.
    pub cost: &'a Measurement,
    pub outcome: &'a ErodeOutcome,
}

impl Measured<'_> {
    /// Its cost: the median GPU time of the repetitions.
    pub fn gpu_ms(&self) -> f64 {
        self.cost.gpu_ms.median
    }

    /// `volume` (height units x cells) over the map's cells: a mean depth.
    pub fn per_cell(&self, volume: f64) -> f64 {
        let before = &self.outcome.before;
        volume / (before.width() * before.height()) as f64
    }
}

/// The terrain a run started from and the level of water it rained, as strategies.csv
/// and dose.csv both name them.
pub const TERRAIN: ColumnDeclaration = ("terrain", "text", "the [[terrain]] the strategies ran on");
pub const WATER_PER_CELL: ColumnDeclaration = (
    "water_per_cell",
    "kernel height units",
    "the level of the dose axis: water to rain, as a depth over every cell (0 in dose.csv: the terrain before erosion)",
);

/// The water a run rained and the erosion it did, as strategies.csv and dose.csv (its
/// mean over the seeds) both name them.
pub const WATER_RAINED: ColumnDeclaration = (
    "water_rained",
    "kernel height units",
    "the water the run's whole dose rained, as a depth over every cell (a droplet's water of 1 counts as 1 height unit over one cell; a grid step rains pipes_rain x pipes_dt)",
);
pub const ERODED_DEPTH: ColumnDeclaration = (
    "eroded_depth",
    "height units",
    "eroded over the map's cells: the mean lowering, the dose's measure of erosion",
);

/// The comparison's sea, as strategies.csv records it (runs before the sea record none).
pub const BASE_LEVEL: ColumnDeclaration = (
    "base_level",
    "height units",
    "the surface of the sea past the map's edges that every strategy's water drains into (the config's base_level: by default the terrain's lowest edge cell)",
);

/// A strategy's run on one terrain, as the columns of `strategies.csv` it shares with
/// every strategy.
#[derive(Clone, Debug, Default, Serialize)]
struct StrategyColumns {
    terrain: String,
    algorithm: String,
    seed: u32,
    water_per_cell: f64,
    water_rained: f64,
    base_level: f64,
    width: usize,
    height: usize,
    /// The dose: droplets, or time steps of a grid.
    work: u64,
    gpu_ms: f64,
    gpu_ms_ci_low: Option<f64>,
    gpu_ms_ci_high: Option<f64>,
    timed_reps: usize,
    stop_reason: String,
    unit: String,
    steps_per_s: f64,
    height_unit: String,
    eroded: f64,
    deposited: f64,
    net_change: f64,
    eroded_depth: f64,
    sediment_left: f64,
}

impl Section for StrategyColumns {
    const COLUMNS: &'static [(&'static str, &'static str, &'static str)] = &[
        TERRAIN,
        ALGORITHM,
        ("seed", "seed", "the noise's terrain seed and the droplets' seed"),
        WATER_PER_CELL,
        WATER_RAINED,
        BASE_LEVEL,
        ("width", "cells", "the map's width"),
        ("height", "cells", "the map's height"),
        ("work", "droplets or time steps", "the dose that rains water_per_cell"),
        (
            "gpu_ms",
            "ms",
            "median GPU time (timestamps) of the run's timed repetitions after warm-up, as a sweep measures a point ([measure])",
        ),
        GPU_MS_CI_LOW,
        GPU_MS_CI_HIGH,
        ("timed_reps", "count", TIMED_REPETITIONS),
        STOP_REASON,
        ("unit", "text", "what steps_per_s counts: droplet-steps or cell-steps"),
        ("steps_per_s", "unit/s", "the run's steps per GPU second, in its own unit"),
        HEIGHT_UNIT,
        ERODED,
        DEPOSITED,
        ("net_change", "height units x cells", "deposited - eroded"),
        ERODED_DEPTH,
        (
            "sediment_left",
            "height units x cells",
            "eroded material still in transport at the end (droplets' load at death, suspended sediment)",
        ),
    ];
}

/// The row of one strategy's run; `None` for the header alone.
pub fn row(run: Option<&Measured>) -> Row {
    let mut row = Row::default();
    let common = run.map(|m| {
        let (at, settings, cost, outcome) = (m.at, m.settings, m.cost, m.outcome);
        let gpu_ms = m.gpu_ms();
        let (ci_low, ci_high) = cost
            .gpu_ms_ci
            .map_or((None, None), |(l, h)| (Some(l), Some(h)));
        let change = &outcome.report.change;
        let figures = &outcome.report.figures;
        let (width, height) = (outcome.before.width(), outcome.before.height());
        StrategyColumns {
            terrain: at.terrain.into(),
            algorithm: settings.algorithm.as_str().into(),
            seed: at.seed,
            water_per_cell: at.water_per_cell,
            water_rained: at.water_rained,
            base_level: outcome.report.height_unit.of(f64::from(at.base_level)),
            width,
            height,
            work: settings.strategy().dose(settings),
            gpu_ms,
            gpu_ms_ci_low: ci_low,
            gpu_ms_ci_high: ci_high,
            timed_reps: cost.samples.len(),
            stop_reason: cost.stop.as_str().into(),
            unit: figures.unit.name().into(),
            steps_per_s: figures.steps as f64 / (gpu_ms / 1e3),
            height_unit: outcome.report.height_unit.name.clone(),
            eroded: change.eroded,
            deposited: change.deposited,
            net_change: change.deposited - change.eroded,
            eroded_depth: m.per_cell(change.eroded),
            sediment_left: outcome
                .report
                .height_unit
                .of(outcome.figures.sediment_left()),
        }
    });
    row.push(common.as_ref());
    let landform = run.and_then(|m| m.outcome.report.landform);
    row.push_suffixed(
        landform.as_ref().map(|l| &l.before),
        "_before",
        "before the run",
    );
    row.push_suffixed(
        landform.as_ref().map(|l| &l.after),
        "_after",
        "after the run",
    );
    for strategy in ALL_STRATEGIES.iter() {
        let columns: Vec<Column> = strategy.figures_columns();
        let values = run
            .filter(|m| m.settings.algorithm == strategy.algorithm())
            .map(|m| {
                let mut values = m.outcome.figures.values(m.gpu_ms() / 1e3);
                m.outcome
                    .report
                    .height_unit
                    .convert_values(&columns, &mut values);
                values
            });
        row.push_columns(columns, values);
    }
    row
}

/// The columns of strategies.csv.
pub fn strategies_columns() -> Vec<Column> {
    row(None).columns
}

/// One line of what a run did.
pub fn describe(m: &Measured) -> String {
    let (at, settings, gpu_ms) = (m.at, m.settings, m.gpu_ms());
    let r = &m.outcome.report;
    let incision = match &r.landform {
        Some(l) => format!(
            "channel incision {:.3} -> {:.3} {}",
            l.before.channel_incision,
            l.after.channel_incision,
            r.height_unit.height_label()
        ),
        None => "no landform figures".into(),
    };
    let strategy = settings.strategy();
    let volume = r.height_unit.sum_label();
    format!(
        "{} seed {} {}: water {:.3} per cell, {} {} in {gpu_ms:.1} ms, {:.3e} {}/s; eroded {:.1} {volume}, deposited {:.1} {volume}; {incision}",
        at.terrain,
        at.seed,
        settings.algorithm.as_str(),
        at.water_rained,
        strategy.dose(settings),
        strategy.dose_key(),
        r.figures.steps as f64 / (gpu_ms / 1e3),
        r.figures.unit.name(),
        r.change.eroded,
        r.change.deposited,
    )
}

/// What a reader of strategies.csv reads back of a run, by the names its columns are
/// written with ([`StrategyColumns`]'s fields): a column a file lacks, or a field that is
/// not a value of its type, is none.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
pub struct RunRecord {
    #[serde(default, deserialize_with = "csv::invalid_option")]
    pub algorithm: Option<String>,
    #[serde(default, deserialize_with = "csv::invalid_option")]
    pub seed: Option<u32>,
    #[serde(default, deserialize_with = "csv::invalid_option")]
    pub gpu_ms: Option<f64>,
    #[serde(default, deserialize_with = "csv::invalid_option")]
    pub eroded_depth: Option<f64>,
}

/// A strategies.csv file read back: its header, and each run's record.
pub struct RunRecords {
    pub header: Vec<String>,
    pub runs: Vec<RunRecord>,
}

impl RunRecords {
    /// Every run of the strategies.csv at `path`; a row with another number of fields
    /// is refused.
    pub fn read(path: &Path) -> Result<Self, ResultsError> {
        let (header, runs) = read_records(path, |_| Ok(()))?;
        Ok(Self { header, runs })
    }
}

/// Whether runs of a strategies.csv of these columns record the sea they drained into
/// ([`BASE_LEVEL`]): runs from before it have none.
pub fn records_base_level(header: &[String]) -> bool {
    header.iter().any(|h| h == BASE_LEVEL.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_reads_back_by_the_names_it_is_written_with() {
        let columns = StrategyColumns {
            algorithm: "pipes".into(),
            seed: 3,
            gpu_ms: 2.5,
            eroded_depth: 0.25,
            ..StrategyColumns::default()
        };
        let mut writer = csv::WriterBuilder::new()
            .has_headers(false)
            .from_writer(Vec::new());
        writer
            .write_record(StrategyColumns::COLUMNS.iter().map(|c| c.0))
            .unwrap();
        writer.serialize(&columns).unwrap();
        let text = writer.into_inner().unwrap();
        let mut reader = csv::Reader::from_reader(text.as_slice());
        let read: Vec<RunRecord> = reader.deserialize().collect::<Result<_, _>>().unwrap();
        assert_eq!(
            read,
            [RunRecord {
                algorithm: Some("pipes".into()),
                seed: Some(3),
                gpu_ms: Some(2.5),
                eroded_depth: Some(0.25),
            }]
        );
    }
}
