//! `vkerode terrain`: erosion-noise terrain written as a heightmap file.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use super::convert::{check_output, output_format, write_heightmap};
use crate::cli::open_device;
use crate::cli::options::GpuArgs;
use vkerode::erosion::settings::NoiseSettings;
use vkerode::terrain::files::Overwrite;
use vkerode::terrain::formats::{Dem, HeightFormat};
use vkerode::terrain::image::CellSize;
use vkerode::terrain::metrics::mean_slope;
use vkerode::terrain::{generate_on_cpu, generate_on_gpu};

/// `vkerode terrain`'s flags.
#[derive(Args)]
pub struct TerrainArgs {
    #[command(flatten)]
    pub terrain: NoiseSettings,
    /// Output heightmap (.tif, .png or .raw; see --format).
    pub output: PathBuf,
    /// Output format. Default: from the file name's extension.
    #[arg(long, value_enum)]
    pub format: Option<HeightFormat>,
    /// Use the CPU port instead of the GPU shader.
    #[arg(long)]
    pub cpu: bool,
    /// Replace OUTPUT (and the files written beside it) if it exists (by default
    /// it is refused).
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub gpu: GpuArgs,
}

pub fn run(args: &TerrainArgs) -> Result<()> {
    let out = &args.output;
    let format = output_format(out, args.format)?;
    check_output(out, &[], Overwrite::forced(args.force))?;
    let spec = args.terrain.spec();
    let heights = if args.cpu {
        generate_on_cpu(&spec)?
    } else {
        generate_on_gpu(&open_device(&args.gpu.options())?, &spec)?
    };
    say!(
        "mean slope {:.3} per cell",
        mean_slope(&heights, CellSize::UNIT)
    );
    let dem = Dem {
        geo: None,
        heights,
        nodata: None,
        units: "cells".into(),
        cell_size: Some(CellSize::default()),
    };
    write_heightmap(out, format, &dem)
}
