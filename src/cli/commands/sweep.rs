//! `vkerode sweep`: every point of an experiment config, on one device or several.

use std::sync::Arc;

use anyhow::{bail, Context as _, Result};

use crate::cli::args::{DeviceList, SweepArgs};
use crate::cli::open_device;
use crate::cli::print::{begin_json, print_json, write_text};
use vkerode::experiment::report::{budget_warning, report, report_rows, SweepReport};
use vkerode::experiment::results::{set_files, FAILED_CSV};
use vkerode::experiment::sweep::config::Experiment;
use vkerode::experiment::sweep::{dry_run, results_dir, run_sweep, Verbosity};
use vkerode::gpu::{list_devices, Context, ContextOptions};
use vkerode::terrain::files::{check_apart, check_output_file, Overwrite};

/// One context per device of `--devices`, in its order.
fn open_devices(options: &ContextOptions, list: &DeviceList) -> Result<Vec<Arc<Context>>> {
    let indices = match list {
        DeviceList::Indices(indices) => indices.clone(),
        DeviceList::All => list_devices(options)
            .context("listing Vulkan devices")?
            .iter()
            .filter(|d| d.is_usable())
            .map(|d| d.index)
            .collect(),
    };
    if indices.is_empty() {
        bail!("--devices: no usable Vulkan device");
    }
    indices
        .iter()
        .map(|index| {
            let one = ContextOptions {
                device: Some(index.to_string()),
                ..options.clone()
            };
            open_device(&one).with_context(|| format!("--devices: device {index}"))
        })
        .collect()
}

pub fn run(options: &ContextOptions, args: &SweepArgs, verbosity: Verbosity) -> Result<()> {
    begin_json(args.json);
    let (config, loading) = (&args.config, args.load_options());
    // Syntax, types and values first, with no device; then the device's limits.
    Experiment::load(config, &loading, None)?;
    if args.devices.is_some() && options.device.is_some() {
        bail!("--device picks one device and --devices several: give one of them");
    }
    let contexts = match &args.devices {
        None => vec![open_device(options)?],
        Some(list) => open_devices(options, list)?,
    };
    if args.replicate && contexts.len() < 2 {
        bail!("--replicate compares devices: --devices must name at least two");
    }
    // The first device's limits decide which points are checked and which skipped.
    let ctx = &contexts[0];
    let experiment = Experiment::load(config, &loading, Some(ctx.info()))?;
    let sweep = args.options(verbosity);
    let dir = results_dir(&experiment, &ctx.info().name, &sweep);
    if args.force {
        // Replaced whole: the config may not be one of the files it clears.
        check_apart(&dir, std::slice::from_ref(config)).context("--out")?;
    }
    if let Some(markdown) = &args.markdown {
        let mut reads = set_files(&dir);
        reads.push(config.clone());
        let overwrite = Overwrite::forced(args.force || args.resume);
        check_output_file(markdown, &reads, overwrite).context("--markdown")?;
    }
    if args.dry_run {
        say!("{}", dry_run(&experiment, ctx.info(), &sweep));
        return Ok(());
    }
    let shard = sweep.shard.map(|s| format!(", shard {s}"));
    note!(
        "{}: {} points{}",
        experiment.config.name,
        experiment.points.len(),
        shard.unwrap_or_default()
    );
    let summary = run_sweep(&contexts, &experiment, &sweep)?;
    note!(
        "measured {} points ({} already recorded) into {}",
        summary.measured,
        summary.skipped,
        summary.dir.display()
    );
    let table = report(&summary.dir)?;
    let rows = report_rows(&summary.dir)?;
    if let Some(warning) = budget_warning(&rows) {
        eprintln!("warning: {warning}");
    }
    if args.json {
        print_json(&SweepReport {
            summary: &summary,
            points: rows,
        })?;
    } else {
        say!("{table}");
    }
    write_text(args.markdown.as_deref(), &table)?;
    let failed_csv = summary.dir.join(FAILED_CSV);
    if let Some(stopped) = summary.stopped {
        bail!(
            "the sweep stopped at {stopped}; the points before it are recorded, the failure is in {}. Rerun with --resume to measure the rest",
            failed_csv.display()
        );
    }
    if !summary.failed.is_empty() {
        let unrun = match summary.never_ran {
            0 => String::new(),
            n => format!(" and {n} never ran (their workers were lost)"),
        };
        bail!(
            "{} point(s) failed on the GPU ({}){unrun}; the {} measured are recorded. --resume measures the rest",
            summary.failed.len(),
            failed_csv.display(),
            summary.measured + summary.skipped
        );
    }
    Ok(())
}
