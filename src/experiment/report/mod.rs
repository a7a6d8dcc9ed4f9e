//! Reports made from results folders, reading them and nothing else: a sweep's points
//! as a table (`report`), two sweeps compared point by point (`compare`, its points
//! read by `points` and paired by `pairing`, judged by a bootstrap interval from `stats`
//! against the rerun noise of `noise`; named baselines in `baseline`), charts (`plot`),
//! and all of a sweep as one self-contained page (`html`).

pub mod baseline;
pub mod compare;
pub mod html;
pub mod intervals;
pub mod noise;
mod over;
pub mod pairing;
pub mod plot;
mod points;

pub use compare::{
    budget_warning, compare, report, report_rows, rerun_spread, CompareError, CompareReport,
    Comparison, Counts, Intervals, Judgement, NoVerdictCounts, NoVerdictReason, ReportRow,
    RerunSpread, StopCounts, Stopped, SweepReport,
};
pub use html::{html_report, report_inputs, write_html, HtmlError};
pub use noise::{Threshold, ThresholdSource};
pub use over::{
    over_report, over_table, OverError, OverGroup, OverReport, Settled, FRONTIER_MARGIN,
    MIN_OVER_VALUES,
};
pub use pairing::{DifferingKey, Pairing, PairingError, SettingChange, Side};
pub use plot::{chart_svg, throughput_chart, write_charts, Chart, PlotPoint, Series};
pub use points::check_set;
