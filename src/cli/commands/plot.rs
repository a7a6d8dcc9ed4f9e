//! `vkerode plot`: a chart from points.csv files.

use anyhow::{Context as _, Result};

use crate::cli::args::PlotArgs;
use crate::cli::print::say_wrote;
use vkerode::experiment::report::plot::plot;
use vkerode::terrain::files::{check_overwrite, Overwrite};

pub fn run(args: PlotArgs) -> Result<()> {
    let overwrite = Overwrite::forced(args.force);
    let request = args.request();
    // The two files plot writes: NAME.png and NAME.svg.
    for file in ["png", "svg"].map(|ext| request.out.with_extension(ext)) {
        check_overwrite(&file, overwrite).context("--out")?;
    }
    let plotted = plot(&request)?;
    if !plotted.left_out.is_empty() {
        eprintln!(
            "warning: left out {} row(s) with a non-finite or absurd value: {}",
            plotted.left_out.len(),
            plotted.left_out.join(", ")
        );
    }
    say_wrote(plotted.files);
    Ok(())
}
