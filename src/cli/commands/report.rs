//! `vkerode report`: a finished sweep's points as a table.

use std::path::Path;

use anyhow::Result;

use crate::cli::print::write_text;
use vkerode::experiment::report::report;

pub fn run(results: &Path, out: Option<&Path>) -> Result<()> {
    let table = report(results)?;
    say!("{table}");
    write_text(out, &table)
}
