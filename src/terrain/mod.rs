//! Terrain: erosion-noise generation (GPU and CPU), heightmaps, their files and units,
//! and the pictures made of them.

mod cells;
mod change;
pub mod drainage;
pub mod files;
pub mod flats;
pub mod flood;
pub mod formats;
mod generate;
mod heightmap;
pub mod image;
pub mod metrics;
pub mod nodata;
pub mod noise;
pub mod output;
pub mod pictures;
pub mod units;

pub use cells::{Arithmetic, Cells, Values};
pub use change::Change;
pub use generate::{
    generate_on_cpu, generate_on_gpu, TerrainError, TerrainSpec, DEFAULT_RELIEF_PER_SIDE, MIN_SIZE,
};
pub use heightmap::{
    fits_fixed_point, HeightStats, Heightmap, HeightmapError, MapInfo, FIXED_POINT_LIMIT,
};
