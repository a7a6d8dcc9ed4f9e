//! `vkerode convert`: a heightmap from one format into another.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use clap::Args;

use crate::cli::options::InputLayout;
use crate::cli::print::say_wrote;
use vkerode::terrain::files::{check_output_file, Overwrite};
use vkerode::terrain::formats::{export_warning, with_companions, write_dem, Dem, HeightFormat};
use vkerode::terrain::units::height_label;

/// `vkerode convert`'s flags.
#[derive(Args)]
pub struct ConvertArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Output heightmap.
    pub output: PathBuf,
    /// Output format. Default: from the output's extension.
    #[arg(long, value_enum)]
    pub format: Option<HeightFormat>,
    /// Replace OUTPUT (and the files written beside it) if it exists (by default
    /// it is refused).
    #[arg(long)]
    pub force: bool,
}

/// How to read a heightmap file.
#[derive(Args)]
pub struct InputArgs {
    /// Heightmap file: single-band TIFF/GeoTIFF (float32, float64, 8, 16 or 32-bit
    /// integers), grayscale PNG (8 or 16 bits), OpenEXR, one-channel PFM, r16, or raw
    /// little-endian float32 (.raw, or Gaea's square .r32).
    #[arg(value_name = "INPUT")]
    pub path: PathBuf,
    #[command(flatten)]
    pub layout: InputLayout,
}

impl InputArgs {
    /// The file as `convert` writes it: a --cell-size also goes into its georeferencing.
    pub fn read(&self) -> Result<Dem> {
        let mut dem = self.layout.read(&self.path)?;
        if let Some(cell_size) = self.layout.cell_size {
            dem.geo = Some(dem.geo_with_cell_size(cell_size));
        }
        Ok(dem)
    }
}

pub fn run(args: &ConvertArgs) -> Result<()> {
    let (input, output) = (&args.input, &args.output);
    let format = output_format(output, args.format)?;
    check_output(
        output,
        &with_companions(&input.path),
        Overwrite::forced(args.force),
    )?;
    write_heightmap(output, format, &input.read()?)
}

/// Checks, before any work, that the heightmap `output` and the files beside it can be
/// written, replace none of `reads`, and replace an existing file only as `overwrite` says.
pub fn check_output(output: &Path, reads: &[PathBuf], overwrite: Overwrite) -> Result<()> {
    check_output_file(output, reads, overwrite).context("OUTPUT")?;
    // The files written beside it too: a folder, FIFO or link there would otherwise
    // be found only after the data is replaced.
    for companion in &with_companions(output)[1..] {
        check_output_file(companion, reads, overwrite).context("OUTPUT")?;
    }
    Ok(())
}

/// The format asked for, or the one the file name implies.
pub fn output_format(path: &Path, format: Option<HeightFormat>) -> Result<HeightFormat> {
    format
        .or_else(|| HeightFormat::from_path(path))
        .with_context(|| {
            format!(
                "{}: cannot tell the format from the name; use .tif, .png, .raw, .r32, .r16 or .exr, or --format (PFM is read only)",
                path.display()
            )
        })
}

/// Writes `dem` and says what it holds.
pub fn write_heightmap(out: &Path, format: HeightFormat, dem: &Dem) -> Result<()> {
    say_wrote(write_dem(out, format, dem)?);
    if let Some(warning) = export_warning(dem, format) {
        eprintln!("warning: {warning}");
    }
    let stats = dem.heights.stats();
    let units = match height_label(&dem.units) {
        "" => String::new(),
        label => format!(" {label}"),
    };
    say!(
        "{} x {} cells, heights {} to {}{units}, {} cells with no data",
        dem.heights.width(),
        dem.heights.height(),
        stats.min,
        stats.max,
        dem.missing_cells()
    );
    Ok(())
}
