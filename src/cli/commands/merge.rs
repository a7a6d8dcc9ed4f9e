//! `vkerode merge`: a sweep's shard folders joined into one.

use std::path::{Path, PathBuf};

use anyhow::Result;

use vkerode::experiment::results::merge;

pub fn run(inputs: &[PathBuf], out: &Path, partial: bool, force: bool) -> Result<()> {
    let merged = merge(inputs, out, partial, force)?;
    for warning in &merged.warnings {
        eprintln!("warning: {warning}");
    }
    note!(
        "merged {} points from {} folders into {}",
        merged.points,
        inputs.len(),
        out.display()
    );
    Ok(())
}
