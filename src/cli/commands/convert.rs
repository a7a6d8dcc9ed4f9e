//! `vkerode convert`: a heightmap from one format into another.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};

use crate::cli::args::InputArgs;
use crate::cli::print::say_wrote;
use vkerode::terrain::files::{check_output_file, Overwrite};
use vkerode::terrain::formats::{export_warning, with_companions, write_dem, Dem, HeightFormat};
use vkerode::terrain::units::height_label;

pub fn run(
    input: &InputArgs,
    output: &Path,
    format: Option<HeightFormat>,
    force: bool,
) -> Result<()> {
    let format = output_format(output, format)?;
    check_output(
        output,
        &with_companions(&input.path),
        Overwrite::forced(force),
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
