//! The fields of the JSON files vkerode writes, with their units and meanings. A test
//! holds this list to the fields of real files: every field written is listed.

/// One field of a JSON file: its path (objects joined by `.`, arrays as `[]`).
pub struct JsonField {
    pub file: &'static str,
    pub path: &'static str,
    pub unit: &'static str,
    pub meaning: &'static str,
}

const fn field(
    file: &'static str,
    path: &'static str,
    unit: &'static str,
    meaning: &'static str,
) -> JsonField {
    JsonField {
        file,
        path,
        unit,
        meaning,
    }
}

pub const JSON_FIELDS: &[JsonField] = &[field(
    "run.json",
    "engine",
    "text",
    "gpu, cpu or cpu-sequential",
)];
