//! `vkerode sweep`: every point of an experiment config, on one device or several.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{anyhow, bail, Context as _, Result};
use clap::Args;

use crate::cli::open_device;
use crate::cli::options::{GpuArgs, RunLengthArgs};
use crate::cli::print::{begin_json, print_json, write_text};
use vkerode::experiment::report::{budget_warning, report, report_rows, SweepReport};
use vkerode::experiment::results::{set_files, Existing, FAILED_CSV};
use vkerode::experiment::sweep::config::{Experiment, LoadOptions, DEFAULT_MAX_POINTS};
use vkerode::experiment::sweep::{
    dry_run, parse_out, results_dir, run_sweep, OnPointError, Shard, SweepOptions, Verbosity,
    DEFAULT_OUT,
};
use vkerode::gpu::{list_devices, Context, ContextOptions};
use vkerode::terrain::files::{check_apart, check_output_file, Overwrite};
use vkerode::terrain::metrics::{Landform, LANDFORM_MAX_CELLS};

#[derive(Args)]
pub struct SweepArgs {
    /// The experiment config.
    pub config: PathBuf,
    /// The results folder (with --shard, its shard-i-of-n/ subfolder). {experiment} and
    /// {device} in it are replaced by the config's name and the device's (as a folder
    /// name).
    #[arg(long, value_name = "DIR", default_value = DEFAULT_OUT, value_parser = parse_out)]
    pub out: PathBuf,
    /// Replace the folder whole if it already holds results (by default it is refused).
    #[arg(long, conflicts_with = "resume")]
    pub force: bool,
    /// Continue an interrupted sweep: skip the points already recorded.
    #[arg(long)]
    pub resume: bool,
    /// Run only every n-th point, starting at the i-th ("i/n", 0-based): one part of
    /// a sweep split over GPUs or jobs. `vkerode merge` joins the parts.
    #[arg(long)]
    pub shard: Option<Shard>,
    /// Override a setting of the config, e.g. `--set fixed.size=1024`,
    /// `--set axes.workgroup=[32,64]`, `--set measure.max_reps=10` (values in TOML).
    /// Overrides are part of the recorded config.
    #[arg(long = "set", value_name = "SECTION.KEY=VALUE")]
    pub overrides: Vec<String>,
    /// The most points the axes may make; a config past it is refused, naming its axes.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_POINTS)]
    pub max_points: usize,
    #[command(flatten)]
    pub run_length: RunLengthArgs,
    /// List every point with its effective settings, the buffers it needs against the
    /// device's limits, and its estimated time from earlier results; run nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Lock the GPU's SM clock at this many MHz for the sweep (NVIDIA, through NVML;
    /// needs the permission to set clocks). The clocks policy is recorded in meta.json.
    #[arg(long, value_name = "MHZ")]
    pub lock_sm_clock: Option<u32>,
    /// Also write the closing table of points to this markdown file; one that exists is
    /// refused unless --force or --resume (which continues the run that wrote it).
    #[arg(long, value_name = "FILE.md")]
    pub markdown: Option<PathBuf>,
    /// When the GPU fails a point (out of memory, for one): record it in failed.csv and
    /// go on (`skip`), or stop there (`stop`). A lost device stops its worker (the whole
    /// sweep on one device).
    #[arg(long, value_enum, default_value_t = OnPointError::Skip)]
    pub on_point_error: OnPointError,
    /// Run on several devices at once: `all` (every usable device) or indices from
    /// `vkerode devices`, comma-separated (`0,1`; an index twice opens two contexts on
    /// one device). One worker per device takes the next point from a shared queue.
    #[arg(long, value_name = "all|I,J,...")]
    pub devices: Option<DeviceList>,
    /// With --devices: every point on every device, and each row's
    /// `device_spread_percent` the device-to-device spread of the median.
    #[arg(long, requires = "devices")]
    pub replicate: bool,
    /// Print the summary and the points as one JSON document on stdout (docs/schemas/),
    /// the other lines on stderr.
    #[arg(long, conflicts_with = "dry_run")]
    pub json: bool,
    #[command(flatten)]
    pub gpu: GpuArgs,
}

/// The devices of `sweep --devices`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeviceList {
    All,
    Indices(Vec<usize>),
}

impl std::str::FromStr for DeviceList {
    type Err = anyhow::Error;
    fn from_str(text: &str) -> Result<Self> {
        if text.trim() == "all" {
            return Ok(Self::All);
        }
        let indices = text
            .split(',')
            .map(|i| i.trim().parse::<usize>())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| anyhow!("{text:?} is not `all` or device indices such as 0,1"))?;
        Ok(Self::Indices(indices))
    }
}

impl SweepArgs {
    pub fn load_options(&self) -> LoadOptions {
        LoadOptions {
            overrides: self.overrides.clone(),
            max_points: self.max_points,
            allow_long: self.run_length.allow_long_runs,
        }
    }

    pub fn options(&self, verbosity: Verbosity) -> SweepOptions {
        SweepOptions {
            out: self.out.clone(),
            existing: match (self.resume, self.force) {
                (true, _) => Existing::Resume,
                (false, true) => Existing::Replace,
                (false, false) => Existing::Refuse,
            },
            shard: self.shard,
            verbosity,
            lock_sm_mhz: self.lock_sm_clock,
            on_point_error: self.on_point_error,
            replicate: self.replicate,
        }
    }
}

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
    let measure = &experiment.config.measure;
    let past: Vec<String> = (experiment.points.iter())
        .filter(|p| !Landform::feasible(p.map().cells()))
        .map(|p| p.index.to_string())
        .collect();
    if measure.judge && measure.landform && !past.is_empty() {
        note!(
            "points {} get no landform figures: their maps are past the {LANDFORM_MAX_CELLS} cells the figures are computed for (they take minutes a map on the CPU)",
            past.join(", ")
        );
    }
    let summary = run_sweep(&contexts, &experiment, &sweep)?;
    note!(
        "measured {} points ({} already recorded) into {}",
        summary.measured,
        summary.skipped,
        summary.dir.display()
    );
    if let Some(share) = summary.gpu_busy_share() {
        // lavapipe's "GPU time" is its CPU cores' time.
        let device = match contexts.iter().all(|c| c.info().is_cpu()) {
            true => "device",
            false => "GPU",
        };
        note!(
            "{device} busy {:.0}% of {} (the warm-ups' and timed repetitions' {device} time, {:.2} s, over the sweep's wall time)",
            100.0 * share,
            rounded_duration(summary.wall_s),
            summary.gpu_s
        );
    }
    let stages: Vec<String> = (summary.stages_s.iter())
        .filter(|(_, seconds)| *seconds > 0.0)
        .map(|(stage, seconds)| format!("{stage} {seconds:.1} s"))
        .collect();
    detail!(
        "the points' stages, added up (the CPU's judge and landform run beside the GPU): {}",
        stages.join(", ")
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

/// Seconds as `2m 10s`, to the second (`0s` under half a second).
fn rounded_duration(seconds: f64) -> humantime::FormattedDuration {
    humantime::format_duration(std::time::Duration::from_secs(seconds.round() as u64))
}
