//! `vkerode report`: a finished sweep's points as a table, and with `--html` the whole
//! sweep as one self-contained page.

use std::path::PathBuf;

use anyhow::{Context as _, Result};

use crate::cli::args::ReportArgs;
use crate::cli::print::{begin_json, print_json, say_wrote, write_text};
use vkerode::experiment::report::baseline;
use vkerode::experiment::report::{html_report, report, report_inputs, report_rows, write_html};
use vkerode::terrain::files::{check_output_file, Overwrite};

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
