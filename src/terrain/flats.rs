//! Drainage across flats: Barnes, Lehman and Mulla (2014), "An efficient assignment of
//! drainage direction over flat surfaces in raster digital elevation models",
//! Computers & Geosciences 62. A flat is a run of interior cells of one height with no
//! lower neighbour, as a filled depression is. Each of its cells gets a gradient that
//! leads toward the flat's outlets (its low edges: cells of the same height that do
//! drain) and away from the higher ground around it, so that flow across it converges
//! as it would on a real surface instead of running in parallel lines.

use std::collections::VecDeque;

use super::flood::is_edge;
use super::heightmap::Heightmap;
use super::nodata::in_bounds_neighbours;

/// Where D8 on a map as it is (unfilled) finds no lower neighbour for an interior cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// A single-cell sink: strictly lower than each of its eight neighbours.
    Sink,
    /// A flat cell: no neighbour lower, one at least of the same height.
    Flat,
}

/// How interior cell `i` of `map` stops D8, if it does; `None` on the edge (where water
/// leaves) and where a neighbour is lower.
pub fn stop(map: &Heightmap, i: usize) -> Option<Stop> {
    let (w, h) = (map.width(), map.height());
    if is_edge(i, w, h) {
        return None;
    }
    let heights = map.data();
    let mut level = false;
    for j in in_bounds_neighbours(i, w, h) {
        if heights[j] < heights[i] {
            return None;
        }
        level |= heights[j] == heights[i];
    }
    Some(if level { Stop::Flat } else { Stop::Sink })
}

/// The drainage gradient of every cell of `filled` (a map with no depressions): 0 off
/// the flats; on a low edge 2; on a flat cell 2 x (steps to the nearest low edge + 1)
/// plus how much nearer the flat's farthest cell from higher ground is than the cell
/// itself (the two gradients of the paper, the first doubled so it dominates). Water
/// on a flat cell drains to a same-height neighbour of lower gradient.
pub fn flat_gradient(filled: &Heightmap) -> Vec<u32> {
    let (w, h) = (filled.width(), filled.height());
    let heights = filled.data();
    let lower = |i: usize| in_bounds_neighbours(i, w, h).any(|j| heights[j] < heights[i]);
    // The map's edge drains off it, so an edge cell is never flat.
    let flat: Vec<bool> = (0..w * h).map(|i| !is_edge(i, w, h) && !lower(i)).collect();
    let is_flat = &flat;
    let same_height_flat = move |i: usize| {
        in_bounds_neighbours(i, w, h).filter(move |&j| is_flat[j] && heights[j] == heights[i])
    };
    let low_edges = (0..w * h).filter(|&i| !is_flat[i] && same_height_flat(i).next().is_some());
    let towards = distances(w * h, low_edges, same_height_flat);
    let high_edges = (0..w * h)
        .filter(|&i| is_flat[i] && in_bounds_neighbours(i, w, h).any(|j| heights[j] > heights[i]));
    let away = distances(w * h, high_edges, same_height_flat);
    // The farthest any cell of each flat lies from its higher ground, spread over the
    // flat from its cells' neighbours of the same height.
    let farthest = flat_maxima(&away, &flat, same_height_flat);
    (0..w * h)
        .map(|i| match (towards[i], away[i]) {
            (0, _) => 0,
            (t, 0) => 2 * t,
            (t, a) => 2 * t + farthest[i] - a,
        })
        .collect()
}

/// Breadth-first distances from `sources` (1) through `next`, 0 where unreached.
fn distances<I: Iterator<Item = usize>>(
    cells: usize,
    sources: impl Iterator<Item = usize>,
    next: impl Fn(usize) -> I,
) -> Vec<u32> {
    let mut distance = vec![0u32; cells];
    let mut queue = VecDeque::new();
    for i in sources {
        distance[i] = 1;
        queue.push_back(i);
    }
    while let Some(i) = queue.pop_front() {
        for j in next(i) {
            if distance[j] == 0 {
                distance[j] = distance[i] + 1;
                queue.push_back(j);
            }
        }
    }
    distance
}

/// For each flat cell, the largest `value` over its flat (the cells connected to it
/// through `next`); 0 off the flats.
fn flat_maxima<I: Iterator<Item = usize>>(
    value: &[u32],
    flat: &[bool],
    next: impl Fn(usize) -> I,
) -> Vec<u32> {
    let mut maximum = vec![0u32; value.len()];
    let mut done = vec![false; value.len()];
    let mut members = Vec::new();
    for start in (0..value.len()).filter(|&i| flat[i]) {
        if done[start] {
            continue;
        }
        done[start] = true;
        members.clear();
        members.push(start);
        let mut k = 0;
        while k < members.len() {
            for j in next(members[k]) {
                if !done[j] {
                    done[j] = true;
                    members.push(j);
                }
            }
            k += 1;
        }
        let largest = members.iter().map(|&i| value[i]).max().unwrap_or(0);
        for &i in &members {
            maximum[i] = largest;
        }
    }
    maximum
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flat_slopes_toward_its_outlet_and_away_from_its_higher_side() {
        // A 5-cell flat at 5 between a wall (9) on the west and an outlet (4) on the
        // east: the gradient falls eastward.
        #[rustfmt::skip]
        let data = vec![
            9.0, 9.0, 9.0, 9.0, 9.0, 9.0, 9.0,
            9.0, 5.0, 5.0, 5.0, 5.0, 5.0, 4.0,
            9.0, 9.0, 9.0, 9.0, 9.0, 9.0, 9.0,
        ];
        let map = Heightmap::new(7, 3, data).unwrap();
        let gradient = flat_gradient(&map);
        let row: Vec<u32> = gradient[7..14].to_vec();
        // Cell 12 (x 5) drains, so it is the low edge: 2. Every flat cell is a high edge
        // (walls north and south), so only the towards-lower gradient varies.
        assert_eq!(row, vec![0, 10, 8, 6, 4, 2, 0]);
        assert!(gradient[..7].iter().all(|&g| g == 0));
    }

    #[test]
    fn where_towards_lower_ties_higher_ground_breaks_the_tie() {
        // A 3x3 flat at 5 inside a rim at 9, with outlets on the west and the east rim;
        // the centre column is as far from either outlet, and the higher ground is
        // nearest its north and south ends.
        #[rustfmt::skip]
        let data = vec![
            9.0, 9.0, 9.0, 9.0, 9.0,
            9.0, 5.0, 5.0, 5.0, 9.0,
            4.0, 5.0, 5.0, 5.0, 4.0,
            9.0, 5.0, 5.0, 5.0, 9.0,
            9.0, 9.0, 9.0, 9.0, 9.0,
        ];
        let map = Heightmap::new(5, 5, data).unwrap();
        let g = flat_gradient(&map);
        // The centre lies farthest from the higher ground, so it is lowest in its column.
        assert!(g[12] < g[7] && g[12] < g[17], "{g:?}");
        // Each side column is lower than the centre one.
        assert!(g[11] < g[12] && g[13] < g[12], "{g:?}");
    }

    #[test]
    fn a_cell_below_all_its_neighbours_is_a_sink_and_one_level_with_another_is_flat() {
        #[rustfmt::skip]
        let data = vec![
            9.0, 9.0, 9.0, 9.0, 9.0, 9.0,
            9.0, 3.0, 8.0, 5.0, 5.0, 9.0,
            9.0, 8.0, 8.0, 8.0, 6.0, 9.0,
            2.0, 9.0, 9.0, 9.0, 9.0, 9.0,
        ];
        let map = Heightmap::new(6, 4, data).unwrap();
        let stops: Vec<Option<Stop>> = (0..24).map(|i| stop(&map, i)).collect();
        // The 3 is a sink; each 5 is flat beside the other; the second row's cells all
        // drain (the first 8 to the edge's 2, the 6 to the 5s); the edge never stops.
        assert_eq!(
            &stops[7..11],
            &[Some(Stop::Sink), None, Some(Stop::Flat), Some(Stop::Flat)]
        );
        assert_eq!(&stops[13..17], &[None; 4]);
        assert!((0..24)
            .filter(|&i| is_edge(i, 6, 4))
            .all(|i| stops[i].is_none()));
    }
}
