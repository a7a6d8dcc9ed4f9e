//! vkerode: a Vulkan compute research harness for GPU hydraulic erosion. Its layers,
//! each using only those above it in this list (docs/ARCHITECTURE.md):
//!
//! - [`gpu`]: the only place for `unsafe` and raw ash (device, buffers, pipelines,
//!   commands, barriers, timing).
//! - [`hash`], [`table`]: hashes and named result columns every layer shares.
//! - [`terrain`]: erosion-noise generation, heightmaps, their files, units and
//!   pictures, and the change between two states of a map.
//! - [`erosion`]: the strategies (droplets, pipes, thermal) behind one interface, their
//!   settings and rules, their kernels' drivers and CPU references.
//! - [`probes`]: the device's ceilings (atomic, walk, copy), its caches, the droplet
//!   kernels' compiler statistics.
//! - [`experiment`]: one run of any strategy, sweeps, results folders and reports.
//! - [`reference`]: the generated references of docs/.
//! - [`fuzzing`]: the fuzz targets' ways into the file and config readers.

#![deny(unsafe_code)]

pub mod erosion;
pub mod experiment;
pub mod fuzzing;
#[allow(unsafe_code)]
pub mod gpu;
pub mod hash;
pub mod probes;
pub mod reference;
pub mod table;
pub mod terrain;

/// An error and its sources, one after another, as a line for a file or a warning.
pub fn error_chain(error: &dyn std::error::Error) -> String {
    let mut line = error.to_string();
    let mut source = error.source();
    while let Some(e) = source {
        line.push_str(&format!(": {e}"));
        source = e.source();
    }
    line
}

/// This machine's name, as locks and provenance record it.
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .or_else(|_| std::env::var("HOSTNAME"))
        .unwrap_or_else(|_| "unknown".into())
}
