//! `vkerode report`: a finished sweep's points as a table, and with `--html` the whole
//! sweep as one self-contained page.

use std::path::PathBuf;

use anyhow::{Context as _, Result};

use crate::cli::args::ReportArgs;
use crate::cli::print::{begin_json, print_json, say_wrote, write_text};
use vkerode::experiment::report::baseline;
use vkerode::experiment::report::{html_report, report, report_rows, write_html};
use vkerode::terrain::files::check_writable;

pub fn run(args: &ReportArgs) -> Result<()> {
    begin_json(args.json);
    // Before any work: a folder or an unwritable path fails here, and nothing is written.
    for (flag, path) in [("--markdown", &args.markdown), ("--html", &args.html)] {
        if let Some(path) = path {
            check_writable(path).with_context(|| flag.to_string())?;
        }
    }
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
