//! D8 flow accumulation: how many cells drain through each cell when every cell passes
//! its water to the neighbour with the steepest drop per distance, on a grid of real
//! spacing (dx across, dy down, the diagonal between). Used to find a terrain's
//! channels.

use rayon::prelude::*;

use super::heightmap::Heightmap;
use super::image::CellSize;
use super::nodata::NEIGHBOURS;

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

/// Upstream area of every cell in cells, itself included, routed over the grid's
/// `spacing` (times dx * dy for an area). The receivers and the order from high to low
/// are found in parallel (maps reach 2^31 cells); only the accumulation down that order
/// is sequential. Cells of equal height never drain into each other, so their order
/// among themselves does not matter.
pub fn flow_accumulation(map: &Heightmap, spacing: CellSize) -> Vec<u32> {
    let heights = map.data();
    let neighbours = neighbours(spacing);
    let receivers: Vec<u32> = (0..heights.len())
        .into_par_iter()
        .map(|i| steepest(map, &neighbours, i).map_or(NO_RECEIVER, |step| step.receiver as u32))
        .collect();
    // Height and cell in one key, sorted directly: no indirect loads while sorting.
    let mut order: Vec<u64> = heights
        .par_iter()
        .enumerate()
        .map(|(i, &h)| (u64::from(ascending_bits(h)) << 32) | i as u64)
        .collect();
    order.par_sort_unstable();
    let mut area = vec![1u32; heights.len()];
    for &key in order.iter().rev() {
        let i = key as u32;
        let j = receivers[i as usize];
        if j != NO_RECEIVER {
            area[j as usize] += area[i as usize];
        }
    }
    area
}

/// The bits of `h`, ordered as `f32::total_cmp` orders the floats.
fn ascending_bits(h: f32) -> u32 {
    let bits = h.to_bits();
    if bits >> 31 == 1 {
        !bits
    } else {
        bits | 1 << 31
    }
}

/// A pit's or a flat's receiver.
const NO_RECEIVER: u32 = u32::MAX;

/// The step of cell `i` to the neighbour with the steepest drop per distance; `None`
/// for a pit or a flat.
fn steepest(map: &Heightmap, neighbours: &[(isize, isize, f32); 8], i: usize) -> Option<FlowStep> {
    let (w, h) = (map.width(), map.height());
    let heights = map.data();
    let (x, y) = ((i % w) as isize, (i / w) as isize);
    let mut best: Option<FlowStep> = None;
    for &(dx, dy, length) in neighbours {
        let (nx, ny) = (x + dx, y + dy);
        if nx < 0 || ny < 0 || nx >= w as isize || ny >= h as isize {
            continue;
        }
        let j = ny as usize * w + nx as usize;
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

/// The D8 step of cell `i` on a grid of `spacing`: where it drains, how far and how
/// steeply; `None` for a pit or a flat.
pub fn steepest_descent(map: &Heightmap, spacing: CellSize, i: usize) -> Option<FlowStep> {
    steepest(map, &neighbours(spacing), i)
}

/// The cells whose upstream area is in the top `share` (0..1) of the map, routed over
/// the grid's `spacing`: its channels.
pub fn channel_mask(map: &Heightmap, spacing: CellSize, share: f64) -> Vec<bool> {
    let area = flow_accumulation(map, spacing);
    let mut sorted = area.clone();
    sorted.par_sort_unstable();
    let cut = ((1.0 - share) * sorted.len() as f64) as usize;
    let threshold = sorted[cut.min(sorted.len() - 1)].max(2);
    area.iter().map(|&a| a >= threshold).collect()
}

/// Mean incision of a map's own channels (routed over `spacing`): how far each channel
/// cell lies below the mean of the (2r+1)^2-cell window around it, averaged over the
/// channel cells, in height units.
pub fn channel_incision(map: &Heightmap, spacing: CellSize, share: f64, radius: usize) -> f64 {
    let mask = channel_mask(map, spacing, share);
    let (w, h) = (map.width(), map.height());
    let mut total = 0.0f64;
    let mut count = 0usize;
    for y in radius..h.saturating_sub(radius) {
        for x in radius..w.saturating_sub(radius) {
            if !mask[y * w + x] {
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
        let area = flow_accumulation(&map, CellSize::default());
        assert_eq!(area[4 * w + 2], 25, "the outlet drains the whole map");
        let channel = channel_mask(&map, CellSize::default(), 0.2);
        assert!(
            (0..5).all(|y| channel[y * w + 2]),
            "the floor is the channel"
        );
        assert!(!channel[0], "a corner is not");
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
        let square = steepest_descent(&map, CellSize::default(), 4).unwrap();
        assert_eq!(
            (square.receiver, square.length, square.slope),
            (7, 1.0, 1.5)
        );
        // Rows twice as far apart: south is only 0.75 per unit of length.
        let tall = CellSize { x: 1.0, y: 2.0 };
        let step = steepest_descent(&map, tall, 4).unwrap();
        assert_eq!((step.receiver, step.length, step.slope), (5, 1.0, 1.0));
    }

    #[test]
    fn a_diagonal_step_is_as_long_as_the_cells_diagonal() {
        let map = around_the_centre(&[((2, 2), 7.0)]);
        let step = steepest_descent(&map, CellSize { x: 3.0, y: 4.0 }, 4).unwrap();
        assert_eq!((step.receiver, step.length), (8, 5.0));
        assert!((step.slope - 0.6).abs() < 1e-6, "{step:?}");
        assert_eq!(
            steepest_descent(&map, CellSize::default(), 8),
            None,
            "a pit"
        );
    }
}
