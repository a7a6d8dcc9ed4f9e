//! D8 flow accumulation (O'Callaghan and Mark 1984) on a conditioned map: how many cells
//! drain through each cell when every cell passes its water to the neighbour with the
//! steepest drop per distance, on a grid of real spacing (dx across, dy down, the
//! diagonal between), once depressions are filled and flats resolved. Used to find a
//! terrain's channels.

use rayon::prelude::*;

use super::flats::flat_gradient;
use super::flood::{fill_depressions, fill_with_epsilon};
use super::heightmap::Heightmap;
use super::image::CellSize;
use super::nodata::{in_bounds_offsets, NEIGHBOURS};

/// Each neighbour's offset with its distance on a grid of `spacing`: dx across, dy
/// down, the diagonal between.
fn neighbours(spacing: CellSize) -> [(isize, isize, f32); 8] {
    let diagonal = spacing.x.hypot(spacing.y);
    NEIGHBOURS.map(|(dx, dy)| {
        let distance = match (dx, dy) {
            (_, 0) => spacing.x,
            (0, _) => spacing.y,
            _ => diagonal,
        };
        (dx, dy, distance)
    })
}

/// One cell's D8 step: the neighbour it drains to, the distance to it and the drop
/// per that distance, in the map's units.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FlowStep {
    pub receiver: usize,
    pub length: f32,
    pub slope: f32,
}

/// How D8 crosses a flat: a run of cells of one height on the filled map with no lower
/// neighbour (a filled depression's surface among them), where the heights give no
/// direction. The two methods route the same water over different paths, and move the
/// drainage density by several percent (tests/landform.rs measures it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlatRouting {
    /// Barnes, Lehman and Mulla (2014), flat resolution ([`flat_gradient`]): toward the
    /// flat's outlets and away from its higher ground, so flow converges across it.
    Gradient,
    /// Priority-Flood+ε ([`fill_with_epsilon`]): down the ε steps the flood leaves, back
    /// along its path to where it entered the flat, in near-parallel lines.
    Epsilon,
}

impl FlatRouting {
    /// The method the landform figures use.
    pub const FIGURES: Self = Self::Gradient;
}

/// A map's D8 drainage after hydrological conditioning: every depression filled by the
/// priority flood ([`fill_depressions`]), each cell draining to its steepest lower
/// neighbour on the filled heights, and a flat's cells (a filled depression's among
/// them) across the flat by a [`FlatRouting`] to its outlet. Every cell so drains to
/// the map's edge, where water leaves.
pub struct Drainage {
    /// The heights with every depression filled.
    pub filled: Heightmap,
    /// Each cell's step; `None` for an outlet on the edge.
    steps: Vec<Option<FlowStep>>,
    /// Upstream area of every cell in cells, itself included (times dx * dy for an
    /// area).
    pub area: Vec<u32>,
}

impl Drainage {
    /// The drainage of `map` on a grid of `spacing`, flats routed as the figures route
    /// them ([`FlatRouting::FIGURES`]).
    pub fn of(map: &Heightmap, spacing: CellSize) -> Self {
        Self::routed(map, spacing, FlatRouting::FIGURES)
    }

    /// The drainage of `map` on a grid of `spacing`, flats routed by `routing`. The
    /// steps are found in parallel (maps reach 2^31 cells); the filling and the
    /// accumulation are sequential.
    pub fn routed(map: &Heightmap, spacing: CellSize, routing: FlatRouting) -> Self {
        let filled = fill_depressions(map);
        let neighbours = neighbours(spacing);
        let (w, h) = (map.width(), map.height());
        // Off the flats both methods take the same steepest step on the filled map;
        // across one, each its own.
        let steps: Vec<Option<FlowStep>> = {
            let (on, around) = (&filled, &neighbours);
            let across_flat: Box<dyn Fn(usize) -> Option<FlowStep> + Sync> = match routing {
                FlatRouting::Gradient => {
                    let gradient = flat_gradient(on);
                    Box::new(move |i| down_the_flat(on, &gradient, around, i))
                }
                FlatRouting::Epsilon => {
                    let raised = fill_with_epsilon(map);
                    Box::new(move |i| down_the_steps(on, &raised, around, i))
                }
            };
            (0..w * h)
                .into_par_iter()
                .map(|i| steepest(on, around, i).or_else(|| across_flat(i)))
                .collect()
        };
        let area = accumulate(&steps);
        Self {
            filled,
            steps,
            area,
        }
    }

    /// Where cell `i` drains, how far and how steeply on the filled heights (0 across a
    /// flat); `None` for an outlet.
    pub fn step(&self, i: usize) -> Option<FlowStep> {
        self.steps[i]
    }
}

/// The step of flat cell `i` to the same-height neighbour with the steepest fall of
/// the drainage `gradient` per distance; `None` off a flat.
fn down_the_flat(
    filled: &Heightmap,
    gradient: &[u32],
    neighbours: &[(isize, isize, f32); 8],
    i: usize,
) -> Option<FlowStep> {
    let heights = filled.data();
    let fall = |j: usize| {
        (heights[j] == heights[i] && gradient[j] != 0 && gradient[j] < gradient[i])
            .then(|| f64::from(gradient[i] - gradient[j]))
    };
    steepest_fall(filled, neighbours, i, fall)
}

/// The step of flat cell `i` to the same-height neighbour with the steepest fall of
/// the ε-filled heights `raised` per distance: D8 on the ε-filled map.
fn down_the_steps(
    filled: &Heightmap,
    raised: &[f64],
    neighbours: &[(isize, isize, f32); 8],
    i: usize,
) -> Option<FlowStep> {
    let heights = filled.data();
    let fall = |j: usize| {
        (heights[j] == heights[i] && raised[j] < raised[i]).then(|| raised[i] - raised[j])
    };
    steepest_fall(filled, neighbours, i, fall)
}

/// The step of cell `i` to the neighbour of the largest `fall` per distance (the first
/// in [`NEIGHBOURS`] order of equal ones), at slope 0: a step across a flat.
fn steepest_fall(
    filled: &Heightmap,
    neighbours: &[(isize, isize, f32); 8],
    i: usize,
    fall: impl Fn(usize) -> Option<f64>,
) -> Option<FlowStep> {
    let mut best: Option<(f64, FlowStep)> = None;
    for (j, length) in around(filled, neighbours, i) {
        let Some(fall) = fall(j) else { continue };
        let per_length = fall / f64::from(length);
        if best.is_none_or(|(b, _)| per_length > b) {
            best = Some((
                per_length,
                FlowStep {
                    receiver: j,
                    length,
                    slope: 0.0,
                },
            ));
        }
    }
    best.map(|(_, step)| step)
}

/// Upstream cells of every cell along `steps`, itself included: each cell passes its
/// area on once all its donors have passed theirs (Kahn's order).
fn accumulate(steps: &[Option<FlowStep>]) -> Vec<u32> {
    let mut donors = vec![0u32; steps.len()];
    for step in steps.iter().flatten() {
        donors[step.receiver] += 1;
    }
    let mut area = vec![1u32; steps.len()];
    let mut ready: Vec<usize> = (0..steps.len()).filter(|&i| donors[i] == 0).collect();
    while let Some(i) = ready.pop() {
        if let Some(step) = steps[i] {
            let j = step.receiver;
            area[j] += area[i];
            donors[j] -= 1;
            if donors[j] == 0 {
                ready.push(j);
            }
        }
    }
    area
}

fn steepest(map: &Heightmap, neighbours: &[(isize, isize, f32); 8], i: usize) -> Option<FlowStep> {
    let heights = map.data();
    let mut best: Option<FlowStep> = None;
    for (j, length) in around(map, neighbours, i) {
        let slope = (heights[i] - heights[j]) / length;
        if slope > best.map_or(0.0, |b| b.slope) {
            best = Some(FlowStep {
                receiver: j,
                length,
                slope,
            });
        }
    }
    best
}

/// The neighbours of cell `i` inside the map, in `neighbours`' order, with their
/// distances.
fn around<'a>(
    map: &Heightmap,
    neighbours: &'a [(isize, isize, f32); 8],
    i: usize,
) -> impl Iterator<Item = (usize, f32)> + 'a {
    in_bounds_offsets(i, map.width(), map.height()).map(move |(k, j)| (j, neighbours[k].2))
}

/// The cells whose upstream `area` is in the top `share` (0..1) of the map: its
/// channels.
pub fn channel_mask(area: &[u32], share: f64) -> Vec<bool> {
    let mut sorted = area.to_vec();
    sorted.par_sort_unstable();
    let cut = ((1.0 - share) * sorted.len() as f64) as usize;
    let threshold = sorted[cut.min(sorted.len() - 1)].max(2);
    area.iter().map(|&a| a >= threshold).collect()
}

/// Mean incision of a map's own channels (the top `share` of its upstream area, on
/// its `drainage`): how far each channel cell on dry ground lies below the mean of the
/// (2r+1)^2-cell window around it, averaged over those cells, in height units. A cell
/// of a filled depression is left out: which of a lake's cells D8 calls a channel is
/// the flat method's choice, and counted they moved the figure by 3 to 21%
/// (tests/landform.rs).
pub fn channel_incision(map: &Heightmap, drainage: &Drainage, share: f64, radius: usize) -> f64 {
    let (w, h) = (map.width(), map.height());
    let (heights, filled) = (map.data(), drainage.filled.data());
    // A lake's cells out of the ranking too, whose areas the flat method sets.
    let dry_area: Vec<u32> = (drainage.area.iter().zip(heights).zip(filled))
        .map(|((&a, h), f)| if f > h { 0 } else { a })
        .collect();
    let mask = channel_mask(&dry_area, share);
    let mut total = 0.0f64;
    let mut count = 0usize;
    for y in radius..h.saturating_sub(radius) {
        for x in radius..w.saturating_sub(radius) {
            let i = y * w + x;
            if !mask[i] {
                continue;
            }
            let mut sum = 0.0f64;
            for yy in y - radius..=y + radius {
                for xx in x - radius..=x + radius {
                    sum += f64::from(map.at(xx, yy));
                }
            }
            let window = ((2 * radius + 1) * (2 * radius + 1)) as f64;
            total += sum / window - f64::from(map.at(x, y));
            count += 1;
        }
    }
    if count == 0 {
        0.0
    } else {
        total / count as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_v_shaped_valley_drains_into_its_floor() {
        // Heights rise away from column 2 and fall toward row 4.
        let w = 5;
        let data = (0..25)
            .map(|i| ((i % w) as f32 - 2.0).abs() * 10.0 + (4 - i / w) as f32)
            .collect();
        let map = Heightmap::new(5, 5, data).unwrap();
        let area = Drainage::of(&map, CellSize::default()).area;
        assert_eq!(area[4 * w + 2], 25, "the outlet drains the whole map");
        let channel = channel_mask(&area, 0.2);
        assert!(
            (0..5).all(|y| channel[y * w + 2]),
            "the floor is the channel"
        );
        assert!(!channel[0], "a corner is not");
    }

    #[test]
    fn a_pitted_map_drains_every_cell_to_its_edge_by_either_flat_method() {
        // A bowl with a pit in it and a flat floor: without filling, D8 stops at the pit
        // and on the flat; filled, the whole map (the rim drains inward) reaches the one
        // low edge cell, by other paths across the lake.
        #[rustfmt::skip]
        let data = vec![
            9.0, 9.0, 9.0, 9.0, 9.0, 9.0,
            9.0, 4.0, 4.0, 4.0, 4.0, 9.0,
            9.0, 4.0, 2.0, 4.0, 4.0, 5.0,
            9.0, 4.0, 4.0, 4.0, 4.0, 9.0,
            9.0, 9.0, 9.0, 9.0, 9.0, 9.0,
        ];
        let map = Heightmap::new(6, 5, data).unwrap();
        let outlet = 2 * 6 + 5;
        let mut receivers = Vec::new();
        for routing in [FlatRouting::Gradient, FlatRouting::Epsilon] {
            let drainage = Drainage::routed(&map, CellSize::default(), routing);
            assert_eq!(drainage.area[outlet], 30, "{routing:?}");
            assert!(
                drainage.filled.data()[8] == 5.0,
                "the floor fills to the spill"
            );
            let mut cell = 14; // the pit
            while let Some(step) = drainage.step(cell) {
                cell = step.receiver;
            }
            assert_eq!(cell, outlet, "{routing:?}");
            receivers.push(drainage.step(8).map(|s| s.receiver));
        }
        // The lake's north row: Barnes's gradient turns it to the lake's middle, away
        // from the rim; the ε steps lead it east along its row, the flood's path.
        assert_eq!(receivers, [Some(15), Some(9)]);
    }

    /// A 3x3 map at 20 but for its centre (10) and the given neighbours.
    fn around_the_centre(lower: &[((usize, usize), f32)]) -> Heightmap {
        let mut data = vec![20.0; 9];
        data[4] = 10.0;
        for &((x, y), h) in lower {
            data[y * 3 + x] = h;
        }
        Heightmap::new(3, 3, data).unwrap()
    }

    #[test]
    fn the_steepest_drop_is_per_distance_on_the_grids_own_spacing() {
        // East drops 1 over dx, south 1.5 over dy.
        let map = around_the_centre(&[((2, 1), 9.0), ((1, 2), 8.5)]);
        let square = Drainage::of(&map, CellSize::default()).step(4).unwrap();
        assert_eq!(
            (square.receiver, square.length, square.slope),
            (7, 1.0, 1.5)
        );
        // Rows twice as far apart: south is only 0.75 per unit of length.
        let tall = CellSize { x: 1.0, y: 2.0 };
        let step = Drainage::of(&map, tall).step(4).unwrap();
        assert_eq!((step.receiver, step.length, step.slope), (5, 1.0, 1.0));
    }

    #[test]
    fn a_diagonal_step_is_as_long_as_the_cells_diagonal() {
        let map = around_the_centre(&[((2, 2), 7.0)]);
        let step = Drainage::of(&map, CellSize { x: 3.0, y: 4.0 })
            .step(4)
            .unwrap();
        assert_eq!((step.receiver, step.length), (8, 5.0));
        assert!((step.slope - 0.6).abs() < 1e-6, "{step:?}");
        assert_eq!(
            Drainage::of(&map, CellSize::default()).step(8),
            None,
            "a pit on the edge: an outlet"
        );
    }
}
