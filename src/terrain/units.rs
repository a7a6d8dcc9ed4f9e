//! From a DEM's metres on a grid of metres to the kernel's height units, where one
//! unit is one cell, and back.

use super::image::CellSize;

/// How a geographic CRS's cell size in metres was found: on its ellipsoid, at the
/// map's centre row.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct Geodesic {
    /// The latitude of the centre row, in degrees.
    pub latitude_deg: f64,
    /// The east-west spacing's spread over the map, (widest - narrowest) / centre's:
    /// what one spacing per map neglects.
    pub x_spread: f64,
}

/// Where a DEM's cell size came from.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CellSizeSource {
    /// `--cell-size`, over whatever the file says.
    Flag,
    /// The file: GeoTIFF tags or the sidecar, in a linear unit.
    File,
    /// The file's geographic CRS: degrees turned into metres on its ellipsoid.
    Geodesic(Geodesic),
    /// Neither: the user assumed one by name (`--assume-cell-size`).
    Assumed,
}

/// What a grid's lengths are measured in: a DEM's metres, or generated terrain's cells.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum LengthUnit {
    #[default]
    Cells,
    Metres,
}

impl LengthUnit {
    /// The upstream area from which a cell is a channel, in this unit squared: 0.5 km2 on
    /// a DEM (78 cells of an 80 m DEM, 556 of a 30 m one), 100 cells on generated terrain.
    pub fn channel_area(self) -> f64 {
        match self {
            Self::Cells => 100.0,
            Self::Metres => 500_000.0,
        }
    }

    /// Per-length figures (drainage density) in this unit's reported unit: per km for
    /// metres, per cell for cells.
    pub fn per_density_unit(self) -> f64 {
        match self {
            Self::Cells => 1.0,
            Self::Metres => 1000.0,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct GridUnits {
    /// Grid spacing in the DEM's horizontal units (metres).
    pub cell_size: CellSize,
    /// Multiplies elevations before the conversion (vertical exaggeration).
    pub vertical_scale: f32,
    pub length_unit: LengthUnit,
}

impl GridUnits {
    /// A DEM's: `cell_size` in metres, heights scaled by `vertical_scale`.
    pub fn metres(cell_size: CellSize, vertical_scale: f32) -> Self {
        Self {
            cell_size,
            vertical_scale,
            length_unit: LengthUnit::Metres,
        }
    }
}

impl Default for GridUnits {
    /// Heights already in cells: the identity.
    fn default() -> Self {
        Self {
            cell_size: CellSize::default(),
            vertical_scale: 1.0,
            length_unit: LengthUnit::Cells,
        }
    }
}

impl GridUnits {
    /// The kernel steps one cell along x at a time, so the x spacing is its unit of
    /// length; it treats cells as square.
    pub fn to_kernel(&self, elevation: f32) -> f32 {
        elevation * self.vertical_scale / self.cell_size.x
    }

    pub fn from_kernel(&self, height: f32) -> f32 {
        height * self.cell_size.x / self.vertical_scale
    }

    /// The grid spacing in kernel units of length (the x spacing): 1 across, dy / dx
    /// down.
    pub fn kernel_spacing(&self) -> CellSize {
        CellSize {
            x: 1.0,
            y: self.cell_size.y / self.cell_size.x,
        }
    }

    /// The map's height units in one kernel height unit.
    pub fn per_kernel_unit(&self) -> f64 {
        f64::from(self.cell_size.x) / f64::from(self.vertical_scale)
    }
}

/// Metres in one of a file's vertical units: feet convert, so that the kernel sees
/// heights and cells in one unit; any other (metres, cells, unnamed) is taken as is.
pub fn metres_per_vertical_unit(unit: &str) -> f32 {
    match unit {
        "ft" => 0.3048,
        "US survey ft" => 1200.0 / 3937.0,
        _ => 1.0,
    }
}

/// A DEM file's vertical unit: the one it names, or metres where it names none (its
/// cell size is in metres by the time it is read, so its heights are taken in them too).
pub fn dem_height_unit(named: &str) -> &str {
    match named {
        "" => "m",
        named => named,
    }
}

/// A vertical unit as files name it, in words: "cell widths" for generated terrain's
/// "cells" (heights in cell widths), any other as it is.
pub fn height_label(name: &str) -> &str {
    match name {
        "cells" => "cell widths",
        name => name,
    }
}

/// The unit of every reported height, change and mass: the map's vertical unit (metres
/// for a DEM, cells for generated terrain). A field or column documented in it is
/// computed in kernel units and converted on the way out.
pub const HEIGHT_UNITS: &str = "height units";
/// What a `height_unit` field or column says, wherever one is documented.
pub const HEIGHT_UNIT_MEANING: &str = "the unit of every figure given in height units: m for a DEM, cells (heights in cell widths) for generated terrain";
/// The unit of the kernels' own settings (rain, capacities), which are never converted.
pub const KERNEL_HEIGHT_UNITS: &str = "kernel height units";

/// The map's vertical unit, and how many of it one kernel height unit is.
#[derive(Clone, Debug, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct HeightUnit {
    /// "m" for a DEM, "cells" for generated terrain (heights in cell widths).
    pub name: String,
    pub per_kernel_unit: f64,
}

impl HeightUnit {
    /// Heights in `name` that `units` turned into kernel units (feet through metres).
    pub fn new(name: impl Into<String>, units: &GridUnits) -> Self {
        let name = name.into();
        let metres = f64::from(metres_per_vertical_unit(&name));
        Self {
            per_kernel_unit: units.per_kernel_unit() / metres,
            name,
        }
    }

    /// Generated terrain's: kernel units are its units.
    pub fn cells() -> Self {
        Self::new("cells", &GridUnits::default())
    }

    /// Whether a documented unit is a height (or a sum, or a rate, of heights) that this
    /// converts: "height units", "height units x cells", "height units per time unit".
    pub fn converts(unit: &str) -> bool {
        unit.starts_with(HEIGHT_UNITS)
    }

    pub fn of(&self, kernel: f64) -> f64 {
        kernel * self.per_kernel_unit
    }

    /// The unit of one height, in words ([`height_label`]).
    pub fn height_label(&self) -> &str {
        height_label(&self.name)
    }

    /// The unit of heights summed over cells, a volume: "m·cells" (times one cell's
    /// area in m² for m³), or "cell widths³" for generated terrain.
    pub fn sum_label(&self) -> String {
        match self.name.as_str() {
            "cells" => "cell widths³".into(),
            name => format!("{name}·cells"),
        }
    }

    /// A sum of heights over cells, converted, with its unit, for the console:
    /// "12.5 m·cells".
    pub fn show_sum(&self, kernel: f64, decimals: usize) -> String {
        format!("{:.*} {}", decimals, self.of(kernel), self.sum_label())
    }

    /// Converts the fields of `report` (run.json) that `fields` (path, unit, meaning)
    /// document in height units; paths join objects with `.` and mark arrays `[]`.
    pub fn convert_report(
        &self,
        fields: &[(&str, &str, &str)],
        report: &mut serde_json::Map<String, serde_json::Value>,
    ) {
        let mut root = serde_json::Value::Object(std::mem::take(report));
        for (path, unit, _) in fields {
            if Self::converts(unit) {
                let segments: Vec<&str> = path.split('.').collect();
                self.convert_at(&mut root, &segments);
            }
        }
        if let serde_json::Value::Object(fields) = root {
            *report = fields;
        }
    }

    fn convert_at(&self, value: &mut serde_json::Value, path: &[&str]) {
        use serde_json::Value;
        match (path.split_first(), value) {
            (None, Value::Number(n)) => {
                if let Some(converted) = n
                    .as_f64()
                    .and_then(|v| serde_json::Number::from_f64(self.of(v)))
                {
                    *n = converted;
                }
            }
            (Some((segment, rest)), Value::Object(fields)) => {
                let key = segment.trim_end_matches("[]");
                match (fields.get_mut(key), segment.ends_with("[]")) {
                    (Some(Value::Array(items)), true) => {
                        for item in items {
                            self.convert_at(item, rest);
                        }
                    }
                    (Some(inner), false) => self.convert_at(inner, rest),
                    _ => {}
                }
            }
            _ => {}
        }
    }

    /// Converts the values of `columns` (points.csv, strategies.csv) documented in
    /// height units; empty values stay empty.
    pub fn convert_values(&self, columns: &[crate::table::Column], values: &mut [String]) {
        for (column, value) in columns.iter().zip(values) {
            if Self::converts(&column.unit) {
                if let Ok(v) = value.parse::<f64>() {
                    *value = self.of(v).to_string();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metres_survive_the_trip_to_cells_and_back() {
        let units = GridUnits::metres(CellSize { x: 74.5, y: 92.6 }, 2.0);
        for elevation in [-10_911.0f32, 0.0, 236.25, 1076.0, 8848.86] {
            let cells = units.to_kernel(elevation);
            assert!((cells - elevation * 2.0 / 74.5).abs() <= 1e-4 * cells.abs().max(1.0));
            let back = units.from_kernel(cells);
            assert!(
                (back - elevation).abs() <= 1e-6 * elevation.abs().max(1.0),
                "{elevation} -> {back}"
            );
        }
    }

    #[test]
    fn documented_heights_are_converted_and_nothing_else() {
        let unit = HeightUnit::new("m", &GridUnits::metres(CellSize { x: 50.0, y: 60.0 }, 2.0));
        let mut report = serde_json::json!({
            "mass": {"after": 4.0, "steps": 4},
            "checks": [{"totals": {"terrain": 1.0}}, {"totals": {"terrain": 2.0}}],
            "params": {"rain": 1.0},
        })
        .as_object()
        .cloned()
        .unwrap();
        let fields = [
            ("mass.after", "height units x cells", ""),
            ("mass.steps", "time steps", ""),
            ("checks[].totals.terrain", "height units", ""),
            ("params.rain", "kernel height units per time unit", ""),
        ];
        unit.convert_report(&fields, &mut report);
        assert_eq!(
            serde_json::Value::Object(report),
            serde_json::json!({
                "mass": {"after": 100.0, "steps": 4},
                "checks": [{"totals": {"terrain": 25.0}}, {"totals": {"terrain": 50.0}}],
                "params": {"rain": 1.0},
            })
        );
        let columns = [
            crate::table::Column::new("moved", "height units x cells", ""),
            crate::table::Column::new("cells", "cells", ""),
            crate::table::Column::new("missing", "height units", ""),
        ];
        let mut values = vec!["2".to_string(), "2".to_string(), String::new()];
        unit.convert_values(&columns, &mut values);
        assert_eq!(values, ["50", "2", ""]);
    }
}
