//! The typed reader of points.csv: a row of [`read_points`](super::read_points)'s table
//! (any version's file, mapped by name onto the current columns) read through fields
//! named by the column declarations (`columns.rs`), never by a name written at the
//! reader: its numbers by serde (the csv crate's, by the columns' names), its text by
//! the declarations. Compare, report, `--resume`, the sweep and the studies read points
//! through it.

use serde::Deserialize;

use super::columns::{ColumnDeclaration, DEVICE, EXPERIMENT, OUTLIERS, REPS, SLOWED, STOP_REASON};
use super::CsvText;
use crate::erosion::WorkUnit;
use crate::experiment::run::CEILING;

/// One row of points.csv, its fields typed: text where the column is text, numbers
/// where it is a number (none where the file leaves it empty or lacks it).
#[derive(Clone, Copy, Debug)]
pub struct PointRow<'a> {
    table: &'a CsvText,
    row: usize,
    numbers: PointNumbers,
}

/// The numbers every points.csv row has, deserialized by their columns' names (a test
/// holds each field to its declaration): none where the field is empty or not a
/// number, or the table lacks the column.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq)]
struct PointNumbers {
    #[serde(default, deserialize_with = "csv::invalid_option")]
    point: Option<f64>,
    #[serde(default, deserialize_with = "csv::invalid_option")]
    worker: Option<f64>,
    #[serde(default, deserialize_with = "csv::invalid_option")]
    reps: Option<f64>,
    #[serde(default, deserialize_with = "csv::invalid_option")]
    gpu_ms_median: Option<f64>,
    #[serde(default, deserialize_with = "csv::invalid_option")]
    gpu_ms_ci_low: Option<f64>,
    #[serde(default, deserialize_with = "csv::invalid_option")]
    gpu_ms_ci_high: Option<f64>,
    #[serde(default, deserialize_with = "csv::invalid_option")]
    gpu_ms_q1: Option<f64>,
    #[serde(default, deserialize_with = "csv::invalid_option")]
    gpu_ms_q3: Option<f64>,
    #[serde(default, deserialize_with = "csv::invalid_option")]
    gpu_ms_rel_iqr: Option<f64>,
    #[serde(default, deserialize_with = "csv::invalid_option")]
    outliers: Option<f64>,
    #[serde(default, deserialize_with = "csv::invalid_option")]
    wall_ms_median: Option<f64>,
    #[serde(default, deserialize_with = "csv::invalid_option")]
    total_height_change: Option<f64>,
    #[serde(default, deserialize_with = "csv::invalid_option")]
    rerun_cells_differing: Option<f64>,
}

impl PointNumbers {
    /// Row `row`'s numbers; every field optional, so a row always reads (a short row's
    /// missing fields are none).
    fn of(header: &csv::StringRecord, table: &CsvText, row: usize) -> Self {
        csv::StringRecord::from(table.rows[row].clone())
            .deserialize(Some(header))
            .unwrap_or_default()
    }
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
        let header = csv::StringRecord::from(self.header.clone());
        (0..self.rows.len()).map(move |row| PointRow {
            table: self,
            row,
            numbers: PointNumbers::of(&header, self, row),
        })
    }

    /// Its row `row` as a points.csv row.
    pub fn point_row(&self, row: usize) -> PointRow<'_> {
        let header = csv::StringRecord::from(self.header.clone());
        PointRow {
            table: self,
            row,
            numbers: PointNumbers::of(&header, self, row),
        }
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

    pub fn experiment(&self) -> Option<&'a str> {
        self.text(EXPERIMENT)
    }

    pub fn device(&self) -> Option<&'a str> {
        self.text(DEVICE)
    }

    /// The point's index as written (text, for messages about a row that is not right).
    pub fn point_text(&self) -> Option<&'a str> {
        self.text(super::columns::POINT)
    }

    pub fn worker_text(&self) -> Option<&'a str> {
        self.text(super::columns::WORKER)
    }

    /// The point's index, as a number where it is one.
    pub fn point(&self) -> Option<f64> {
        self.numbers.point
    }

    pub fn worker(&self) -> Option<f64> {
        self.numbers.worker
    }

    pub fn reps(&self) -> Option<f64> {
        self.numbers.reps
    }

    /// The `reps` column as a count, where it is one.
    pub fn reps_count(&self) -> Option<usize> {
        self.text(REPS)?.parse().ok()
    }

    pub fn stop_reason(&self) -> Option<&'a str> {
        self.text(STOP_REASON)
    }

    pub fn gpu_ms_median(&self) -> Option<f64> {
        self.numbers.gpu_ms_median
    }

    pub fn gpu_ms_ci_low(&self) -> Option<f64> {
        self.numbers.gpu_ms_ci_low
    }

    pub fn gpu_ms_ci_high(&self) -> Option<f64> {
        self.numbers.gpu_ms_ci_high
    }

    pub fn gpu_ms_q1(&self) -> Option<f64> {
        self.numbers.gpu_ms_q1
    }

    pub fn gpu_ms_q3(&self) -> Option<f64> {
        self.numbers.gpu_ms_q3
    }

    pub fn gpu_ms_rel_iqr(&self) -> Option<f64> {
        self.numbers.gpu_ms_rel_iqr
    }

    pub fn outliers(&self) -> Option<&'a str> {
        self.text(OUTLIERS)
    }

    /// The `outliers` column as a number, where it is one.
    pub fn outlier_count(&self) -> Option<f64> {
        self.numbers.outliers
    }

    pub fn ceiling(&self) -> Option<&'a str> {
        self.text(CEILING)
    }

    pub fn wall_ms_median(&self) -> Option<f64> {
        self.numbers.wall_ms_median
    }

    pub fn slowed(&self) -> Option<&'a str> {
        self.text(SLOWED)
    }

    pub fn total_height_change(&self) -> Option<f64> {
        self.numbers.total_height_change
    }

    pub fn rerun_cells_differing(&self) -> Option<f64> {
        self.numbers.rerun_cells_differing
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

#[cfg(test)]
mod tests {
    use super::super::columns::{
        GPU_MS_CI_HIGH, GPU_MS_CI_LOW, GPU_MS_MEDIAN, GPU_MS_Q1, GPU_MS_Q3, GPU_MS_REL_IQR, POINT,
        WALL_MS_MEDIAN, WORKER,
    };
    use super::super::schema::{point_header, RERUN_CELLS_DIFFERING, TOTAL_HEIGHT_CHANGE};
    use super::*;

    /// Each number the reader deserializes is a declared column of points.csv, read by
    /// that name: a row whose fields are each its column's position reads them back.
    #[test]
    fn every_number_is_read_by_its_declared_column() {
        let header = point_header();
        let table = CsvText {
            rows: vec![(0..header.len()).map(|i| i.to_string()).collect()],
            header,
        };
        let row = table.point_row(0);
        let at = |c: ColumnDeclaration| table.column(c.0).map(|i| i as f64);
        let read = [
            (POINT, row.point()),
            (WORKER, row.worker()),
            (REPS, row.reps()),
            (GPU_MS_MEDIAN, row.gpu_ms_median()),
            (GPU_MS_CI_LOW, row.gpu_ms_ci_low()),
            (GPU_MS_CI_HIGH, row.gpu_ms_ci_high()),
            (GPU_MS_Q1, row.gpu_ms_q1()),
            (GPU_MS_Q3, row.gpu_ms_q3()),
            (GPU_MS_REL_IQR, row.gpu_ms_rel_iqr()),
            (OUTLIERS, row.outlier_count()),
            (WALL_MS_MEDIAN, row.wall_ms_median()),
            (TOTAL_HEIGHT_CHANGE, row.total_height_change()),
            (RERUN_CELLS_DIFFERING, row.rerun_cells_differing()),
        ];
        for (column, value) in read {
            assert!(at(column).is_some(), "{} is no points.csv column", column.0);
            assert_eq!(value, at(column), "{}", column.0);
        }
        // An empty field, text, or a column the table lacks: none.
        let partial = CsvText {
            header: vec![POINT.0.into(), GPU_MS_MEDIAN.0.into()],
            rows: vec![vec!["".into(), "fast".into()]],
        };
        let row = partial.point_row(0);
        assert_eq!(
            (row.point(), row.gpu_ms_median(), row.reps()),
            (None, None, None)
        );
    }
}
