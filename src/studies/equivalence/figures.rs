//! What one run did, as the figures an equivalence verdict weighs: the change's net,
//! eroded and deposited volumes and its deepest cell, then every landform figure of the
//! map after (`Landform`'s fields, read through serde, so that a figure added there
//! joins without a change here), and the change map smoothed into blocks for the map
//! test.

use serde::{Deserialize, Serialize};

use crate::experiment::results::columns::{
    ColumnDeclaration, DEEPEST_EROSION, DEPOSITED, ERODED, TOTAL_CHANGE,
};
use crate::terrain::metrics::Landform;
use crate::terrain::units::{GridUnits, HeightUnit};
use crate::terrain::{Cells, Change, Values};

/// The change's figures, before the landform's: (name, unit, meaning), as the core
/// declares them.
pub const CHANGE_FIGURES: &[ColumnDeclaration] =
    &[TOTAL_CHANGE, ERODED, DEPOSITED, DEEPEST_EROSION];

/// The smoothed change map has at most this many blocks a side: each block is the mean
/// change of a square of cells (a box blur sampled once per box), so that the map test
/// weighs where erosion went, not each cell's race.
pub const SMOOTHED_SIDE: usize = 64;

/// One run's figures, by name in a fixed order: `None` where a figure is undefined for
/// the run (a landform figure's own `None`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Figures(pub Vec<(String, Option<f64>)>);

impl Figures {
    pub fn get(&self, name: &str) -> Option<f64> {
        self.0.iter().find(|(n, _)| n == name).and_then(|(_, v)| *v)
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(n, _)| n.as_str())
    }
}

/// The change map of one run in blocks of `block` x `block` cells, each the mean of
/// (after - before) over its cells in height units; edge blocks average the cells they
/// hold.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SmoothedMap {
    pub width: usize,
    pub height: usize,
    pub block: usize,
    pub values: Vec<f32>,
}

/// The block side that leaves at most [`SMOOTHED_SIDE`] blocks a side.
pub fn block_side(width: usize, height: usize) -> usize {
    width.max(height).div_ceil(SMOOTHED_SIDE).max(1)
}

/// Each cell's (after - before) in kernel height units; `None` where the two are not
/// one map in one arithmetic.
fn cell_changes(before: &Cells, after: &Cells) -> Option<Vec<f64>> {
    if (before.width(), before.height()) != (after.width(), after.height()) {
        return None;
    }
    match (before.values(), after.values()) {
        (Values::Fixed { cells: b, scale }, Values::Fixed { cells: a, scale: s }) if scale == s => {
            let scale = f64::from(*scale);
            Some(
                b.iter()
                    .zip(a)
                    .map(|(&b, &a)| (f64::from(a) - f64::from(b)) / scale)
                    .collect(),
            )
        }
        (Values::Float(b), Values::Float(a)) => Some(
            b.iter()
                .zip(a)
                .map(|(&b, &a)| f64::from(a) - f64::from(b))
                .collect(),
        ),
        _ => None,
    }
}

impl SmoothedMap {
    /// The change from `before` to `after` in `unit`, in blocks.
    pub fn between(before: &Cells, after: &Cells, unit: &HeightUnit) -> Option<Self> {
        let changes = cell_changes(before, after)?;
        let (w, h) = (before.width(), before.height());
        let block = block_side(w, h);
        let (bw, bh) = (w.div_ceil(block), h.div_ceil(block));
        let mut sums = vec![0.0f64; bw * bh];
        let mut counts = vec![0u32; bw * bh];
        for y in 0..h {
            for x in 0..w {
                let b = (y / block) * bw + x / block;
                sums[b] += changes[y * w + x];
                counts[b] += 1;
            }
        }
        Some(Self {
            width: bw,
            height: bh,
            block,
            values: sums
                .iter()
                .zip(&counts)
                .map(|(s, &c)| unit.of(s / f64::from(c.max(1))) as f32)
                .collect(),
        })
    }
}

/// A serde value's numbers as figures, nested objects' names joined by `_`; `None`
/// for a null, nothing for text or switches.
fn numbers(prefix: &str, value: &serde_json::Value, out: &mut Vec<(String, Option<f64>)>) {
    let name = |key: &str| match prefix {
        "" => key.to_string(),
        p => format!("{p}_{key}"),
    };
    match value {
        serde_json::Value::Object(map) => {
            for (key, v) in map {
                match v {
                    serde_json::Value::Object(_) => numbers(&name(key), v, out),
                    serde_json::Value::Number(n) => out.push((name(key), n.as_f64())),
                    serde_json::Value::Null => out.push((name(key), None)),
                    _ => {}
                }
            }
        }
        serde_json::Value::Number(n) => out.push((prefix.to_string(), n.as_f64())),
        _ => {}
    }
}

/// The landform's figures, by field name (through serde).
pub fn landform_figures(landform: &Landform) -> Vec<(String, Option<f64>)> {
    let mut out = Vec::new();
    if let Ok(value) = serde_json::to_value(landform) {
        numbers("", &value, &mut out);
    }
    out
}

/// The figures of a run that took `before` to `after` (kernel heights), on a grid of
/// `units`, in `unit`; `None` where the two are not one map in one arithmetic.
pub fn figures_of(
    before: &Cells,
    after: &Cells,
    units: &GridUnits,
    unit: &HeightUnit,
) -> Option<(Figures, SmoothedMap)> {
    let change = Change::between(before, after)?;
    let smoothed = SmoothedMap::between(before, after, unit)?;
    let mut figures: Vec<(String, Option<f64>)> = [
        change.total,
        change.eroded,
        change.deposited,
        change.deepest,
    ]
    .iter()
    .zip(CHANGE_FIGURES)
    .map(|(&v, (name, _, _))| (name.to_string(), Some(unit.of(v))))
    .collect();
    let landform = Landform::of_kernel(&after.heightmap(), units);
    figures.extend(landform_figures(&landform));
    Some((Figures(figures), smoothed))
}

/// The names of every figure, in order: the change's, then the landform's (of its
/// default value, so optional fields are named too).
pub fn figure_names() -> Vec<String> {
    CHANGE_FIGURES
        .iter()
        .map(|(n, _, _)| n.to_string())
        .chain(
            landform_figures(&Landform::default())
                .into_iter()
                .map(|(n, _)| n),
        )
        .collect()
}
