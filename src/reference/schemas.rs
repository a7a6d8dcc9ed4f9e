//! JSON Schemas of the files vkerode writes (run.json, meta.json, peak.json,
//! equivalence.json) and of what
//! its commands print with `--json`, generated from the types that are serialized
//! (schemars). Every object is closed (`additionalProperties: false`), and the files'
//! fields take their meaning and unit from the results reference (`json.rs`), whose
//! list also supplies the strategies' own run.json fields, which the report holds as a
//! map.

use schemars::generate::SchemaSettings;
use schemars::JsonSchema;
use serde_json::{Map, Value};

use super::json::json_fields;
use crate::experiment::report::{CompareReport, OverReport, ReportRow, SweepReport};
use crate::experiment::results::Meta;
use crate::experiment::ErodeReport;
use crate::gpu::DeviceInfo;
use crate::probes::ceilings::PeakTable;
use crate::probes::kernels::KernelStatistics;
use crate::studies::equivalence::EquivalenceReport;
use crate::studies::reproduce::Reproduction;

/// One schema of docs/schemas/: its name (`<name>.schema.json`), what it describes, and
/// the schema.
pub struct JsonSchemaDoc {
    pub name: &'static str,
    pub describes: &'static str,
    pub schema: Value,
}

/// Every schema: the files' first, then the `--json` outputs'.
pub fn json_schemas() -> Vec<JsonSchemaDoc> {
    vec![
        file_schema::<ErodeReport>("run", "run.json, and what `erode --json` prints").0,
        file_schema::<Meta>("meta", "a results folder's meta.json").0,
        file_schema::<PeakTable>("peak", "peak.json, and what `peak --json` prints").0,
        file_schema::<EquivalenceReport>(
            "equivalence",
            "equivalence.json, and what `equivalence --json` prints",
        )
        .0,
        output_schema::<Vec<DeviceInfo>>("devices", "what `devices --json` prints"),
        output_schema::<Vec<KernelStatistics>>("kernels", "what `kernels --json` prints"),
        output_schema::<CompareReport>("compare", "what `compare --json` prints"),
        output_schema::<Vec<ReportRow>>("report", "what `report --json` prints"),
        output_schema::<OverReport>("report-over", "what `report --over KEY --json` prints"),
        output_schema::<SweepReport>("sweep", "what `sweep --json` prints"),
        output_schema::<Reproduction>(
            "reproduce",
            "reproduce.json, and what `reproduce --json` prints",
        ),
    ]
}

/// The schema of `T` as it is serialized, every subschema inline (so that a field's
/// path in the file is its path in the schema).
fn generate<T: JsonSchema>(name: &str, describes: &str) -> Value {
    let mut settings = SchemaSettings::draft2020_12().for_serialize();
    settings.inline_subschemas = true;
    let mut schema = settings
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value();
    if let Value::Object(root) = &mut schema {
        root.insert("title".into(), format!("{name}.schema.json").into());
        let own = root.remove("description");
        let what = match own.as_ref().and_then(Value::as_str) {
            Some(doc) => format!("{describes}: {doc}"),
            None => format!("{describes}."),
        };
        root.insert("description".into(), what.into());
    }
    schema
}

fn output_schema<T: JsonSchema>(name: &'static str, describes: &'static str) -> JsonSchemaDoc {
    let mut schema = generate::<T>(name, describes);
    close_objects(&mut schema);
    JsonSchemaDoc {
        name,
        describes,
        schema,
    }
}

/// A file's schema: its fields described from the results reference, fields listed
/// there and held in a map by the type (a strategy's own) added as optional, then
/// every object closed; and the common fields listed that the type does not have.
fn file_schema<T: JsonSchema>(
    name: &'static str,
    describes: &'static str,
) -> (JsonSchemaDoc, Vec<&'static str>) {
    let file = format!("{name}.json");
    let mut schema = generate::<T>(name, describes);
    let mut absent = Vec::new();
    for field in json_fields().iter().filter(|f| f.file == file) {
        if field.path.contains('*') {
            continue;
        }
        let segments: Vec<&str> = field.path.split('.').collect();
        let description = Value::from(match field.unit {
            "text" | "true/false" => field.meaning.to_string(),
            unit => format!("{} (unit: {unit})", field.meaning),
        });
        let found = describe(&mut schema, &segments, &description);
        match (found, field.strategy) {
            (true, _) => {}
            (false, Some(_)) => add_field(&mut schema, &segments, description),
            (false, None) => absent.push(field.path),
        }
    }
    close_objects(&mut schema);
    let doc = JsonSchemaDoc {
        name,
        describes,
        schema,
    };
    (doc, absent)
}

/// The schemas an Option, an enum or a flattened field nest `schema`'s alternatives in.
const ALTERNATIVES: [&str; 3] = ["anyOf", "oneOf", "allOf"];

/// Sets the description of the field at `path` wherever it occurs (each alternative of
/// an enum); whether there was one.
fn describe(schema: &mut Value, path: &[&str], description: &Value) -> bool {
    let Some((first, rest)) = path.split_first() else {
        if let Value::Object(node) = schema {
            node.insert("description".into(), description.clone());
        }
        return true;
    };
    let Value::Object(node) = schema else {
        return false;
    };
    let mut found = false;
    for key in ALTERNATIVES {
        if let Some(Value::Array(alternatives)) = node.get_mut(key) {
            for alternative in alternatives {
                found |= describe(alternative, path, description);
            }
        }
    }
    let (name, array) = match first.strip_suffix("[]") {
        Some(name) => (name, true),
        None => (*first, false),
    };
    if let Some(child) = node.get_mut("properties").and_then(|p| p.get_mut(name)) {
        found |= if array && !rest.is_empty() {
            describe_items(child, rest, description)
        } else {
            describe(child, rest, description)
        };
    }
    found
}

/// `describe` below the items of an array (or of an optional array's alternatives).
fn describe_items(array: &mut Value, path: &[&str], description: &Value) -> bool {
    let Value::Object(node) = array else {
        return false;
    };
    let mut found = false;
    for key in ALTERNATIVES {
        if let Some(Value::Array(alternatives)) = node.get_mut(key) {
            for alternative in alternatives {
                found |= describe_items(alternative, path, description);
            }
        }
    }
    if let Some(items) = node.get_mut("items") {
        found |= describe(items, path, description);
    }
    found
}

/// Adds an optional field at `path` (of any type; its description says what it is),
/// making the objects on the way.
fn add_field(schema: &mut Value, path: &[&str], description: Value) {
    let Some((first, rest)) = path.split_first() else {
        return;
    };
    let Value::Object(node) = schema else {
        return;
    };
    let properties = node
        .entry("properties")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(properties) = properties else {
        return;
    };
    match (first.strip_suffix("[]"), rest.is_empty()) {
        (_, true) => {
            let name = first.trim_end_matches("[]");
            properties.insert(
                name.into(),
                serde_json::json!({ "description": description }),
            );
        }
        (Some(name), false) => {
            let array = properties
                .entry(name)
                .or_insert_with(|| serde_json::json!({ "type": "array", "items": {} }));
            if let Some(items) = array.get_mut("items") {
                add_field(items, rest, description);
            }
        }
        (None, false) => {
            let object = properties
                .entry(*first)
                .or_insert_with(|| Value::Object(Map::new()));
            add_field(object, rest, description);
        }
    }
}

/// Closes every object with listed properties: a field the type does not have fails.
/// A map the type flattens into an object (a strategy's fields) is closed too, its
/// fields having been added from the reference.
fn close_objects(schema: &mut Value) {
    match schema {
        Value::Object(node) => {
            if node.contains_key("properties") {
                node.insert("additionalProperties".into(), false.into());
            }
            node.values_mut().for_each(close_objects);
        }
        Value::Array(items) => items.iter_mut().for_each(close_objects),
        _ => {}
    }
}

/// The fields the results reference lists for run.json, meta.json, peak.json and
/// equivalence.json (a
/// strategy's own aside) that their types do not have: none, where the two agree.
pub fn fields_missing_from_schemas() -> Vec<&'static str> {
    [
        file_schema::<ErodeReport>("run", "").1,
        file_schema::<Meta>("meta", "").1,
        file_schema::<PeakTable>("peak", "").1,
        file_schema::<EquivalenceReport>("equivalence", "").1,
    ]
    .concat()
}

/// A schema as its file in docs/schemas/ holds it.
pub fn schema_text(schema: &Value) -> String {
    let mut text = serde_json::to_string_pretty(schema).unwrap_or_default();
    text.push('\n');
    text
}
