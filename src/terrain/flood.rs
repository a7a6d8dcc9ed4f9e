//! Priority-flood depression filling: Barnes, Lehman and Mulla (2014), "Priority-Flood:
//! An optimal depression-filling and watershed-labeling algorithm for digital elevation
//! models", Computers & Geosciences 62, with the plain queue of their Algorithm 2 for
//! the cells inside a depression. The flood starts from the map's edge, where water
//! leaves it, and visits each cell once, lowest first: a cell below the level of the
//! cell that reached it lies in a depression and is raised to that level.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use super::heightmap::Heightmap;
use super::nodata::in_bounds_neighbours;

/// `map` with every depression filled to its spill level.
pub fn fill_depressions(map: &Heightmap) -> Heightmap {
    let (w, h) = (map.width(), map.height());
    let mut filled = map.clone();
    let heights = filled.data_mut();
    let mut seen = vec![false; w * h];
    // Min-heap on (height, cell) in one word: ties go to the lower cell index.
    let mut rising = BinaryHeap::new();
    let mut level_queue = VecDeque::new();
    let key =
        |height: f32, cell: usize| Reverse(u64::from(ascending_bits(height)) << 32 | cell as u64);
    for i in (0..w * h).filter(|&i| is_edge(i, w, h)) {
        seen[i] = true;
        rising.push(key(heights[i], i));
    }
    loop {
        let cell = match level_queue.pop_front() {
            Some(cell) => cell,
            None => match rising.pop() {
                Some(Reverse(k)) => (k as u32) as usize,
                None => break,
            },
        };
        let level = heights[cell];
        for j in in_bounds_neighbours(cell, w, h) {
            if seen[j] {
                continue;
            }
            seen[j] = true;
            if heights[j] <= level {
                heights[j] = level;
                level_queue.push_back(j);
            } else {
                rising.push(key(heights[j], j));
            }
        }
    }
    filled
}

/// Whether cell `i` of a `w` x `h` map lies on its outer ring.
pub fn is_edge(i: usize, w: usize, h: usize) -> bool {
    let (x, y) = (i % w, i / w);
    x == 0 || y == 0 || x + 1 == w || y + 1 == h
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

#[cfg(test)]
mod tests {
    use super::*;

    fn map(w: usize, rows: &[f32]) -> Heightmap {
        Heightmap::new(w, rows.len() / w, rows.to_vec()).unwrap()
    }

    #[test]
    fn a_pit_fills_to_its_spill_point() {
        #[rustfmt::skip]
        let bowl = map(5, &[
            9.0, 9.0, 9.0, 9.0, 9.0,
            9.0, 5.0, 4.0, 6.0, 9.0,
            9.0, 3.0, 1.0, 6.0, 7.0,
            9.0, 5.0, 6.0, 6.0, 9.0,
            9.0, 9.0, 9.0, 9.0, 9.0,
        ]);
        // The rim's lowest cell is 7 (east edge, row 2): everything inside rises to it.
        let filled = fill_depressions(&bowl);
        for (i, &h) in filled.data().iter().enumerate() {
            let expected = if is_edge(i, 5, 5) {
                bowl.data()[i]
            } else {
                7.0
            };
            assert_eq!(h, expected, "cell {i}");
        }
    }

    #[test]
    fn a_map_without_depressions_is_left_as_it_is() {
        let slope: Vec<f32> = (0..64).map(|i| (i % 8 + i / 8) as f32).collect();
        let plane = map(8, &slope);
        assert_eq!(fill_depressions(&plane).data(), plane.data());
    }
}
