//! `vkerode merge`: a sweep's shard folders joined into one.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use vkerode::experiment::results::merge;

/// `vkerode merge`'s flags.
#[derive(Args)]
pub struct MergeArgs {
    /// Shard folders (each with meta.json, points.csv, samples.csv).
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// Folder for the merged results.
    #[arg(long)]
    pub out: PathBuf,
    /// Merge even when the shards do not cover every point of the sweep; meta.json
    /// then lists the missing points.
    #[arg(long)]
    pub partial: bool,
    /// Replace the folder whole if it already holds files (by default it is refused).
    #[arg(long)]
    pub force: bool,
}

pub fn run(args: &MergeArgs) -> Result<()> {
    let (inputs, out) = (&args.inputs, &args.out);
    let merged = merge(inputs, out, args.partial, args.force)?;
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
