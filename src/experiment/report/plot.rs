//! `vkerode plot`: throughput charts from points.csv files (of any vkerode version), as
//! PNG and SVG. One
//! series per value of a chosen column and per device; error bars of the median's 95%
//! confidence interval (quartiles for older files); a ring on points with outlying
//! repetitions; a cross on wrong answers (a net change beyond [`WRONG_ANSWER_MARGIN`]
//! from its CPU reference's); a log-2 x axis when every x is a power of two.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use thiserror::Error;

use super::compare::{Answer, WRONG_ANSWER_MARGIN};
use crate::erosion::droplets::NET_CHANGE_VS_REFERENCE;
use crate::erosion::{Ceiling, WorkUnit};
use crate::experiment::results::{point_columns, read_points, CsvText, Meta};
use crate::table::Column;
use crate::terrain::files::{
    check_apart, check_overwrite, write_atomically, Overwrite, WriteError,
};
use crate::terrain::image::write_png;
use crate::terrain::pictures::ensure_font;

const SIZE: (u32, u32) = (960, 600);
const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(23, 190, 207),
];

#[cfg(test)]
mod tests {
    #[test]
    fn numeric_legends_sort_as_numbers() {
        let mut names = vec![
            "H200, workgroup 128",
            "H200, workgroup 16",
            "H200, workgroup 256",
            "H200, workgroup 8",
            "H200, variant fast",
        ];
        names.sort_by(|a, b| super::natural_order(a, b));
        assert_eq!(
            names,
            [
                "H200, variant fast",
                "H200, workgroup 8",
                "H200, workgroup 16",
                "H200, workgroup 128",
                "H200, workgroup 256"
            ]
        );
        assert!(super::natural_order("a2", "a10").is_lt() && super::natural_order("", "a").is_lt());
    }

    #[test]
    fn x_labels_are_whole_numbers_or_millions() {
        assert_eq!(super::format_x(4096.0), "4096");
        assert_eq!(super::format_x(4_000_000.0), "4M");
        assert_eq!(super::format_x(1_048_576.0), "1.049M");
        assert_eq!(super::format_x(0.1 + 8.86), "8.96");
        assert_eq!(super::format_x(0.5), "0.5");
        assert_eq!(super::format_y(-1e-17, 0.4), "0");
        assert_eq!(super::format_y(2e-4, 0.4), "2e-4");
        // An axis of tiny values keeps them.
        assert_eq!(super::format_y(2e-13, 1e-12), "2e-13");
    }

    #[test]
    fn the_y_title_puts_the_datas_power_of_a_thousand_on_the_unit() {
        assert_eq!(super::y_title("droplet-steps/s", "G"), "G droplet-steps/s");
        assert_eq!(super::y_title("droplet-steps/s", ""), "droplet-steps/s");
        assert_eq!(
            super::y_title("cell-steps/s or droplet-steps/s", "M"),
            "M cell-steps/s or M droplet-steps/s"
        );
        assert_eq!(
            super::y_title("pits (count of depressions)", "k"),
            "pits (10³ depressions)"
        );
        assert_eq!(super::y_title("share", "k"), "share (×10³)");
    }

    #[test]
    fn each_state_before_has_a_marker_of_its_own_shape() {
        let shapes: Vec<_> = (0..4).map(super::before_marker).collect();
        for (i, a) in shapes.iter().enumerate() {
            assert!(shapes[i + 1..].iter().all(|b| b != a), "{shapes:?}");
        }
    }

    #[test]
    fn a_log_2_axis_labels_only_powers_of_two() {
        assert_eq!(super::x_tick(Some(2.0), 8.0), "8");
        assert_eq!(super::x_tick(Some(2.0), 9.6), "");
        assert_eq!(super::x_tick(None, 9.6), "9.6");
        assert_eq!(super::x_tick(Some(10.0), 50.0), "50");
        assert_eq!(super::x_tick(Some(10.0), 0.2), "0.2");
        assert_eq!(super::x_tick(Some(10.0), 70.0), "");
    }

    #[test]
    fn steps_and_peaks_are_labelled_in_each_strategys_unit() {
        let set = |names: &[&str]| names.iter().map(|n| n.to_string()).collect();
        let label = |column, units: &[&str], ceilings: &[&str]| {
            super::metric_label(column, &set(units), &set(ceilings))
        };
        assert_eq!(
            label("steps_per_s", &["droplet-steps"], &[]),
            "droplet-steps/s"
        );
        assert_eq!(label("steps_per_s", &["cell-steps"], &[]), "cell-steps/s");
        assert_eq!(
            label("steps_per_s", &["cell-steps", "droplet-steps"], &[]),
            "cell-steps/s or droplet-steps/s"
        );
        assert_eq!(
            label("cell_steps_per_s", &["cell-steps"], &[]),
            "cell-steps/s"
        );
        assert_eq!(
            label("percent_of_peak", &[], &["streaming-copy"]),
            "% of the copy bandwidth"
        );
        assert!(
            label("percent_of_peak", &[], &["droplet-walk", "streaming-copy"])
                .contains("each strategy")
        );
        assert_eq!(
            label("mass_lost", &[], &[]),
            "mass_lost (height units x cells)"
        );
    }
}

#[derive(Debug, Error)]
pub enum PlotError {
    #[error("{}: {reason}", path.display())]
    Input { path: PathBuf, reason: String },
    #[error("{column:?} is not a points.csv column; the columns are: {} (and {RATE} for --y, each row's rate in its unit)", columns.join(", "))]
    UnknownColumn {
        column: String,
        columns: Vec<String>,
    },
    #[error("{} also vary among the plotted points and would be drawn as one line; make one the --series and fix the others with --where", .0.join(", "))]
    Varying(Vec<String>),
    #[error("the CSV files hold no points")]
    NoPoints,
    #[error("no plottable points: every row has a non-finite or absurd value ({})", .0.join(", "))]
    NonePlottable(Vec<String>),
    #[error("no runs on {0} to draw")]
    NoRuns(String),
    /// A column the chart is drawn from is not among the columns it reads.
    #[error("the chart's columns lack {0}")]
    MissingColumn(&'static str),
    #[error("--out {} is a file; --out is the folder the charts go into", .0.display())]
    OutIsFile(PathBuf),
    #[error("{} is a folder; choose another --name for the charts", .0.display())]
    ChartIsFolder(PathBuf),
    #[error(transparent)]
    Output(#[from] WriteError),
    #[error("drawing the chart: {0}")]
    Draw(DrawError),
}

/// What plotters reported while drawing, in its words: its error's type differs by
/// backend (bitmap, SVG).
#[derive(Debug, Error)]
#[error("{0}")]
pub struct DrawError(String);

impl DrawError {
    pub fn of(e: &dyn std::fmt::Display) -> Self {
        Self(e.to_string())
    }
}

#[derive(Clone)]
pub struct PlotRequest {
    pub csvs: Vec<PathBuf>,
    /// Column on the x axis (an axis of the sweep).
    pub x: String,
    /// Metric on the y axis.
    pub y: String,
    /// Column whose values each get a series.
    pub series: Option<String>,
    /// Only rows whose column equals the value: (column, value).
    pub filters: Vec<(String, String)>,
    /// Output path without extension (`--out DIR` joined with `--name`); `.png` and
    /// `.svg` are written.
    pub out: PathBuf,
    /// Whether the charts may replace files of the same name (`--force`).
    pub overwrite: Overwrite,
}

/// One point of a series, with its error bars: for points.csv the median's confidence
/// interval (else the quartiles) in y; a ring where it had outlying repetitions; a
/// cross where its answer is wrong.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlotPoint {
    pub x: f64,
    pub y: f64,
    pub y_bar: Option<(f64, f64)>,
    pub x_bar: Option<(f64, f64)>,
    pub ringed: bool,
    pub wrong_answer: bool,
}

impl PlotPoint {
    pub fn at(x: f64, y: f64) -> Self {
        Self {
            x,
            y,
            y_bar: None,
            x_bar: None,
            ringed: false,
            wrong_answer: false,
        }
    }
}

pub struct Series {
    pub name: String,
    pub points: Vec<PlotPoint>,
    /// A state before the trajectory: one point's y drawn as a dashed level across the
    /// panel, with a hollow marker of its own at the left edge (its x is not drawn).
    pub before: bool,
}

impl Series {
    pub fn line(name: impl Into<String>, points: Vec<PlotPoint>) -> Self {
        Self {
            name: name.into(),
            points,
            before: false,
        }
    }

    /// A level before the trajectory, at `y`.
    pub fn before(name: impl Into<String>, y: f64) -> Self {
        Self {
            name: name.into(),
            points: vec![PlotPoint::at(f64::NAN, y)],
            before: true,
        }
    }
}

/// Whether a value can sit on an axis: finite, and far from f64's limits, where the
/// axis arithmetic overflows.
fn plottable(v: f64) -> bool {
    v.is_finite() && v.abs() < 1e100
}

/// Whether a column holds times or rates (a unit of ms, or per second): a value of 0 or
/// below in one is no measurement.
fn positive_only(columns: &[Column], name: &str) -> bool {
    columns
        .iter()
        .find(|c| c.name == name)
        .is_some_and(|c| c.unit == "ms" || c.unit.ends_with("/s"))
}

pub struct Chart {
    /// Rows left out for values no axis can hold.
    left_out: Vec<String>,
    title: String,
    x_label: String,
    y_label: String,
    /// Base of a logarithmic x axis: 2 when every x is a power of two, 10 when the x
    /// values span two decades or more, none otherwise.
    log_x: Option<f64>,
    /// A logarithmic y axis, when every y is positive and they span three decades.
    log_y: bool,
    /// Whether a linear y axis starts at 0 (throughput does; a figure whose change is
    /// the point need not).
    y_from_zero: bool,
    series: Vec<Series>,
    /// What the error bars are, for the legend; none where no point has one.
    bars: Option<String>,
}

impl Chart {
    /// "file:line" of the rows left out for values no axis can hold.
    pub fn left_out(&self) -> &[String] {
        &self.left_out
    }

    /// A panel of figures that are not throughput: a linear y axis fitted to the
    /// values, x logarithmic (base 10) where every x and its bar is positive.
    pub fn figure(
        title: &str,
        x_label: &str,
        y_label: &str,
        bars: &str,
        mut series: Vec<Series>,
    ) -> Self {
        for s in &mut series {
            s.points.sort_by(|a, b| a.x.total_cmp(&b.x));
        }
        let positive = series
            .iter()
            .filter(|s| !s.before)
            .flat_map(|s| &s.points)
            .all(|p| p.x > 0.0 && p.x_bar.is_none_or(|(lo, _)| lo > 0.0));
        let has_bars = series
            .iter()
            .flat_map(|s| &s.points)
            .any(|p| p.x_bar.is_some() || p.y_bar.is_some());
        Self {
            left_out: Vec::new(),
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            log_x: positive.then_some(10.0),
            log_y: false,
            y_from_zero: false,
            series,
            bars: has_bars.then(|| bars.to_string()),
        }
    }

    /// The same with y logarithmic, where every y and its bar is positive: for values
    /// over decades.
    pub fn with_log_y(mut self) -> Self {
        self.log_y = self
            .series
            .iter()
            .flat_map(|s| &s.points)
            .all(|p| p.y > 0.0 && p.y_bar.is_none_or(|(lo, _)| lo > 0.0));
        self
    }
}

/// The alias of `--y` for each row's rate in its own strategy's unit.
pub const RATE: &str = "steps_per_s";

/// The label of a metric column, for rows whose rates are in `units` and whose shares
/// are of `ceilings`; a column without a label of its own is named with its unit.
fn metric_label(column: &str, units: &BTreeSet<String>, ceilings: &BTreeSet<String>) -> String {
    let per_s = |names: &BTreeSet<String>| {
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        match names.as_slice() {
            [one] => format!("{one}/s"),
            many => many
                .iter()
                .map(|n| format!("{n}/s"))
                .collect::<Vec<_>>()
                .join(" or "),
        }
    };
    let unit_column = WorkUnit::ALL
        .iter()
        .find(|u| column == format!("{}_per_s", u.column()));
    match column {
        RATE => per_s(units),
        _ if unit_column.is_some() => format!("{}/s", unit_column.expect("matched").name()),
        "percent_of_peak" => match ceilings.iter().collect::<Vec<_>>().as_slice() {
            [one] => format!("% of the {}", Ceiling::label_of(one).unwrap_or(one)),
            _ => "% of each strategy's ceiling".into(),
        },
        "droplets_per_s" => "droplets/s".into(),
        "atomics_per_s" => "atomic adds/s".into(),
        "gpu_ms_median" => "GPU time (ms, median)".into(),
        "wall_ms_median" => "wall time (ms, median)".into(),
        "total_height_change" => "total height change (height units x cells)".into(),
        "subgroup_conflicts_per_1000" => {
            "same-cell conflicts in a subgroup, per 1000 atomics".into()
        }
        "hottest_1pct_share" => "share of atomics on the hottest 1% of cells (fraction)".into(),
        "hits_max" => "atomic adds on the hottest cell (count)".into(),
        "max_cell_change" => "largest change of one cell (height units)".into(),
        "rerun_cells_differing" => "cells that differ between two runs (count)".into(),
        other => match point_columns().into_iter().find(|c| c.name == other) {
            Some(c) => format!("{other} ({})", c.unit),
            None => other.to_string(),
        },
    }
}

fn axis_label(column: &str) -> String {
    match column {
        "workgroup" => "workgroup size (invocations)".into(),
        "size" => "map side (cells)".into(),
        "droplets" => "droplets (count)".into(),
        "batch" => "droplets per dispatch".into(),
        "lifetime" => "lifetime (steps)".into(),
        "scale" => "fixed-point scale (fixed-point units per height unit)".into(),
        "tile" => "tile side (cells)".into(),
        "passes" => "dispatch passes per droplet life (P)".into(),
        "in_flight_per_cell" => "droplets in flight per cell per dispatch".into(),
        "relief" => "terrain relief (height units)".into(),
        "shared_kib" => "shared memory reserved per workgroup (KiB)".into(),
        other => match point_columns().into_iter().find(|c| c.name == other) {
            Some(c) => format!("{other} ({})", c.unit),
            None => other.to_string(),
        },
    }
}

/// The column pairs that may hold a metric's error bar, in order of preference: the
/// median's 95% confidence interval, then the quartiles (all older files have).
fn bar_columns(metric: &str) -> Vec<(String, String)> {
    let stem = metric.strip_suffix("_median").unwrap_or(metric);
    let columns = point_columns();
    let has = |name: &str| columns.iter().any(|c| c.name == name);
    [("ci_low", "ci_high"), ("q1", "q3")]
        .into_iter()
        .map(|(low, high)| (format!("{stem}_{low}"), format!("{stem}_{high}")))
        .filter(|(low, high)| has(low) && has(high))
        .collect()
}

/// What the files' meta.json say of their sweeps: the axes of any, and the fixed
/// settings that differ between them. Files without one (not made by `vkerode sweep`)
/// add nothing.
struct SweepContext {
    axes: BTreeSet<String>,
    differing_fixed: Vec<String>,
}

impl SweepContext {
    fn of(csvs: &[PathBuf]) -> Self {
        let configs: Vec<serde_json::Value> = csvs
            .iter()
            .filter_map(|csv| Meta::read(csv.parent()?).ok())
            .map(|meta| meta.config)
            .collect();
        let keys = |section: &str| -> BTreeSet<String> {
            configs
                .iter()
                .filter_map(|c| c[section].as_object())
                .flat_map(|table| table.keys().cloned())
                .collect()
        };
        let differing_fixed = keys("fixed")
            .into_iter()
            .filter(|key| {
                let values: BTreeSet<String> = configs
                    .iter()
                    .map(|c| c["fixed"][key].to_string())
                    .collect();
                values.len() > 1
            })
            .collect();
        Self {
            axes: keys("axes"),
            differing_fixed,
        }
    }
}

/// The series read so far, with the experiments and devices they came from.
#[derive(Default)]
struct Gathered {
    groups: BTreeMap<String, Series>,
    experiments: Vec<String>,
    devices: Vec<String>,
    /// The units of the rows' rates and the ceilings of their shares.
    units: BTreeSet<String>,
    ceilings: BTreeSet<String>,
    /// "file:line" of the rows left out for a value no axis can hold.
    left_out: Vec<String>,
    /// Each series' name without its device, for a chart of one device.
    without_device: BTreeMap<String, String>,
    /// Whether points' bars are the median's interval, and the quartiles.
    interval_bars: bool,
    quartile_bars: bool,
    /// For each other axis of the sweep: the values it takes at each (series, x). More
    /// than one at any would draw a saw-tooth line.
    others: BTreeMap<(String, String, u64), BTreeSet<String>>,
}

/// The column that holds `metric` in row `r`: itself, or for [`RATE`] the rate in the
/// unit the row has one in; with that unit's name.
fn metric_column(table: &CsvText, r: usize, metric: &str) -> (String, Option<&'static str>) {
    if metric != RATE {
        return (metric.to_string(), None);
    }
    WorkUnit::ALL
        .iter()
        .map(|u| (format!("{}_per_s", u.column()), u.name()))
        .find(|(column, _)| table.get(r, column).is_some_and(|v| !v.is_empty()))
        .map_or((metric.to_string(), None), |(column, unit)| {
            (column, Some(unit))
        })
}

impl Gathered {
    /// Adds the rows of one points.csv that pass the filters.
    fn read(
        &mut self,
        path: &Path,
        request: &PlotRequest,
        others: &[String],
    ) -> Result<(), PlotError> {
        let bad = |reason: String| PlotError::Input {
            path: path.to_path_buf(),
            reason,
        };
        let table = read_points(path).map_err(|e| bad(crate::error_chain(&e)))?;
        let columns = point_columns();
        for r in 0..table.rows.len() {
            let field = |name: &str| table.get(r, name).unwrap_or_default();
            if request.filters.iter().any(|(c, v)| field(c) != v) {
                continue;
            }
            let number = |name: &str| -> Result<f64, PlotError> {
                let text = field(name);
                text.parse::<f64>()
                    .map_err(|_| bad(format!("{text:?} in column {name:?} is not a number")))
            };
            let (y_column, unit) = metric_column(&table, r, &request.y);
            let (x, y) = (number(&request.x)?, number(&y_column)?);
            // Header, then one line per row: row r is on line r + 2.
            let line = r + 2;
            // Values no axis can hold, and times or rates of 0 or below, are left out,
            // and named.
            let absurd =
                |v: f64, column: &str| !plottable(v) || v <= 0.0 && positive_only(&columns, column);
            if absurd(x, &request.x) || absurd(y, &y_column) {
                self.left_out.push(format!("{}:{line}", path.display()));
                continue;
            }
            // Without an interval (one repetition, an older file): the quartiles.
            let bar = bar_columns(&y_column).into_iter().find_map(|(low, high)| {
                let bar = (table.number(r, &low)?, table.number(r, &high)?);
                Some((bar, low.ends_with("_ci_low")))
            });
            match bar {
                Some((_, true)) => self.interval_bars = true,
                Some((_, false)) => self.quartile_bars = true,
                None => {}
            }
            let bar = bar.map(|(bar, _)| bar);
            let row = table.point_row(r);
            let outliers = row.outlier_count().is_some_and(|n| n > 0.0);
            let answer = Answer::of(row.setting_number(NET_CHANGE_VS_REFERENCE.0));
            self.units.extend(unit.map(str::to_string));
            self.ceilings.extend(
                Some(row.ceiling().unwrap_or_default().to_string()).filter(|c| !c.is_empty()),
            );
            let device = row.device().unwrap_or_default().to_string();
            let experiment = row.experiment().unwrap_or_default().to_string();
            if !self.devices.contains(&device) {
                self.devices.push(device.clone());
            }
            if !self.experiments.contains(&experiment) {
                self.experiments.push(experiment);
            }
            let mut name = device.clone();
            let mut short = String::new();
            if let Some(column) = &request.series {
                short = format!("{column} {}", field(column));
                name = format!("{name}, {short}");
            }
            self.without_device.insert(name.clone(), short);
            for axis in others {
                let value = field(axis).to_string();
                let at = (axis.clone(), name.clone(), x.to_bits());
                self.others.entry(at).or_default().insert(value);
            }
            self.groups
                .entry(name.clone())
                .or_insert_with(|| Series::line(name, Vec::new()))
                .points
                .push(PlotPoint {
                    y_bar: bar,
                    ringed: outliers,
                    wrong_answer: answer == Answer::WrongAnswer,
                    ..PlotPoint::at(x, y)
                });
        }
        Ok(())
    }
}

/// Names in the order a reader expects: runs of digits as numbers ("workgroup 16"
/// before "workgroup 128"), the rest as text.
fn natural_order(a: &str, b: &str) -> std::cmp::Ordering {
    fn runs(s: &str) -> Vec<(bool, &str)> {
        let mut out = Vec::new();
        let mut start = 0;
        let digit = |c: char| c.is_ascii_digit();
        let chars: Vec<(usize, char)> = s.char_indices().collect();
        for w in chars.windows(2) {
            if digit(w[0].1) != digit(w[1].1) {
                out.push((digit(w[0].1), &s[start..w[1].0]));
                start = w[1].0;
            }
        }
        if let Some(&(_, last)) = chars.last() {
            out.push((digit(last), &s[start..]));
        }
        out
    }
    for (x, y) in runs(a).into_iter().zip(runs(b)) {
        let order = match (x, y) {
            ((true, m), (true, n)) => m
                .parse::<u128>()
                .unwrap_or(u128::MAX)
                .cmp(&n.parse::<u128>().unwrap_or(u128::MAX))
                .then(m.cmp(n)),
            ((_, m), (_, n)) => m.cmp(n),
        };
        if order.is_ne() {
            return order;
        }
    }
    runs(a).len().cmp(&runs(b).len())
}

fn is_power_of_two(x: f64) -> bool {
    x >= 1.0 && x.fract() == 0.0 && (x as u64).is_power_of_two()
}

/// A log axis for x (base 2 over powers of two, else 10 over two decades) and
/// whether y is log (three decades).
fn log_axes(series: &[Series]) -> (Option<f64>, bool) {
    let xs: Vec<f64> = series.iter().flat_map(|s| &s.points).map(|p| p.x).collect();
    let powers_of_two = xs.iter().all(|&x| is_power_of_two(x));
    let (lo, hi) = xs.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &x| {
        (lo.min(x), hi.max(x))
    });
    let log_x = if powers_of_two {
        Some(2.0)
    } else if lo > 0.0 && hi / lo >= 100.0 {
        Some(10.0)
    } else {
        None
    };
    let ys: Vec<f64> = series.iter().flat_map(|s| &s.points).map(|p| p.y).collect();
    let (y_lo, y_hi) = ys.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &y| {
        (lo.min(y), hi.max(y))
    });
    let log_y = y_lo > 0.0 && y_hi / y_lo >= 1000.0;
    (log_x, log_y)
}

fn read_chart(request: &PlotRequest) -> Result<Chart, PlotError> {
    let columns: Vec<String> = point_columns().into_iter().map(|c| c.name).collect();
    let y_is_rate = request.y == RATE;
    let filtered = request.filters.iter().map(|(column, _)| column);
    for column in [Some(&request.x), Some(&request.y), request.series.as_ref()]
        .into_iter()
        .flatten()
        .chain(filtered)
    {
        if !(columns.contains(column) || y_is_rate && column == &request.y) {
            return Err(PlotError::UnknownColumn {
                column: column.clone(),
                columns,
            });
        }
    }
    let context = SweepContext::of(&request.csvs);
    let others: Vec<String> = context
        .axes
        .iter()
        .filter(|a| **a != request.x && Some(*a) != request.series.as_ref())
        .cloned()
        .collect();
    let mut gathered = Gathered::default();
    for path in &request.csvs {
        gathered.read(path, request, &others)?;
    }
    let varying: Vec<String> = gathered
        .others
        .iter()
        .filter(|(_, values)| values.len() > 1)
        .map(|((axis, _, _), _)| axis.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    match (varying.as_slice(), &request.series) {
        ([], _) => {}
        ([only], None) => {
            // One other axis varies: it becomes the series, not a saw-tooth line.
            let mut with_series = request.clone();
            with_series.series = Some(only.clone());
            return read_chart(&with_series);
        }
        (names, _) => return Err(PlotError::Varying(names.to_vec())),
    }
    let Gathered {
        groups,
        experiments,
        devices,
        units,
        ceilings,
        left_out,
        without_device,
        interval_bars,
        quartile_bars,
        ..
    } = gathered;
    let mut series: Vec<Series> = groups.into_values().collect();
    // One device is named once, in the title; several, in each series' name.
    if devices.len() == 1 {
        for s in &mut series {
            s.name = match without_device.get(&s.name) {
                Some(short) if !short.is_empty() => short.clone(),
                _ => "median of the repetitions".into(),
            };
        }
    }
    let bars = match (interval_bars, quartile_bars) {
        (true, false) => Some(INTERVAL_BARS.to_string()),
        (false, true) => Some(QUARTILE_BARS.to_string()),
        (true, true) => Some(format!("{INTERVAL_BARS} (quartiles without one)")),
        (false, false) => None,
    };
    series.sort_by(|a, b| natural_order(&a.name, &b.name));
    let mut title_filter: String = request
        .filters
        .iter()
        .map(|(column, value)| format!(", {column} {value}"))
        .collect();
    if !context.differing_fixed.is_empty() {
        title_filter += &format!(
            " (files differ in fixed {})",
            context.differing_fixed.join(", ")
        );
    }
    for s in &mut series {
        s.points.sort_by(|a, b| a.x.total_cmp(&b.x));
    }
    if series.iter().all(|s| s.points.is_empty()) {
        return Err(if left_out.is_empty() {
            PlotError::NoPoints
        } else {
            PlotError::NonePlottable(left_out)
        });
    }
    let (log_x, log_y) = log_axes(&series);
    let on_device = match devices.as_slice() {
        [one] => format!(" on {one}"),
        _ => String::new(),
    };
    Ok(Chart {
        left_out,
        title: format!(
            "{}: {} vs {}{title_filter}{on_device}",
            experiments.join(", "),
            metric_label(&request.y, &units, &ceilings),
            request.x,
        ),
        x_label: axis_label(&request.x),
        y_label: metric_label(&request.y, &units, &ceilings),
        log_x,
        log_y,
        y_from_zero: true,
        series,
        bars,
    })
}

/// The legend's words for a points.csv chart's error bars.
const INTERVAL_BARS: &str = "bar: 95% interval of the median";
const QUARTILE_BARS: &str = "bar: quartiles of the repetitions";
/// The legend's words for the rings.
const RING: &str = "ring: some repetitions were outliers";

/// The legend's words for the crosses.
fn wrong_answer_legend() -> String {
    format!(
        "cross: wrong answer, net change > {:.0}% from its CPU reference's",
        100.0 * WRONG_ANSWER_MARGIN
    )
}

/// A wrong answer's cross: black over any series' colour, larger than its dot.
fn wrong_answer_cross<C>(at: C) -> Cross<C, i32> {
    Cross::new(at, 9, BLACK.stroke_width(3))
}

/// The y axis' title for values shown in units of `prefix` (a power of 1000): the unit
/// with its prefix, "G droplet-steps/s" for a rate, the power of ten inside the unit's
/// brackets ("pits (10³ depressions)"), or after the label.
fn y_title(label: &str, prefix: &str) -> String {
    let power = match prefix {
        "" => return label.to_string(),
        "k" => "10³",
        "M" => "10⁶",
        "G" => "10⁹",
        other => other,
    };
    if label.ends_with("/s") && !label.contains('(') {
        return label
            .split(" or ")
            .map(|unit| format!("{prefix} {unit}"))
            .collect::<Vec<_>>()
            .join(" or ");
    }
    match label.rfind('(') {
        Some(open) if label.ends_with(')') => {
            // "(count of depressions)" in thousands is "(10³ depressions)".
            let unit = &label[open + 1..];
            let unit = unit.strip_prefix("count of ").unwrap_or(unit);
            format!("{}({power} {unit}", &label[..open])
        }
        _ => format!("{label} (×{power})"),
    }
}

/// A power-of-1000 prefix for the y axis (and the HTML report's rates).
pub(super) fn y_unit(max: f64) -> (f64, &'static str) {
    match max {
        m if m >= 1e9 => (1e9, "G"),
        m if m >= 1e6 => (1e6, "M"),
        m if m >= 1e3 => (1e3, "k"),
        _ => (1.0, ""),
    }
}

/// Tick labels without a trailing ".0"; large or tiny values in powers of ten. A tick
/// within a billionth of the axis' `span` of zero is 0: the tick at zero of a fitted
/// axis lands a rounding away from it (-1e-17).
fn format_y(v: f64, span: f64) -> String {
    let v = if v.abs() < span * 1e-9 { 0.0 } else { v };
    if v != 0.0 && (v.abs() >= 1e5 || v.abs() < 1e-3) {
        format!("{v:.0e}")
    } else {
        let text = format!("{v:.3}");
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// Whole numbers as they are, millions with an "M", others to three decimals.
fn format_x(v: f64) -> String {
    let trimmed = |s: String| s.trim_end_matches('0').trim_end_matches('.').to_string();
    if v.abs() >= 1e6 {
        format!("{}M", trimmed(format!("{:.3}", v / 1e6)))
    } else if v.fract() == 0.0 {
        format!("{v}")
    } else {
        trimmed(format!("{v:.3}"))
    }
}

/// An x tick's label: on a log-2 axis only the powers of two are labelled (plotters
/// also offers ticks between them, which crowd the last power).
fn x_tick(log_x: Option<f64>, v: f64) -> String {
    // On a log-10 axis, 1, 2 and 5 of each decade: the ticks between run together.
    let mantissa = v / 10f64.powf(v.abs().log10().floor());
    let round = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .any(|m| (mantissa - m).abs() < 1e-6 * m);
    if log_x == Some(2.0) && !is_power_of_two(v) || log_x == Some(10.0) && !round {
        String::new()
    } else {
        format_x(v)
    }
}

/// A caption font size that fits the title across the chart (DejaVu Sans glyphs
/// average a little under half the font size in width).
fn caption_size(title: &str, width: u32) -> u32 {
    let width = f64::from(width) * 0.92;
    let fit = width / (0.46 * title.chars().count().max(1) as f64);
    fit.clamp(11.0, 20.0) as u32
}

/// The y values' unit and its prefix, and their range in that unit.
struct YAxis {
    unit: f64,
    prefix: &'static str,
    lo: f64,
    hi: f64,
}

fn y_axis(chart: &Chart, plot_px: f64) -> YAxis {
    let ys: Vec<f64> = chart
        .series
        .iter()
        .flat_map(|s| &s.points)
        .flat_map(|p| [Some(p.y), p.y_bar.map(|r| r.0), p.y_bar.map(|r| r.1)])
        .flatten()
        .collect();
    let span = |start: (f64, f64)| ys.iter().fold(start, |(lo, hi), &y| (lo.min(y), hi.max(y)));
    let legend = legend_share(chart, plot_px);
    if chart.log_y {
        let (lo, hi) = span((f64::INFINITY, 0.0));
        let (lo, hi) = (lo / 2.0, hi * 2.0);
        return YAxis {
            unit: 1.0,
            prefix: "",
            lo,
            hi: (lo.ln() + (hi / lo).ln() / (1.0 - legend)).exp(),
        };
    }
    // Throughput from 0; other figures over their own range.
    let (y_min, y_max) = if chart.y_from_zero {
        span((0.0, 0.0))
    } else {
        span((f64::INFINITY, f64::NEG_INFINITY))
    };
    let (unit, prefix) = y_unit(y_max.max(-y_min));
    // One value (a single point) gets a tenth of itself either side.
    let pad = match y_max - y_min {
        span if span > 0.0 => span * 0.05,
        _ => y_max.abs().max(y_min.abs()).max(1e-12) * 0.1,
    } / unit;
    let lo = if y_min < 0.0 || !chart.y_from_zero {
        y_min / unit - pad
    } else {
        0.0
    };
    let hi = y_max / unit + pad;
    YAxis {
        unit,
        prefix,
        lo,
        hi: lo + (hi - lo) / (1.0 - legend),
    }
}

/// The legend's entries: the series', then what the bars and the rings mean.
fn legend_rows(chart: &Chart) -> usize {
    let rings = chart
        .series
        .iter()
        .flat_map(|s| &s.points)
        .any(|p| p.ringed);
    chart.series.len() + usize::from(chart.bars.is_some()) + usize::from(rings)
}

/// The share of the plot's height (`plot_px` pixels) at the top that the legend takes,
/// kept free of points and bars so that the legend never hides one.
fn legend_share(chart: &Chart, plot_px: f64) -> f64 {
    let rows = legend_rows(chart) as f64;
    ((rows * LEGEND_ROW_PX + 20.0) / plot_px.max(1.0)).min(0.6)
}

const LEGEND_ROW_PX: f64 = 20.0;
const MARGIN_PX: u32 = 18;
const X_LABEL_AREA_PX: u32 = 48;

/// The plot's height inside a panel of `panel_px` pixels under a caption of `caption`
/// pixels.
fn plot_height(panel_px: u32, caption: u32) -> f64 {
    f64::from(panel_px.saturating_sub(2 * MARGIN_PX + X_LABEL_AREA_PX + caption + 10))
}

/// A hollow marker of its own for the `k`th level before a trajectory, as pixel
/// offsets: a square, a triangle, a diamond, then a triangle upside down.
fn before_marker(k: usize) -> Vec<(i32, i32)> {
    match k % 4 {
        0 => vec![(-5, -5), (5, -5), (5, 5), (-5, 5), (-5, -5)],
        1 => vec![(0, -6), (6, 5), (-6, 5), (0, -6)],
        2 => vec![(0, -7), (6, 0), (0, 7), (-6, 0), (0, -7)],
        _ => vec![(0, 6), (6, -5), (-6, -5), (0, 6)],
    }
}

/// A grey error bar, for the legend entry that says what the bars are.
fn bar_glyph((x, y): (i32, i32)) -> PathElement<(i32, i32)> {
    let c = x + 10;
    PathElement::new(
        vec![
            (c - 5, y - 7),
            (c + 5, y - 7),
            (c, y - 7),
            (c, y + 7),
            (c - 5, y + 7),
            (c + 5, y + 7),
        ],
        GREY.stroke_width(2),
    )
}

const GREY: RGBColor = RGBColor(90, 90, 90);

fn draw<DB, X, Y>(
    root: &DrawingArea<DB, Shift>,
    chart: &Chart,
    x_range: X,
    (x_left, x_right): (f64, f64),
    y_range: Y,
    y: &YAxis,
) -> Result<(), DrawError>
where
    DB: DrawingBackend,
    X: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
    Y: AsRangedCoord<Value = f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let err = DrawError::of;
    let unit = y.unit;
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let mut builder = ChartBuilder::on(root);
    builder
        .caption(
            &chart.title,
            (
                "sans-serif",
                caption_size(&chart.title, root.dim_in_pixel().0),
            ),
        )
        .margin(MARGIN_PX)
        .x_label_area_size(X_LABEL_AREA_PX)
        .y_label_area_size(72);
    let mut ctx = builder
        .build_cartesian_2d(x_range, y_range)
        .map_err(|e| err(&e))?;
    let y_span = y.hi - y.lo;
    ctx.configure_mesh()
        .x_desc(&chart.x_label)
        .y_desc(y_title(&chart.y_label, y.prefix))
        .x_label_formatter(&|v| x_tick(chart.log_x, *v))
        .y_label_formatter(&|v| format_y(*v, y_span))
        .label_style(("sans-serif", 15))
        .axis_desc_style(("sans-serif", 17))
        .draw()
        .map_err(|e| err(&e))?;
    let mut befores = 0;
    let mut colours = 0;
    for series in &chart.series {
        if series.before {
            // A dashed level in its strategy's colour (the line of the same name less
            // its "before" suffix), with a hollow marker of its own at the left edge.
            let colour = chart
                .series
                .iter()
                .filter(|s| !s.before)
                .position(|s| series.name.starts_with(&format!("{}:", s.name)))
                .map_or(GREY, |i| PALETTE[i % PALETTE.len()]);
            let Some(level) = series.points.first().map(|p| p.y / unit) else {
                continue;
            };
            let shape = before_marker(befores);
            let shift = 12 + 16 * befores as i32;
            befores += 1;
            ctx.draw_series(DashedLineSeries::new(
                [(x_left, level), (x_right, level)],
                6,
                5,
                colour.stroke_width(1),
            ))
            .map_err(|e| err(&e))?;
            let at = |dx: i32| move |&(px, py): &(i32, i32)| (px + dx, py);
            let marker = EmptyElement::at((x_left, level))
                + PathElement::new(
                    shape.iter().map(at(shift)).collect::<Vec<_>>(),
                    colour.stroke_width(2),
                );
            let legend_shape = shape.clone();
            ctx.draw_series([marker])
                .map_err(|e| err(&e))?
                .label(&series.name)
                .legend(move |(x, y)| {
                    EmptyElement::at((x, y))
                        + plotters::element::DashedPathElement::new(
                            [(0, 0), (20, 0)],
                            4,
                            3,
                            colour.stroke_width(1),
                        )
                        + PathElement::new(
                            legend_shape.iter().map(at(10)).collect::<Vec<_>>(),
                            colour.stroke_width(2),
                        )
                });
            continue;
        }
        let colour = PALETTE[colours % PALETTE.len()];
        colours += 1;
        let line: Vec<(f64, f64)> = series.points.iter().map(|p| (p.x, p.y / unit)).collect();
        ctx.draw_series(LineSeries::new(line.clone(), colour.stroke_width(2)))
            .map_err(|e| err(&e))?
            .label(&series.name)
            .legend(move |(x, y)| {
                EmptyElement::at((x, y))
                    + PathElement::new(vec![(0, 0), (20, 0)], colour.stroke_width(2))
                    + Circle::new((10, 0), 4, colour.filled())
            });
        ctx.draw_series(line.iter().map(|&p| Circle::new(p, 4, colour.filled())))
            .map_err(|e| err(&e))?;
        // Points with outlying repetitions get a ring.
        ctx.draw_series(
            series
                .points
                .iter()
                .filter(|p| p.ringed)
                .map(|p| Circle::new((p.x, p.y / unit), 8, colour.stroke_width(2))),
        )
        .map_err(|e| err(&e))?;
        ctx.draw_series(
            series
                .points
                .iter()
                .filter(|p| p.wrong_answer)
                .map(|p| wrong_answer_cross((p.x, p.y / unit))),
        )
        .map_err(|e| err(&e))?;
        ctx.draw_series(series.points.iter().filter_map(|p| {
            p.y_bar.map(|(lo, hi)| {
                let (lo, hi) = (lo.min(hi) / unit, lo.max(hi) / unit);
                ErrorBar::new_vertical(p.x, lo, p.y / unit, hi, colour, 8)
            })
        }))
        .map_err(|e| err(&e))?;
        ctx.draw_series(series.points.iter().filter_map(|p| {
            p.x_bar.map(|(lo, hi)| {
                ErrorBar::new_horizontal(p.y / unit, lo.min(hi), p.x, lo.max(hi), colour, 8)
            })
        }))
        .map_err(|e| err(&e))?;
    }
    // What the bars and rings mean, as entries of their own (drawn nowhere else).
    if let Some(bars) = &chart.bars {
        ctx.draw_series(std::iter::empty::<Circle<(f64, f64), i32>>())
            .map_err(|e| err(&e))?
            .label(bars)
            .legend(bar_glyph);
    }
    if chart
        .series
        .iter()
        .flat_map(|s| &s.points)
        .any(|p| p.ringed)
    {
        ctx.draw_series(std::iter::empty::<Circle<(f64, f64), i32>>())
            .map_err(|e| err(&e))?
            .label(RING)
            .legend(|(x, y)| Circle::new((x + 10, y), 7, GREY.stroke_width(2)));
    }
    if chart
        .series
        .iter()
        .flat_map(|s| &s.points)
        .any(|p| p.wrong_answer)
    {
        ctx.draw_series(std::iter::empty::<Circle<(f64, f64), i32>>())
            .map_err(|e| err(&e))?
            .label(wrong_answer_legend())
            .legend(|(x, y)| wrong_answer_cross((x + 10, y)));
    }
    ctx.configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 14))
        .draw()
        .map_err(|e| err(&e))
}

fn draw_any<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &Chart,
) -> Result<(), DrawError> {
    let xs = chart
        .series
        .iter()
        .filter(|s| !s.before)
        .flat_map(|s| &s.points)
        .flat_map(|p| [Some(p.x), p.x_bar.map(|b| b.0), p.x_bar.map(|b| b.1)])
        .flatten();
    let (lo, hi) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
        (lo.min(x), hi.max(x))
    });
    let (width, height) = root.dim_in_pixel();
    let y = y_axis(
        chart,
        plot_height(height, caption_size(&chart.title, width)),
    );
    // Levels before a trajectory have their markers at the left edge: room for them.
    let room = if chart.series.iter().any(|s| s.before) {
        3.0
    } else {
        1.0
    };
    let linear_x = || {
        let pad = ((hi - lo) * 0.05).max(hi.abs() * 0.05).max(1e-9);
        (lo - pad * room * room, hi + pad)
    };
    let linear_y = || RangedCoordf64::from(y.lo..y.hi);
    let log_y = || (y.lo..y.hi).log_scale();
    let log_x = (lo / 1.3 / room, hi * 1.3);
    match (chart.log_x, chart.log_y) {
        (Some(base), false) => {
            let x = (log_x.0..log_x.1).log_scale().base(base);
            draw(root, chart, x, log_x, linear_y(), &y)
        }
        (Some(base), true) => {
            let x = (log_x.0..log_x.1).log_scale().base(base);
            draw(root, chart, x, log_x, log_y(), &y)
        }
        (None, false) => {
            let x = linear_x();
            draw(
                root,
                chart,
                RangedCoordf64::from(x.0..x.1),
                x,
                linear_y(),
                &y,
            )
        }
        (None, true) => {
            let x = linear_x();
            draw(root, chart, RangedCoordf64::from(x.0..x.1), x, log_y(), &y)
        }
    }
}

/// What `plot` wrote, and the rows it left out for values no axis can hold.
pub struct Plotted {
    pub files: Vec<PathBuf>,
    pub left_out: Vec<String>,
}

pub fn plot(request: &PlotRequest) -> Result<Plotted, PlotError> {
    // Checked before the CSVs are read: the folder must be one, and the name not.
    let folder = request.out.parent().unwrap_or(Path::new("."));
    if folder.exists() && !folder.is_dir() {
        return Err(PlotError::OutIsFile(folder.to_path_buf()));
    }
    if request.out.is_dir() {
        return Err(PlotError::ChartIsFolder(request.out.clone()));
    }
    for chart in [
        request.out.with_extension("png"),
        request.out.with_extension("svg"),
    ] {
        check_apart(&chart, &request.csvs)?;
        check_overwrite(&chart, request.overwrite)?;
    }
    let chart = read_chart(request)?;
    std::fs::create_dir_all(folder).map_err(|source| WriteError {
        path: folder.to_path_buf(),
        source,
    })?;
    let files = write_charts(&request.out, std::slice::from_ref(&chart), 1, SIZE)?;
    Ok(Plotted {
        files,
        left_out: chart.left_out,
    })
}

fn draw_panels<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    charts: &[Chart],
    grid: (usize, usize),
) -> Result<(), DrawError> {
    root.fill(&WHITE).map_err(|e| DrawError::of(&e))?;
    for (area, chart) in root.split_evenly(grid).iter().zip(charts) {
        draw_any(area, chart)?;
    }
    root.present().map_err(|e| DrawError::of(&e))
}

/// Draws `charts` as panels of `panel` pixels, `columns` to a row, into `stem`.png
/// and `stem`.svg; returns their paths.
pub fn write_charts(
    stem: &Path,
    charts: &[Chart],
    columns: usize,
    panel: (u32, u32),
) -> Result<Vec<PathBuf>, PlotError> {
    ensure_font();
    let columns = columns.clamp(1, charts.len().max(1));
    let rows = charts.len().div_ceil(columns).max(1);
    let size = (panel.0 * columns as u32, panel.1 * rows as u32);
    let png_path = stem.with_extension("png");
    let svg_path = stem.with_extension("svg");
    let mut pixels = vec![255u8; (size.0 * size.1 * 3) as usize];
    let grid = (rows, columns);
    draw_panels(
        &BitMapBackend::with_buffer(&mut pixels, size).into_drawing_area(),
        charts,
        grid,
    )
    .map_err(PlotError::Draw)?;
    let svg = chart_svg(charts, columns, panel)?;
    if let Some(dir) = png_path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|source| WriteError {
            path: dir.to_path_buf(),
            source,
        })?;
    }
    write_png(
        &png_path,
        size.0 as usize,
        size.1 as usize,
        png::ColorType::Rgb,
        png::BitDepth::Eight,
        &pixels,
    )?;
    write_atomically(&svg_path, |out| {
        std::io::Write::write_all(out, svg.as_bytes())
    })?;
    Ok(vec![png_path, svg_path])
}

/// Draws `charts` as panels of `panel` pixels, `columns` to a row, as one SVG document
/// (what `write_charts` writes to STEM.svg; the HTML report inlines it).
pub fn chart_svg(charts: &[Chart], columns: usize, panel: (u32, u32)) -> Result<String, PlotError> {
    ensure_font();
    let columns = columns.clamp(1, charts.len().max(1));
    let rows = charts.len().div_ceil(columns).max(1);
    let size = (panel.0 * columns as u32, panel.1 * rows as u32);
    let mut svg = String::new();
    draw_panels(
        &SVGBackend::with_string(&mut svg, size).into_drawing_area(),
        charts,
        (rows, columns),
    )
    .map_err(PlotError::Draw)?;
    Ok(svg)
}

/// The chart `vkerode plot CSV --x X` would draw of each row's rate in its own unit
/// (another axis that varies becomes the series), without writing it.
pub fn throughput_chart(csv: &Path, x: &str) -> Result<Chart, PlotError> {
    read_chart(&PlotRequest {
        csvs: vec![csv.to_path_buf()],
        x: x.into(),
        y: RATE.into(),
        series: None,
        filters: Vec::new(),
        out: PathBuf::new(),
        overwrite: Overwrite::Refuse,
    })
}

/// The file name of `plot`'s charts without --name: the y axis by the x axis.
pub fn default_name(y: &str, x: &str) -> String {
    format!("{y}-by-{x}")
}
