//! vkerode: a Vulkan compute research harness for GPU hydraulic erosion. Its layers,
//! each using only those above it in this list (docs/ARCHITECTURE.md):
//!
//! - [`gpu`]: the only place for `unsafe` and raw ash (device, buffers, pipelines,
//!   commands, barriers, timing).
//! - [`hash`], [`table`]: hashes and named result columns every layer shares.
//! - [`stats`]: quantiles, intervals, tests and the one verdict every study uses.
//! - [`terrain`]: erosion-noise generation, heightmaps, their files, units and
//!   pictures, and the change between two states of a map.
//! - [`erosion`]: the strategies (droplets, pipes, thermal) behind one interface, their
//!   settings and rules, their kernels' drivers and CPU references.
//! - [`probes`]: the device's ceilings (atomic, walk, copy), its caches, the droplet
//!   kernels' compiler statistics.
//! - [`experiment`]: the core of every study: one run of any strategy, sweeps, results
//!   folders and reports.
//! - [`studies`]: the studies built on the core: the speed variants' equivalence, the
//!   strategies compared by dose, the paper's claims judged on a device.
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
pub mod progress;
pub mod reference;
pub mod stats;
pub mod studies;
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

/// An I/O error with the path it happened at: how every layer's error names a file.
#[derive(Debug, thiserror::Error)]
#[error("{}", path.display())]
pub struct PathIoError {
    pub path: std::path::PathBuf,
    #[source]
    pub source: std::io::Error,
}

impl PathIoError {
    pub fn new(path: &std::path::Path, source: std::io::Error) -> Self {
        Self {
            path: path.to_path_buf(),
            source,
        }
    }

    /// For `map_err`: the failure of an operation on `path`.
    pub fn at(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> Self + '_ {
        move |source| Self::new(path, source)
    }
}

/// Refuses `path` unless it is a regular file (after symlinks), before anything opens
/// it: a FIFO would block the read forever, and a device such as /dev/zero would be
/// read until memory runs out. The error goes where a failed read's would.
pub fn check_regular_file(path: &std::path::Path) -> std::io::Result<()> {
    let kind = std::fs::metadata(path)?.file_type();
    if kind.is_file() {
        return Ok(());
    }
    use std::os::unix::fs::FileTypeExt;
    let what = match () {
        _ if kind.is_dir() => "a folder",
        _ if kind.is_fifo() => "a FIFO",
        _ if kind.is_socket() => "a socket",
        _ if kind.is_char_device() || kind.is_block_device() => "a device",
        _ => "something else",
    };
    Err(std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!("it is {what}, not a regular file"),
    ))
}

/// The text of the input file `path`, once [`check_regular_file`] lets it be read.
pub fn read_input_text(path: &std::path::Path) -> std::io::Result<String> {
    check_regular_file(path)?;
    std::fs::read_to_string(path)
}

/// A number for a message: four significant digits, in exponent form where fixed
/// decimals would be all zeros or very long (`1e-30` as `1.000e-30`, never `0.000000`).
pub fn readable_number(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 || !a.is_finite() {
        return v.to_string();
    }
    if !(1e-3..1e6).contains(&a) {
        return format!("{v:.3e}");
    }
    let decimals = (3 - a.log10().floor() as i32).max(0) as usize;
    let fixed = format!("{v:.decimals$}");
    match fixed.contains('.') {
        true => fixed.trim_end_matches('0').trim_end_matches('.').into(),
        false => fixed,
    }
}

/// This machine's name, as locks and provenance record it.
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .or_else(|_| std::env::var("HOSTNAME"))
        .unwrap_or_else(|_| "unknown".into())
}

#[cfg(test)]
mod tests {
    #[test]
    fn readable_numbers_keep_their_digits_at_any_magnitude() {
        let r = super::readable_number;
        assert_eq!(r(1e-30), "1.000e-30");
        assert_eq!(r(-2.5e12), "-2.500e12");
        assert_eq!(r(1072.66), "1073");
        assert_eq!(r(0.0123456), "0.01235");
        assert_eq!(r(3.0), "3");
        assert_eq!(r(0.0), "0");
    }
}
