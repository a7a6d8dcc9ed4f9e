//! `vkerode completions`: a shell completion script.

use anyhow::Result;
use clap::Args;

/// `vkerode completions`'s flags.
#[derive(Args)]
pub struct CompletionsArgs {
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// Prints the completion script of `cli` for the shell `args` names.
pub fn run(cli: &mut clap::Command, args: &CompletionsArgs) -> Result<()> {
    clap_complete::generate(args.shell, cli, "vkerode", &mut std::io::stdout());
    Ok(())
}
