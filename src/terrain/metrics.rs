//! Geomorphic metrics of a heightmap, on the CPU: what a landscape looks like, to tell
//! a variant that erodes differently from one that only runs faster. Lengths and
//! heights are in the map's own units (cells for generated terrain).

use serde::Serialize;

use super::drainage::{channel_incision, flow_accumulation, steepest_descent};
use super::heightmap::Heightmap;

/// Cells draining through a cell that make it a channel, for drainage density and the
/// slope-area fit.
pub const CHANNEL_AREA_CELLS: u32 = 100;
/// The channel share and window radius of the incision (as `ChangeFigures`).
pub const INCISION_SHARE: f64 = 0.05;
pub const INCISION_RADIUS: usize = 3;

#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Landform {
    /// (mean - min) / (max - min): 1/3 for a cone, 1/2 for a plane.
    pub hypsometric_integral: f64,
    /// Mean gradient magnitude (central differences over interior cells).
    pub mean_slope: f64,
    /// Channel length per unit area: D8 channel cells (upstream area at least
    /// CHANNEL_AREA_CELLS) times the cell length, over the map's area; per cell length.
    pub drainage_density: f64,
    /// The concavity theta of the slope-area relation S ~ A^-theta, from a log-log
    /// least-squares fit over channel cells with a downhill slope; `None` with fewer
    /// than 3 such cells or areas that do not vary.
    pub concavity: Option<f64>,
    /// How far channels (top 5% upstream area) lie below their 7x7 surroundings.
    pub channel_incision: f64,
}

impl crate::table::Section for Landform {
    const COLUMNS: &'static [(&'static str, &'static str, &'static str)] = &[
        (
            "hypsometric_integral",
            "ratio",
            "(mean - min) / (max - min) of the heights: 1/3 for a cone, 1/2 for a plane",
        ),
        (
            "mean_slope",
            "height units per cell",
            "mean gradient magnitude (central differences over interior cells)",
        ),
        (
            "drainage_density",
            "channel cells per cell",
            "D8 channel cells (upstream area at least 100 cells) over all cells",
        ),
        (
            "concavity",
            "exponent",
            "theta of the slope-area relation S ~ A^-theta over channel cells (empty with too few)",
        ),
        (
            "channel_incision",
            "height units",
            "how far channels (top 5% upstream area) lie below their 7x7 surroundings",
        ),
    ];
}

impl Landform {
    pub fn of(map: &Heightmap) -> Self {
        let area = flow_accumulation(map);
        let channels: Vec<usize> = (0..area.len())
            .filter(|&i| area[i] >= CHANNEL_AREA_CELLS)
            .collect();
        let points: Vec<(f64, f64)> = channels
            .iter()
            .filter_map(|&i| {
                let slope = steepest_descent(map, i)?;
                (slope > 0.0).then(|| (f64::from(area[i]).ln(), f64::from(slope).ln()))
            })
            .collect();
        Self {
            hypsometric_integral: hypsometric_integral(map),
            mean_slope: map.mean_slope(),
            drainage_density: channels.len() as f64 / area.len() as f64,
            concavity: fit_slope(&points).map(|s| -s),
            channel_incision: channel_incision(map, INCISION_SHARE, INCISION_RADIUS),
        }
    }
}

fn hypsometric_integral(map: &Heightmap) -> f64 {
    let stats = map.stats();
    let range = f64::from(stats.max) - f64::from(stats.min);
    if range > 0.0 {
        (stats.mean - f64::from(stats.min)) / range
    } else {
        0.0
    }
}

/// The least-squares slope of y on x.
fn fit_slope(points: &[(f64, f64)]) -> Option<f64> {
    if points.len() < 3 {
        return None;
    }
    let n = points.len() as f64;
    let (mx, my) = points
        .iter()
        .fold((0.0, 0.0), |(sx, sy), (x, y)| (sx + x / n, sy + y / n));
    let (sxy, sxx) = points.iter().fold((0.0, 0.0), |(sxy, sxx), (x, y)| {
        (sxy + (x - mx) * (y - my), sxx + (x - mx) * (x - mx))
    });
    (sxx > 1e-12).then(|| sxy / sxx)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(w: usize, h: usize, height: impl Fn(f64, f64) -> f64) -> Heightmap {
        let data = (0..w * h)
            .map(|i| height((i % w) as f64, (i / w) as f64) as f32)
            .collect();
        Heightmap::new(w, h, data).unwrap()
    }

    #[test]
    fn a_tilted_plane_has_half_its_relief_on_average_a_constant_slope_and_no_channels() {
        let plane = map(64, 64, |_, y| 0.5 * y);
        let f = Landform::of(&plane);
        assert!((f.hypsometric_integral - 0.5).abs() < 1e-6, "{f:?}");
        assert!((f.mean_slope - 0.5).abs() < 1e-5, "{f:?}");
        // Parallel flow down the columns: no cell gathers 100 cells of area.
        assert_eq!(f.drainage_density, 0.0);
        assert_eq!(f.concavity, None);
    }

    #[test]
    fn a_cone_has_the_hypsometric_integral_and_slope_of_its_geometry() {
        // Height 100 at the centre, falling linearly to 0 at radius 128, 0 beyond, on
        // a 257-cell square: the mean is the cone's volume over the square's area,
        // pi/12 of the height; the slope is 100/128 on the pi/4 of the square inside.
        let (r, top) = (128.0, 100.0);
        let cone = map(257, 257, |x, y| {
            let d = ((x - 128.0).powi(2) + (y - 128.0).powi(2)).sqrt();
            (top * (1.0 - d / r)).max(0.0)
        });
        let f = Landform::of(&cone);
        let pi = std::f64::consts::PI;
        assert!((f.hypsometric_integral - pi / 12.0).abs() < 0.005, "{f:?}");
        let slope = top / r * pi / 4.0;
        assert!((f.mean_slope - slope).abs() < 0.02 * slope, "{f:?}");
    }

    #[test]
    fn a_v_valley_drains_into_one_channel_of_constant_slope() {
        // Sides rising 1 per cell from column 32; the floor falling 0.05 per row.
        let (w, h) = (65, 200);
        let valley = map(w, h, |x, y| (x - 32.0).abs() + 0.05 * (h as f64 - y));
        let f = Landform::of(&valley);
        // Linear in each direction, symmetric: the mean sits halfway up.
        assert!((f.hypsometric_integral - 0.5).abs() < 0.01, "{f:?}");
        // One channel along the floor, from where 100 cells have gathered to the
        // outlet: nearly one column of the map.
        let density = f.drainage_density * w as f64;
        assert!(
            (0.9..=1.0).contains(&density),
            "{density} columns of channel"
        );
        // The floor's slope does not change with area: concavity 0.
        let theta = f.concavity.expect("a channel");
        assert!(theta.abs() < 0.05, "{f:?}");
        assert!(f.channel_incision > 0.0, "{f:?}");
    }

    #[test]
    fn the_fit_recovers_a_power_law() {
        let points: Vec<(f64, f64)> = (1..20)
            .map(|a| {
                let a = f64::from(a * 50);
                (a.ln(), (3.0 * a.powf(-0.45)).ln())
            })
            .collect();
        assert!((fit_slope(&points).unwrap() + 0.45).abs() < 1e-9);
    }
}
