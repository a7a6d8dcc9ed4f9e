//! Shaded relief (Horn's method) tinted by elevation, and PNG writing.

use std::path::Path;

use rayon::prelude::*;

use super::files::{write_atomically, WriteError};
use super::heightmap::Heightmap;

/// Sun position for shaded relief, the cartographic convention.
const SUN_AZIMUTH_DEG: f32 = 315.0;
const SUN_ALTITUDE_DEG: f32 = 45.0;

/// Grid spacing in the units heights are given in.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct CellSize {
    pub x: f32,
    pub y: f32,
}

impl Default for CellSize {
    fn default() -> Self {
        Self::UNIT
    }
}

impl CellSize {
    /// Square cells of one unit: the grid of generated terrain, whose heights are in
    /// cells.
    pub const UNIT: CellSize = CellSize { x: 1.0, y: 1.0 };

    /// The cell sides vkerode takes, in metres: a micrometre to 1000 km. Past them the
    /// kernel's heights (elevation / cell size) round to nothing or overflow, and the
    /// number is a slip, not a DEM.
    pub const RANGE: (f32, f32) = (1e-6, 1e6);

    /// Why this is no cell size vkerode takes, if it is not: the rule of every cell size
    /// a user gives (flag, sidecar, config, GeoTIFF tags). A negative one would mirror
    /// the slopes.
    pub fn check(&self) -> Result<(), CellSizeError> {
        Self::check_side(self.x).and_then(|()| Self::check_side(self.y))
    }

    /// Why `side` is no cell side vkerode takes, if it is not.
    pub fn check_side(side: f32) -> Result<(), CellSizeError> {
        let (low, high) = Self::RANGE;
        match side.is_finite() && (low..=high).contains(&side) {
            true => Ok(()),
            false => Err(CellSizeError { side }),
        }
    }
}

/// A cell side outside [`CellSize::RANGE`] (or not a number).
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
#[error(
    "{} is not a cell size from {:e} to {:e} metres",
    crate::readable_number(f64::from(*side)),
    CellSize::RANGE.0,
    CellSize::RANGE.1
)]
pub struct CellSizeError {
    pub side: f32,
}

/// The gradient (dz/dx eastward, dz/dy southward, in height units per unit of
/// `spacing`) at (x, y) by Horn's 3x3 weighted differences, as `gdaldem` computes
/// it; beyond the map's edges the edge cells repeat.
pub fn horn_gradient(map: &Heightmap, x: usize, y: usize, spacing: CellSize) -> (f64, f64) {
    let (n, s) = (y.saturating_sub(1), (y + 1).min(map.height() - 1));
    let (w, e) = (x.saturating_sub(1), (x + 1).min(map.width() - 1));
    let z = |xx, yy| f64::from(map.at(xx, yy));
    let dzdx = ((z(e, n) + 2.0 * z(e, y) + z(e, s)) - (z(w, n) + 2.0 * z(w, y) + z(w, s)))
        / (8.0 * f64::from(spacing.x));
    let dzdy = ((z(w, s) + 2.0 * z(x, s) + z(e, s)) - (z(w, n) + 2.0 * z(x, n) + z(e, n)))
        / (8.0 * f64::from(spacing.y));
    (dzdx, dzdy)
}

/// Illumination in [0, 1] per cell, by Horn's 3x3 gradient over the grid's spacing in x
/// and y; edges repeat their cells. Row 0 is north.
pub fn hillshade(map: &Heightmap, cell: CellSize) -> Vec<f32> {
    let (w, h) = (map.width(), map.height());
    let zenith = (90.0 - SUN_ALTITUDE_DEG).to_radians();
    let azimuth = (360.0 - SUN_AZIMUTH_DEG + 90.0)
        .rem_euclid(360.0)
        .to_radians();
    // Row by row on every core: a 16384^2 map is 268M cells.
    (0..h)
        .into_par_iter()
        .flat_map_iter(|y| {
            (0..w).map(move |x| {
                let (dzdx, dzdy) = horn_gradient(map, x, y, cell);
                let (dzdx, dzdy) = (dzdx as f32, dzdy as f32);
                let slope = (dzdx * dzdx + dzdy * dzdy).sqrt().atan();
                let aspect = dzdy.atan2(-dzdx);
                let lit = zenith.cos() * slope.cos()
                    + zenith.sin() * slope.sin() * (azimuth - aspect).cos();
                lit.clamp(0.0, 1.0)
            })
        })
        .collect()
}

/// Hypsometric colours from low to high ground.
const TINT: [(f32, [f32; 3]); 5] = [
    (0.0, [0.16, 0.36, 0.22]),
    (0.3, [0.45, 0.60, 0.33]),
    (0.6, [0.74, 0.66, 0.45]),
    (0.85, [0.62, 0.50, 0.40]),
    (1.0, [0.96, 0.95, 0.93]),
];

fn tint(t: f32) -> [f32; 3] {
    let t = t.clamp(0.0, 1.0);
    for pair in TINT.windows(2) {
        let ((t0, c0), (t1, c1)) = (pair[0], pair[1]);
        if t <= t1 {
            let k = (t - t0) / (t1 - t0);
            return [0, 1, 2].map(|i| c0[i] + (c1[i] - c0[i]) * k);
        }
    }
    TINT[TINT.len() - 1].1
}

/// The elevation tint at `t` in [0, 1] (low to high), as RGB8.
pub(crate) fn tint_rgb(t: f32) -> [u8; 3] {
    tint(t).map(|c| (c * 255.0).round().clamp(0.0, 255.0) as u8)
}

/// RGB8 shaded relief: elevation tint over `range` (low, high), darkened by hillshade.
pub fn shaded_relief_rgb(map: &Heightmap, cell: CellSize, range: (f32, f32)) -> Vec<u8> {
    let shade = hillshade(map, cell);
    let span = (range.1 - range.0).max(f32::EPSILON);
    (map.data().par_iter().zip(&shade))
        .flat_map_iter(|(&h, &s)| {
            if !(h.is_finite() && s.is_finite()) {
                return [150, 150, 150];
            }
            let colour = tint((h - range.0) / span);
            let light = 0.25 + 0.75 * s;
            colour.map(|c| (c * light * 255.0).round().clamp(0.0, 255.0) as u8)
        })
        .collect()
}

pub fn write_png(
    path: &Path,
    width: usize,
    height: usize,
    colour: png::ColorType,
    depth: png::BitDepth,
    pixels: &[u8],
) -> Result<(), WriteError> {
    write_atomically(path, |out| {
        let mut encoder = png::Encoder::new(out, width as u32, height as u32);
        encoder.set_color(colour);
        encoder.set_depth(depth);
        let mut writer = encoder.write_header().map_err(std::io::Error::other)?;
        writer
            .write_image_data(pixels)
            .map_err(std::io::Error::other)?;
        writer.finish().map_err(std::io::Error::other)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slope_facing_the_sun_is_brighter_than_one_facing_away() {
        // Heights rise to the east: the western face... faces west, toward a NW sun.
        let rising_east = Heightmap::new(5, 5, (0..25).map(|i| (i % 5) as f32).collect()).unwrap();
        let rising_west =
            Heightmap::new(5, 5, (0..25).map(|i| (4 - i % 5) as f32).collect()).unwrap();
        let lit = hillshade(&rising_east, CellSize::default())[12];
        let dark = hillshade(&rising_west, CellSize::default())[12];
        assert!(lit > dark + 0.3, "west-facing {lit} vs east-facing {dark}");
        let flat = Heightmap::new(3, 3, vec![1.0; 9]).unwrap();
        let expected = SUN_ALTITUDE_DEG.to_radians().sin();
        assert!((hillshade(&flat, CellSize::default())[4] - expected).abs() < 1e-5);
    }
}
