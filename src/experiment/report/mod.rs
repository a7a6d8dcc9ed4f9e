//! Reports made from results folders, reading them and nothing else: a sweep's points
//! as a table (`report`), two sweeps compared point by point (`compare`), and charts
//! (`plot`).

pub mod compare;
pub mod plot;

pub use compare::{compare, report, CompareReport, Comparison, Verdict};
pub use plot::{write_charts, Chart, PlotPoint, Series};
