//! `vkerode report`: a finished sweep's points as a table, and with `--html` the whole
//! sweep as one self-contained page.

use std::path::PathBuf;

use anyhow::{Context as _, Result};
use clap::Args;

use crate::cli::options::{parse_margin, parse_threshold, threshold_help};
use crate::cli::print::{begin_json, print_json, say_wrote, write_text};
use vkerode::experiment::report::baseline::{self, BASELINES_DIR};
use vkerode::experiment::report::{
    html_report, over_report, over_table, report, report_inputs, report_rows, write_html,
    FRONTIER_MARGIN, MIN_OVER_VALUES,
};
use vkerode::terrain::files::{check_output_file, Overwrite};

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// The results folder (or its points.csv).
    pub results: PathBuf,
    /// Also write the table to this markdown file.
    #[arg(long, value_name = "FILE.md")]
    pub markdown: Option<PathBuf>,
    /// Also write one self-contained HTML page (no network, no scripts): provenance and
    /// clocks, the points table, a throughput chart against each numeric axis (inline
    /// SVG), the folder's pictures, the config, and verdicts against --baseline.
    #[arg(long, value_name = "FILE.html", conflicts_with = "over")]
    pub html: Option<PathBuf>,
    /// Gather the points over this setting (help from `over_help`).
    #[arg(long, value_name = "KEY", help = over_help())]
    pub over: Option<String>,
    /// With --over: the margin around the CPU reference's net change (help from `margin_help`).
    #[arg(long, value_name = "PERCENT", value_parser = parse_margin, requires = "over", help = margin_help())]
    pub margin: Option<f64>,
    /// Add to the page compare's verdict on each point against this base: a results
    /// folder (or points.csv), else the name of a baseline in --baselines.
    #[arg(long, value_name = "DIR_OR_NAME", requires = "html")]
    pub baseline: Option<PathBuf>,
    /// The folder of named baselines.
    #[arg(long, value_name = "DIR", default_value = BASELINES_DIR)]
    pub baselines: PathBuf,
    /// The noise threshold in percent (help from `threshold_help`).
    #[arg(long, value_name = "PERCENT", value_parser = parse_threshold, help = threshold_help(), requires = "baseline")]
    pub threshold: Option<f64>,
    /// Replace the --markdown and --html files if they exist (by default they are refused).
    #[arg(long)]
    pub force: bool,
    /// Print the points as one JSON document on stdout (docs/schemas/), the other lines on stderr.
    #[arg(long)]
    pub json: bool,
}

fn over_help() -> String {
    format!(
        "Gather the points over this setting (droplet_seed, as a rule): one row per group of points that differ in it alone, with the throughput's median and range over its values, the net change's mean and 95% interval, whether that interval lies within --margin of the CPU reference's (with at least {MIN_OVER_VALUES} values), and the fastest such group at its noise target"
    )
}

fn margin_help() -> String {
    format!(
        "With --over: the margin in percent around the CPU reference's net change [default: {}]",
        100.0 * FRONTIER_MARGIN
    )
}

pub fn run(args: &ReportArgs) -> Result<()> {
    begin_json(args.json);
    let base = args.baseline.as_deref().map(|given| -> Result<PathBuf> {
        // A path that exists is a set; anything else must name a saved baseline.
        if given.exists() {
            return Ok(given.to_path_buf());
        }
        let name = given.to_string_lossy();
        baseline::find(&args.baselines, &name)
            .with_context(|| format!("--baseline {name}: no such folder, nor a saved baseline"))
    });
    let base = base.transpose()?;
    // Before any work: a folder, an unwritable path or a file the report reads (or the
    // other output) fails here, and nothing is written.
    let mut reads = report_inputs(&args.results, base.as_deref());
    for (flag, path) in [("--markdown", &args.markdown), ("--html", &args.html)] {
        if let Some(path) = path {
            check_output_file(path, &reads, Overwrite::forced(args.force))
                .with_context(|| flag.to_string())?;
            reads.push(path.clone());
        }
    }
    if let Some(over) = &args.over {
        let gathered = over_report(&args.results, over, args.margin.unwrap_or(FRONTIER_MARGIN))?;
        let table = over_table(&gathered);
        if args.json {
            print_json(&gathered)?;
        } else {
            say!("{table}");
        }
        return write_text(args.markdown.as_deref(), &table);
    }
    let table = report(&args.results)?;
    if args.json {
        print_json(&report_rows(&args.results)?)?;
    } else {
        say!("{table}");
    }
    write_text(args.markdown.as_deref(), &table)?;
    if let Some(path) = &args.html {
        let page = html_report(&args.results, base.as_deref(), args.threshold)
            .with_context(|| format!("the HTML report of {}", args.results.display()))?;
        write_html(path, &page)?;
        say_wrote([path.clone()]);
    }
    Ok(())
}
