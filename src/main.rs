//! The vkerode command line: parses the flags and hands each command to its module in
//! `cli::commands`, which calls the library and prints what it returns.

#![deny(unsafe_code)]

use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Result;
use clap::{ArgMatches, CommandFactory, FromArgMatches};

mod cli;

use cli::args::{Cli, Command};
use cli::commands;
use cli::commands::erode::ErodeArgs;
use cli::ExitStatus;

/// A command that runs longer than this says how long it took.
const TIME_TOLD_AFTER: Duration = Duration::from_secs(5);

fn main() -> ExitCode {
    let started = Instant::now();
    // The matches too, for what was given rather than defaulted.
    let matches = Cli::command().get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let command = matches.subcommand_name().unwrap_or_default().to_string();
    match run(cli, &matches) {
        Ok(()) => {
            let took = started.elapsed();
            if took > TIME_TOLD_AFTER {
                cli::tell_time(&command, took);
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e:#}");
            let code = e.downcast_ref::<ExitStatus>().map_or(1, |s| s.code);
            ExitCode::from(code)
        }
    }
}

fn run(cli: Cli, matches: &ArgMatches) -> Result<()> {
    let verbosity = cli.verbosity.level();
    cli::set_verbosity(verbosity);
    match cli.command {
        Command::Devices(args) => commands::devices::run(&args),
        Command::Terrain(args) => commands::terrain::run(&args),
        Command::Erode(mut args) => {
            args.given = matches
                .subcommand_matches("erode")
                .map(ErodeArgs::given_in)
                .unwrap_or_default();
            commands::erode::run(&args.gpu.options(), &args)
        }
        Command::Convert(args) => commands::convert::run(&args),
        Command::Sweep(args) => commands::sweep::run(&args.gpu.options(), &args, verbosity),
        Command::Equivalence(args) => {
            let args = match matches.subcommand_matches("equivalence") {
                Some(m) => args.with_given(m),
                None => *args,
            };
            commands::equivalence::run(&args.gpu.options(), &args)
        }
        Command::Compare(args) => commands::compare::run(&args),
        Command::Report(args) => commands::report::run(&args),
        Command::Reproduce(args) => commands::reproduce::run(&args.gpu.options(), &args, verbosity),
        Command::Peak(args) => commands::peak::run(&args),
        Command::Strategies(args) => commands::strategies::run(&args),
        Command::Kernels(args) => commands::kernels::run(&args.gpu.options(), &args),
        Command::Plot(args) => commands::plot::run(args),
        Command::Maps(args) => commands::maps::run(&args),
        Command::Merge(args) => commands::merge::run(&args),
        Command::Completions(args) => commands::completions::run(&mut Cli::command(), &args),
        Command::Man(args) => commands::docs::man(&Cli::command(), &args),
        Command::Docs(args) => commands::docs::run(&Cli::command(), &args),
    }
}
