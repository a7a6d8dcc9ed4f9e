//! Thermal erosion on the CPU in f32, with the arithmetic of
//! glsl/include/thermal_common.glsl in the same order: the reference the kernels are
//! tested against. Each step is Jacobi, as on the GPU: every cell's outflows from the
//! previous heights, then every new height. The sequential engine walks the rows in
//! order; the parallel one splits them over rayon's threads, and since no cell's result
//! depends on the order, both give the same heights bit for bit.

use rayon::prelude::*;

use super::params::{ThermalParams, OFFSETS, OPPOSITE, STEEP_SLACK};
use crate::erosion::CpuEngine;

/// What a cell sends each neighbour in one step, in [`OFFSETS`]'s order (0 beyond the
/// neighbourhood and off the map).
type Outflows = [f32; 8];

/// One map's shape with the model's numbers, as the kernels' constants hold them.
struct Model {
    width: usize,
    height: usize,
    drops: [f32; 2],
    rate: f32,
    neighbours: usize,
}

impl Model {
    fn new(width: usize, height: usize, params: &ThermalParams) -> Self {
        Self {
            width,
            height,
            drops: params.talus_drops(),
            rate: params.rate,
            neighbours: params.neighbours as usize,
        }
    }

    /// Neighbour `k` of (x, y), where it lies on the map: no material leaves it.
    fn neighbour(&self, x: usize, y: usize, k: usize) -> Option<usize> {
        let (dx, dy) = OFFSETS[k];
        let (nx, ny) = (x as i64 + i64::from(dx), y as i64 + i64::from(dy));
        (nx >= 0 && ny >= 0 && nx < self.width as i64 && ny < self.height as i64)
            .then(|| ny as usize * self.width + nx as usize)
    }

    /// How far the drop toward neighbour `k` exceeds the talus's (`excessToward`).
    fn excess(&self, from: f32, to: f32, k: usize) -> f32 {
        (from - to) - ThermalParams::drop_toward(self.drops, k)
    }

    /// `outflowsOf`: the receivers are the neighbours past the talus; the cell sends
    /// each `rate * largest * excess / total` (as `(rate * largest / total) * excess`),
    /// `rate * largest` in all.
    fn outflows(&self, heights: &[f32], x: usize, y: usize) -> Outflows {
        let here = heights[y * self.width + x];
        let mut excess = [0.0f32; 8];
        let mut total = 0.0f32;
        let mut largest = 0.0f32;
        for (k, e) in excess.iter_mut().enumerate().take(self.neighbours) {
            if let Some(j) = self.neighbour(x, y, k) {
                *e = self.excess(here, heights[j], k);
                if *e > 0.0 {
                    total += *e;
                    largest = largest.max(*e);
                }
            }
        }
        let share = if total > 0.0 {
            self.rate * largest / total
        } else {
            0.0
        };
        excess.map(|e| if e > 0.0 { share * e } else { 0.0 })
    }

    /// `newHeight`: the new height `(h - sent) + received` and what the cell sent.
    fn apply(&self, heights: &[f32], outflows: &[Outflows], x: usize, y: usize) -> (f32, f32) {
        let i = y * self.width + x;
        let mut sent = 0.0f32;
        for &f in &outflows[i][..self.neighbours] {
            sent += f;
        }
        let mut received = 0.0f32;
        for (k, &back) in OPPOSITE.iter().enumerate().take(self.neighbours) {
            if let Some(j) = self.neighbour(x, y, k) {
                received += outflows[j][back];
            }
        }
        ((heights[i] - sent) + received, sent)
    }

    fn outflow_row(&self, heights: &[f32], y: usize, row: &mut [Outflows]) {
        for (x, out) in row.iter_mut().enumerate() {
            *out = self.outflows(heights, x, y);
        }
    }

    fn apply_row(
        &self,
        heights: &[f32],
        outflows: &[Outflows],
        y: usize,
        next: &mut [f32],
        sent: &mut [f32],
    ) {
        for (x, (h, s)) in next.iter_mut().zip(sent.iter_mut()).enumerate() {
            let (height, cell_sent) = self.apply(heights, outflows, x, y);
            *h = height;
            *s += cell_sent;
        }
    }
}

/// Runs `steps` steps of thermal erosion on the `width` x `height` map `heights` on
/// `engine`; returns what each cell sent over the run (height units), summed in f32
/// step by step as the counted kernels do.
pub fn run_thermal_on_cpu(
    heights: &mut Vec<f32>,
    width: usize,
    height: usize,
    params: &ThermalParams,
    steps: u32,
    engine: CpuEngine,
) -> Vec<f32> {
    let model = Model::new(width, height, params);
    let cells = width * height;
    let mut outflows = vec![[0.0f32; 8]; cells];
    let mut next = vec![0.0f32; cells];
    let mut sent = vec![0.0f32; cells];
    for _ in 0..steps {
        let now: &[f32] = heights;
        match engine {
            CpuEngine::Sequential => {
                for (y, row) in outflows.chunks_mut(width).enumerate() {
                    model.outflow_row(now, y, row);
                }
                let rows = next.chunks_mut(width).zip(sent.chunks_mut(width));
                for (y, (row, sent_row)) in rows.enumerate() {
                    model.apply_row(now, &outflows, y, row, sent_row);
                }
            }
            CpuEngine::Parallel => {
                outflows
                    .par_chunks_mut(width)
                    .enumerate()
                    .for_each(|(y, row)| model.outflow_row(now, y, row));
                next.par_chunks_mut(width)
                    .zip(sent.par_chunks_mut(width))
                    .enumerate()
                    .for_each(|(y, (row, sent_row))| {
                        model.apply_row(now, &outflows, y, row, sent_row)
                    });
            }
        }
        std::mem::swap(heights, &mut next);
    }
    sent
}

/// How far a map is from rest: the cells steeper than the talus toward some neighbour
/// by more than [`STEEP_SLACK`], and the largest excess (0 where no slope passes the
/// talus).
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct Steepness {
    pub steep_cells: u64,
    /// Height units over the talus's drop.
    pub steepest_excess: f32,
}

pub fn steepness(
    heights: &[f32],
    width: usize,
    height: usize,
    params: &ThermalParams,
) -> Steepness {
    let model = Model::new(width, height, params);
    heights
        .par_chunks(width)
        .enumerate()
        .map(|(y, row)| {
            let mut s = Steepness::default();
            for (x, &here) in row.iter().enumerate() {
                let largest = (0..model.neighbours)
                    .filter_map(|k| {
                        model
                            .neighbour(x, y, k)
                            .map(|j| model.excess(here, heights[j], k))
                    })
                    .fold(0.0f32, f32::max);
                s.steep_cells += u64::from(largest > STEEP_SLACK);
                s.steepest_excess = s.steepest_excess.max(largest);
            }
            s
        })
        .reduce(Steepness::default, |a, b| Steepness {
            steep_cells: a.steep_cells + b.steep_cells,
            steepest_excess: a.steepest_excess.max(b.steepest_excess),
        })
}
