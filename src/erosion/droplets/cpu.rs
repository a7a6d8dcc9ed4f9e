//! The paper's droplet algorithm on the CPU, in f32 with the same hash, sampling, fixed
//! point, physics and rounding as glsl/droplet.comp. `erode_sequential` runs droplets
//! one after another in id order, for exact comparison; `erode_parallel` runs them on
//! every core with `AtomicI32::fetch_add`, as the CPU baseline a user would otherwise
//! write.

use std::sync::atomic::{AtomicI32, Ordering};

use rayon::prelude::*;

use super::params::{DropletJob, Rounding, WorkCount, SPAWN_WATER};
use super::record::StepAddresses;
use super::spawn::droplet_start;
use crate::hash::pcg_hash;

/// The int32 heightfield as the kernel sees it.
struct Grid<'a> {
    cells: &'a [AtomicI32],
    width: i32,
    height: i32,
    scale: f32,
}

impl Grid<'_> {
    fn cell_height(&self, x: i32, y: i32) -> f32 {
        self.cells[(y * self.width + x) as usize].load(Ordering::Relaxed) as f32 / self.scale
    }

    /// `getSurfaceNormalAndHeight`: (dh/dx, dh/dy, h), bilinear over the cell's corners.
    fn surface(&self, pos: (f32, f32)) -> (f32, f32, f32) {
        let (cx, cy) = (pos.0 as i32, pos.1 as i32);
        let (u, v) = (fract(pos.0), fract(pos.1));
        let nw = self.cell_height(cx, cy);
        let ne = self.cell_height(cx + 1, cy);
        let sw = self.cell_height(cx, cy + 1);
        let se = self.cell_height(cx + 1, cy + 1);
        let gx = (ne - nw) * (1.0 - v) + (se - sw) * v;
        let gy = (sw - nw) * (1.0 - u) + (se - ne) * u;
        let h = nw * (1.0 - u) * (1.0 - v) + ne * u * (1.0 - v) + sw * (1.0 - u) * v + se * u * v;
        (gx, gy, h)
    }

    /// The paper's `modifyHeight`: to fixed point (truncated, unless the job rounds
    /// otherwise), added atomically.
    fn modify_height(&self, x: i32, y: i32, delta_h: f32, rounder: &mut Rounder) {
        let fixed_delta = rounder.round(delta_h * self.scale);
        self.cells[(y * self.width + x) as usize].fetch_add(fixed_delta, Ordering::Relaxed);
    }

    /// Spreads `amount` over the 2x2 cells at (x, y) with bilinear weights of `f`.
    fn modify_bilinear(&self, x: i32, y: i32, f: (f32, f32), amount: f32, rounder: &mut Rounder) {
        self.modify_height(x, y, amount * (1.0 - f.0) * (1.0 - f.1), rounder);
        self.modify_height(x + 1, y, amount * f.0 * (1.0 - f.1), rounder);
        self.modify_height(x, y + 1, amount * (1.0 - f.0) * f.1, rounder);
        self.modify_height(x + 1, y + 1, amount * f.0 * f.1, rounder);
    }
}

/// One droplet's fixed-point rounding, as the shaders' `toFixed`: stochastic rounding
/// draws from the droplet's id and its count of calls so far.
struct Rounder {
    mode: Rounding,
    droplet: u32,
    calls: u32,
}

impl Rounder {
    fn round(&mut self, scaled: f32) -> i32 {
        match self.mode {
            Rounding::Trunc => scaled as i32,
            Rounding::Nearest => (scaled + if scaled < 0.0 { -0.5 } else { 0.5 }) as i32,
            Rounding::Stochastic => {
                let draw = pcg_hash(self.droplet ^ pcg_hash(self.calls ^ 0x5bd1_e995));
                self.calls = self.calls.wrapping_add(1);
                let whole = scaled.trunc();
                let away = (draw as f32) * (1.0 / 4_294_967_296.0) < (scaled - whole).abs();
                let step = if scaled < 0.0 { -1 } else { 1 };
                whole as i32 + if away { step } else { 0 }
            }
        }
    }
}

fn fract(x: f32) -> f32 {
    x - x.floor()
}

/// What a traced droplet's life records: each step's addresses, as the recording build
/// writes them, and its speed after each step that reached `modifyHeight`.
#[derive(Default)]
struct Trace {
    addresses: Vec<StepAddresses>,
    speeds: Vec<f32>,
}

/// One droplet's life, as `main()` of the paper's kernel. Returns the steps it took
/// (iterations that reached `modifyHeight`), recording them in `trace` where given.
fn run_droplet(grid: &Grid, job: &DropletJob, id: u32, mut trace: Option<&mut Trace>) -> u32 {
    let cell = |(x, y): (i32, i32)| (y * grid.width + x) as u32;
    let p = &job.params;
    let mut pos = droplet_start(id, job.seed, grid.width as u32, grid.height as u32);
    let mut dir = (0.0f32, 0.0f32);
    let mut water = SPAWN_WATER;
    let mut sediment = 0.0f32;
    let mut speed = 1.0f32;
    let mut steps = 0;
    let mut rounder = Rounder {
        mode: p.rounding,
        droplet: id,
        calls: 0,
    };

    for _ in 0..p.lifetime {
        let (ix, iy) = (pos.0 as i32, pos.1 as i32);
        if ix < 1 || ix >= grid.width - 2 || iy < 1 || iy >= grid.height - 2 {
            break;
        }
        let (gx, gy, h_old) = grid.surface(pos);
        let mut addresses = StepAddresses {
            samples: [cell((ix, iy)), 0],
            adds: cell((ix, iy)),
            made: StepAddresses::SAMPLED_AT_POS,
        };

        dir = (
            dir.0 * p.inertia - gx * (1.0 - p.inertia),
            dir.1 * p.inertia - gy * (1.0 - p.inertia),
        );
        let len = (dir.0 * dir.0 + dir.1 * dir.1).sqrt();
        if len == 0.0 {
            if let Some(t) = trace.as_deref_mut() {
                t.addresses.push(addresses);
            }
            break;
        }
        dir = (dir.0 / len, dir.1 / len);

        let new_pos = (pos.0 + dir.0, pos.1 + dir.1);
        let h_new = grid.surface(new_pos).2;
        addresses.samples[1] = cell((new_pos.0 as i32, new_pos.1 as i32));
        addresses.made |= StepAddresses::SAMPLED_AT_NEW_POS | (0xF << StepAddresses::ADDS_SHIFT);
        if let Some(t) = trace.as_deref_mut() {
            t.addresses.push(addresses);
        }
        let delta_h = h_new - h_old;

        let capacity = (-delta_h).max(0.01) * speed * water * p.capacity;
        let f = (fract(pos.0), fract(pos.1));
        if sediment > capacity || delta_h > 0.0 {
            let deposit = if delta_h > 0.0 {
                delta_h.min(sediment)
            } else {
                (sediment - capacity) * p.deposition
            };
            sediment -= deposit;
            grid.modify_bilinear(ix, iy, f, deposit, &mut rounder);
        } else {
            let erode = ((capacity - sediment) * p.erosion).min(-delta_h);
            sediment += erode;
            grid.modify_bilinear(ix, iy, f, -erode, &mut rounder);
        }
        steps += 1;

        speed = (speed * speed + p.physics.sign() * delta_h * 9.81)
            .max(0.0)
            .sqrt();
        if let Some(t) = trace.as_deref_mut() {
            t.speeds.push(speed);
        }
        water *= 1.0 - p.evaporation;
        pos = new_pos;

        if water < 0.01 {
            break;
        }
    }
    steps
}

/// Runs `droplets` over `cells` seen as an atomic heightfield; returns the work done.
fn erode_with<F>(
    cells: &mut [i32],
    width: usize,
    height: usize,
    job: &DropletJob,
    droplets: F,
) -> WorkCount
where
    F: FnOnce(&Grid) -> u64,
{
    assert_eq!(
        cells.len(),
        width * height,
        "heightfield is width * height cells"
    );
    let atomic: Vec<AtomicI32> = cells.iter().map(|&c| AtomicI32::new(c)).collect();
    let grid = Grid {
        cells: &atomic,
        width: width as i32,
        height: height as i32,
        scale: job.params.fixed_point_scale,
    };
    let steps = droplets(&grid);
    for (cell, value) in cells.iter_mut().zip(atomic) {
        *cell = value.into_inner();
    }
    WorkCount::new(u64::from(job.droplets), steps)
}

/// Droplets 0..n one after another, in id order: deterministic.
pub fn erode_sequential(
    cells: &mut [i32],
    width: usize,
    height: usize,
    job: &DropletJob,
) -> WorkCount {
    erode_with(cells, width, height, job, |grid| {
        (0..job.droplets)
            .map(|id| u64::from(run_droplet(grid, job, id, None)))
            .sum()
    })
}

/// All droplets at once on rayon's thread pool, racing through atomic adds as GPU
/// threads do.
pub fn erode_parallel(
    cells: &mut [i32],
    width: usize,
    height: usize,
    job: &DropletJob,
) -> WorkCount {
    erode_with(cells, width, height, job, |grid| {
        (0..job.droplets)
            .into_par_iter()
            .map(|id| u64::from(run_droplet(grid, job, id, None)))
            .sum()
    })
}

/// Droplet `id` of `job` alone on the map: the addresses of each of its steps, as the
/// paper's kernel's recording build writes them (every add made, zero or not).
pub fn lone_droplet_addresses(
    cells: &[i32],
    width: usize,
    height: usize,
    job: &DropletJob,
    id: u32,
) -> Vec<StepAddresses> {
    lone_droplet(cells, width, height, job, id).addresses
}

/// Droplet `id` of `job` alone on the map: its speed after each of its steps.
pub fn lone_droplet_speeds(
    cells: &[i32],
    width: usize,
    height: usize,
    job: &DropletJob,
    id: u32,
) -> Vec<f32> {
    lone_droplet(cells, width, height, job, id).speeds
}

fn lone_droplet(cells: &[i32], width: usize, height: usize, job: &DropletJob, id: u32) -> Trace {
    let mut trace = Trace::default();
    erode_with(&mut cells.to_vec(), width, height, job, |grid| {
        u64::from(run_droplet(grid, job, id, Some(&mut trace)))
    });
    trace
}
