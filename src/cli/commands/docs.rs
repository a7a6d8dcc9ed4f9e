//! `vkerode docs`: the generated references, written into a folder.

use std::path::Path;

use anyhow::{Context as _, Result};

use crate::cli::print::say_wrote;
use vkerode::reference::{man_pages, references};
use vkerode::terrain::files::{check_overwrite, write_atomically, Overwrite};

pub fn run(cli: &clap::Command, out: &Path, experiments: &Path, force: bool) -> Result<()> {
    let references = references(cli, experiments)?;
    for reference in &references {
        check_overwrite(&out.join(&reference.file), Overwrite::forced(force)).context("--out")?;
    }
    std::fs::create_dir_all(out).with_context(|| format!("--out {}", out.display()))?;
    let mut written = Vec::new();
    for reference in references {
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

/// Prints vkerode(1), or `command`'s page.
pub fn man(cli: &clap::Command, command: Option<&str>) -> Result<()> {
    let name = match command {
        Some(command) => format!("vkerode-{command}.1"),
        None => "vkerode.1".into(),
    };
    let pages = man_pages(cli);
    let Some(page) = pages
        .iter()
        .find(|page| page.file.ends_with(&format!("/{name}")))
    else {
        let commands: Vec<String> = cli
            .get_subcommands()
            .map(|c| c.get_name().to_string())
            .filter(|c| c != "help")
            .collect();
        anyhow::bail!(
            "no command {:?}; the commands are {}",
            command.unwrap_or_default(),
            commands.join(", ")
        );
    };
    print!("{}", page.text);
    Ok(())
}
