//! Reports made from results folders, reading them and nothing else: a sweep's points
//! as a table (`report`), two sweeps compared point by point (`compare`, judged by a
//! bootstrap interval against the rerun noise of `noise`; named baselines in
//! `baseline`), and charts (`plot`).

pub mod baseline;
pub mod bootstrap;
pub mod compare;
pub mod noise;
pub mod plot;

pub use compare::{
    compare, report, rerun_spread, CompareReport, Comparison, Intervals, Judgement, RerunSpread,
    Verdict,
};
pub use noise::{Threshold, ThresholdSource};
pub use plot::{write_charts, Chart, PlotPoint, Series};
