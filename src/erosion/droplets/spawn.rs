//! Where droplets start: the paper's global random spawning, or tiled spawning, where
//! each workgroup spawns all its droplets inside one T x T tile, optionally in
//! checkerboard phases so that concurrently running tiles are apart.

use serde::Serialize;

use super::error::ParamError;
use crate::erosion::choice::setting_choice;
use crate::hash::pcg_hash;

setting_choice! {
    pub enum SpawnMode {
        /// The paper's getRandomPosition: uniform over the whole map.
        #[default]
        Global,
        /// Each workgroup's droplets uniform over one tile.
        Tiled,
    }
}

setting_choice! {
    /// Which tile workgroup k (of a colour) gets.
    pub enum TileOrder {
        /// Row by row: consecutive workgroups in neighbouring tiles.
        #[default]
        Linear,
        /// Z-order: consecutive workgroups in a compact block of tiles.
        Morton,
        /// Hashed: consecutive workgroups far apart.
        Scattered,
        /// Row by row, each tile getting a run of consecutive workgroups: the droplets in
        /// flight sweep across the map as a narrow band, a small footprint.
        Sweep,
    }
}

impl TileOrder {
    fn code(self) -> u32 {
        match self {
            TileOrder::Linear => 0,
            TileOrder::Morton => 1,
            TileOrder::Scattered => 2,
            TileOrder::Sweep => 3,
        }
    }
}

/// Where droplet `id` starts on a `width` x `height` map: uniform over
/// [1, width-2) x [1, height-2), as `getRandomPosition` computes it.
pub fn droplet_start(id: u32, seed: u32, width: u32, height: u32) -> (f32, f32) {
    const INV_2_POW_32: f32 = 1.0 / 4294967296.0;
    let a = pcg_hash(id ^ seed.wrapping_mul(0x9E3779B9));
    let b = pcg_hash(a);
    (
        1.0 + a as f32 * INV_2_POW_32 * (width as i32 - 3) as f32,
        1.0 + b as f32 * INV_2_POW_32 * (height as i32 - 3) as f32,
    )
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Spawn {
    pub mode: SpawnMode,
    /// Tile side in cells (tiled only).
    pub tile: u32,
    pub order: TileOrder,
    /// 1, 4 or 9 checkerboard colours, each its own dispatch (tiled only).
    pub phases: u32,
}

impl Default for Spawn {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// The push-constant fields of tiled spawning.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpawnConstants {
    pub tile_size: u32,
    pub tile_order: u32,
    pub phase_stride: u32,
}

impl Spawn {
    pub const DEFAULT: Spawn = Spawn {
        mode: SpawnMode::Global,
        tile: 32,
        order: TileOrder::Linear,
        phases: 1,
    };

    pub fn validate(&self) -> Result<(), ParamError> {
        let refuse = |name, expected, value: u32| {
            Err(ParamError {
                name,
                expected,
                value: value.to_string(),
            })
        };
        if !matches!(self.phases, 1 | 4 | 9) {
            return refuse("phases", "1, 4 or 9", self.phases);
        }
        if self.mode == SpawnMode::Global && self.phases != 1 {
            return refuse(
                "phases",
                "1 with global spawning (phases colour tiles)",
                self.phases,
            );
        }
        if self.tile < 2 {
            return refuse("tile", "at least 2 cells", self.tile);
        }
        Ok(())
    }

    /// Whether a `width` x `height` map has a tile of every colour: with fewer tiles a
    /// side than colours a side, a colour's droplets would have nowhere to spawn.
    pub fn check_map(&self, width: u32, height: u32) -> Result<(), ParamError> {
        if self.mode == SpawnMode::Global {
            return Ok(());
        }
        let stride = self.stride();
        let tiles = width.div_ceil(self.tile).min(height.div_ceil(self.tile));
        if tiles < stride {
            return Err(ParamError {
                name: "tile",
                expected: if stride == 2 {
                    "small enough for 2 tiles along the map's shorter side (each of 4 phases needs a tile)"
                } else {
                    "small enough for 3 tiles along the map's shorter side (each of 9 phases needs a tile)"
                },
                value: format!("{} on a {width} x {height} map", self.tile),
            });
        }
        Ok(())
    }

    /// Checkerboard period in tiles: 1, 2 or 3.
    pub fn stride(&self) -> u32 {
        match self.phases {
            4 => 2,
            9 => 3,
            _ => 1,
        }
    }

    pub fn constants(&self) -> SpawnConstants {
        SpawnConstants {
            tile_size: self.tile,
            tile_order: self.order.code(),
            phase_stride: self.stride(),
        }
    }

    /// The tile (in tile coordinates) of workgroup `group` of colour `phase` on a
    /// `width` x `height` map, as glsl's tileOf computes it; the colour has
    /// `colour_groups` workgroups in all. `None` where the colour has no tile, which
    /// [`Spawn::check_map`] refuses before any run.
    pub fn tile_of(
        &self,
        width: u32,
        height: u32,
        phase: u32,
        group: u32,
        colour_groups: u32,
    ) -> Option<(u32, u32)> {
        let stride = self.stride();
        let tiles_x = width.div_ceil(self.tile);
        let tiles_y = height.div_ceil(self.tile);
        let (px, py) = (phase % stride, phase / stride);
        let cx = tiles_x.checked_sub(px)?.div_ceil(stride);
        let cy = tiles_y.checked_sub(py)?.div_ceil(stride);
        let count = cx * cy;
        if count == 0 {
            return None;
        }
        let k = group % count;
        let (tx, ty) = match self.order {
            TileOrder::Morton => (compact_bits(k) % cx, compact_bits(k >> 1) % cy),
            TileOrder::Scattered => {
                let s = pcg_hash(k) % count;
                (s % cx, s / cx)
            }
            TileOrder::Linear => (k % cx, k / cx),
            TileOrder::Sweep => {
                let share = (group as f32 + 0.5) / colour_groups as f32;
                let s = ((share * count as f32) as u32).min(count - 1);
                (s % cx, s / cx)
            }
        };
        Some((px + tx * stride, py + ty * stride))
    }
}

fn compact_bits(v: u32) -> u32 {
    let mut v = v & 0x5555_5555;
    v = (v | (v >> 1)) & 0x3333_3333;
    v = (v | (v >> 2)) & 0x0F0F_0F0F;
    v = (v | (v >> 4)) & 0x00FF_00FF;
    (v | (v >> 8)) & 0x0000_FFFF
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiled(order: TileOrder, phases: u32) -> Spawn {
        Spawn {
            mode: SpawnMode::Tiled,
            tile: 16,
            order,
            phases,
        }
    }

    #[test]
    fn linear_and_morton_orders_visit_every_tile_of_a_square_grid_once() {
        for order in [TileOrder::Linear, TileOrder::Morton] {
            let spawn = tiled(order, 1);
            let mut seen: Vec<(u32, u32)> = (0..16)
                .map(|g| spawn.tile_of(64, 64, 0, g, 16).unwrap())
                .collect();
            seen.sort();
            seen.dedup();
            assert_eq!(seen.len(), 16, "{order:?}");
        }
        let morton = tiled(TileOrder::Morton, 1);
        let first_four: Vec<_> = (0..4)
            .map(|g| morton.tile_of(64, 64, 0, g, 16).unwrap())
            .collect();
        assert_eq!(first_four, [(0, 0), (1, 0), (0, 1), (1, 1)]);
    }

    #[test]
    fn the_sweep_order_gives_each_tile_a_run_of_consecutive_workgroups() {
        let spawn = tiled(TileOrder::Sweep, 1);
        let tiles: Vec<_> = (0..64)
            .map(|g| spawn.tile_of(64, 64, 0, g, 64).unwrap())
            .collect();
        for (g, tile) in tiles.iter().enumerate() {
            let k = g as u32 / 4;
            assert_eq!(*tile, (k % 4, k / 4), "group {g}");
        }
    }

    #[test]
    fn a_colour_only_gets_tiles_of_its_colour() {
        let spawn = tiled(TileOrder::Scattered, 9);
        for phase in 0..9 {
            for group in 0..50 {
                let (tx, ty) = spawn.tile_of(200, 130, phase, group, 50).unwrap();
                assert_eq!((tx % 3, ty % 3), (phase % 3, phase / 3));
                assert!(tx < 200u32.div_ceil(16) && ty < 130u32.div_ceil(16));
            }
        }
    }

    #[test]
    fn phases_need_tiles() {
        let mut spawn = Spawn {
            phases: 4,
            ..Spawn::default()
        };
        assert_eq!(spawn.validate().unwrap_err().name, "phases");
        spawn.mode = SpawnMode::Tiled;
        assert!(spawn.validate().is_ok());
        spawn.phases = 5;
        assert!(spawn.validate().is_err());
    }

    #[test]
    fn every_colour_needs_a_tile_of_the_map() {
        let spawn = Spawn {
            tile: 64,
            ..tiled(TileOrder::Linear, 4)
        };
        assert_eq!(spawn.check_map(64, 64).unwrap_err().name, "tile");
        assert_eq!(spawn.tile_of(64, 64, 1, 0, 1), None);
        assert!(spawn.check_map(128, 128).is_ok());
        assert!(Spawn {
            tile: 43,
            ..tiled(TileOrder::Linear, 9)
        }
        .check_map(128, 128)
        .is_ok());
        assert!(Spawn {
            tile: 64,
            ..tiled(TileOrder::Linear, 9)
        }
        .check_map(128, 128)
        .is_err());
        assert!(Spawn { phases: 1, ..spawn }.check_map(64, 64).is_ok());
    }

    #[test]
    fn droplets_start_inside_the_border() {
        for id in 0..10_000 {
            let (x, y) = droplet_start(id, 7, 16, 9);
            assert!(
                (1.0..=14.0).contains(&x) && (1.0..=7.0).contains(&y),
                "{x},{y}"
            );
        }
    }
}
