//! The strategies compared by dose: each run's figures as a quantity of the trajectory
//! (water rained, erosion, cost, the landform after), gathered over seeds into a mean
//! with Student's 95% interval per strategy and level of water (`dose.csv`), and drawn
//! against the erosion they took (`<terrain>/dose.png`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::runs::{Measured, ERODED_DEPTH, TERRAIN, WATER_PER_CELL, WATER_RAINED};
use crate::experiment::report::plot::PlotError;
use crate::experiment::report::{write_charts, Chart, PlotPoint, Series};
use crate::experiment::results::columns::{ALGORITHM, HEIGHT_UNIT};
use crate::experiment::run::ChangeFigures;
use crate::stats::Moments;
use crate::studies::equivalence::landform_figures;
use crate::table::{Column, Section};
use crate::terrain::metrics::Landform;
use crate::terrain::units::LengthUnit;

/// Per terrain: the trajectories' panels (`.png`, `.svg`).
pub const DOSE_CHART: &str = "dose";

/// The level of every interval of `dose.csv` and of the charts' bars.
pub const INTERVAL_LEVEL: f64 = 0.95;

/// The quantity the trajectories are drawn against: the erosion a run did.
const EROSION: &str = ERODED_DEPTH.0;
/// The quantity on the x axis of the erosion's own panel.
const WATER: &str = WATER_RAINED.0;
/// What the erosion cost.
const COST: &str = "gpu_ms";
/// A landform figure left out of the trajectories: the fit's own error, where the
/// seeds' interval of the concavity is the one to read.
const LEFT_OUT: &str = "concavity_se";

/// Every quantity of a trajectory with its value: of the run after it, or with
/// `before` of the terrain it started from (no water, no erosion, no cost); only the
/// columns for `None`.
pub fn quantities(run: Option<&Measured>, before: bool) -> Vec<(Column, Option<f64>)> {
    let change = run.map(|m| &m.outcome.report.change);
    let per_cell = |volume: fn(&ChangeFigures) -> f64| {
        run.map(|m| m.per_cell(volume(&m.outcome.report.change)))
    };
    // Before erosion nothing was rained, eroded, changed or spent.
    let done = |v: Option<f64>| if before { Some(0.0) } else { v };
    let mut out = vec![
        (
            Column::new(WATER, WATER_RAINED.1, WATER_RAINED.2),
            done(run.map(|m| m.at.water_rained)),
        ),
        (
            Column::new(EROSION, ERODED_DEPTH.1, ERODED_DEPTH.2),
            done(per_cell(|c| c.eroded)),
        ),
        (
            Column::new(
                "net_depth",
                "height units",
                "(deposited - eroded) over the map's cells: the mean change",
            ),
            done(per_cell(|c| c.deposited - c.eroded)),
        ),
        (
            Column::new(COST, "ms", "GPU time of the run: what the erosion cost"),
            done(run.map(Measured::gpu_ms)),
        ),
    ];
    let landform = run
        .and_then(|m| m.outcome.report.landform.as_ref())
        .map(|l| landform_figures(if before { &l.before } else { &l.after }));
    for &(name, unit, meaning) in Landform::COLUMNS.iter().filter(|c| c.0 != LEFT_OUT) {
        let value = landform
            .as_ref()
            .and_then(|figures| figures.iter().find(|(n, _)| n == name))
            .and_then(|(_, v)| *v);
        out.push((Column::new(name, unit, meaning), value));
    }
    let split = [
        (
            "channel_mean_change",
            "mean change of the initial terrain's channels (D8 on the filled map, top 5% area)",
            change.and_then(|c| c.channel_mean_change),
        ),
        (
            "hillslope_mean_change",
            "mean change of every other cell",
            change.and_then(|c| c.hillslope_mean_change),
        ),
    ];
    for (name, meaning, value) in split {
        out.push((Column::new(name, "height units", meaning), done(value)));
    }
    out
}

/// One run's quantities, where it sits: `level` `None` for the terrain before.
pub struct DoseRun {
    pub terrain: String,
    pub algorithm: String,
    pub level: Option<usize>,
    pub height_unit: String,
    pub length_unit: LengthUnit,
    pub values: Vec<Option<f64>>,
}

impl DoseRun {
    /// The entry of `measured` at `level`, or with `None` of the terrain before it.
    pub fn of(level: Option<usize>, measured: &Measured) -> Self {
        let outcome = measured.outcome;
        Self {
            terrain: measured.at.terrain.to_string(),
            algorithm: outcome.report.algorithm.as_str().to_string(),
            level,
            height_unit: outcome.report.height_unit.name.clone(),
            length_unit: outcome.units().length_unit,
            values: quantities(Some(measured), level.is_none())
                .into_iter()
                .map(|(_, v)| v)
                .collect(),
        }
    }
}

/// The mean of one quantity over seeds, with its interval where two seeds or more have
/// one.
#[derive(Clone, Copy, Debug)]
struct Gathered {
    mean: f64,
    interval: Option<(f64, f64)>,
    /// Seeds with a value.
    n: usize,
}

/// One strategy at one level: its quantities over the seeds.
struct DosePoint<'a> {
    terrain: &'a str,
    algorithm: &'a str,
    water_per_cell: f64,
    height_unit: &'a str,
    length_unit: LengthUnit,
    seeds: usize,
    quantities: Vec<Gathered>,
}

/// How many seeds a row of `dose.csv` is over.
const SEEDS: (&str, &str, &str) = ("seeds", "count", "the seeds the means are over");

/// The key columns of `dose.csv`, before each quantity's mean and interval.
const KEYS: &[(&str, &str, &str)] = &[
    TERRAIN,
    ALGORITHM,
    WATER_PER_CELL,
    HEIGHT_UNIT,
    SEEDS,
    (
        "missing",
        "text",
        "quantities some seeds had no value of (a fit with too few bins), with how many did",
    ),
];

/// The columns of `dose.csv`.
pub fn dose_columns() -> Vec<Column> {
    let percent = INTERVAL_LEVEL * 100.0;
    let mut columns: Vec<Column> = KEYS.iter().map(|&(n, u, m)| Column::new(n, u, m)).collect();
    for (q, _) in quantities(None, false) {
        columns.push(Column::new(
            format!("{}_mean", q.name),
            &q.unit,
            format!("{}: mean over the seeds", q.meaning),
        ));
        for side in ["low", "high"] {
            columns.push(Column::new(
                format!("{}_ci_{side}", q.name),
                &q.unit,
                format!("{side} end of the mean's {percent}% Student interval over the seeds"),
            ));
        }
    }
    columns
}

fn gather(runs: &[&DoseRun], quantity: usize) -> Gathered {
    let values: Vec<f64> = runs.iter().filter_map(|r| r.values[quantity]).collect();
    let summary = Moments::of(&values);
    Gathered {
        mean: summary.mean,
        interval: summary.mean_interval(INTERVAL_LEVEL),
        n: values.len(),
    }
}

impl DosePoint<'_> {
    fn record(&self) -> Vec<String> {
        let names: Vec<String> = quantities(None, false)
            .into_iter()
            .map(|(c, _)| c.name)
            .collect();
        let missing: Vec<String> = self
            .quantities
            .iter()
            .zip(&names)
            .filter(|(g, _)| g.n < self.seeds)
            .map(|(g, name)| format!("{name}: {} of {}", g.n, self.seeds))
            .collect();
        let mut record = vec![
            self.terrain.to_string(),
            self.algorithm.to_string(),
            self.water_per_cell.to_string(),
            self.height_unit.to_string(),
            self.seeds.to_string(),
            missing.join("; "),
        ];
        let number = |v: f64| {
            if v.is_finite() {
                v.to_string()
            } else {
                String::new()
            }
        };
        for g in &self.quantities {
            let (lo, hi) = g.interval.map_or((f64::NAN, f64::NAN), |i| i);
            record.extend([number(g.mean), number(lo), number(hi)]);
        }
        record
    }
}

/// The runs gathered per (terrain, strategy, level), in the order they ran; the level
/// `None` (before) first.
fn points<'a>(runs: &'a [DoseRun], water_per_cell: &[f64]) -> Vec<DosePoint<'a>> {
    let mut groups: BTreeMap<(usize, usize, Option<usize>), Vec<&DoseRun>> = BTreeMap::new();
    let mut terrains: Vec<&str> = Vec::new();
    let mut algorithms: Vec<&str> = Vec::new();
    for run in runs {
        let index = |names: &mut Vec<&'a str>, name: &'a str| {
            names.iter().position(|n| *n == name).unwrap_or_else(|| {
                names.push(name);
                names.len() - 1
            })
        };
        let t = index(&mut terrains, &run.terrain);
        let a = index(&mut algorithms, &run.algorithm);
        groups.entry((t, a, run.level)).or_default().push(run);
    }
    let count = quantities(None, false).len();
    groups
        .into_iter()
        .map(|((t, a, level), runs)| DosePoint {
            terrain: terrains[t],
            algorithm: algorithms[a],
            water_per_cell: level.map_or(0.0, |l| water_per_cell[l]),
            height_unit: &runs[0].height_unit,
            length_unit: runs[0].length_unit,
            seeds: runs.len(),
            quantities: (0..count).map(|q| gather(&runs, q)).collect(),
        })
        .collect()
}

/// `dose.csv`'s rows.
pub fn dose_records(runs: &[DoseRun], water_per_cell: &[f64]) -> Vec<Vec<String>> {
    points(runs, water_per_cell)
        .iter()
        .map(DosePoint::record)
        .collect()
}

/// A quantity's name in words and its unit, for a terrain whose heights are in
/// `height_unit` on a grid of `lengths`: "pits" is "pits (count of depressions)".
fn in_words(column: &Column, height_unit: &str, lengths: LengthUnit) -> (String, String) {
    // Generated terrain's heights are in cell widths.
    let height = match height_unit {
        "cells" => "cell widths",
        other => other,
    };
    let metres = lengths == LengthUnit::Metres;
    let (words, unit) = match column.name.as_str() {
        WATER => ("water rained, as a depth", "cell widths"),
        EROSION => ("mean erosion depth", height),
        "net_depth" => ("mean net change (deposit - erosion)", height),
        COST => ("GPU time", "ms"),
        "hypsometric_integral" => ("hypsometric integral", "ratio"),
        "mean_slope" => ("mean slope", "rise over run"),
        "steep_share" => ("cells steeper than 35°", "share of cells"),
        "drainage_density" if metres => ("drainage density", "per km"),
        "drainage_density" => ("drainage density", "per cell width"),
        "concavity" => ("concavity θ", "exponent"),
        "channel_incision" => ("channel incision", height),
        "pits" => ("pits", "count of depressions"),
        "sinks" => ("sinks", "count of cells"),
        "flats" => ("flat cells", "count of cells"),
        "depression_volume" if metres => ("depression volume", "m³"),
        "depression_volume" => ("depression volume", "cell widths³"),
        "channel_mean_change" => ("mean change of channels", height),
        "hillslope_mean_change" => ("mean change of hillslopes", height),
        other => {
            let unit = Landform::unit(other, lengths).unwrap_or(&column.unit);
            return (other.replace('_', " "), unit.to_string());
        }
    };
    (words.to_string(), unit.to_string())
}

/// Panels of one terrain's trajectories into `stem`.png and .svg: the erosion each
/// strategy's water did, then every other quantity against that erosion, the terrain
/// before as a dashed level with a marker of its strategy's own, each point the seeds'
/// mean with its intervals in x and y.
pub fn draw_trajectories(
    stem: &Path,
    terrain: &str,
    runs: &[DoseRun],
    water_per_cell: &[f64],
) -> Result<Vec<PathBuf>, PlotError> {
    draw_points(stem, terrain, &points(runs, water_per_cell))
}

/// A row of `dose.csv`: a point's names, owned.
struct DoseRow {
    terrain: String,
    algorithm: String,
    height_unit: String,
    water_per_cell: f64,
    seeds: usize,
    quantities: Vec<Gathered>,
}

impl DoseRow {
    fn point(&self) -> DosePoint<'_> {
        DosePoint {
            terrain: &self.terrain,
            algorithm: &self.algorithm,
            water_per_cell: self.water_per_cell,
            height_unit: &self.height_unit,
            // dose.csv names the heights' unit: cells for generated terrain, else a
            // DEM's, on a grid of metres.
            length_unit: match self.height_unit.as_str() {
                "cells" => LengthUnit::Cells,
                _ => LengthUnit::Metres,
            },
            seeds: self.seeds,
            quantities: self.quantities.clone(),
        }
    }
}

/// The rows of `dose.csv` at `path`.
fn read_dose_csv(path: &Path) -> Result<Vec<DoseRow>, PlotError> {
    let bad = |reason: String| PlotError::Input {
        path: path.to_path_buf(),
        reason,
    };
    crate::check_regular_file(path).map_err(|e| bad(e.to_string()))?;
    let mut reader = csv::Reader::from_path(path).map_err(|e| bad(e.to_string()))?;
    let header: Vec<String> = reader
        .headers()
        .map_err(|e| bad(e.to_string()))?
        .iter()
        .map(str::to_string)
        .collect();
    let names: Vec<String> = quantities(None, false)
        .into_iter()
        .map(|(c, _)| c.name)
        .collect();
    let mut out = Vec::new();
    for (r, record) in reader.records().enumerate() {
        let record = record.map_err(|e| bad(e.to_string()))?;
        // Header, then one line per row.
        let line = r + 2;
        let field = |name: &str| -> Result<&str, PlotError> {
            header
                .iter()
                .position(|h| h == name)
                .and_then(|i| record.get(i))
                .ok_or_else(|| bad(format!("line {line} has no column {name:?}")))
        };
        let number = |name: &str| -> Result<f64, PlotError> {
            match field(name)? {
                "" => Ok(f64::NAN),
                text => text
                    .parse()
                    .map_err(|_| bad(format!("line {line}: {text:?} in {name:?} is no number"))),
            }
        };
        let seeds = number(SEEDS.0)?;
        let quantities = names
            .iter()
            .map(|name| {
                let (low, high) = (
                    number(&format!("{name}_ci_low"))?,
                    number(&format!("{name}_ci_high"))?,
                );
                Ok(Gathered {
                    mean: number(&format!("{name}_mean"))?,
                    interval: (low.is_finite() && high.is_finite()).then_some((low, high)),
                    n: seeds as usize,
                })
            })
            .collect::<Result<Vec<_>, PlotError>>()?;
        out.push(DoseRow {
            terrain: field(TERRAIN.0)?.to_string(),
            algorithm: field(ALGORITHM.0)?.to_string(),
            height_unit: field(HEIGHT_UNIT.0)?.to_string(),
            water_per_cell: number(WATER_PER_CELL.0)?,
            seeds: seeds as usize,
            quantities,
        });
    }
    Ok(out)
}

/// Every terrain's trajectories drawn again from a `dose.csv`, into
/// `<dir>/<terrain>/dose.png` and .svg, as `vkerode strategies` draws them.
pub fn redraw_dose_csv(dose_csv: &Path, dir: &Path) -> Result<Vec<PathBuf>, PlotError> {
    let rows = read_dose_csv(dose_csv)?;
    let points: Vec<DosePoint> = rows.iter().map(DoseRow::point).collect();
    let mut terrains: Vec<&str> = Vec::new();
    for p in &points {
        if !terrains.contains(&p.terrain) {
            terrains.push(p.terrain);
        }
    }
    let mut written = Vec::new();
    for terrain in terrains {
        let stem = dir.join(terrain).join(DOSE_CHART);
        written.extend(draw_points(&stem, terrain, &points)?);
    }
    Ok(written)
}

fn draw_points(stem: &Path, terrain: &str, all: &[DosePoint]) -> Result<Vec<PathBuf>, PlotError> {
    let mine: Vec<&DosePoint> = all.iter().filter(|p| p.terrain == terrain).collect();
    let columns: Vec<Column> = quantities(None, false)
        .into_iter()
        .map(|(c, _)| c)
        .collect();
    let at = |name: &str| columns.iter().position(|c| c.name == name);
    let erosion = at(EROSION).ok_or(PlotError::MissingColumn(EROSION))?;
    let water = at(WATER).ok_or(PlotError::MissingColumn(WATER))?;
    let Some(first) = mine.first() else {
        return Err(PlotError::NoRuns(terrain.to_string()));
    };
    let label = |c: &Column| {
        let (words, unit) = in_words(c, first.height_unit, first.length_unit);
        format!("{words} ({unit})")
    };
    let mut algorithms: Vec<&str> = Vec::new();
    for p in &mine {
        if !algorithms.contains(&p.algorithm) {
            algorithms.push(p.algorithm);
        }
    }
    // The panel of quantity `y` against quantity `x`.
    let panel = |y: usize, x: usize| -> Chart {
        let point = |p: &DosePoint| PlotPoint {
            x_bar: p.quantities[x].interval,
            y_bar: p.quantities[y].interval,
            ..PlotPoint::at(p.quantities[x].mean, p.quantities[y].mean)
        };
        let mut series: Vec<Series> = algorithms
            .iter()
            .map(|&a| {
                let points = mine
                    .iter()
                    .filter(|p| p.algorithm == a && p.water_per_cell > 0.0)
                    .map(|p| point(p))
                    .filter(|p| p.x.is_finite() && p.y.is_finite())
                    .collect();
                Series::line(a, points)
            })
            .collect();
        // Each strategy's landform before erosion, which its trajectory leaves (the
        // strategies hold the terrain in their own arithmetic): a level of its own.
        let is_landform = Landform::COLUMNS.iter().any(|c| c.0 == columns[y].name);
        for &a in algorithms.iter().filter(|_| is_landform) {
            let before = mine
                .iter()
                .find(|p| p.algorithm == a && p.water_per_cell == 0.0)
                .map(|p| p.quantities[y].mean)
                .filter(|v| v.is_finite());
            if let Some(level) = before {
                series.push(Series::before(format!("{a}: before erosion"), level));
            }
        }
        let (words, _) = in_words(&columns[y], first.height_unit, first.length_unit);
        Chart::figure(
            &format!("{terrain}: {words}"),
            &label(&columns[x]),
            &label(&columns[y]),
            &format!(
                "bar: {}% interval of the mean over {} seeds",
                INTERVAL_LEVEL * 100.0,
                first.seeds
            ),
            series,
        )
    };
    let mut charts = vec![panel(erosion, water)];
    charts.extend(
        (0..columns.len())
            .filter(|&q| q != erosion && q != water)
            .map(|q| match columns[q].name.as_str() {
                // Costs span decades between the strategies.
                COST => panel(q, erosion).with_log_y(),
                _ => panel(q, erosion),
            }),
    );
    write_charts(stem, &charts, 4, (640, 440))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_quantity_has_a_mean_and_an_interval_column() {
        let names: Vec<String> = dose_columns().into_iter().map(|c| c.name).collect();
        assert_eq!(names.len(), KEYS.len() + 3 * quantities(None, false).len());
        for q in [
            "eroded_depth",
            "hypsometric_integral",
            "pits",
            "hillslope_mean_change",
        ] {
            for suffix in ["_mean", "_ci_low", "_ci_high"] {
                assert!(names.contains(&format!("{q}{suffix}")), "{q}{suffix}");
            }
        }
        assert!(!names.iter().any(|n| n.starts_with(LEFT_OUT)));
    }

    fn run(algorithm: &str, level: Option<usize>, values: &[Option<f64>]) -> DoseRun {
        let count = quantities(None, false).len();
        let mut all = values.to_vec();
        all.resize(count, Some(1.0));
        DoseRun {
            terrain: "t".into(),
            algorithm: algorithm.into(),
            level,
            height_unit: "cells".into(),
            length_unit: LengthUnit::Cells,
            values: all,
        }
    }

    #[test]
    fn seeds_are_gathered_per_strategy_and_level_with_students_interval() {
        let runs = [
            run("droplets", Some(0), &[Some(1.0), Some(2.0)]),
            run("droplets", Some(0), &[Some(1.0), Some(4.0)]),
            run("pipes", Some(0), &[Some(1.0), None]),
            run("droplets", Some(1), &[Some(2.0), Some(8.0)]),
        ];
        let records = dose_records(&runs, &[0.5, 1.0]);
        assert_eq!(records.len(), 3);
        let column = |name: &str| dose_columns().iter().position(|c| c.name == name).unwrap();
        let first = &records[0];
        assert_eq!(first[column("algorithm")], "droplets");
        assert_eq!(first[column("water_per_cell")], "0.5");
        assert_eq!(first[column("seeds")], "2");
        assert_eq!(first[column("eroded_depth_mean")], "3");
        // 3 -+ 12.706 x sqrt(2 / 2).
        let low: f64 = first[column("eroded_depth_ci_low")].parse().unwrap();
        assert!((low - (3.0 - 12.7062)).abs() < 1e-3, "{low}");
        // One seed: a mean and no interval; a seed without the value is named.
        let pipes = &records[2];
        assert_eq!(pipes[column("algorithm")], "pipes");
        assert_eq!(records[1][column("water_per_cell")], "1");
        assert_eq!(pipes[column("eroded_depth_ci_low")], "");
        assert_eq!(pipes[column("eroded_depth_mean")], "");
        assert_eq!(pipes[column("missing")], "eroded_depth: 0 of 1");
    }

    #[test]
    fn the_dose_charts_say_their_quantities_in_words_and_each_strategys_state_before() {
        let names: Vec<String> = quantities(None, false)
            .into_iter()
            .map(|(c, _)| c.name)
            .collect();
        let erosion = names.iter().position(|n| n == EROSION).unwrap();
        let water = names.iter().position(|n| n == WATER).unwrap();
        let at = |algorithm: &str, level: Option<usize>, seed: f64| {
            let depth = level.map_or(0.0, |l| (l + 1) as f64 * 2.0 + seed);
            let mut values = vec![Some(1.0 + seed); names.len()];
            values[erosion] = Some(depth);
            values[water] = Some(level.map_or(0.0, |l| (l + 1) as f64));
            let mut r = run(algorithm, level, &values);
            r.values = values;
            r
        };
        let runs: Vec<DoseRun> = ["droplets", "pipes"]
            .into_iter()
            .flat_map(|a| {
                [0.0, 0.5]
                    .into_iter()
                    .flat_map(move |seed| [None, Some(0), Some(1)].map(|level| at(a, level, seed)))
            })
            .collect();
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let written = draw_trajectories(&dir.join("dose"), "t", &runs, &[1.0, 2.0]).unwrap();
        let svg = std::fs::read_to_string(&written[1]).unwrap();
        let texts: Vec<&str> = svg
            .split("<text")
            .skip(1)
            .filter_map(|t| Some(t[t.find('>')? + 1..t.find("</text>")?].trim()))
            .collect();
        for words in [
            "t: pits",
            "pits (count of depressions)",
            "t: depression volume",
            "depression volume (cell widths³)",
            "mean erosion depth (cell widths)",
            "droplets: before erosion",
            "pipes: before erosion",
            "bar: 95% interval of the mean over 2 seeds",
        ] {
            assert!(texts.contains(&words), "{words:?} not in {texts:?}");
        }
        assert!(
            !texts
                .iter()
                .any(|t| t.contains('_') || t.contains("cells3")),
            "a raw column name: {texts:?}"
        );
    }
}
