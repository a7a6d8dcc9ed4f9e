//! `vkerode plot`: throughput charts from points.csv files, as PNG and SVG. One
//! series per value of a chosen column and per device; error bars of the median's 95%
//! confidence interval (quartiles for older files); a ring on points with outlying
//! repetitions; a log-2 x axis when every x is a power of two.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use thiserror::Error;

use super::results::{point_columns, Meta};
use crate::terrain::files::write_atomically;
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
    fn x_labels_are_whole_numbers_or_millions() {
        assert_eq!(super::format_x(4096.0), "4096");
        assert_eq!(super::format_x(4_000_000.0), "4M");
        assert_eq!(super::format_x(1_048_576.0), "1.049M");
    }

    #[test]
    fn steps_and_peaks_are_labelled_in_each_strategys_unit() {
        let set = |names: &[&str]| names.iter().map(|n| n.to_string()).collect();
        let label = |column, names: &[&str]| super::metric_label(column, &set(names)).to_string();
        assert_eq!(label("steps_per_s", &["droplets"]), "droplet-steps/s");
        assert_eq!(label("steps_per_s", &["pipes"]), "cell-steps/s");
        assert!(label("steps_per_s", &["droplets", "pipes"]).contains("or cell-steps"));
        assert_eq!(
            label("percent_of_peak", &["pipes"]),
            "% of the copy bandwidth"
        );
    }
}

#[derive(Debug, Error)]
pub enum PlotError {
    #[error("{}: {reason}", path.display())]
    Input { path: PathBuf, reason: String },
    #[error("{0}")]
    Request(String),
    #[error("drawing the chart: {0}")]
    Draw(String),
    #[error("writing {}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
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
    /// Output path without extension; `.png` and `.svg` are written.
    pub out: PathBuf,
}

/// x, y, the error bar (the median's confidence interval, else the quartiles) and
/// whether the point had outlying repetitions.
type PlotPoint = (f64, f64, Option<(f64, f64)>, bool);

struct Series {
    name: String,
    points: Vec<PlotPoint>,
}

/// Whether a value can sit on an axis: finite, and far from f64's limits, where the
/// axis arithmetic overflows.
fn plottable(v: f64) -> bool {
    v.is_finite() && v.abs() < 1e100
}

struct Chart {
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
    series: Vec<Series>,
}

/// The label of a metric column, for rows of the `algorithms` given: each counts steps
/// and peaks in its own unit.
fn metric_label<'c>(column: &'c str, algorithms: &BTreeSet<String>) -> &'c str {
    let grid = algorithms.iter().all(|a| a == "pipes");
    let droplets = algorithms.iter().all(|a| a == "droplets");
    match column {
        "steps_per_s" if grid => "cell-steps/s",
        "steps_per_s" if !droplets => "steps/s (droplet-steps or cell-steps)",
        "percent_of_peak" if grid => "% of the copy bandwidth",
        "percent_of_peak" if !droplets => "% of each strategy's ceiling",
        "steps_per_s" => "droplet-steps/s",
        "droplets_per_s" => "droplets/s",
        "atomics_per_s" => "atomic adds/s",
        "gpu_ms_median" => "GPU time (ms, median)",
        "wall_ms_median" => "wall time (ms, median)",
        "percent_of_peak" => "% of the droplet-shaped atomic peak",
        "total_height_change" => "total height change (cells)",
        "mass_truncated" => "mass lost to fixed-point truncation (cells)",
        "mass_lost" => "mass lost to races (cells)",
        "subgroup_conflicts_per_1000" => "same-cell conflicts in a subgroup, per 1000 atomics",
        "hottest_1pct_share" => "share of atomics on the hottest 1% of cells",
        "hits_max" => "atomics on the hottest cell",
        "max_cell_change" => "largest change of one cell (height units)",
        "rerun_cells_differing" => "cells that differ between two runs",
        other => other,
    }
}

fn axis_label(column: &str) -> String {
    match column {
        "workgroup" => "workgroup size (invocations)".into(),
        "size" => "map side (cells)".into(),
        "droplets" => "droplets".into(),
        "batch" => "droplets per dispatch".into(),
        "lifetime" => "lifetime (steps)".into(),
        "scale" => "fixed-point scale".into(),
        "tile" => "tile side (cells)".into(),
        "passes" => "dispatch passes per droplet life (P)".into(),
        "in_flight_per_cell" => "droplets in flight per cell per dispatch".into(),
        "relief" => "terrain relief (height units)".into(),
        "shared_kib" => "shared memory reserved per workgroup (KiB)".into(),
        other => other.into(),
    }
}

/// The columns of a metric's error bar in a file: the median's 95% confidence
/// interval where the file has it, else the quartiles (older files), else none.
fn bar_columns(metric: &str, headers: &csv::StringRecord) -> Option<(usize, usize)> {
    let stem = metric.strip_suffix("_median").unwrap_or(metric);
    let find = |name: String| headers.iter().position(|h| h == name);
    let pair = |low: &str, high: &str| {
        Some((
            find(format!("{stem}_{low}"))?,
            find(format!("{stem}_{high}"))?,
        ))
    };
    pair("ci_low", "ci_high").or_else(|| pair("q1", "q3"))
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
    /// The `algorithm` of the rows (files from before it was a column are droplets').
    algorithms: BTreeSet<String>,
    /// "file:line" of the rows left out for a value no axis can hold.
    left_out: Vec<String>,
    /// For each other axis of the sweep: the values it takes at each (series, x). More
    /// than one at any would draw a saw-tooth line.
    others: BTreeMap<(String, String, u64), BTreeSet<String>>,
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
        let mut reader = csv::Reader::from_path(path).map_err(|e| bad(e.to_string()))?;
        let headers = reader.headers().map_err(|e| bad(e.to_string()))?.clone();
        let col = |name: &str| {
            headers.iter().position(|h| h == name).ok_or_else(|| {
                bad(format!(
                    "has no column {name:?}: is it a vkerode points.csv?"
                ))
            })
        };
        let (xi, yi, ei, di) = (
            col(&request.x)?,
            col(&request.y)?,
            col("experiment")?,
            col("device")?,
        );
        let si = request.series.as_deref().map(col).transpose()?;
        let bar_at = bar_columns(&request.y, &headers);
        let other_at: Vec<(String, usize)> = others
            .iter()
            .filter_map(|name| Some((name.clone(), headers.iter().position(|h| h == name)?)))
            .collect();
        let outliers_at = headers.iter().position(|h| h == "outliers");
        let algorithm_at = headers.iter().position(|h| h == "algorithm");
        let filters = request
            .filters
            .iter()
            .map(|(c, v)| col(c).map(|i| (i, v.as_str())))
            .collect::<Result<Vec<_>, _>>()?;
        for record in reader.records() {
            let record = record.map_err(|e| bad(e.to_string()))?;
            if filters.iter().any(|&(i, v)| record.get(i) != Some(v)) {
                continue;
            }
            let number = |i: usize| -> Result<f64, PlotError> {
                let text = record.get(i).unwrap_or_default();
                text.parse::<f64>().map_err(|_| {
                    bad(format!(
                        "{:?} in column {:?} is not a number",
                        text, &headers[i]
                    ))
                })
            };
            let (x, y) = (number(xi)?, number(yi)?);
            // Values no axis can hold are left out, and named.
            if !(plottable(x) && plottable(y)) {
                let line = record.position().map_or(0, |p| p.line());
                self.left_out.push(format!("{}:{line}", path.display()));
                continue;
            }
            // An empty bound (one repetition) means no bar.
            let optional = |i: usize| record.get(i).and_then(|t| t.parse::<f64>().ok());
            let bar = bar_at.and_then(|(low, high)| Some((optional(low)?, optional(high)?)));
            let outliers = outliers_at.is_some_and(|i| optional(i).is_some_and(|n| n > 0.0));
            let device = record.get(di).unwrap_or_default().to_string();
            let experiment = record.get(ei).unwrap_or_default().to_string();
            let algorithm = algorithm_at
                .and_then(|i| record.get(i))
                .unwrap_or("droplets");
            self.algorithms.insert(algorithm.to_string());
            if !self.devices.contains(&device) {
                self.devices.push(device.clone());
            }
            if !self.experiments.contains(&experiment) {
                self.experiments.push(experiment);
            }
            let mut name = device;
            if let (Some(si), Some(column)) = (si, &request.series) {
                name = format!("{name}, {column} {}", record.get(si).unwrap_or_default());
            }
            for (axis, i) in &other_at {
                let value = record.get(*i).unwrap_or_default().to_string();
                let at = (axis.clone(), name.clone(), x.to_bits());
                self.others.entry(at).or_default().insert(value);
            }
            self.groups
                .entry(name.clone())
                .or_insert_with(|| Series {
                    name,
                    points: Vec::new(),
                })
                .points
                .push((x, y, bar, outliers));
        }
        Ok(())
    }
}

/// A log axis for x (base 2 over powers of two, else 10 over two decades) and
/// whether y is log (three decades).
fn log_axes(series: &[Series]) -> (Option<f64>, bool) {
    let xs: Vec<f64> = series.iter().flat_map(|s| &s.points).map(|p| p.0).collect();
    let powers_of_two = xs
        .iter()
        .all(|&x| x >= 1.0 && x.fract() == 0.0 && (x as u64).is_power_of_two());
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
    let ys: Vec<f64> = series.iter().flat_map(|s| &s.points).map(|p| p.1).collect();
    let (y_lo, y_hi) = ys.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &y| {
        (lo.min(y), hi.max(y))
    });
    let log_y = y_lo > 0.0 && y_hi / y_lo >= 1000.0;
    (log_x, log_y)
}

fn read_chart(request: &PlotRequest) -> Result<Chart, PlotError> {
    let columns = point_columns();
    for column in [Some(&request.x), Some(&request.y), request.series.as_ref()]
        .into_iter()
        .flatten()
    {
        if !columns.contains(column) {
            return Err(PlotError::Request(format!(
                "{column:?} is not a points.csv column; the columns are: {}",
                columns.join(", ")
            )));
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
        (names, _) => {
            return Err(PlotError::Request(format!(
                "{} also vary among the plotted points and would be drawn as one line; \
                 make one the --series and fix the others with --where",
                names.join(", ")
            )))
        }
    }
    let Gathered {
        groups,
        experiments,
        devices,
        algorithms,
        left_out,
        ..
    } = gathered;
    let mut series: Vec<Series> = groups.into_values().collect();
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
        s.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    if series.iter().all(|s| s.points.is_empty()) {
        let reason = if left_out.is_empty() {
            "the CSV files hold no points".to_string()
        } else {
            format!(
                "no plottable points: every row has a non-finite or absurd value ({})",
                left_out.join(", ")
            )
        };
        return Err(PlotError::Request(reason));
    }
    let (log_x, log_y) = log_axes(&series);
    Ok(Chart {
        left_out,
        title: format!(
            "{}: {} vs {}{title_filter} on {}",
            experiments.join(", "),
            metric_label(&request.y, &algorithms),
            request.x,
            devices.join(" and ")
        ),
        x_label: axis_label(&request.x),
        y_label: metric_label(&request.y, &algorithms).to_string(),
        log_x,
        log_y,
        series,
    })
}

/// A power-of-1000 prefix for the y axis.
fn y_unit(max: f64) -> (f64, &'static str) {
    match max {
        m if m >= 1e9 => (1e9, "G"),
        m if m >= 1e6 => (1e6, "M"),
        m if m >= 1e3 => (1e3, "k"),
        _ => (1.0, ""),
    }
}

/// Tick labels without a trailing ".0"; large or tiny values in powers of ten.
fn format_y(v: f64) -> String {
    if v != 0.0 && (v.abs() >= 1e5 || v.abs() < 1e-3) {
        format!("{v:.0e}")
    } else {
        let text = format!("{v:.3}");
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// Whole numbers as they are, millions with an "M".
fn format_x(v: f64) -> String {
    if v.abs() >= 1e6 {
        let millions = format!("{:.3}", v / 1e6);
        format!("{}M", millions.trim_end_matches('0').trim_end_matches('.'))
    } else {
        format!("{v}")
    }
}

/// A caption font size that fits the title across the chart (DejaVu Sans glyphs
/// average a little under half the font size in width).
fn caption_size(title: &str) -> u32 {
    let width = f64::from(SIZE.0) * 0.92;
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

fn y_axis(chart: &Chart) -> YAxis {
    let ys = chart
        .series
        .iter()
        .flat_map(|s| &s.points)
        .flat_map(|&(_, y, bar, _)| [Some(y), bar.map(|r| r.0), bar.map(|r| r.1)])
        .flatten();
    if chart.log_y {
        let (lo, hi) = ys.fold((f64::INFINITY, 0.0f64), |(lo, hi), y| {
            (lo.min(y), hi.max(y))
        });
        let (lo, hi) = (lo / 2.0, hi * 2.0);
        return YAxis {
            unit: 1.0,
            prefix: "",
            lo,
            hi: (lo.ln() + (hi / lo).ln() / (1.0 - legend_share(chart))).exp(),
        };
    }
    let (y_min, y_max) = ys.fold((0.0f64, 0.0f64), |(lo, hi), y| (lo.min(y), hi.max(y)));
    let (unit, prefix) = y_unit(y_max.max(-y_min));
    let pad = (y_max - y_min).max(f64::MIN_POSITIVE) * 0.05 / unit;
    let lo = if y_min < 0.0 { y_min / unit - pad } else { 0.0 };
    let hi = y_max / unit + pad;
    YAxis {
        unit,
        prefix,
        lo,
        hi: lo + (hi - lo) / (1.0 - legend_share(chart)),
    }
}

/// The share of the plot's height at the top that the legend takes, kept free of
/// points and bars so that the legend never hides one.
fn legend_share(chart: &Chart) -> f64 {
    let rows = chart.series.len() as f64;
    ((rows * 22.0 + 16.0) / 440.0).min(0.6)
}

fn draw<DB, X, Y>(
    root: &DrawingArea<DB, Shift>,
    chart: &Chart,
    x_range: X,
    y_range: Y,
    unit: f64,
    prefix: &str,
) -> Result<(), String>
where
    DB: DrawingBackend,
    X: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
    Y: AsRangedCoord<Value = f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let err = |e: &dyn std::fmt::Display| e.to_string();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let mut builder = ChartBuilder::on(root);
    builder
        .caption(&chart.title, ("sans-serif", caption_size(&chart.title)))
        .margin(18)
        .x_label_area_size(48)
        .y_label_area_size(72);
    let mut ctx = builder
        .build_cartesian_2d(x_range, y_range)
        .map_err(|e| err(&e))?;
    let y_desc = if prefix.is_empty() {
        chart.y_label.clone()
    } else {
        format!("{} ({prefix})", chart.y_label)
    };
    ctx.configure_mesh()
        .x_desc(&chart.x_label)
        .y_desc(y_desc)
        .x_label_formatter(&|v| format_x(*v))
        .y_label_formatter(&|v| format_y(*v))
        .label_style(("sans-serif", 15))
        .axis_desc_style(("sans-serif", 17))
        .draw()
        .map_err(|e| err(&e))?;
    for (i, series) in chart.series.iter().enumerate() {
        let colour = PALETTE[i % PALETTE.len()];
        let line: Vec<(f64, f64)> = series
            .points
            .iter()
            .map(|&(x, y, _, _)| (x, y / unit))
            .collect();
        ctx.draw_series(LineSeries::new(line.clone(), colour.stroke_width(2)))
            .map_err(|e| err(&e))?
            .label(&series.name)
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2))
            });
        ctx.draw_series(line.iter().map(|&p| Circle::new(p, 4, colour.filled())))
            .map_err(|e| err(&e))?;
        // Points with outlying repetitions get a ring.
        ctx.draw_series(
            series
                .points
                .iter()
                .filter(|p| p.3)
                .map(|&(x, y, _, _)| Circle::new((x, y / unit), 8, colour.stroke_width(2))),
        )
        .map_err(|e| err(&e))?;
        ctx.draw_series(series.points.iter().filter_map(|&(x, y, bar, _)| {
            bar.map(|(lo, hi)| {
                ErrorBar::new_vertical(x, lo.min(hi) / unit, y / unit, lo.max(hi) / unit, colour, 8)
            })
        }))
        .map_err(|e| err(&e))?;
    }
    ctx.configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 14))
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))
}

fn draw_any<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &Chart,
) -> Result<(), String> {
    let xs = chart.series.iter().flat_map(|s| &s.points).map(|p| p.0);
    let (lo, hi) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
        (lo.min(x), hi.max(x))
    });
    let y = y_axis(chart);
    let (unit, prefix) = (y.unit, y.prefix);
    let linear_x = || {
        let pad = ((hi - lo) * 0.05).max(hi.abs() * 0.05).max(1e-9);
        RangedCoordf64::from((lo - pad)..(hi + pad))
    };
    let linear_y = || RangedCoordf64::from(y.lo..y.hi);
    let log_y = || (y.lo..y.hi).log_scale();
    match (chart.log_x, chart.log_y) {
        (Some(base), false) => {
            let x = ((lo / 1.3)..(hi * 1.3)).log_scale().base(base);
            draw(root, chart, x, linear_y(), unit, prefix)
        }
        (Some(base), true) => {
            let x = ((lo / 1.3)..(hi * 1.3)).log_scale().base(base);
            draw(root, chart, x, log_y(), unit, prefix)
        }
        (None, false) => draw(root, chart, linear_x(), linear_y(), unit, prefix),
        (None, true) => draw(root, chart, linear_x(), log_y(), unit, prefix),
    }
}

/// Draws the chart; returns the PNG and SVG paths.
/// What `plot` wrote, and the rows it left out for values no axis can hold.
pub struct Plotted {
    pub files: Vec<PathBuf>,
    pub left_out: Vec<String>,
}

pub fn plot(request: &PlotRequest) -> Result<Plotted, PlotError> {
    let chart = read_chart(request)?;
    ensure_font();
    let png_path = request.out.with_extension("png");
    let svg_path = request.out.with_extension("svg");
    let mut pixels = vec![255u8; (SIZE.0 * SIZE.1 * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut pixels, SIZE).into_drawing_area();
        draw_any(&root, &chart).map_err(PlotError::Draw)?;
    }
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        draw_any(&root, &chart).map_err(PlotError::Draw)?;
    }
    if let Some(dir) = png_path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|source| PlotError::Write {
            path: dir.to_path_buf(),
            source,
        })?;
    }
    write_png(
        &png_path,
        SIZE.0 as usize,
        SIZE.1 as usize,
        png::ColorType::Rgb,
        png::BitDepth::Eight,
        &pixels,
    )
    .map_err(|e| PlotError::Write {
        path: e.path,
        source: e.source,
    })?;
    write_atomically(&svg_path, |out| {
        std::io::Write::write_all(out, svg.as_bytes())
    })
    .map_err(|e| PlotError::Write {
        path: e.path,
        source: e.source,
    })?;
    Ok(Plotted {
        files: vec![png_path, svg_path],
        left_out: chart.left_out,
    })
}

/// Is this the chart's output path stem? (For callers that take `out.png`.)
pub fn stem(out: &Path) -> PathBuf {
    match out.extension().and_then(|e| e.to_str()) {
        Some("png" | "svg") => out.with_extension(""),
        _ => out.to_path_buf(),
    }
}
