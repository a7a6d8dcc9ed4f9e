//! Geomorphic metrics of a heightmap, on the CPU: what a landscape looks like, to tell
//! a variant that erodes differently from one that only runs faster. They are taken on
//! the grid's real spacing (cells need not be square), with heights in the unit of its
//! lengths: metres on a DEM's metres, cells for generated terrain (spacing 1 x 1).

use serde::Serialize;

use super::drainage::{channel_incision, Drainage, FlatRouting};
use super::flats::{stop, Stop};
use super::flood::{depressions, is_edge};
use super::heightmap::{HeightStats, Heightmap};
use super::image::{horn_gradient, CellSize};
use super::units::{GridUnits, LengthUnit};
use crate::stats::LinearFit;

/// The channel share and window radius of the incision (as `ChangeFigures`).
pub const INCISION_SHARE: f64 = 0.05;
pub const INCISION_RADIUS: usize = 3;
/// The slope-area bins: a tenth of a decade of upstream area each, and the channel
/// cells a bin needs to count.
const BINS_PER_DECADE: f64 = 10.0;
const MIN_CELLS_PER_BIN: usize = 5;

/// The most cells whose landform a sweep point or `erode` computes: 2^24 (4096^2).
/// Above it the figures are left empty, never estimated: the CPU's passes (drainage by
/// priority flood, depression filling, an 8-byte index per interior cell) took 0.6 µs
/// a cell on one core (2 cores of this project's CI: 9.7 s a map at 4096^2, so about 40
/// s at 8192^2 and minutes at 16384^2), where a point's GPU work takes a second.
pub const LANDFORM_MAX_CELLS: u64 = 1 << 24;

/// The angle of repose of loose rock, in degrees: a slope past it stands only in
/// bedrock, so a grid that cuts steeper is reported (`steep_share`); thermal erosion's
/// default talus.
pub const REPOSE_DEGREES: f32 = 35.0;

/// The figures of a terrain's form, on its hydrologically conditioned drainage
/// ([`Drainage`]: depressions filled, flats resolved), over its interior: the outer ring
/// of cells, which is every strategy's boundary and which the droplet kernel never
/// touches, is left out of every figure (it still takes the water that leaves).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Landform {
    pub hypsometric_integral: f64,
    pub mean_slope: f64,
    pub steep_share: f64,
    pub drainage_density: f64,
    pub concavity: Option<f64>,
    pub concavity_se: Option<f64>,
    pub channel_incision: f64,
    pub pits: u64,
    pub sinks: u64,
    pub flats: u64,
    pub depression_volume: f64,
}

impl crate::table::Section for Landform {
    const COLUMNS: &'static [(&'static str, &'static str, &'static str)] = &[
        (
            "hypsometric_integral",
            "ratio",
            "(mean - min) / (max - min) of the interior's heights: 1/3 for a cone, 1/2 for a plane (Strahler 1952)",
        ),
        (
            "mean_slope",
            "rise over run",
            "mean gradient magnitude by Horn's 3x3 method (as gdaldem slope) over the interior, on the grid's real spacing",
        ),
        (
            "steep_share",
            "share of cells",
            "interior cells steeper than the angle of repose (35 degrees, REPOSE_DEGREES; Horn's gradient as mean_slope) over the interior's: slopes that stand only in bedrock, which no strategy here holds up",
        ),
        (
            "drainage_density",
            "1/km for a DEM, 1/cell for generated terrain",
            "channel length over the dry interior's area, the dry interior being the cells that depression filling leaves as they are: each dry channel cell's D8 step (dx, dy or the diagonal) on the filled map, flats routed by Barnes, Lehman and Mulla's (2014) flat resolution (Priority-Flood+epsilon moves it under 0.2% on the test DEM and erosion noise; counting a filled lake's paths, which are that method's choice, moved it 15 to 27% on noise); a channel drains at least 0.5 km2 on a DEM, 100 cells on generated terrain",
        ),
        (
            "concavity",
            "exponent",
            "theta of S ~ A^-theta (Flint 1974): least squares of mean ln S on mean ln A over bins of a tenth of a decade of A with 5 channel cells or more, S the D8 drop per distance on the filled map (cells of a filled depression left out); empty with fewer than 3 bins",
        ),
        (
            "concavity_se",
            "exponent",
            "standard error of the concavity from the bins' scatter about the fit; empty with fewer than 4 bins",
        ),
        (
            "channel_incision",
            "m for a DEM (one in feet too), cells for generated terrain",
            "how far channels (top 5% upstream area on the filled map, on dry ground: a filled depression's cells left out) lie below their 7x7 surroundings",
        ),
        (
            "pits",
            "depressions",
            "depressions that priority-flood filling fills: 8-connected regions of the cells it raises above their height, each at one spill level (a pit inside a larger depression is part of it)",
        ),
        (
            "sinks",
            "cells",
            "interior cells lower than each of their 8 neighbours: single-cell pits of the map as it is",
        ),
        (
            "flats",
            "cells",
            "interior cells with no lower neighbour and one of the same height at least: flat cells of the map as it is (a flat-floored pit's among them), where D8 without the filling would stop as at a sink",
        ),
        (
            "depression_volume",
            "height unit x area unit (m3 for a DEM, cells3 for generated terrain)",
            "what priority-flood filling adds: the sum over the interior of (filled - height) times the cell's area (Barnes, Lehman and Mulla 2014)",
        ),
    ];
}

impl Landform {
    /// Each figure's unit on a DEM (metres) and on generated terrain (cells), short, for
    /// axes; `COLUMNS` states both (a test holds them together).
    const UNITS: &'static [(&'static str, &'static str, &'static str)] = &[
        ("hypsometric_integral", "ratio", "ratio"),
        ("mean_slope", "rise over run", "rise over run"),
        ("steep_share", "share of cells", "share of cells"),
        ("drainage_density", "1/km", "1/cell"),
        ("concavity", "exponent", "exponent"),
        ("concavity_se", "exponent", "exponent"),
        ("channel_incision", "m", "cells"),
        ("pits", "depressions", "depressions"),
        ("sinks", "cells", "cells"),
        ("flats", "cells", "cells"),
        ("depression_volume", "m3", "cells3"),
    ];

    /// Whether a map of `cells` gets its landform figures (see [`LANDFORM_MAX_CELLS`]).
    pub fn feasible(cells: u64) -> bool {
        cells <= LANDFORM_MAX_CELLS
    }

    /// The unit of figure `name` on a grid of `lengths`.
    pub fn unit(name: &str, lengths: LengthUnit) -> Option<&'static str> {
        let &(_, metres, cells) = Self::UNITS.iter().find(|u| u.0 == name)?;
        Some(match lengths {
            LengthUnit::Metres => metres,
            LengthUnit::Cells => cells,
        })
    }

    /// Of a map in kernel units, in the map's own: heights back in metres on its grid
    /// of metres (cells on cells for generated terrain).
    pub fn of_kernel(map: &Heightmap, units: &GridUnits) -> Self {
        Self::of(
            &map.map(|h| units.from_kernel(h)),
            units.cell_size,
            units.length_unit,
        )
    }

    /// The figures of `map` on a grid of `spacing` in `lengths`, in the unit of `map`'s
    /// heights, flats routed as the figures route them ([`FlatRouting::FIGURES`]).
    pub fn of(map: &Heightmap, spacing: CellSize, lengths: LengthUnit) -> Self {
        Self::routed(map, spacing, lengths, FlatRouting::FIGURES)
    }

    /// [`Landform::of`] with flats routed by `routing`: what the flat method moves.
    pub fn routed(
        map: &Heightmap,
        spacing: CellSize,
        lengths: LengthUnit,
        routing: FlatRouting,
    ) -> Self {
        let (w, h) = (map.width(), map.height());
        let drainage = Drainage::routed(map, spacing, routing);
        let heights = map.data();
        let filled = drainage.filled.data();
        let cell_area = f64::from(spacing.x) * f64::from(spacing.y);
        let interior: Vec<usize> = (0..w * h).filter(|&i| !is_edge(i, w, h)).collect();
        // The dry ground, which the filling leaves as it is. Across a filled depression
        // (a lake) D8's path is the flat method's choice, not a channel: counted, it
        // was 38 to 45% of the channel length on 512^2 erosion noise, and the method
        // moved the density by 15% (tests/landform.rs).
        let dry = |i: &&usize| filled[**i] == heights[**i];
        let threshold_cells = lengths.channel_area() / cell_area;
        let channel_steps: Vec<(u32, f32, f32)> = interior
            .iter()
            .filter(dry)
            .filter(|&&i| f64::from(drainage.area[i]) >= threshold_cells)
            .filter_map(|&i| {
                drainage
                    .step(i)
                    .map(|s| (drainage.area[i], s.length, s.slope))
            })
            .collect();
        let channel_length: f64 = channel_steps.iter().map(|c| f64::from(c.1)).sum();
        let dry_area = interior.iter().filter(dry).count() as f64 * cell_area;
        // A lake's steps are all flat (its cells were filled to one level), so leaving
        // it out leaves the fit as it was.
        let points: Vec<(f64, f64)> = channel_steps
            .iter()
            .filter(|c| c.2 > 0.0)
            .map(|&(cells, _, slope)| ((f64::from(cells) * cell_area).ln(), f64::from(slope).ln()))
            .collect();
        let fit = binned_fit(&points);
        let (mut sinks, mut flats) = (0, 0);
        for &i in &interior {
            match stop(map, i) {
                Some(Stop::Sink) => sinks += 1,
                Some(Stop::Flat) => flats += 1,
                None => {}
            }
        }
        Self {
            hypsometric_integral: hypsometric_integral(interior.iter().map(|&i| heights[i])),
            mean_slope: mean_slope(map, spacing),
            steep_share: steep_share(map, spacing),
            drainage_density: if dry_area == 0.0 {
                0.0
            } else {
                channel_length / dry_area * lengths.per_density_unit()
            },
            concavity: fit.map(|f| -f.slope),
            concavity_se: fit.and_then(|f| f.slope_se),
            channel_incision: channel_incision(map, &drainage, INCISION_SHARE, INCISION_RADIUS),
            pits: depressions(map, &drainage.filled).len() as u64,
            sinks,
            flats,
            depression_volume: interior
                .iter()
                .map(|&i| f64::from(filled[i]) - f64::from(heights[i]))
                .sum::<f64>()
                * cell_area,
        }
    }
}

/// Mean gradient magnitude (rise over run) of the interior cells on a grid of `spacing`,
/// by Horn's method: the mean of `gdaldem slope`'s tangents, which leaves the edges out.
pub fn mean_slope(map: &Heightmap, spacing: CellSize) -> f64 {
    interior_mean(map, |x, y| {
        let (dzdx, dzdy) = horn_gradient(map, x, y, spacing);
        dzdx.hypot(dzdy)
    })
}

/// The share of the interior cells steeper than [`REPOSE_DEGREES`] (Horn's gradient).
pub fn steep_share(map: &Heightmap, spacing: CellSize) -> f64 {
    let repose = f64::from(REPOSE_DEGREES).to_radians().tan();
    interior_mean(map, |x, y| {
        let (dzdx, dzdy) = horn_gradient(map, x, y, spacing);
        if dzdx.hypot(dzdy) > repose {
            1.0
        } else {
            0.0
        }
    })
}

/// The mean of `value` over the interior cells (0 on a map with none).
fn interior_mean(map: &Heightmap, value: impl Fn(usize, usize) -> f64) -> f64 {
    let (w, h) = (map.width(), map.height());
    if w < 3 || h < 3 {
        return 0.0;
    }
    let mut total = 0.0f64;
    for y in 1..h - 1 {
        for x in 1..w - 1 {
            total += value(x, y);
        }
    }
    total / ((w - 2) * (h - 2)) as f64
}

fn hypsometric_integral(heights: impl Iterator<Item = f32>) -> f64 {
    let stats = HeightStats::of(heights);
    // No finite height leaves min above max: no range.
    let range = f64::from(stats.max) - f64::from(stats.min);
    if range > 0.0 {
        (stats.mean - f64::from(stats.min)) / range
    } else {
        0.0
    }
}

/// The line through the means of `points` (ln A, ln S) binned by x, a tenth of a decade
/// per bin, over the bins of at least MIN_CELLS_PER_BIN points.
fn binned_fit(points: &[(f64, f64)]) -> Option<LinearFit> {
    let width = std::f64::consts::LN_10 / BINS_PER_DECADE;
    let mut bins: std::collections::BTreeMap<i64, (f64, f64, usize)> = Default::default();
    for &(x, y) in points {
        let bin = bins.entry((x / width).floor() as i64).or_default();
        *bin = (bin.0 + x, bin.1 + y, bin.2 + 1);
    }
    let means: Vec<(f64, f64)> = bins
        .values()
        .filter(|b| b.2 >= MIN_CELLS_PER_BIN)
        .map(|&(x, y, n)| (x / n as f64, y / n as f64))
        .collect();
    // Three bins at least: two leave no residual to weigh.
    match means.len() {
        0..=2 => None,
        _ => LinearFit::of(&means),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::Section;

    #[test]
    fn each_figures_short_units_are_those_its_column_states() {
        let names: Vec<&str> = Landform::UNITS.iter().map(|u| u.0).collect();
        let columns: Vec<&str> = Landform::COLUMNS.iter().map(|c| c.0).collect();
        assert_eq!(names, columns);
        for (&(name, metres, cells), &(_, stated, _)) in
            Landform::UNITS.iter().zip(Landform::COLUMNS)
        {
            assert!(
                stated.contains(metres) && stated.contains(cells),
                "{name}: {stated:?} states neither {metres:?} nor {cells:?}"
            );
        }
    }

    fn map(w: usize, h: usize, height: impl Fn(f64, f64) -> f64) -> Heightmap {
        let data = (0..w * h)
            .map(|i| height((i % w) as f64, (i / w) as f64) as f32)
            .collect();
        Heightmap::new(w, h, data).unwrap()
    }

    #[test]
    fn a_tilted_plane_has_half_its_relief_on_average_a_constant_slope_and_no_channels() {
        let plane = map(64, 64, |_, y| 0.5 * y);
        let f = Landform::of(&plane, CellSize::default(), LengthUnit::Cells);
        assert!((f.hypsometric_integral - 0.5).abs() < 1e-6, "{f:?}");
        assert!((f.mean_slope - 0.5).abs() < 1e-5, "{f:?}");
        // Parallel flow down the columns: no cell gathers 100 cells of area.
        assert_eq!(f.drainage_density, 0.0);
        assert_eq!(f.concavity, None);
    }

    #[test]
    fn a_plane_is_steep_past_the_angle_of_repose_only() {
        // tan 35 degrees is 0.700: planes of 0.69 and 0.71 rise over run fall either side.
        for (rise, steep) in [(0.69, 0.0), (0.71, 1.0)] {
            let plane = map(16, 16, |_, y| rise * y);
            let f = Landform::of(&plane, CellSize::default(), LengthUnit::Cells);
            assert_eq!(f.steep_share, steep, "rise {rise}");
        }
        // On metres: a 74.5 m cell and a rise of 60 m a cell is 39 degrees.
        let plane = map(16, 16, |x, _| 60.0 * x);
        let cell = CellSize { x: 74.5, y: 92.6 };
        assert_eq!(steep_share(&plane, cell), 1.0);
        // Half the map steep: a step in slope at the middle column.
        let half = map(16, 16, |x, _| {
            if x < 8.0 {
                0.1 * x
            } else {
                0.8 + 2.0 * (x - 8.0)
            }
        });
        let share = steep_share(&half, CellSize::default());
        assert!((share - 7.0 / 14.0).abs() < 1.0 / 14.0, "{share}");
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
        let f = Landform::of(&cone, CellSize::default(), LengthUnit::Cells);
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
        // Sides rising 1 per metre from column 4; the floor falling 0.05 per metre down
        // the rows; cells 200 m wide and 300 m long, so 0.5 km2 is 8.3 cells.
        let (w, h) = (9, 200);
        let cell = CellSize { x: 200.0, y: 300.0 };
        let (dx, dy) = (f64::from(cell.x), f64::from(cell.y));
        let valley = map(w, h, |x, y| {
            (x - 4.0).abs() * dx + 0.05 * (h as f64 - 1.0 - y) * dy
        });
        let f = Landform::of(&valley, cell, LengthUnit::Metres);
        // Every side cell drains sideways into the floor (gathering 4 cells at most),
        // so the floor cell of row r gathers (r + 1) rows of 9 cells: a channel on every
        // interior row, one dy step a row, over the interior's area, per km.
        let length = (h - 2) as f64 * dy;
        let area = ((w - 2) * (h - 2)) as f64 * dx * dy;
        let per_km = length / area * 1000.0;
        assert!(
            (f.drainage_density - per_km).abs() < 1e-12,
            "{} per km, {per_km} expected",
            f.drainage_density,
        );
        assert_eq!((f.pits, f.depression_volume), (0, 0.0), "{f:?}");
        // The floor's slope does not change with area: concavity 0.
        let theta = f.concavity.expect("a channel");
        assert!(theta.abs() < 0.05, "{f:?}");
        assert!(f.channel_incision > 0.0, "{f:?}");
    }

    #[test]
    fn a_lake_is_neither_channel_nor_area_by_either_flat_method() {
        // The valley above with a dam 100 m high across its floor at row 100: the six
        // floor cells above it (15 m a row) lie below its crest and fill to it, one lake
        // whose lowest cell is the one sink. The lake's steps, flat, are no channel and
        // its cells no ground for one; the rest is as without the dam.
        let (w, h, dam) = (9, 200, 100.0);
        let cell = CellSize { x: 200.0, y: 300.0 };
        let (dx, dy) = (f64::from(cell.x), f64::from(cell.y));
        let valley = map(w, h, |x, y| {
            let crest = if x == 4.0 && y == dam { 100.0 } else { 0.0 };
            (x - 4.0).abs() * dx + 0.05 * (h as f64 - 1.0 - y) * dy + crest
        });
        let lake = 6;
        let length = (h - 2 - lake) as f64 * dy;
        let area = ((w - 2) * (h - 2) - lake) as f64 * dx * dy;
        let per_km = length / area * 1000.0;
        for routing in [FlatRouting::Gradient, FlatRouting::Epsilon] {
            let f = Landform::routed(&valley, cell, LengthUnit::Metres, routing);
            assert!(
                (f.drainage_density - per_km).abs() < 1e-12,
                "{routing:?}: {} per km, {per_km} expected",
                f.drainage_density,
            );
            assert_eq!((f.pits, f.sinks, f.flats), (1, 1, 0), "{f:?}");
        }
    }
}
