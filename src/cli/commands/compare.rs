//! `vkerode compare`: two sweeps point by point, or one against a named baseline; and
//! `--save-baseline`, which keeps a set as one.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};

use crate::cli::args::CompareArgs;
use crate::cli::print::{begin_json, print_json, say_wrote, write_text};
use crate::cli::ExitStatus;
use vkerode::experiment::report::baseline::{self, PendingBaseline};
use vkerode::experiment::report::{compare, Intervals, Pairing};
use vkerode::experiment::results::set_files;
use vkerode::terrain::files::{check_output_file, Overwrite};

/// The exit status of `--fail-slower` when a point is slower.
const SLOWER: u8 = 3;
/// The exit status of a command line that cannot be run, as clap's own.
const USAGE: u8 = 2;

fn usage(message: &str) -> anyhow::Error {
    ExitStatus {
        code: USAGE,
        message: message.into(),
    }
    .into()
}

pub fn run(args: &CompareArgs) -> Result<()> {
    begin_json(args.json);
    let (base, new): (Option<PathBuf>, &Path) = match (args.sets.as_slice(), &args.baseline) {
        ([base, new], None) => (Some(base.clone()), new),
        ([_, _], Some(_)) => {
            return Err(usage(
                "--baseline NAME is the base: give NEW alone (compare NEW --baseline NAME)",
            ))
        }
        ([new], Some(name)) => {
            let found = baseline::find(&args.baselines, name)
                .with_context(|| format!("--baseline {name}"))?;
            (Some(found), new)
        }
        ([new], None) if args.save_baseline.is_some() => (None, new),
        _ => {
            return Err(usage(
                "give BASE and NEW, or NEW with --baseline NAME (or with --save-baseline NAME alone, to save it)",
            ))
        }
    };
    if base.is_none()
        && (args.markdown.is_some()
            || args.fail_slower.is_some()
            || args.threshold.is_some()
            || !args.pair_by.is_empty()
            || !args.ignore.is_empty()
            || args.json)
    {
        return Err(usage(
            "--markdown, --threshold, --fail-slower, --pair-by, --ignore and --json need a comparison: give BASE and NEW, or --baseline NAME",
        ));
    }
    let pairing = Pairing {
        by: args.pair_by.clone(),
        ignore: args.ignore.clone(),
    };
    pairing.check().map_err(|e| usage(&e.to_string()))?;
    // Before any work: an existing baseline is refused unless --force, and a
    // --markdown that cannot be written fails here.
    let pending = match &args.save_baseline {
        Some(name) => Some(
            PendingBaseline::begin(&args.baselines, name, args.force)
                .with_context(|| format!("--save-baseline {name}"))?,
        ),
        None => None,
    };
    if let Some(markdown) = &args.markdown {
        let reads: Vec<PathBuf> = base
            .iter()
            .map(PathBuf::as_path)
            .chain([new])
            .flat_map(set_files)
            .collect();
        check_output_file(markdown, &reads, Overwrite::forced(args.force)).context("--markdown")?;
    }
    if let Some(base) = base {
        let compared = compare(&base, new, args.threshold, &pairing)?;
        if let Intervals::MedianIntervals { .. } = compared.intervals {
            eprintln!("warning: {}", compared.intervals_line());
        }
        let table = compared.markdown(&base, new);
        if args.json {
            print_json(&compared)?;
        } else {
            say!("{table}");
        }
        write_text(args.markdown.as_deref(), &table)?;
        if let Some(percent) = args.fail_slower {
            let slower = compared.slower_than(percent);
            if !slower.is_empty() {
                let labels: Vec<&str> = slower.iter().map(|c| c.label.as_str()).collect();
                // Returned before the baseline is saved: a failing gate keeps the old one.
                return Err(ExitStatus {
                    code: SLOWER,
                    message: format!(
                        "{} point(s) slower than the base by more than {percent}%, beyond the noise threshold: {}",
                        slower.len(),
                        labels.join("; ")
                    ),
                }
                .into());
            }
        }
    }
    if let (Some(pending), Some(name)) = (pending, &args.save_baseline) {
        let target = pending.target().to_path_buf();
        let files = pending
            .save(new)
            .with_context(|| format!("--save-baseline {name}"))?;
        note!(
            "saved {} as baseline {name} ({})",
            new.display(),
            target.display()
        );
        say_wrote(files);
    }
    Ok(())
}
