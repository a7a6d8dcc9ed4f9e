//! Geomorphic metrics of a heightmap, on the CPU: what a landscape looks like, to tell
//! a variant that erodes differently from one that only runs faster. They are taken on
//! the grid's real spacing (cells need not be square), with heights in the unit of its
//! lengths: metres on a DEM's metres, cells for generated terrain (spacing 1 x 1).

use serde::Serialize;

use super::drainage::{channel_incision, flow_accumulation, steepest_descent, FlowStep};
use super::heightmap::Heightmap;
use super::image::{horn_gradient, CellSize};
use super::units::GridUnits;

/// Cells draining through a cell that make it a channel, for drainage density and the
/// slope-area fit. A count of cells, whatever their size.
pub const CHANNEL_AREA_CELLS: u32 = 100;
/// The channel share and window radius of the incision (as `ChangeFigures`).
pub const INCISION_SHARE: f64 = 0.05;
pub const INCISION_RADIUS: usize = 3;

#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Landform {
    /// (mean - min) / (max - min): 1/3 for a cone, 1/2 for a plane.
    pub hypsometric_integral: f64,
    /// Mean gradient magnitude, rise over run, by Horn's method over interior cells
    /// (what `gdaldem slope` gives, as a tangent).
    pub mean_slope: f64,
    /// Channel length per unit area, per length unit: the D8 flow steps (dx, dy or the
    /// diagonal) of the cells with an upstream area of at least CHANNEL_AREA_CELLS
    /// cells, over the map's area.
    pub drainage_density: f64,
    /// The concavity theta of the slope-area relation S ~ A^-theta (A in area units, S
    /// the D8 drop per distance), from a log-log least-squares fit over channel cells
    /// with a downhill slope; `None` with fewer than 3 such cells or areas that do not
    /// vary.
    pub concavity: Option<f64>,
    /// How far channels (top 5% upstream area) lie below their 7x7 surroundings, in
    /// height units.
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
            "rise over run",
            "mean gradient magnitude by Horn's 3x3 method (as gdaldem slope) over interior cells, on the grid's real spacing",
        ),
        (
            "drainage_density",
            "per length unit (1/m for a DEM, 1/cell for generated terrain)",
            "D8 channel length (each channel cell's flow step: dx, dy or the diagonal) over the map's area; channels drain at least 100 cells",
        ),
        (
            "concavity",
            "exponent",
            "theta of the slope-area relation S ~ A^-theta over channel cells, A in area units (empty with too few)",
        ),
        (
            "channel_incision",
            "m for a DEM (one in feet too), cells for generated terrain",
            "how far channels (top 5% upstream area) lie below their 7x7 surroundings",
        ),
    ];
}

impl Landform {
    /// The metrics of `map` on a grid of `spacing`, in the unit of `map`'s heights.
    /// Of a map in kernel units, in the map's own: heights back in metres on its grid
    /// of metres (cells on cells for generated terrain).
    pub fn of_kernel(map: &Heightmap, units: &GridUnits) -> Self {
        Self::of(&map.map(|h| units.from_kernel(h)), units.cell_size)
    }

    pub fn of(map: &Heightmap, spacing: CellSize) -> Self {
        let area = flow_accumulation(map, spacing);
        let cell_area = f64::from(spacing.x) * f64::from(spacing.y);
        // Channel cells with somewhere to drain: pits and flats have no step.
        let channel_steps: Vec<(u32, FlowStep)> = (0..area.len())
            .filter(|&i| area[i] >= CHANNEL_AREA_CELLS)
            .filter_map(|i| Some((area[i], steepest_descent(map, spacing, i)?)))
            .collect();
        let channel_length: f64 = channel_steps
            .iter()
            .map(|(_, step)| f64::from(step.length))
            .sum();
        let points: Vec<(f64, f64)> = channel_steps
            .iter()
            .map(|(cells, step)| {
                let drained = f64::from(*cells) * cell_area;
                (drained.ln(), f64::from(step.slope).ln())
            })
            .collect();
        Self {
            hypsometric_integral: hypsometric_integral(map),
            mean_slope: mean_slope(map, spacing),
            drainage_density: channel_length / (area.len() as f64 * cell_area),
            concavity: fit_slope(&points).map(|s| -s),
            channel_incision: channel_incision(map, spacing, INCISION_SHARE, INCISION_RADIUS),
        }
    }
}

/// Mean gradient magnitude (rise over run) of the interior cells on a grid of `spacing`,
/// by Horn's method: the mean of `gdaldem slope`'s tangents, which leaves the edges out.
pub fn mean_slope(map: &Heightmap, spacing: CellSize) -> f64 {
    let (w, h) = (map.width(), map.height());
    if w < 3 || h < 3 {
        return 0.0;
    }
    let mut total = 0.0f64;
    for y in 1..h - 1 {
        for x in 1..w - 1 {
            let (dzdx, dzdy) = horn_gradient(map, x, y, spacing);
            total += dzdx.hypot(dzdy);
        }
    }
    total / ((w - 2) * (h - 2)) as f64
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
        let f = Landform::of(&plane, CellSize::default());
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
        let f = Landform::of(&cone, CellSize::default());
        let pi = std::f64::consts::PI;
        assert!((f.hypsometric_integral - pi / 12.0).abs() < 0.005, "{f:?}");
        let slope = top / r * pi / 4.0;
        assert!((f.mean_slope - slope).abs() < 0.02 * slope, "{f:?}");
    }

    #[test]
    fn a_plane_on_oblong_cells_has_its_analytic_slope() {
        // z = a x + b y in metres on 74.5 m x 92.6 m cells: the gradient is (a, b).
        let (a, b) = (0.3, -0.2);
        let cell = CellSize { x: 74.5, y: 92.6 };
        let plane = map(40, 30, |x, y| {
            a * x * f64::from(cell.x) + b * y * f64::from(cell.y)
        });
        let slope = mean_slope(&plane, cell);
        let exact = f64::hypot(a, b);
        assert!((slope - exact).abs() < 1e-5 * exact, "{slope} for {exact}");
        // Taken as square cells of 74.5 m, the rows' rise is read 24% too steep.
        let square = mean_slope(&plane, CellSize { x: 74.5, y: 74.5 });
        assert!(square > exact * 1.05, "{square} for {exact}");
    }

    #[test]
    fn a_v_valley_on_oblong_cells_has_its_channels_length_over_its_area() {
        // Sides rising 1 per unit length from column 32; the floor falling 0.05 per unit
        // length down the rows; cells 2 wide and 3 long.
        let (w, h) = (65, 200);
        let cell = CellSize { x: 2.0, y: 3.0 };
        let (dx, dy) = (f64::from(cell.x), f64::from(cell.y));
        let valley = map(w, h, |x, y| {
            (x - 32.0).abs() * dx + 0.05 * (h as f64 - 1.0 - y) * dy
        });
        let f = Landform::of(&valley, cell);
        // Linear in each direction, symmetric: the mean sits halfway up.
        assert!((f.hypsometric_integral - 0.5).abs() < 0.01, "{f:?}");
        // Every side cell drains sideways into the floor, so the floor cell of row r
        // gathers (r + 1) rows of 65 cells: a channel from row 1 on, one dy step a row
        // to the outlet, which has no lower neighbour.
        let length = (h - 2) as f64 * dy;
        let area = (w * h) as f64 * dx * dy;
        assert!(
            (f.drainage_density - length / area).abs() < 1e-12,
            "{} per unit length, {} expected",
            f.drainage_density,
            length / area
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
