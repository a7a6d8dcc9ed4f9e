//! Terrain: erosion-noise generation (GPU and CPU), heightmaps and their pictures.

pub mod drainage;
pub mod files;
mod generate;
mod heightmap;
pub mod image;
pub mod noise;

pub use generate::{
    generate_on_cpu, generate_on_gpu, TerrainError, TerrainSpec, DEFAULT_RELIEF_PER_SIDE, MIN_SIZE,
};
pub use heightmap::{HeightStats, Heightmap, HeightmapError, FIXED_POINT_LIMIT};
