//! `vkerode terrain`: erosion-noise terrain written as a heightmap file.

use std::path::Path;

use anyhow::Result;

use super::convert::{check_output, output_format, write_heightmap};
use crate::cli::open_device;
use vkerode::erosion::settings::NoiseSettings;
use vkerode::gpu::ContextOptions;
use vkerode::terrain::files::Overwrite;
use vkerode::terrain::formats::{Dem, HeightFormat};
use vkerode::terrain::image::CellSize;
use vkerode::terrain::metrics::mean_slope;
use vkerode::terrain::{generate_on_cpu, generate_on_gpu};

pub fn run(
    options: &ContextOptions,
    noise: &NoiseSettings,
    out: &Path,
    format: Option<HeightFormat>,
    cpu: bool,
    force: bool,
) -> Result<()> {
    let format = output_format(out, format)?;
    check_output(out, &[], Overwrite::forced(force))?;
    let spec = noise.spec();
    let heights = if cpu {
        generate_on_cpu(&spec)?
    } else {
        generate_on_gpu(&open_device(options)?, &spec)?
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
