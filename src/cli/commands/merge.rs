//! `vkerode merge`: a sweep's shard folders joined into one.

use std::path::{Path, PathBuf};

use anyhow::Result;

use vkerode::experiment::results::merge;

pub fn run(inputs: &[PathBuf], out: &Path, partial: bool, force: bool) -> Result<()> {
    let points = merge(inputs, out, partial, force)?;
    note!(
        "merged {points} points from {} folders into {}",
        inputs.len(),
        out.display()
    );
    Ok(())
}
