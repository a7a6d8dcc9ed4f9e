//! What long work tells as it goes, for the command line to draw: lines to print,
//! the stage it is in, and how far that stage has got. The library draws nothing but
//! a sweep's bars (one line per worker) and the line of reproduce's grid runs, with
//! the pieces below, which the command line's bars share.

use std::time::Duration;

use indicatif::{HumanDuration, ProgressBar, ProgressState, ProgressStyle};

/// One thing long work tells.
#[derive(Clone, Debug, PartialEq)]
pub enum Progress {
    /// A line of the results, printed above the bar whatever the verbosity.
    Line(String),
    /// A line on how the work goes, printed above the bar unless `--quiet`.
    Note(String),
    /// A stage begins ("counted run (1 of 2)"): its count starts again.
    Stage(String),
    /// `done` of `total` units of the work (or of the stage) are finished.
    Done { done: usize, total: usize },
    /// The stage's work is `total` of `unit` ("steps", "droplets"): the GPU tells them
    /// done, submission by submission, to the context's observer
    /// (`Context::observe_submissions`, `SubmissionDone::units`).
    Work { total: u64, unit: &'static str },
}

/// Where long work tells its [`Progress`].
pub type Tell<'t> = &'t mut dyn FnMut(Progress);

/// A bar's time left at its rate (its template's `{left}`): "-" until something is
/// done, since before that there is no rate to tell it from (indicatif's `{eta}` says 0s).
pub fn time_left(state: &ProgressState, out: &mut dyn std::fmt::Write) {
    write_left(state, out, ProgressState::eta);
}

/// A bar's time left at its mean rate since it started (its template's `{left}` where
/// the pieces of work differ in cost, as strategies' runs do, a level of water 64 times
/// another's): indicatif's estimate follows the recent rate, which falls while one
/// long piece runs ("ETA 3d" a minute into an hour's work).
pub fn time_left_at_mean_rate(state: &ProgressState, out: &mut dyn std::fmt::Write) {
    write_left(state, out, |state| {
        let done = state.pos();
        let left = state.len().unwrap_or(done).saturating_sub(done);
        state.elapsed().mul_f64(left as f64 / done as f64)
    });
}

fn write_left(
    state: &ProgressState,
    out: &mut dyn std::fmt::Write,
    left: impl FnOnce(&ProgressState) -> Duration,
) {
    let _ = match state.pos() {
        0 => out.write_str("-"),
        _ => write!(out, "{:#}", HumanDuration(left(state))),
    };
}

/// A bar's style: `template` with its `{left}` told by `left` ([`time_left`] or
/// [`time_left_at_mean_rate`]), drawn in one look for every bar.
pub fn bar_style(
    template: &str,
    left: fn(&ProgressState, &mut dyn std::fmt::Write),
) -> ProgressStyle {
    ProgressStyle::with_template(template)
        .expect("a valid template")
        .with_key("left", left)
        .progress_chars("=> ")
}

/// A line of what runs now and its time so far ("pipes: timed run, 12s so far").
pub fn elapsed_style() -> ProgressStyle {
    ProgressStyle::with_template("{msg}, {elapsed} so far").expect("a valid template")
}

/// A line on stderr in [`elapsed_style`], redrawn four times a second so that its time
/// moves while nothing else does: hidden where `hidden` (--quiet) and, by indicatif,
/// where stderr is not a terminal.
pub fn elapsed_line(hidden: bool) -> ProgressBar {
    if hidden {
        return ProgressBar::hidden();
    }
    let line = ProgressBar::new_spinner().with_style(elapsed_style());
    line.enable_steady_tick(Duration::from_millis(250));
    line
}
