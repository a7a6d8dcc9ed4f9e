//! CSVs read by column name (`read_records`: samples.csv, runs.csv, any serde rows), and
//! points.csv as a table of text fields with older files mapped onto the columns this
//! vkerode writes: `compare`, `plot`, `report`, `merge` and `--resume` read the committed
//! results of every earlier version.

use std::path::Path;

use serde::de::DeserializeOwned;

use super::schema::{owner_of, point_header};
use super::{csv_error, io_error, ResultsError};
use crate::erosion::{Algorithm, RunSettings, WorkUnit};
use crate::terrain::files::write_atomically;

/// A CSV file's header and rows, every field as text.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CsvText {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl CsvText {
    /// Every row of `path` by its header; a row with another number of fields is refused.
    pub fn read(path: &Path) -> Result<Self, ResultsError> {
        let (header, rows) = read_records(path, |_| Ok(()))?;
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

/// A CSV at `path` read by column name: its header, and, once `check` has passed it,
/// every row as an `R`.
pub fn read_records<R: DeserializeOwned>(
    path: &Path,
    check: impl FnOnce(&[String]) -> Result<(), ResultsError>,
) -> Result<(Vec<String>, Vec<R>), ResultsError> {
    crate::check_regular_file(path).map_err(io_error(path))?;
    let mut reader = csv::Reader::from_path(path).map_err(csv_error(path))?;
    let header: Vec<String> = reader
        .headers()
        .map_err(csv_error(path))?
        .iter()
        .map(str::to_string)
        .collect();
    check(&header)?;
    let rows = reader
        .deserialize()
        .collect::<Result<_, _>>()
        .map_err(csv_error(path))?;
    Ok((header, rows))
}

/// points.csv with the columns this vkerode writes, whatever version wrote it.
pub fn read_points(path: &Path) -> Result<CsvText, ResultsError> {
    let table = CsvText::read(path)?;
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
    upgraded(&table, &current).map_err(|e| ResultsError::Mismatch {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })
}

/// Columns added after results were committed, with the value that every run before
/// them had: there was one behaviour then. A column a file lacks that is not here stays
/// empty: its value is unknown.
const IMPLIED: [(&str, &str); 11] = [
    // One strategy, on one device.
    ("algorithm", "droplets"),
    ("worker", "0"),
    // The paper's speed update and int() truncation.
    ("physics", "paper"),
    ("rounding", "trunc"),
    // Mei et al.'s advection, before the upwind transport.
    ("pipes_advection", "semi-lagrangian"),
    // The virtual pipes' flat-bed clamp, frictionless flux and closed edges.
    ("pipes_min_tilt", "0.05"),
    ("pipes_friction", "0"),
    ("pipes_boundary", "closed"),
    ("pipes_base_level", "0"),
    // Deterministic mode was spelled only as `atomics = "deterministic"`.
    ("deterministic", "off"),
    // Sweeps ran on generated terrain alone.
    ("height_unit", "cells"),
];

/// A row of an older points.csv whose strategy this vkerode does not know: the row
/// (from 1) and the strategy as spelled.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("row {row}: algorithm {spelled:?} is not one this vkerode runs")]
struct UnknownAlgorithm {
    row: usize,
    spelled: String,
}

/// An older points.csv on the current columns, by name. Rows of schema 1 had one
/// `steps` column for droplet-steps and cell-steps alike, and other strategies'
/// settings filled with defaults: each row keeps its own strategy's columns (empty in
/// the others'), its steps go to its unit's columns, and a column the file lacks takes
/// its implied value where it has one ([`IMPLIED`]), else stays empty: unknown, as a
/// strategy's own columns never are in the files this vkerode writes.
fn upgraded(old: &CsvText, current: &[String]) -> Result<CsvText, UnknownAlgorithm> {
    let owners: Vec<_> = current.iter().map(|c| owner_of(c)).collect();
    let units: Vec<(WorkUnit, Vec<Option<String>>)> = WorkUnit::ALL
        .iter()
        .map(|&u| (u, current.iter().map(|c| renamed_from(c, u)).collect()))
        .collect();
    let implied = |column: &str| IMPLIED.iter().find(|(c, _)| *c == column).map(|(_, v)| *v);
    let mut rows = Vec::with_capacity(old.rows.len());
    for r in 0..old.rows.len() {
        let spelled = old
            .get(r, "algorithm")
            .filter(|a| !a.is_empty())
            .or(implied("algorithm"))
            .unwrap_or_default();
        let algorithm: Algorithm =
            serde_json::from_value(serde_json::Value::String(spelled.into())).map_err(|_| {
                UnknownAlgorithm {
                    row: r + 1,
                    spelled: spelled.to_string(),
                }
            })?;
        let strategy = algorithm.strategy();
        let renamed = &units
            .iter()
            .find(|(u, _)| *u == strategy.unit())
            .expect("every unit is listed")
            .1;
        let row = current
            .iter()
            .enumerate()
            .map(|(i, column)| {
                if owners[i].is_some_and(|owner| owner != algorithm) {
                    return String::new();
                }
                if let Some(value) = old.get(r, column) {
                    return value.to_string();
                }
                if let Some(renamed) = &renamed[i] {
                    return old.get(r, renamed).unwrap_or_default().to_string();
                }
                match column.as_str() {
                    "ceiling" if !old.get(r, "percent_of_peak").unwrap_or_default().is_empty() => {
                        let defaults = RunSettings {
                            algorithm,
                            ..RunSettings::DEFAULT
                        };
                        let ceiling = strategy.ceiling(&defaults, defaults.noise_map());
                        ceiling.name().to_string()
                    }
                    "deterministic" if old.get(r, "atomics") == Some("deterministic") => {
                        "on".into()
                    }
                    "algorithm" => algorithm.as_str().into(),
                    _ => implied(column).unwrap_or_default().into(),
                }
            })
            .collect();
        rows.push(row);
    }
    Ok(CsvText {
        header: current.to_vec(),
        rows,
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_reads_every_field_as_text_and_refuses_a_row_of_other_length() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("t.csv");
        std::fs::write(&path, "a,b\n1,\n\"x,y\",2\n").unwrap();
        let table = CsvText::read(&path).unwrap();
        assert_eq!(table.header, ["a", "b"]);
        assert_eq!(table.rows, [vec!["1", ""], vec!["x,y", "2"]]);
        std::fs::write(&path, "a,b\n1,2\n3\n").unwrap();
        let refused = CsvText::read(&path).unwrap_err();
        let ResultsError::Csv { source, .. } = &refused else {
            panic!("refused for another reason: {refused}");
        };
        assert!(
            matches!(source.kind(), csv::ErrorKind::UnequalLengths { .. }),
            "{refused}"
        );
    }

    #[test]
    fn a_schema_1_row_keeps_its_own_columns_and_its_steps_go_to_its_unit() {
        let old = CsvText {
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
        let new = upgraded(&old, &current).unwrap();
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
        // Not recorded and not implied: unknown, so empty.
        assert_eq!(new.get(1, "pipes_check_every"), Some(""));
        assert_eq!(new.get(1, "pipes_advection"), Some("semi-lagrangian"));
        assert_eq!(new.get(1, "worker"), Some("0"));

        // Before the algorithm column, every row was the droplets'.
        let older = CsvText {
            header: ["point", "steps", "gpu_ms_median"]
                .map(String::from)
                .to_vec(),
            rows: vec![["0", "900", "1.5"].map(String::from).to_vec()],
        };
        let new = upgraded(&older, &current).unwrap();
        assert_eq!(new.get(0, "algorithm"), Some("droplets"));
        assert_eq!(new.get(0, "droplet_steps"), Some("900"));
        let unknown = CsvText {
            rows: vec![["0", "sand", "9", "9e9", "64", "5", "1"]
                .map(String::from)
                .to_vec()],
            ..old
        };
        assert!(upgraded(&unknown, &current)
            .unwrap_err()
            .to_string()
            .contains("\"sand\""));
    }
}
