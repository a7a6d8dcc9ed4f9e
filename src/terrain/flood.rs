//! Priority-flood depression filling: Barnes, Lehman and Mulla (2014), "Priority-Flood:
//! An optimal depression-filling and watershed-labeling algorithm for digital elevation
//! models", Computers & Geosciences 62, with the plain queue of their Algorithm 2 for
//! the cells inside a depression. The flood starts from the map's edge, where water
//! leaves it, and visits each cell once, lowest first: a cell at or below the level of
//! the cell that reached it lies in a depression or on a flat and is raised to that
//! level (Algorithm 2), or a step above it (Priority-Flood+ε, their Algorithm 3).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use super::heightmap::Heightmap;
use super::nodata::in_bounds_neighbours;

/// `map` with every depression filled to its spill level.
pub fn fill_depressions(map: &Heightmap) -> Heightmap {
    let mut filled = map.clone();
    let (w, h) = (map.width(), map.height());
    flood(
        filled.data_mut(),
        w,
        h,
        |h| u64::from(ascending_bits(h)),
        |level| level,
    );
    filled
}

/// `map` filled by Priority-Flood+ε, in f64: each cell the flood reaches at or below the
/// level of the cell that reached it is raised to the next f64 above that level. Every
/// interior cell so has a lower neighbour, the one the flood came from, and a flat
/// drains back along the flood's path to where the flood entered it. The steps are
/// 1e-13 m at 400 m, far below an f32 height's own step (3e-5 m there), so they order
/// a flat's cells without reordering the map's heights.
pub fn fill_with_epsilon(map: &Heightmap) -> Vec<f64> {
    let mut heights: Vec<f64> = map.data().iter().map(|&h| f64::from(h)).collect();
    flood(
        &mut heights,
        map.width(),
        map.height(),
        ascending_bits_64,
        f64::next_up,
    );
    heights
}

/// The priority flood over `heights` of a `w` x `h` map, from its edge: `key` orders
/// heights as integers, `raise` gives the height of a cell reached at or below `level`.
fn flood<T: Copy + PartialOrd>(
    heights: &mut [T],
    w: usize,
    h: usize,
    key: impl Fn(T) -> u64,
    raise: impl Fn(T) -> T,
) {
    let mut seen = vec![false; w * h];
    // A min-heap on (height, cell): ties go to the lower cell index.
    let mut rising = BinaryHeap::new();
    let mut level_queue = VecDeque::new();
    for i in (0..w * h).filter(|&i| is_edge(i, w, h)) {
        seen[i] = true;
        rising.push(Reverse((key(heights[i]), i)));
    }
    loop {
        let cell = match level_queue.pop_front() {
            Some(cell) => cell,
            None => match rising.pop() {
                Some(Reverse((_, cell))) => cell,
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
                heights[j] = raise(level);
                level_queue.push_back(j);
            } else {
                rising.push(Reverse((key(heights[j]), j)));
            }
        }
    }
}

/// The depressions of `map`, whose priority-flood filling is `filled`, as their cell
/// counts in the order of their first cells: a depression is an 8-connected region of
/// the cells the filling raises (filled above the height). Each is one depression at
/// one spill level: two raised cells that touch, even at a corner, were filled to the
/// same level, since the flood passes between any two neighbours; a pit nested in a
/// larger depression is under its water and so part of it. Only interior cells are
/// ever raised: the flood starts from the edge.
pub fn depressions(map: &Heightmap, filled: &Heightmap) -> Vec<u64> {
    let (w, h) = (map.width(), map.height());
    let raised: Vec<bool> = filled
        .data()
        .iter()
        .zip(map.data())
        .map(|(f, h)| f > h)
        .collect();
    let mut labelled = vec![false; w * h];
    let mut stack = Vec::new();
    let mut sizes = Vec::new();
    for start in 0..w * h {
        if !raised[start] || labelled[start] {
            continue;
        }
        let mut cells = 0;
        labelled[start] = true;
        stack.push(start);
        while let Some(i) = stack.pop() {
            cells += 1;
            for j in in_bounds_neighbours(i, w, h) {
                if raised[j] && !labelled[j] {
                    labelled[j] = true;
                    stack.push(j);
                }
            }
        }
        sizes.push(cells);
    }
    sizes
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

/// The bits of `h`, ordered as `f64::total_cmp` orders the floats.
fn ascending_bits_64(h: f64) -> u64 {
    let bits = h.to_bits();
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | 1 << 63
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

    #[test]
    fn pools_touching_at_a_corner_are_one_depression_and_a_nested_pit_is_part_of_its_own() {
        // Two pools (1) meet only at a corner, inside walls of 7 that drain east over the
        // rim's 6; a third pool to the south-west has its pit (0) nested in a bowl of
        // 2s. Each fills to the walls' 7.
        #[rustfmt::skip]
        let bowl = map(7, &[
            9.0, 9.0, 9.0, 9.0, 9.0, 9.0, 9.0,
            9.0, 1.0, 7.0, 7.0, 7.0, 7.0, 9.0,
            9.0, 7.0, 1.0, 7.0, 7.0, 7.0, 6.0,
            9.0, 7.0, 7.0, 7.0, 7.0, 7.0, 9.0,
            9.0, 2.0, 2.0, 7.0, 7.0, 7.0, 9.0,
            9.0, 2.0, 0.0, 7.0, 7.0, 7.0, 9.0,
            9.0, 9.0, 9.0, 9.0, 9.0, 9.0, 9.0,
        ]);
        let filled = fill_depressions(&bowl);
        let raised = (0..49)
            .filter(|&i| filled.data()[i] > bowl.data()[i])
            .count();
        assert_eq!(raised, 6);
        assert_eq!(depressions(&bowl, &filled), vec![2, 4]);
    }

    #[test]
    fn a_depression_spilling_into_another_is_a_second_depression() {
        // The west pool (1) spills at 5 into the east one (2 and 3), which spills at 4
        // off the map: two depressions at two levels.
        #[rustfmt::skip]
        let pair = map(6, &[
            9.0, 9.0, 9.0, 9.0, 9.0, 9.0,
            9.0, 1.0, 5.0, 2.0, 3.0, 4.0,
            9.0, 9.0, 9.0, 9.0, 9.0, 9.0,
        ]);
        let filled = fill_depressions(&pair);
        assert_eq!(&filled.data()[6..12], &[9.0, 5.0, 5.0, 4.0, 4.0, 4.0]);
        assert_eq!(depressions(&pair, &filled), vec![1, 2]);
    }

    #[test]
    fn the_epsilon_fill_leaves_every_interior_cell_a_lower_neighbour_within_a_step_of_the_plain_fill(
    ) {
        #[rustfmt::skip]
        let bowl = map(6, &[
            9.0, 9.0, 9.0, 9.0, 9.0, 9.0,
            9.0, 4.0, 4.0, 4.0, 4.0, 9.0,
            9.0, 4.0, 2.0, 4.0, 4.0, 5.0,
            9.0, 4.0, 4.0, 4.0, 4.0, 9.0,
            9.0, 9.0, 9.0, 9.0, 9.0, 9.0,
        ]);
        let raised = fill_with_epsilon(&bowl);
        let plain = fill_depressions(&bowl);
        for i in (0..30).filter(|&i| !is_edge(i, 6, 5)) {
            assert!(
                in_bounds_neighbours(i, 6, 5).any(|j| raised[j] < raised[i]),
                "cell {i} has no lower neighbour: {raised:?}"
            );
            // The steps order the lake; they leave its level as the plain fill's.
            assert_eq!(raised[i] as f32, plain.data()[i], "cell {i}");
            assert!(raised[i] > f64::from(plain.data()[i]), "cell {i}");
        }
    }
}
