//! `vkerode plot`: a chart from points.csv files.

use anyhow::Result;

use crate::cli::args::PlotArgs;
use crate::cli::print::say_wrote;
use vkerode::experiment::report::plot::plot;

pub fn run(args: PlotArgs) -> Result<()> {
    let plotted = plot(&args.request())?;
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
