//! A map's heights as an erosion strategy keeps them: the droplet kernel's int32 fixed
//! point, or float32. Two states of one map compare exactly in the arithmetic they were
//! computed in (`change.rs`).

use super::heightmap::{Heightmap, HeightmapError};

/// The heights of one map, row-major, in a strategy's own arithmetic.
#[derive(Clone, Debug, PartialEq)]
pub struct Cells {
    width: usize,
    height: usize,
    values: Values,
}

/// How the heights are stored.
#[derive(Clone, Debug, PartialEq)]
pub enum Values {
    /// `int(h * scale)` per cell, as the droplet kernels store them.
    Fixed { cells: Vec<i32>, scale: f32 },
    /// Heights themselves.
    Float(Vec<f32>),
}

/// The arithmetic a strategy keeps its heights in: what [`Cells::in_arithmetic`] needs
/// to make its initial state from a heightmap.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Arithmetic {
    /// `int(h * scale)` per cell.
    Fixed {
        scale: f32,
    },
    Float,
}

impl Cells {
    /// `map` in `arithmetic`, refused where a height does not fit.
    pub fn in_arithmetic(map: &Heightmap, arithmetic: Arithmetic) -> Result<Self, HeightmapError> {
        match arithmetic {
            Arithmetic::Fixed { scale } => Self::fixed_from(map, scale),
            Arithmetic::Float => Ok(Self::float_from(map)),
        }
    }

    pub fn new(width: usize, height: usize, values: Values) -> Result<Self, HeightmapError> {
        let actual = match &values {
            Values::Fixed { cells, .. } => cells.len(),
            Values::Float(cells) => cells.len(),
        };
        if actual != width * height {
            return Err(HeightmapError::WrongLength {
                width,
                height,
                expected: width * height,
                actual,
            });
        }
        Ok(Self {
            width,
            height,
            values,
        })
    }

    /// `map` in fixed point at `scale`, refused where a height does not fit.
    pub fn fixed_from(map: &Heightmap, scale: f32) -> Result<Self, HeightmapError> {
        let cells = map.to_fixed(scale)?;
        Self::new(map.width(), map.height(), Values::Fixed { cells, scale })
    }

    /// `map` as float32 heights.
    pub fn float_from(map: &Heightmap) -> Self {
        Self {
            width: map.width(),
            height: map.height(),
            values: Values::Float(map.data().to_vec()),
        }
    }

    pub fn width(&self) -> usize {
        self.width
    }

    pub fn height(&self) -> usize {
        self.height
    }

    pub fn len(&self) -> usize {
        self.width * self.height
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn values(&self) -> &Values {
        &self.values
    }

    /// The fixed-point cells and their scale, where the heights are fixed point.
    pub fn fixed(&self) -> Option<(&[i32], f32)> {
        match &self.values {
            Values::Fixed { cells, scale } => Some((cells, *scale)),
            Values::Float(_) => None,
        }
    }

    /// The float32 heights, where the heights are float.
    pub fn float(&self) -> Option<&[f32]> {
        match &self.values {
            Values::Float(cells) => Some(cells),
            Values::Fixed { .. } => None,
        }
    }

    /// The height of cell `i` in height units, as [`Cells::heightmap`] gives it.
    pub fn height_at(&self, i: usize) -> f32 {
        match &self.values {
            Values::Fixed { cells, scale } => cells[i] as f32 / scale,
            Values::Float(cells) => cells[i],
        }
    }

    /// The heights in height units.
    pub fn heightmap(&self) -> Heightmap {
        let data = match &self.values {
            Values::Fixed { cells, scale } => cells.iter().map(|&c| c as f32 / scale).collect(),
            Values::Float(cells) => cells.clone(),
        };
        Heightmap::new(self.width, self.height, data).expect("the shape was checked")
    }

    /// A 64-bit checksum of the stored values, for caches keyed by terrain.
    pub fn checksum(&self) -> u64 {
        let bytes: &[u8] = match &self.values {
            Values::Fixed { cells, .. } => bytemuck::cast_slice(cells),
            Values::Float(cells) => bytemuck::cast_slice(cells),
        };
        crate::hash::fnv1a64(bytes) ^ (self.width as u64).rotate_left(32) ^ self.height as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_point_differences_are_exact_where_float32_heights_are_not() {
        // 2^24 + 1 units apart from 2^24: float32 cannot tell them apart.
        let before = Cells::new(
            1,
            1,
            Values::Fixed {
                cells: vec![1 << 24],
                scale: 1.0,
            },
        )
        .unwrap();
        let after = Cells::new(
            1,
            1,
            Values::Fixed {
                cells: vec![(1 << 24) + 1],
                scale: 1.0,
            },
        )
        .unwrap();
        let change = crate::terrain::Change::between(&before, &after).unwrap();
        assert_eq!(change.total, 1.0);
        assert_eq!(before.heightmap().data(), after.heightmap().data());
    }

    #[test]
    fn maps_of_other_shapes_or_arithmetic_do_not_compare() {
        let fixed = Cells::new(
            2,
            1,
            Values::Fixed {
                cells: vec![0, 0],
                scale: 1000.0,
            },
        )
        .unwrap();
        let float = Cells::new(2, 1, Values::Float(vec![0.0, 0.0])).unwrap();
        let other = Cells::new(1, 2, Values::Float(vec![0.0, 0.0])).unwrap();
        use crate::terrain::Change;
        assert!(Change::between(&fixed, &float).is_none());
        assert!(Change::between(&float, &other).is_none());
        assert!(Cells::new(3, 1, Values::Float(vec![0.0])).is_err());
    }
}
