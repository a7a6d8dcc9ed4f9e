//! vkerode: a Vulkan compute research harness for GPU hydraulic erosion.
//!
//! - [`gpu`]: the only place for `unsafe` and raw ash (device, buffers, pipelines,
//!   commands, barriers, timing).
//! - [`erosion`]: the paper's droplet kernel's driver and its CPU reference.
//! - [`terrain`]: erosion-noise generation, heightmaps and pictures.
//! - [`experiment`]: one erosion run end to end, with its report.
//! - [`fuzzing`]: the fuzz targets' ways into the file and config readers.

#![deny(unsafe_code)]

pub mod erosion;
pub mod experiment;
pub mod fuzzing;
#[allow(unsafe_code)]
pub mod gpu;
pub mod terrain;
