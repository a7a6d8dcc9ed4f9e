//! `vkerode docs`: the generated references, written into a folder.

use std::path::PathBuf;

use anyhow::{Context as _, Result};
use clap::Args;

use crate::cli::print::say_wrote;
use vkerode::reference::{man_pages, references};
use vkerode::terrain::files::{check_overwrite, write_atomically, Overwrite};

/// `vkerode docs`'s flags.
#[derive(Args)]
pub struct DocsArgs {
    /// The folder (docs/ for the committed references).
    #[arg(long)]
    pub out: PathBuf,
    /// The experiment configs to index.
    #[arg(long, default_value = "experiments")]
    pub experiments: PathBuf,
    /// Replace the references in --out if they exist (by default they are refused).
    #[arg(long)]
    pub force: bool,
}

/// `vkerode man`'s flags.
#[derive(Args)]
pub struct ManArgs {
    /// The command whose page to print. Default: vkerode(1).
    pub command: Option<String>,
}

pub fn run(cli: &clap::Command, args: &DocsArgs) -> Result<()> {
    let out = &args.out;
    let references = references(cli, &args.experiments)?;
    for reference in &references {
        check_overwrite(&out.join(&reference.file), Overwrite::forced(args.force))
            .context("--out")?;
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

/// Prints vkerode(1), or the page of the command `args` names.
pub fn man(cli: &clap::Command, args: &ManArgs) -> Result<()> {
    let name = match args.command.as_deref() {
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
            args.command.as_deref().unwrap_or_default(),
            commands.join(", ")
        );
    };
    print!("{}", page.text);
    Ok(())
}
