//! What long work tells as it goes, for the command line to draw: lines to print,
//! the stage it is in, and how far that stage has got. The library draws nothing.

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
