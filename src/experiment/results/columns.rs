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

/// Which point of which sweep, measured where (points.csv and samples.csv).
pub const EXPERIMENT: ColumnDeclaration = ("experiment", "text", "the config's name");
pub const DEVICE: ColumnDeclaration = (
    "device",
    "text",
    "the Vulkan device that measured the point",
);
pub const POINT: ColumnDeclaration = (
    "point",
    "index",
    "the point's position in the config's product of axes, from 0",
);
pub const WORKER: ColumnDeclaration = (
    "worker",
    "index",
    "which of sweep --devices measured it (0 for one device); meta.json's devices says which device each is",
);

/// A point's timings, as compare, report and the studies read them.
pub const REPS: ColumnDeclaration = ("reps", "count", TIMED_REPETITIONS);
pub const GPU_MS_MEDIAN: ColumnDeclaration = (
    "gpu_ms_median",
    "ms",
    "median GPU time of a repetition (timestamps; wall time without them)",
);
pub const GPU_MS_Q1: ColumnDeclaration = ("gpu_ms_q1", "ms", "first quartile of the GPU times");
pub const GPU_MS_Q3: ColumnDeclaration = ("gpu_ms_q3", "ms", "third quartile of the GPU times");
pub const GPU_MS_REL_IQR: ColumnDeclaration = (
    "gpu_ms_rel_iqr",
    "ratio",
    "(q3 - q1) / median: the noise the stopping rule targets",
);
pub const OUTLIERS: ColumnDeclaration = (
    "outliers",
    "count",
    "repetitions beyond 1.5 IQR of the quartiles (kept; marked in samples.csv)",
);
pub const WALL_MS_MEDIAN: ColumnDeclaration = (
    "wall_ms_median",
    "ms",
    "median host time of a repetition's submission, upload and waiting included",
);

/// The GPU's state over a point.
pub const SLOWED: ColumnDeclaration = (
    "slowed",
    "true/false",
    "the SM clock fell over 5% or a slowing throttle reason was set",
);
pub const DEVICE_SPREAD_PERCENT: ColumnDeclaration = (
    "device_spread_percent",
    "%",
    "sweep --replicate: (largest - smallest) / mean of the point's median GPU time over the devices",
);
