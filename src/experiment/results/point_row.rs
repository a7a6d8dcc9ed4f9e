//! The typed reader of points.csv: a row of [`read_points`](super::read_points)'s table
//! (any version's file, on the current columns) read through fields named by the column
//! declarations (`columns.rs`), never by a name written at the reader. Compare, report,
//! `--resume`, the sweep and the studies read points through it.

use super::columns::{
    ColumnDeclaration, DEVICE, EXPERIMENT, GPU_MS_CI_HIGH, GPU_MS_CI_LOW, GPU_MS_MEDIAN, GPU_MS_Q1,
    GPU_MS_Q3, GPU_MS_REL_IQR, OUTLIERS, POINT, REPS, SLOWED, STOP_REASON, WALL_MS_MEDIAN, WORKER,
};
use super::schema::{RERUN_CELLS_DIFFERING, TOTAL_HEIGHT_CHANGE};
use super::CsvText;
use crate::erosion::WorkUnit;
use crate::experiment::run::CEILING;

/// One row of points.csv, its fields typed: text where the column is text, numbers
/// where it is a number (none where the file leaves it empty or lacks it).
#[derive(Clone, Copy, Debug)]
pub struct PointRow<'a> {
    table: &'a CsvText,
    row: usize,
}

/// The column names the typed reader reads, for readers that report a column by name.
pub mod name {
    use crate::experiment::results::columns;

    pub const POINT: &str = columns::POINT.0;
    pub const WORKER: &str = columns::WORKER.0;
    pub const REPS: &str = columns::REPS.0;
    pub const GPU_MS_MEDIAN: &str = columns::GPU_MS_MEDIAN.0;
    pub const GPU_MS_CI_LOW: &str = columns::GPU_MS_CI_LOW.0;
    pub const GPU_MS_CI_HIGH: &str = columns::GPU_MS_CI_HIGH.0;
    pub const GPU_MS_Q1: &str = columns::GPU_MS_Q1.0;
    pub const GPU_MS_Q3: &str = columns::GPU_MS_Q3.0;
    pub const DEVICE_SPREAD_PERCENT: &str = columns::DEVICE_SPREAD_PERCENT.0;
    pub const EXPERIMENT: &str = columns::EXPERIMENT.0;
}

impl CsvText {
    /// Its rows as points.csv rows.
    pub fn point_rows(&self) -> impl Iterator<Item = PointRow<'_>> {
        (0..self.rows.len()).map(move |row| PointRow { table: self, row })
    }

    /// Its row `row` as a points.csv row.
    pub fn point_row(&self, row: usize) -> PointRow<'_> {
        PointRow { table: self, row }
    }
}

impl<'a> PointRow<'a> {
    /// Its position among the table's rows, from 0.
    pub fn index(&self) -> usize {
        self.row
    }

    /// Its line in the file, the header being line 1.
    pub fn line(&self) -> usize {
        self.row + 2
    }

    fn text(&self, column: ColumnDeclaration) -> Option<&'a str> {
        self.table.get(self.row, column.0)
    }

    fn number(&self, column: ColumnDeclaration) -> Option<f64> {
        self.table.number(self.row, column.0)
    }

    pub fn experiment(&self) -> Option<&'a str> {
        self.text(EXPERIMENT)
    }

    pub fn device(&self) -> Option<&'a str> {
        self.text(DEVICE)
    }

    /// The point's index as written (text, for messages about a row that is not right).
    pub fn point_text(&self) -> Option<&'a str> {
        self.text(POINT)
    }

    pub fn worker_text(&self) -> Option<&'a str> {
        self.text(WORKER)
    }

    /// The point's index, as a number where it is one.
    pub fn point(&self) -> Option<f64> {
        self.number(POINT)
    }

    pub fn worker(&self) -> Option<f64> {
        self.number(WORKER)
    }

    pub fn reps(&self) -> Option<f64> {
        self.number(REPS)
    }

    /// The `reps` column as a count, where it is one.
    pub fn reps_count(&self) -> Option<usize> {
        self.text(REPS)?.parse().ok()
    }

    pub fn stop_reason(&self) -> Option<&'a str> {
        self.text(STOP_REASON)
    }

    pub fn gpu_ms_median(&self) -> Option<f64> {
        self.number(GPU_MS_MEDIAN)
    }

    pub fn gpu_ms_ci_low(&self) -> Option<f64> {
        self.number(GPU_MS_CI_LOW)
    }

    pub fn gpu_ms_ci_high(&self) -> Option<f64> {
        self.number(GPU_MS_CI_HIGH)
    }

    pub fn gpu_ms_q1(&self) -> Option<f64> {
        self.number(GPU_MS_Q1)
    }

    pub fn gpu_ms_q3(&self) -> Option<f64> {
        self.number(GPU_MS_Q3)
    }

    pub fn gpu_ms_rel_iqr(&self) -> Option<f64> {
        self.number(GPU_MS_REL_IQR)
    }

    pub fn outliers(&self) -> Option<&'a str> {
        self.text(OUTLIERS)
    }

    /// The `outliers` column as a number, where it is one.
    pub fn outlier_count(&self) -> Option<f64> {
        self.number(OUTLIERS)
    }

    pub fn ceiling(&self) -> Option<&'a str> {
        self.text(CEILING)
    }

    pub fn wall_ms_median(&self) -> Option<f64> {
        self.number(WALL_MS_MEDIAN)
    }

    pub fn slowed(&self) -> Option<&'a str> {
        self.text(SLOWED)
    }

    pub fn total_height_change(&self) -> Option<f64> {
        self.number(TOTAL_HEIGHT_CHANGE)
    }

    pub fn rerun_cells_differing(&self) -> Option<f64> {
        self.number(RERUN_CELLS_DIFFERING)
    }

    /// Its throughput in `unit`'s work per second, where the row has one.
    pub fn per_s(&self, unit: WorkUnit) -> Option<f64> {
        self.table
            .number(self.row, &format!("{}_per_s", unit.column()))
    }

    /// A setting's or a strategy figure's value by its key, as the strategy names it:
    /// the settings are the strategy's, not columns of the reader's.
    pub fn setting(&self, key: &str) -> Option<&'a str> {
        self.table.get(self.row, key)
    }

    /// A setting's or a strategy figure's value by its key, as a number where it is one.
    pub fn setting_number(&self, key: &str) -> Option<f64> {
        self.table.number(self.row, key)
    }
}
