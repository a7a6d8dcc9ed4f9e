//! A heightfield in kernel height units (cells), and its fixed-point form.

use rayon::prelude::*;
use thiserror::Error;

/// Fixed-point heights must stay below this magnitude: half the int32 range is kept
/// free for deposition to pile up without wrapping.
pub const FIXED_POINT_LIMIT: f64 = (1u64 << 30) as f64;

#[derive(Debug, Error, PartialEq)]
pub enum HeightmapError {
    #[error("a {width} x {height} heightmap needs {expected} cells, got {actual}")]
    WrongLength {
        width: usize,
        height: usize,
        expected: usize,
        actual: usize,
    },
    #[error("heightmap cell ({x}, {y}) is not finite ({value})")]
    NotFinite { x: usize, y: usize, value: f32 },
    #[error("the largest height, {largest}, times the fixed-point scale {scale} is {product:.3e}, past the limit of 2^30 (half the int32 range, the rest is headroom for deposition); a scale of at most {} would fit", crate::readable_number(*.fitting_scale))]
    FixedPointOverflow {
        largest: f32,
        scale: f32,
        product: f64,
        fitting_scale: f64,
    },
}

/// Refused where heights up to `largest` (in magnitude) times `scale` pass the
/// fixed-point limit, naming the largest scale that fits.
pub fn fits_fixed_point(largest: f32, scale: f32) -> Result<(), HeightmapError> {
    let product = f64::from(largest) * f64::from(scale);
    if product >= FIXED_POINT_LIMIT {
        return Err(HeightmapError::FixedPointOverflow {
            largest,
            scale,
            product,
            fitting_scale: FIXED_POINT_LIMIT / f64::from(largest) * 0.999,
        });
    }
    Ok(())
}

/// The shape of a map, its highest |height| and its relief (highest minus lowest
/// height), in height units, for the rules that depend on the map.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MapInfo {
    pub width: u32,
    pub height: u32,
    pub highest: f32,
    pub relief: f32,
}

impl MapInfo {
    pub fn of(map: &Heightmap) -> Self {
        let stats = map.stats();
        Self {
            width: map.width() as u32,
            height: map.height() as u32,
            highest: stats.max.abs().max(stats.min.abs()),
            relief: stats.max - stats.min,
        }
    }

    pub fn cells(&self) -> u64 {
        u64::from(self.width) * u64::from(self.height)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Heightmap {
    width: usize,
    height: usize,
    data: Vec<f32>,
}

#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct HeightStats {
    pub min: f32,
    pub max: f32,
    pub mean: f64,
}

impl HeightStats {
    /// Of the finite values among `heights` (gaps are NaN and left out).
    pub fn of(heights: impl Iterator<Item = f32>) -> Self {
        let (min, max, sum, count) = heights.filter(|h| h.is_finite()).fold(
            (f32::INFINITY, f32::NEG_INFINITY, 0.0f64, 0usize),
            |(lo, hi, sum, n), h| (lo.min(h), hi.max(h), sum + f64::from(h), n + 1),
        );
        Self {
            min,
            max,
            mean: sum / count.max(1) as f64,
        }
    }
}

impl Heightmap {
    /// Row-major heights, row 0 first (north).
    pub fn new(width: usize, height: usize, data: Vec<f32>) -> Result<Self, HeightmapError> {
        if data.len() != width * height {
            return Err(HeightmapError::WrongLength {
                width,
                height,
                expected: width * height,
                actual: data.len(),
            });
        }
        Ok(Self {
            width,
            height,
            data,
        })
    }

    /// Heights of int32 fixed-point cells: `cell / scale`.
    pub fn from_fixed(
        width: usize,
        height: usize,
        cells: &[i32],
        scale: f32,
    ) -> Result<Self, HeightmapError> {
        Self::new(
            width,
            height,
            cells.iter().map(|&c| c as f32 / scale).collect(),
        )
    }

    /// `int(h * scale)` per cell, as the kernel stores it, after checking that every
    /// cell is finite and fits with headroom.
    pub fn to_fixed(&self, scale: f32) -> Result<Vec<i32>, HeightmapError> {
        // On every core: a 4096² map is 16M cells, a 65536² one 4G.
        if let Some(i) = self.data.par_iter().position_first(|h| !h.is_finite()) {
            return Err(HeightmapError::NotFinite {
                x: i % self.width,
                y: i / self.width,
                value: self.data[i],
            });
        }
        let largest = (self.data.par_iter())
            .map(|h| h.abs())
            .reduce(|| 0.0, f32::max);
        fits_fixed_point(largest, scale)?;
        Ok(self.data.par_iter().map(|&h| (h * scale) as i32).collect())
    }

    pub fn width(&self) -> usize {
        self.width
    }

    pub fn height(&self) -> usize {
        self.height
    }

    pub fn data(&self) -> &[f32] {
        &self.data
    }

    pub fn data_mut(&mut self) -> &mut [f32] {
        &mut self.data
    }

    /// The same grid with `f` applied to every height.
    pub fn map(&self, f: impl Fn(f32) -> f32) -> Self {
        Self {
            width: self.width,
            height: self.height,
            data: self.data.iter().map(|&h| f(h)).collect(),
        }
    }

    /// `f` of each cell and the same cell of `other`, a map of the same shape.
    pub fn zip_map(&self, other: &Heightmap, f: impl Fn(f32, f32) -> f32) -> Self {
        assert_eq!(
            (self.width, self.height),
            (other.width, other.height),
            "maps of one shape"
        );
        Self {
            width: self.width,
            height: self.height,
            data: self
                .data
                .iter()
                .zip(&other.data)
                .map(|(&a, &b)| f(a, b))
                .collect(),
        }
    }

    pub fn at(&self, x: usize, y: usize) -> f32 {
        self.data[y * self.width + x]
    }

    /// Minimum, maximum and mean of the finite cells (gaps are NaN and left out).
    pub fn stats(&self) -> HeightStats {
        HeightStats::of(self.data.iter().copied())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_point_round_trip_is_within_one_unit() {
        let map = Heightmap::new(2, 2, vec![0.0, 1.2345, -7.5, 300.25]).unwrap();
        let fixed = map.to_fixed(1000.0).unwrap();
        assert_eq!(fixed, vec![0, 1234, -7500, 300250]);
        let back = Heightmap::from_fixed(2, 2, &fixed, 1000.0).unwrap();
        for (a, b) in map.data().iter().zip(back.data()) {
            assert!((a - b).abs() <= 1e-3, "{a} vs {b}");
        }
    }

    #[test]
    fn overflowing_heights_name_the_largest_height_and_a_scale_that_fits() {
        let map = Heightmap::new(2, 2, vec![0.0, 2.0e6, -1.0, 5.0]).unwrap();
        let err = map.to_fixed(1000.0).unwrap_err();
        let HeightmapError::FixedPointOverflow {
            largest,
            fitting_scale,
            ..
        } = err
        else {
            panic!("expected an overflow error, got {err:?}");
        };
        assert_eq!(largest, 2.0e6);
        assert!(fitting_scale < 537.0 && fitting_scale > 500.0);
        assert!(map.to_fixed(fitting_scale as f32).is_ok());
    }

    #[test]
    fn non_finite_cells_are_reported_with_their_position() {
        let map = Heightmap::new(3, 2, vec![0.0, 0.0, 0.0, 0.0, f32::NAN, 0.0]).unwrap();
        assert!(matches!(
            map.to_fixed(1000.0),
            Err(HeightmapError::NotFinite { x: 1, y: 1, .. })
        ));
    }
}
