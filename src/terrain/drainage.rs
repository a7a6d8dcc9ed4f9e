//! D8 flow accumulation: how many cells drain through each cell when every cell passes
//! its water to its steepest lower neighbour. Used to find a terrain's channels.

use rayon::prelude::*;

use super::heightmap::Heightmap;

const NEIGHBOURS: [(isize, isize, f32); 8] = [
    (-1, -1, std::f32::consts::SQRT_2),
    (0, -1, 1.0),
    (1, -1, std::f32::consts::SQRT_2),
    (-1, 0, 1.0),
    (1, 0, 1.0),
    (-1, 1, std::f32::consts::SQRT_2),
    (0, 1, 1.0),
    (1, 1, std::f32::consts::SQRT_2),
];

/// Upstream area of every cell in cells, itself included. The receivers and the order
/// from high to low are found in parallel (maps reach 2^31 cells); only the
/// accumulation down that order is sequential. Cells of equal height never drain into
/// each other, so their order among themselves does not matter.
pub fn flow_accumulation(map: &Heightmap) -> Vec<u32> {
    let heights = map.data();
    let receivers: Vec<u32> = (0..heights.len())
        .into_par_iter()
        .map(|i| steepest(map, i).map_or(NO_RECEIVER, |(j, _)| j as u32))
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

/// The lower neighbour cell `i` drains to (D8) and the drop per distance to it; `None`
/// for a pit or a flat.
fn steepest(map: &Heightmap, i: usize) -> Option<(usize, f32)> {
    let (w, h) = (map.width(), map.height());
    let heights = map.data();
    let (x, y) = ((i % w) as isize, (i / w) as isize);
    let mut best = None;
    let mut best_drop = 0.0f32;
    for (dx, dy, dist) in NEIGHBOURS {
        let (nx, ny) = (x + dx, y + dy);
        if nx < 0 || ny < 0 || nx >= w as isize || ny >= h as isize {
            continue;
        }
        let j = ny as usize * w + nx as usize;
        let drop = (heights[i] - heights[j]) / dist;
        if drop > best_drop {
            best_drop = drop;
            best = Some((j, drop));
        }
    }
    best
}

/// The D8 slope of cell `i`: its drop per distance to the neighbour it drains to.
pub fn steepest_descent(map: &Heightmap, i: usize) -> Option<f32> {
    steepest(map, i).map(|(_, drop)| drop)
}

/// The cells whose upstream area is in the top `share` (0..1) of the map: its channels.
pub fn channel_mask(map: &Heightmap, share: f64) -> Vec<bool> {
    let area = flow_accumulation(map);
    let mut sorted = area.clone();
    sorted.par_sort_unstable();
    let cut = ((1.0 - share) * sorted.len() as f64) as usize;
    let threshold = sorted[cut.min(sorted.len() - 1)].max(2);
    area.iter().map(|&a| a >= threshold).collect()
}

/// Mean incision of a map's own channels: how far each channel cell lies below the mean
/// of the (2r+1)^2 window around it, averaged over the channel cells.
pub fn channel_incision(map: &Heightmap, share: f64, radius: usize) -> f64 {
    let mask = channel_mask(map, share);
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
        let area = flow_accumulation(&map);
        assert_eq!(area[4 * w + 2], 25, "the outlet drains the whole map");
        let channel = channel_mask(&map, 0.2);
        assert!(
            (0..5).all(|y| channel[y * w + 2]),
            "the floor is the channel"
        );
        assert!(!channel[0], "a corner is not");
    }
}
