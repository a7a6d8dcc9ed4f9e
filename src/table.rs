//! Named columns: a typed section of a CSV row, its header from the field names and
//! its values as CSV fields, with each column's unit and meaning written once beside
//! the type (and a test that holds the two together).

use serde::Serialize;

/// One column of a results file: its name, unit and meaning.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Column {
    pub name: String,
    /// The unit of its values, or what they are ("count", "text", "ms", ...).
    pub unit: String,
    pub meaning: String,
}

impl Column {
    pub fn new(
        name: impl Into<String>,
        unit: impl Into<String>,
        meaning: impl Into<String>,
    ) -> Self {
        Self {
            name: name.into(),
            unit: unit.into(),
            meaning: meaning.into(),
        }
    }
}

/// A group of columns written as one serde struct: its fields are its columns.
pub trait Section: Serialize + Default {
    /// (name, unit, meaning) of every field, in field order.
    const COLUMNS: &'static [(&'static str, &'static str, &'static str)];

    fn columns() -> Vec<Column> {
        Self::COLUMNS
            .iter()
            .map(|&(name, unit, meaning)| Column::new(name, unit, meaning))
            .collect()
    }
}

/// One row of a results file as it is built: its columns and, for a row with data,
/// their values (empty where a section does not apply).
#[derive(Clone, Debug, Default)]
pub struct Row {
    pub columns: Vec<Column>,
    pub values: Vec<String>,
}

impl Row {
    /// Appends `columns` with `values`, or empty fields for `None`.
    pub fn push_columns(&mut self, columns: Vec<Column>, values: Option<Vec<String>>) {
        let values = values.unwrap_or_else(|| vec![String::new(); columns.len()]);
        assert_eq!(values.len(), columns.len(), "a value per column");
        self.columns.extend(columns);
        self.values.extend(values);
    }

    /// Appends the section's columns, with `value`'s fields or empty ones.
    pub fn push<T: Section>(&mut self, value: Option<&T>) {
        self.push_columns(T::columns(), value.map(values_of));
    }

    /// [`Row::push`] with `suffix` after every column name (`mean_slope_before`).
    pub fn push_suffixed<T: Section>(&mut self, value: Option<&T>, suffix: &str, meaning: &str) {
        let columns = T::columns()
            .into_iter()
            .map(|c| Column {
                name: format!("{}{suffix}", c.name),
                meaning: format!("{} ({meaning})", c.meaning),
                ..c
            })
            .collect();
        self.push_columns(columns, value.map(values_of));
    }

    /// The column names.
    pub fn header(&self) -> Vec<String> {
        self.columns.iter().map(|c| c.name.clone()).collect()
    }
}

/// The column names of a serde struct, in order, as the csv crate writes them.
pub fn header_of<T: Serialize + Default>() -> Vec<String> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer
        .serialize(T::default())
        .expect("a row serializes to CSV");
    let bytes = writer.into_inner().expect("a Vec takes every byte");
    let mut reader = csv::ReaderBuilder::new().from_reader(bytes.as_slice());
    let headers = reader.headers().expect("the header just written");
    headers.iter().map(str::to_string).collect()
}

/// A serde struct's values as CSV fields, in its field order.
pub fn values_of<T: Serialize>(value: &T) -> Vec<String> {
    let mut writer = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(Vec::new());
    writer.serialize(value).expect("a row serializes to CSV");
    let bytes = writer.into_inner().expect("a Vec takes every byte");
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(bytes.as_slice());
    let record = reader
        .records()
        .next()
        .expect("one record was written")
        .expect("the record just written");
    record.iter().map(str::to_string).collect()
}

/// Where a section's documented columns differ from its serialized header, if they do.
pub fn undocumented<T: Section>() -> Option<String> {
    let header = header_of::<T>();
    let documented: Vec<&str> = T::COLUMNS.iter().map(|c| c.0).collect();
    (header != documented).then(|| {
        format!(
            "{}: serialized {header:?}, documented {documented:?}",
            std::any::type_name::<T>()
        )
    })
}

/// A markdown cell: pipes escaped, lines joined.
fn markdown_cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

// Kept (no tabled): tabled pads every cell to its column's width, so the generated docs and committed .md tables would change.
/// Appends a markdown table of `head` and `rows` to `out`, then a blank line.
pub fn markdown_table(
    out: &mut String,
    head: &[&str],
    rows: impl IntoIterator<Item = Vec<String>>,
) {
    use std::fmt::Write as _;
    let _ = writeln!(out, "| {} |", head.join(" | "));
    let _ = writeln!(out, "|{}", " --- |".repeat(head.len()));
    for row in rows {
        let cells: Vec<String> = row.iter().map(|c| markdown_cell(c)).collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize, Default)]
    struct Pair {
        left: u32,
        right: Option<f64>,
    }

    impl Section for Pair {
        const COLUMNS: &'static [(&'static str, &'static str, &'static str)] =
            &[("left", "count", "l"), ("right", "m", "r")];
    }

    #[test]
    fn a_section_writes_its_field_names_and_values_in_order() {
        assert_eq!(header_of::<Pair>(), ["left", "right"]);
        let row = values_of(&Pair {
            left: 3,
            right: None,
        });
        assert_eq!(row, ["3", ""]);
        assert_eq!(undocumented::<Pair>(), None);
    }
}
