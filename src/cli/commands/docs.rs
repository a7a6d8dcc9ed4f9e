//! `vkerode docs`: the generated references, written into a folder.

use std::path::Path;

use anyhow::{Context as _, Result};

use crate::cli::print::say_wrote;
use vkerode::reference::references;
use vkerode::terrain::files::write_atomically;

pub fn run(cli: &clap::Command, out: &Path, experiments: &Path) -> Result<()> {
    std::fs::create_dir_all(out).with_context(|| format!("--out {}", out.display()))?;
    let mut written = Vec::new();
    for reference in references(cli, experiments)? {
        let path = out.join(&reference.file);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).with_context(|| format!("--out {}", dir.display()))?;
        }
        write_atomically(&path, |file| {
            std::io::Write::write_all(file, reference.text.as_bytes())
        })?;
        written.push(path);
    }
    say_wrote(written);
    Ok(())
}
