//! points.csv read by column name, as a table of text fields, and older files mapped
//! onto the columns this vkerode writes: `compare`, `plot`, `report`, `merge` and
//! `--resume` read the committed results of every earlier version.

use std::path::Path;

use super::schema::{owner_of, point_header};
use super::{csv_error, io_error, ResultsError};
use crate::erosion::{Algorithm, RunSettings, WorkUnit, STRATEGIES};
use crate::terrain::files::write_atomically;

/// A CSV file's header and rows, every field as text.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// Every row of `path` by its header; a row with another number of fields is refused.
    pub fn read(path: &Path) -> Result<Self, ResultsError> {
        let mut reader = csv::Reader::from_path(path).map_err(csv_error(path))?;
        let header: Vec<String> = reader
            .headers()
            .map_err(csv_error(path))?
            .iter()
            .map(str::to_string)
            .collect();
        let rows = reader
            .records()
            .map(|r| {
                r.map(|record| record.iter().map(str::to_string).collect())
                    .map_err(csv_error(path))
            })
            .collect::<Result<_, _>>()?;
        Ok(Self { header, rows })
    }

    /// Writes the table whole, or not at all.
    pub fn write(&self, path: &Path) -> Result<(), ResultsError> {
        write_atomically(path, |out| {
            let mut writer = csv::Writer::from_writer(out);
            writer
                .write_record(&self.header)
                .map_err(std::io::Error::other)?;
            for row in &self.rows {
                writer.write_record(row).map_err(std::io::Error::other)?;
            }
            writer.flush()
        })
        .map_err(|e| io_error(path)(e.source))
    }

    pub fn column(&self, name: &str) -> Option<usize> {
        self.header.iter().position(|h| h == name)
    }

    /// Row `row`'s field of column `name`, if the table has that column.
    pub fn get(&self, row: usize, name: &str) -> Option<&str> {
        Some(self.rows[row].get(self.column(name)?)?.as_str())
    }

    /// Row `row`'s field of column `name` as a number, if it is one.
    pub fn number(&self, row: usize, name: &str) -> Option<f64> {
        self.get(row, name)?.parse().ok()
    }

    /// A column that must be there, as a number in every row.
    pub fn numbers(&self, name: &str, path: &Path) -> Result<Vec<f64>, ResultsError> {
        let mismatch = |reason: String| ResultsError::Mismatch {
            path: path.to_path_buf(),
            reason,
        };
        let at = self
            .column(name)
            .ok_or_else(|| mismatch(format!("has no column {name:?}")))?;
        self.rows
            .iter()
            .map(|row| {
                row[at].parse().map_err(|_| {
                    mismatch(format!("{:?} in column {name:?} is not a number", row[at]))
                })
            })
            .collect()
    }
}

/// points.csv with the columns this vkerode writes, whatever version wrote it.
pub fn read_points(path: &Path) -> Result<Table, ResultsError> {
    let table = Table::read(path)?;
    let current = point_header();
    if table.header == current {
        return Ok(table);
    }
    if table.column("point").is_none() || table.column("gpu_ms_median").is_none() {
        return Err(ResultsError::Mismatch {
            path: path.to_path_buf(),
            reason: "its columns are not those of a vkerode points.csv".into(),
        });
    }
    Ok(upgraded(&table, &current))
}

/// An older points.csv on the current columns, by name. Rows of schema 1 had one
/// `steps` column for droplet-steps and cell-steps alike, and other strategies'
/// settings filled with defaults: each row keeps its own strategy's columns, its steps
/// go to its unit's columns, and settings added since take their defaults (which every
/// older run used).
fn upgraded(old: &Table, current: &[String]) -> Table {
    let rows = (0..old.rows.len())
        .map(|r| {
            let algorithm = old
                .get(r, "algorithm")
                .and_then(|a| serde_json::from_value(serde_json::Value::String(a.into())).ok())
                .unwrap_or(Algorithm::Droplets);
            let strategy = algorithm.strategy();
            let defaults = RunSettings {
                algorithm,
                ..RunSettings::DEFAULT
            };
            let names: Vec<String> = strategy
                .settings_columns()
                .into_iter()
                .map(|c| c.name)
                .collect();
            let default_values = strategy.settings_values(&defaults, defaults.noise_map());
            current
                .iter()
                .map(|column| {
                    if owner_of(column).is_some_and(|owner| owner != algorithm) {
                        return String::new();
                    }
                    if let Some(value) = old.get(r, column) {
                        return value.to_string();
                    }
                    if let Some(renamed) = renamed_from(column, strategy.unit()) {
                        return old.get(r, &renamed).unwrap_or_default().to_string();
                    }
                    if column == "ceiling"
                        && !old.get(r, "percent_of_peak").unwrap_or_default().is_empty()
                    {
                        return strategy
                            .ceiling(&defaults, defaults.noise_map())
                            .name()
                            .to_string();
                    }
                    if column == "deterministic" && old.get(r, "atomics") == Some("deterministic") {
                        return "on".to_string();
                    }
                    names
                        .iter()
                        .position(|n| n == column)
                        .map(|i| default_values[i].clone())
                        .unwrap_or_default()
                })
                .collect()
        })
        .collect();
    Table {
        header: current.to_vec(),
        rows,
    }
}

/// The schema-1 column a current throughput column of `unit` was written as.
fn renamed_from(column: &str, unit: WorkUnit) -> Option<String> {
    let rest = column.strip_prefix(unit.column())?;
    let known = [
        "",
        "_per_s",
        "_per_s_q1",
        "_per_s_q3",
        "_per_s_ci_low",
        "_per_s_ci_high",
    ];
    known.contains(&rest).then(|| format!("steps{rest}"))
}

/// Each strategy's columns, for readers that ask whether a column applies.
pub fn strategy_columns() -> Vec<(Algorithm, Vec<String>)> {
    STRATEGIES
        .iter()
        .map(|s| {
            let names = s
                .settings_columns()
                .into_iter()
                .chain(s.figures_columns())
                .map(|c| c.name)
                .collect();
            (s.algorithm(), names)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_schema_1_row_keeps_its_own_columns_and_its_steps_go_to_its_unit() {
        let old = Table {
            header: [
                "point",
                "algorithm",
                "steps",
                "steps_per_s",
                "workgroup",
                "pipes_steps",
                "gpu_ms_median",
            ]
            .map(String::from)
            .to_vec(),
            rows: vec![
                ["0", "droplets", "900", "9e9", "64", "500", "1.5"]
                    .map(String::from)
                    .to_vec(),
                ["1", "pipes", "40", "4e9", "64", "40", "2.5"]
                    .map(String::from)
                    .to_vec(),
            ],
        };
        let current = point_header();
        let new = upgraded(&old, &current);
        assert_eq!(new.get(0, "droplet_steps"), Some("900"));
        assert_eq!(new.get(0, "droplet_steps_per_s"), Some("9e9"));
        assert_eq!(new.get(0, "cell_steps_per_s"), Some(""));
        assert_eq!(
            new.get(0, "pipes_steps"),
            Some(""),
            "another strategy's setting"
        );
        assert_eq!(
            new.get(0, "physics"),
            Some("paper"),
            "a setting added since"
        );
        assert_eq!(new.get(1, "cell_steps"), Some("40"));
        assert_eq!(new.get(1, "workgroup"), Some(""));
        assert_eq!(new.get(1, "pipes_steps"), Some("40"));
        assert_eq!(new.get(1, "gpu_ms_median"), Some("2.5"));
    }
}
