//! The columns that more than one results file writes (points.csv, strategies.csv,
//! runs.csv, verdicts.csv) or that run.json's fields share, each declared once as
//! (name, unit, meaning): the typed sections of those files name these rather than
//! writing the column again.

use crate::terrain::units::HEIGHT_UNIT_MEANING;

/// A column's declaration as a [`crate::table::Section`] lists it.
pub type ColumnDeclaration = (&'static str, &'static str, &'static str);

/// What ran.
pub const ALGORITHM: ColumnDeclaration = (
    "algorithm",
    "text",
    "the strategy, as the algorithm setting names it",
);

/// Where a row was measured, after its device.
pub const DRIVER: ColumnDeclaration = ("driver", "text", "its driver's version");
pub const COMMIT: ColumnDeclaration = (
    "commit",
    "text",
    "the git commit vkerode was built from (-dirty with changes)",
);

/// The timed repetitions of a measurement (`results::Measurement`).
pub const TIMED_REPETITIONS: &str = "timed repetitions";
pub const STOP_REASON: ColumnDeclaration = (
    "stop_reason",
    "text",
    "why they stopped: noise-target, max-reps or time-budget",
);
pub const GPU_MS_CI_LOW: ColumnDeclaration = (
    "gpu_ms_ci_low",
    "ms",
    "low end of the 95% confidence interval of the median (order statistics; empty for one repetition)",
);
pub const GPU_MS_CI_HIGH: ColumnDeclaration = ("gpu_ms_ci_high", "ms", "high end of that interval");

/// The unit of a row's heights.
pub const HEIGHT_UNIT: ColumnDeclaration = ("height_unit", "text", HEIGHT_UNIT_MEANING);

/// The change one run made to the map (`terrain::Change`).
pub const TOTAL_CHANGE: ColumnDeclaration = (
    "total_change",
    "height units x cells",
    "net change: the sum of (after - before) over the map",
);
pub const ERODED: ColumnDeclaration = (
    "eroded",
    "height units x cells",
    "the sum of the lowering of the cells that went down",
);
pub const DEPOSITED: ColumnDeclaration = (
    "deposited",
    "height units x cells",
    "the sum of the raising of the cells that went up",
);
pub const DEEPEST_EROSION: ColumnDeclaration = (
    "deepest_erosion",
    "height units",
    "the most negative change of one cell",
);
