//! `vkerode plot`: a chart from points.csv files.

use std::path::PathBuf;

use anyhow::{anyhow, Result};
use clap::Args;

use crate::cli::print::say_wrote;
use vkerode::experiment::report::plot::{self, plot, PlotRequest, RATE};
use vkerode::terrain::files::Overwrite;

#[derive(Args)]
pub struct PlotArgs {
    /// points.csv files; several devices' files can share one chart.
    #[arg(required = true)]
    pub csvs: Vec<PathBuf>,
    /// Column on the x axis.
    #[arg(long)]
    pub x: String,
    /// Metric on the y axis: a points.csv column, or steps_per_s for each row's rate in
    /// its strategy's unit (droplet_steps_per_s or cell_steps_per_s).
    #[arg(long, default_value = RATE)]
    pub y: String,
    /// Column whose values each get their own series.
    #[arg(long)]
    pub series: Option<String>,
    /// Only rows where COLUMN equals VALUE ("phases=4"); may be repeated.
    #[arg(long = "where", value_name = "COLUMN=VALUE", value_parser = parse_filter)]
    pub filters: Vec<(String, String)>,
    /// Output folder: NAME.png and NAME.svg are written into it (other files in it stay).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// The charts' file name without extension. Default: Y-by-X, as
    /// steps_per_s-by-workgroup.
    #[arg(long, value_name = "STEM", value_parser = parse_file_stem)]
    pub name: Option<String>,
    /// Replace NAME.png and NAME.svg if either exists (by default they are refused).
    #[arg(long)]
    pub force: bool,
}

impl PlotArgs {
    pub fn request(self) -> PlotRequest {
        let name = self
            .name
            .unwrap_or_else(|| plot::default_name(&self.y, &self.x));
        PlotRequest {
            out: self.out.join(name),
            csvs: self.csvs,
            x: self.x,
            y: self.y,
            series: self.series,
            filters: self.filters,
            overwrite: Overwrite::forced(self.force),
        }
    }
}

/// `plot --name`: one file name, with no folder (--out's) and no extension (.png and
/// .svg are added).
fn parse_file_stem(text: &str) -> Result<String> {
    match !text.is_empty() && !text.contains(['/', '\\', '.']) {
        true => Ok(text.to_string()),
        false => Err(anyhow!(
            "{text:?} is not a file name without folder or extension (--out gives the folder; .png and .svg are added)"
        )),
    }
}

/// `plot --where`: COLUMN=VALUE.
fn parse_filter(text: &str) -> Result<(String, String)> {
    text.split_once('=')
        .map(|(c, v)| (c.trim().to_string(), v.trim().to_string()))
        .ok_or_else(|| anyhow!("{text:?} is not COLUMN=VALUE"))
}

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
