//! `vkerode compare`: two sweeps point by point, or one against a named baseline; and
//! `--save-baseline`, which keeps a set as one.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context as _, Result};
use clap::Args;

use crate::cli::options::{parse_threshold, threshold_help};
use crate::cli::print::{begin_json, print_json, say_wrote, write_text};
use crate::cli::ExitStatus;
use vkerode::experiment::report::baseline::{
    self, check_name as check_baseline_name, PendingBaseline, BASELINES_DIR,
};
use vkerode::experiment::report::compare::WRONG_ANSWER_MARGIN;
use vkerode::experiment::report::{compare, Intervals, Pairing};
use vkerode::experiment::results::set_files;
use vkerode::stats::bootstrap::MIN_SAMPLES;
use vkerode::terrain::files::{check_output_file, Overwrite};

#[derive(Args)]
pub struct CompareArgs {
    /// BASE then NEW (results folders or points.csv files); NEW alone with --baseline
    /// (its base) or with only --save-baseline (saved, not compared).
    #[arg(value_name = "SET", num_args = 1..=2, required = true)]
    pub sets: Vec<PathBuf>,
    /// Compare NEW against the baseline saved as NAME in --baselines.
    #[arg(long, value_name = "NAME", value_parser = parse_baseline_name)]
    pub baseline: Option<String>,
    /// Save NEW as the baseline NAME in --baselines (a copy of its points.csv,
    /// samples.csv, meta.json and failed.csv), after the comparison; nothing is saved
    /// when the comparison fails or --fail-slower does.
    #[arg(long, value_name = "NAME", value_parser = parse_baseline_name)]
    pub save_baseline: Option<String>,
    /// The folder of named baselines.
    #[arg(long, value_name = "DIR", default_value = BASELINES_DIR)]
    pub baselines: PathBuf,
    /// Replace the --markdown file and the baseline --save-baseline names if they exist
    /// (by default they are refused).
    #[arg(long)]
    pub force: bool,
    /// The noise threshold in percent (help from `threshold_help`).
    #[arg(long, value_name = "PERCENT", value_parser = parse_threshold, help = threshold_help())]
    pub threshold: Option<f64>,
    /// Also write the table to this markdown file.
    #[arg(long, value_name = "FILE.md")]
    pub markdown: Option<PathBuf>,
    /// Exit with status 3 when a point is "slower" and its whole interval lies more than
    /// PERCENT above 1 too (at or below the threshold: any "slower" point); with status 4
    /// when a point's answer turned wrong (new's net change beyond the wrong-answer margin
    /// from its CPU reference's, base's not), whatever its speed.
    #[arg(long, value_name = "PERCENT", value_parser = parse_percent)]
    pub fail_slower: Option<f64>,
    /// Match points on these settings keys alone (comma-separated, or the flag repeated),
    /// and on every key that takes two values within either set, so that a point has one
    /// match: the settings the two sets fix to different values are compared across, and
    /// each pair's label says how ("workgroup=64 (variant paper → fast)"). A point that
    /// matches two points differing in a setting is refused.
    #[arg(long, value_name = "KEY", value_delimiter = ',')]
    pub pair_by: Vec<String>,
    /// Leave these settings keys out of the match (comma-separated, or the flag
    /// repeated): points pair across their values. A point that then matches two points
    /// differing in one is refused.
    #[arg(long, value_name = "KEY", value_delimiter = ',')]
    pub ignore: Vec<String>,
    /// Print the comparison as one JSON document on stdout (docs/schemas/), the other lines on stderr.
    #[arg(long)]
    pub json: bool,
}

/// `compare`'s description, with the fewest repetitions a verdict needs.
pub fn about() -> String {
    format!(
        "Match the points of two sweeps (results folders or points.csv files) by their settings (all of them, or as --pair-by and --ignore say) and say, for each, whether NEW is faster, slower or the same as BASE, or unclear: by a bootstrap interval of the ratio of medians from both sets' samples.csv, against a noise threshold (by default the spread measured between reruns on the device). A pair gets no verdict where a side's answer is wrong (its net change more than {:.0}% from its CPU reference's), has fewer than {MIN_SAMPLES} repetitions or missed its noise target; no match at all is an error that names the settings that differ. Named baselines: --save-baseline and --baseline",
        100.0 * WRONG_ANSWER_MARGIN
    )
}

/// A baseline's name, by the library's rule.
fn parse_baseline_name(text: &str) -> Result<String> {
    check_baseline_name(text)?;
    Ok(text.to_string())
}

/// A threshold of `--fail-slower`: a point fails when its time exceeds the base's by
/// more than this share, so it is finite and above 0.
fn parse_percent(text: &str) -> Result<f64> {
    match text.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(anyhow!(
            "{text:?} is not a percentage above 0 (10 fails on a point more than 10% slower)"
        )),
    }
}

/// The exit status of `--fail-slower` when a point is slower.
const SLOWER: u8 = 3;
/// The exit status of `--fail-slower` when a point's answer turned wrong.
const TURNED_WRONG: u8 = 4;
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
        // Each failure returns before the baseline is saved: a failing gate keeps the old one.
        if let Some(percent) = args.fail_slower {
            let wrong = compared.turned_wrong();
            if !wrong.is_empty() {
                let labels: Vec<&str> = wrong.iter().map(|c| c.label.as_str()).collect();
                return Err(ExitStatus {
                    code: TURNED_WRONG,
                    message: format!(
                        "{} point(s) whose answer turned wrong (net change more than {:.0}% from the CPU reference's): {}",
                        wrong.len(),
                        100.0 * WRONG_ANSWER_MARGIN,
                        labels.join("; ")
                    ),
                }
                .into());
            }
            let slower = compared.slower_than(percent);
            if !slower.is_empty() {
                let labels: Vec<&str> = slower.iter().map(|c| c.label.as_str()).collect();
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
