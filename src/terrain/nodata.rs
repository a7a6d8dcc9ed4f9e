//! Filling cells with no data so the kernel sees finite heights everywhere.

use std::collections::VecDeque;

use super::heightmap::Heightmap;

/// The eight neighbours' offsets (x, y), row 0 north, clockwise from north: the order
/// in which D8 breaks ties between equal drops (as pysheds and ArcGIS number them).
pub(super) const NEIGHBOURS: [(isize, isize); 8] = [
    (0, -1),
    (1, -1),
    (1, 0),
    (1, 1),
    (0, 1),
    (-1, 1),
    (-1, 0),
    (-1, -1),
];

/// The cells next to cell `i` of a `w` x `h` map, each with its offset's index in
/// [`NEIGHBOURS`], in that order.
pub(super) fn in_bounds_offsets(
    i: usize,
    w: usize,
    h: usize,
) -> impl Iterator<Item = (usize, usize)> {
    let (x, y) = ((i % w) as isize, (i / w) as isize);
    NEIGHBOURS
        .iter()
        .enumerate()
        .filter_map(move |(k, &(dx, dy))| {
            let (nx, ny) = (x + dx, y + dy);
            // Lazily: off the map the index would overflow.
            (nx >= 0 && ny >= 0 && nx < w as isize && ny < h as isize)
                .then(|| (k, ny as usize * w + nx as usize))
        })
}

/// The cells next to cell `i` of a `w` x `h` map, in [`NEIGHBOURS`] order.
pub(super) fn in_bounds_neighbours(i: usize, w: usize, h: usize) -> impl Iterator<Item = usize> {
    in_bounds_offsets(i, w, h).map(|(_, j)| j)
}

/// Fills every NaN cell with the mean of its already-known 8-neighbours, growing
/// breadth-first from the edges of each gap inward. Returns the mask of filled cells.
/// A map with no finite cell is left as it is (callers refuse it first).
pub fn fill_missing(map: &mut Heightmap) -> Vec<bool> {
    let (w, h) = (map.width(), map.height());
    let missing: Vec<bool> = map.data().iter().map(|v| v.is_nan()).collect();
    let mut known: Vec<bool> = missing.iter().map(|&m| !m).collect();
    let mut queued = known.clone();
    let mut queue = VecDeque::new();
    let neighbours = |i: usize| in_bounds_neighbours(i, w, h);
    for i in (0..w * h).filter(|&i| missing[i]) {
        if neighbours(i).any(|j| known[j]) {
            queued[i] = true;
            queue.push_back(i);
        }
    }
    let data = map.data_mut();
    while let Some(i) = queue.pop_front() {
        let (sum, count) = neighbours(i)
            .filter(|&j| known[j])
            .fold((0.0f64, 0u32), |(s, c), j| (s + f64::from(data[j]), c + 1));
        data[i] = (sum / f64::from(count.max(1))) as f32;
        known[i] = true;
        for j in neighbours(i) {
            if !queued[j] {
                queued[j] = true;
                queue.push_back(j);
            }
        }
    }
    missing
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps_fill_from_their_edges_with_neighbour_means() {
        let nan = f32::NAN;
        #[rustfmt::skip]
        let data = vec![
            1.0, 1.0, 1.0, 1.0, 1.0,
            1.0, nan, nan, nan, 1.0,
            1.0, nan, nan, nan, 1.0,
            1.0, nan, nan, nan, 1.0,
            1.0, 1.0, 1.0, 1.0, 9.0,
        ];
        let mut map = Heightmap::new(5, 5, data).unwrap();
        let filled = fill_missing(&mut map);
        assert_eq!(filled.iter().filter(|&&f| f).count(), 9);
        assert!(map.data().iter().all(|h| h.is_finite()));
        // Far from the 9 the fill is flat; next to it, the 9 pulls it up.
        assert!((map.at(1, 1) - 1.0).abs() < 1e-6);
        assert!(map.at(3, 3) > 2.0 && map.at(3, 3) < 9.0, "{}", map.at(3, 3));
        assert!(map.at(3, 3) > map.at(2, 2) && map.at(2, 2) > 1.0);
    }

    #[test]
    fn a_single_missing_cell_gets_the_mean_of_its_eight_neighbours() {
        let data = vec![1.0, 2.0, 3.0, 4.0, f32::NAN, 6.0, 7.0, 8.0, 10.0];
        let mut map = Heightmap::new(3, 3, data).unwrap();
        fill_missing(&mut map);
        assert!((map.at(1, 1) - 41.0 / 8.0).abs() < 1e-6, "{}", map.at(1, 1));
    }
}
