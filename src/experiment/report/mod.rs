//! Reports made from results folders, reading them and nothing else: a sweep's points
//! as a table (`report`), two sweeps compared point by point (`compare`, judged by a
//! bootstrap interval from `stats` against the rerun noise of `noise`; named baselines in
//! `baseline`), charts (`plot`), and all of a sweep as one self-contained page
//! (`html`).

pub mod baseline;
pub mod compare;
pub mod html;
pub mod intervals;
pub mod noise;
pub mod plot;

pub use compare::{
    compare, report, report_rows, rerun_spread, CompareReport, Comparison, Intervals, Judgement,
    ReportRow, RerunSpread, SweepReport,
};
pub use html::{html_report, write_html, HtmlError};
pub use noise::{Threshold, ThresholdSource};
pub use plot::{chart_svg, throughput_chart, write_charts, Chart, PlotPoint, Series};
