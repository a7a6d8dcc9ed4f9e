//! The virtual-pipe shallow-water model on the CPU, sequential and in f32, pass for
//! pass as the plain glsl/pipes_*.comp: the reference the GPU driver is tested against.

use super::{Advection, Boundary, PipesParams, PipesState};

/// One cell's neighbours: left, right, top, bottom.
const NEIGHBOURS: [(isize, isize); 4] = [(-1, 0), (1, 0), (0, -1), (0, 1)];

struct Grid {
    width: usize,
    height: usize,
}

impl Grid {
    fn at(&self, x: usize, y: usize, d: (isize, isize)) -> Option<usize> {
        let (nx, ny) = (x as isize + d.0, y as isize + d.1);
        (nx >= 0 && ny >= 0 && nx < self.width as isize && ny < self.height as isize)
            .then(|| ny as usize * self.width + nx as usize)
    }
}

/// Runs `steps` time steps of the model on `state`.
pub fn run_pipes_on_cpu(state: &mut PipesState, p: &PipesParams, steps: u32) {
    let grid = Grid {
        width: state.width,
        height: state.height,
    };
    let n = state.terrain.len();
    let mut flux_out = vec![[0.0f32; 4]; n];
    let mut water_out = vec![0.0f32; n];
    let mut velocity = vec![[0.0f32; 2]; n];
    let mut terrain_out = vec![0.0f32; n];
    let mut sediment_out = vec![0.0f32; n];
    let area = p.cell_length * p.cell_length;
    let open = p.boundary == Boundary::Open;
    let kept = p.flux_kept();
    let upwind = p.advection == Advection::Upwind;
    // As glsl/include/pipes_model.glsl: with the upwind transport any moving water has a
    // speed, and the capacity counts all of it.
    let min_speed_depth = if upwind { 0.0 } else { 1e-4 };
    let speed_bound = if upwind {
        f32::INFINITY
    } else {
        p.cell_length / p.dt
    };
    for _ in 0..steps {
        for w in &mut state.water {
            *w += p.dt * p.rain;
        }
        for y in 0..grid.height {
            for x in 0..grid.width {
                let i = y * grid.width + x;
                let surface = state.terrain[i] + state.water[i];
                let mut next = [0.0f32; 4];
                for (k, d) in NEIGHBOURS.iter().enumerate() {
                    // Past an open edge, the sea at the base level.
                    let other = match grid.at(x, y, *d) {
                        Some(j) => Some(state.terrain[j] + state.water[j]),
                        None => open.then_some(p.base_level),
                    };
                    if let Some(other) = other {
                        let drop = surface - other;
                        next[k] = (state.flux[i][k] * kept
                            + p.dt * p.pipe_area * p.gravity * drop / p.cell_length)
                            .max(0.0);
                    }
                }
                let total = next[0] + next[1] + next[2] + next[3];
                let volume = state.water[i] * p.cell_length * p.cell_length;
                let k = if total > 0.0 {
                    (volume / (total * p.dt)).min(1.0)
                } else {
                    1.0
                };
                flux_out[i] = next.map(|f| f * k);
            }
        }
        if upwind {
            state.left.sediment_outflow += transport(&grid, state, &flux_out, p);
        }
        for y in 0..grid.height {
            for x in 0..grid.width {
                let i = y * grid.width + x;
                let flux_at = |d| grid.at(x, y, d).map_or([0.0f32; 4], |j| flux_out[j]);
                let (out, left, right) = (flux_out[i], flux_at((-1, 0)), flux_at((1, 0)));
                let (top, bottom) = (flux_at((0, -1)), flux_at((0, 1)));
                let inflow = left[1] + right[0] + top[3] + bottom[2];
                let outflow = out[0] + out[1] + out[2] + out[3];
                let depth = (state.water[i] + p.dt * (inflow - outflow) / area).max(0.0);
                let mean = 0.5 * (state.water[i] + depth);
                let passing = [
                    0.5 * (left[1] - out[0] + out[1] - right[0]),
                    0.5 * (top[3] - out[2] + out[3] - bottom[2]),
                ];
                water_out[i] = depth;
                state.left.outflow += f64::from(p.dt * off_map(&grid, x, y, out) / area);
                velocity[i] = if mean > min_speed_depth {
                    passing.map(|v| v / (p.cell_length * mean))
                } else {
                    [0.0, 0.0]
                };
                state.flux[i] = out;
            }
        }
        for y in 0..grid.height {
            for x in 0..grid.width {
                let i = y * grid.width + x;
                let b = state.terrain[i];
                let at = |d| grid.at(x, y, d).map_or(b, |j| state.terrain[j]);
                let dx = 0.5 * (at((1, 0)) - at((-1, 0))) / p.cell_length;
                let dy = 0.5 * (at((0, 1)) - at((0, -1))) / p.cell_length;
                let slope = (dx * dx + dy * dy).sqrt();
                let tilt = p.min_tilt.max(slope / (1.0 + slope * slope).sqrt());
                let speed = (velocity[i][0] * velocity[i][0] + velocity[i][1] * velocity[i][1])
                    .sqrt()
                    .min(speed_bound);
                let depth_share = (water_out[i] / p.max_erosion_depth).clamp(0.0, 1.0);
                let capacity = p.capacity * tilt * speed * depth_share;
                let s = state.sediment[i];
                let change = if capacity > s {
                    p.dissolving * (capacity - s)
                } else {
                    -p.deposition * (s - capacity)
                };
                let mut change = (change * p.dt).max(-s);
                // Past open edges the sea is the base level: no flow cuts below it.
                if open && change > 0.0 {
                    change = change.min((b - p.base_level).max(0.0));
                }
                let mut carried = s + change;
                // At most the cap times the water that holds it after evaporation.
                if let Some(cap) = p.sediment_cap {
                    let held = cap * (water_out[i] * (1.0 - p.evaporation * p.dt)) * area;
                    if carried > held {
                        change = held - s;
                        carried = held;
                    }
                }
                terrain_out[i] = b - change;
                sediment_out[i] = carried;
            }
        }
        if upwind {
            for i in 0..n {
                state.sediment[i] = sediment_out[i];
                state.water[i] = water_out[i] * (1.0 - p.evaporation * p.dt);
                state.left.evaporated += f64::from(water_out[i] - state.water[i]);
                state.terrain[i] = terrain_out[i];
            }
            continue;
        }
        let (w, h) = (grid.width as isize, grid.height as isize);
        let sediment_at = |x: isize, y: isize| {
            let (x, y) = (x.clamp(0, w - 1), y.clamp(0, h - 1));
            sediment_out[(y * w + x) as usize]
        };
        for y in 0..grid.height {
            for x in 0..grid.width {
                let i = y * grid.width + x;
                let back = |v: f32| (v * p.dt / p.cell_length).clamp(-1.0, 1.0);
                let from = [
                    (x as f32 - back(velocity[i][0])).clamp(0.0, (w - 1) as f32),
                    (y as f32 - back(velocity[i][1])).clamp(0.0, (h - 1) as f32),
                ];
                let (bx, by) = (from[0].floor() as isize, from[1].floor() as isize);
                let (fx, fy) = (from[0] - bx as f32, from[1] - by as f32);
                let mix = |a: f32, b: f32, t: f32| a * (1.0 - t) + b * t;
                let top = mix(sediment_at(bx, by), sediment_at(bx + 1, by), fx);
                let bottom = mix(sediment_at(bx, by + 1), sediment_at(bx + 1, by + 1), fx);
                state.sediment[i] = mix(top, bottom, fy);
                state.water[i] = water_out[i] * (1.0 - p.evaporation * p.dt);
                state.left.evaporated += f64::from(water_out[i] - state.water[i]);
                state.terrain[i] = terrain_out[i];
            }
        }
    }
}

/// The flux of `out`, a cell's outflows, through its pipes off the map (open edges).
fn off_map(grid: &Grid, x: usize, y: usize, out: [f32; 4]) -> f32 {
    let mut off = 0.0;
    for (k, d) in NEIGHBOURS.iter().enumerate() {
        if grid.at(x, y, *d).is_none() {
            off += out[k];
        }
    }
    off
}

/// The upwind transport of the sediment along this step's outflows `flux` (the fused
/// erosion pass's, before the water update): each outflow carries its share of its
/// cell's sediment, so what one cell sends another receives. Returns what the outflows
/// past the open edges carried off the map.
fn transport(grid: &Grid, state: &mut PipesState, flux: &[[f32; 4]], p: &PipesParams) -> f64 {
    let area = p.cell_length * p.cell_length;
    let concentration: Vec<f32> = state
        .sediment
        .iter()
        .zip(&state.water)
        .map(|(&s, &d)| if d > 0.0 { s / (d * area) } else { 0.0 })
        .collect();
    let mut moved = state.sediment.clone();
    let mut carried_off = 0.0;
    for y in 0..grid.height {
        for x in 0..grid.width {
            let i = y * grid.width + x;
            let from = |d, pipe: usize| {
                grid.at(x, y, d)
                    .map_or(0.0, |j| concentration[j] * flux[j][pipe])
            };
            let out = flux[i];
            let sent = concentration[i] * (out[0] + out[1] + out[2] + out[3]);
            let received = from((-1, 0), 1) + from((1, 0), 0) + from((0, -1), 3) + from((0, 1), 2);
            moved[i] = (state.sediment[i] + p.dt * (received - sent)).max(0.0);
            carried_off += f64::from(p.dt * concentration[i] * off_map(grid, x, y, out));
        }
    }
    state.sediment = moved;
    carried_off
}
