//! `vkerode compare`: two sweeps point by point.

use std::path::Path;

use anyhow::Result;

use crate::cli::print::write_text;
use crate::cli::ExitStatus;
use vkerode::experiment::report::compare;

/// The exit status of `--fail-slower` when a point is slower.
const SLOWER: u8 = 3;

pub fn run(base: &Path, new: &Path, out: Option<&Path>, fail_slower: Option<f64>) -> Result<()> {
    let compared = compare(base, new)?;
    let table = compared.markdown(base, new);
    say!("{table}");
    write_text(out, &table)?;
    let Some(percent) = fail_slower else {
        return Ok(());
    };
    let slower = compared.slower_than(percent);
    if slower.is_empty() {
        return Ok(());
    }
    let labels: Vec<&str> = slower.iter().map(|c| c.label.as_str()).collect();
    Err(ExitStatus {
        code: SLOWER,
        message: format!(
            "{} point(s) slower than the base by more than {percent}%: {}",
            slower.len(),
            labels.join("; ")
        ),
    }
    .into())
}
