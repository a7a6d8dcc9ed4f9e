//! What the commands print: devices, erosion outcomes and compiler statistics.

/// `println!` that stays quiet when stdout is closed (`vkerode ... | head`), where
/// `println!` would panic; on stderr under `--json`, whose document is stdout's alone.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if $crate::cli::print::json_on_stdout() {
            let _ = writeln!(std::io::stderr(), $($arg)*);
        } else {
            let _ = writeln!(std::io::stdout(), $($arg)*);
        }
    }};
}

/// Set by a command's `--json`: stdout then carries one JSON document and nothing else.
static JSON_ON_STDOUT: AtomicBool = AtomicBool::new(false);

/// From here on `say!` writes to stderr; called first by a command given `--json`.
pub fn begin_json(json: bool) {
    if json {
        JSON_ON_STDOUT.store(true, Ordering::Relaxed);
    }
}

pub fn json_on_stdout() -> bool {
    JSON_ON_STDOUT.load(Ordering::Relaxed)
}

/// Prints `value` as the command's one JSON document (`--json`), schema in
/// docs/schemas/.
pub fn print_json<T: serde::Serialize>(value: &T) -> anyhow::Result<()> {
    use std::io::Write as _;
    let mut stdout = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut stdout, value)
        .and_then(|()| writeln!(stdout).map_err(serde_json::Error::io))
        .or_else(|e| match e.io_error_kind() {
            // A closed stdout (`| head`) is the reader's choice, as for `say!`.
            Some(std::io::ErrorKind::BrokenPipe) => Ok(()),
            _ => Err(e),
        })
        .map_err(|e| anyhow::anyhow!("printing the JSON document: {e}"))
}

/// An informational line (`say!` unless --quiet): what is being done, files written.
macro_rules! note {
    ($($arg:tt)*) => {{
        if $crate::cli::print::informing() {
            say!($($arg)*);
        }
    }};
}

/// A line of detail that only --verbose prints.
macro_rules! detail {
    ($($arg:tt)*) => {{
        if $crate::cli::print::verbosity() == vkerode::experiment::sweep::Verbosity::Verbose {
            say!($($arg)*);
        }
    }};
}

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use vkerode::experiment::sweep::Verbosity;
use vkerode::progress::{bar_style, elapsed_style, time_left, time_left_at_mean_rate};

use vkerode::terrain::files::write_atomically;

use vkerode::experiment::{Engine, ErodeOutcome, TimeSource};
use vkerode::gpu::{statistics_summary, CompilerStatistic, DeviceInfo};
use vkerode::probes::kernels::KernelStatistics;
use vkerode::progress::Progress;
use vkerode::terrain::formats::Dem;
use vkerode::terrain::units::{CellSizeSource, GridUnits};

/// The command line's --quiet or --verbose, set once by `main` before any command runs.
static VERBOSITY: AtomicU8 = AtomicU8::new(1);

pub fn set_verbosity(verbosity: Verbosity) {
    let level = match verbosity {
        Verbosity::Quiet => 0,
        Verbosity::Normal => 1,
        Verbosity::Verbose => 2,
    };
    VERBOSITY.store(level, Ordering::Relaxed);
}

pub fn verbosity() -> Verbosity {
    match VERBOSITY.load(Ordering::Relaxed) {
        0 => Verbosity::Quiet,
        1 => Verbosity::Normal,
        _ => Verbosity::Verbose,
    }
}

/// Whether informational lines and progress bars are shown (not under --quiet).
pub fn informing() -> bool {
    verbosity() != Verbosity::Quiet
}

/// A progress bar of `len` steps on stderr, `unit` after its count, with its rate and
/// the time left: hidden under --quiet and, by indicatif, where stderr is not a
/// terminal. Without a unit it shows its time alone until work tells what it counts
/// ([`Progress::Work`]). Lines printed through [`bar_line`] go above it.
pub fn progress_bar(len: u64, unit: &str) -> ProgressBar {
    if !informing() {
        return ProgressBar::hidden();
    }
    // Drawn from when it is set up, not before.
    let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::hidden());
    bar.set_style(match unit {
        "" => elapsed_style(),
        _ => counting_style(),
    });
    // The prefix holds the unit, for the count and its rate.
    bar.set_prefix(unit.to_string());
    bar.set_draw_target(ProgressDrawTarget::stderr());
    // Redrawn on its own while a long step runs, so the elapsed time moves.
    if !bar.is_hidden() {
        bar.enable_steady_tick(Duration::from_millis(250));
    }
    bar
}

/// [`progress_bar`] for pieces of work that differ in cost: its time left is told at
/// the mean rate since it started, and no rate is shown (the recent one misleads).
pub fn uneven_bar(len: u64, unit: &str) -> ProgressBar {
    let bar = progress_bar(len, unit);
    bar.set_style(bar_style(
        "{msg} [{bar:30}] {pos}/{len} {prefix}, {elapsed} so far, ETA {left}",
        time_left_at_mean_rate,
    ));
    bar
}

/// A bar that counts its work: done of all, in its unit (the prefix), at what rate,
/// and the time left at that rate.
fn counting_style() -> ProgressStyle {
    let template =
        "{msg} [{bar:30}] {pos}/{len} {prefix}, {rate} {prefix}/s, {elapsed} so far, ETA {left}";
    bar_style(template, time_left).with_key(
        "rate",
        |state: &ProgressState, out: &mut dyn std::fmt::Write| {
            let _ = out.write_str(&rate_text(state.per_sec()));
        },
    )
}

/// Units per second to three figures or so; "-" before there is a rate.
fn rate_text(per_sec: f64) -> String {
    match per_sec {
        r if !r.is_finite() || r <= 0.0 => "-".into(),
        r if r >= 100.0 => format!("{r:.0}"),
        r if r >= 10.0 => format!("{r:.1}"),
        r => format!("{r:.2}"),
    }
}

/// Draws what long work tells on `bar`: a line above it, a stage as its message with
/// its count and its time started again, a count as its position, and the work it
/// counts in as its length and unit.
pub fn show_progress(bar: &ProgressBar, event: Progress) {
    match event {
        Progress::Line(line) => bar_line(bar, &line),
        Progress::Note(line) if informing() => bar_line(bar, &line),
        Progress::Note(_) => {}
        Progress::Stage(stage) => {
            // Restyled before the message redraws it: no count until one is told.
            bar.set_style(elapsed_style());
            bar.set_message(stage);
            bar.set_length(0);
            bar.reset();
        }
        Progress::Done { done, total } => {
            bar.set_style(counting_style());
            bar.set_length(total as u64);
            bar.set_position(done as u64);
        }
        Progress::Work { total, unit } => {
            bar.set_prefix(unit);
            bar.set_length(total);
            bar.set_position(0);
            bar.reset_eta();
            bar.set_style(counting_style());
        }
    }
}

/// A result line printed while `bar` is drawn: above it, or plainly where it is hidden.
pub fn bar_line(bar: &ProgressBar, line: &str) {
    match bar.is_hidden() {
        true => say!("{line}"),
        false => bar.println(line),
    }
}

pub fn print_device(d: &DeviceInfo) {
    let yes_no = |b: bool| if b { "yes" } else { "no" };
    let usable = if d.is_usable() {
        ""
    } else {
        "  (unusable: needs Vulkan 1.2 and a compute queue)"
    };
    say!("[{}] {}{usable}", d.index, d.name);
    let rows = [
        ("type", d.device_type.clone()),
        ("driver", format!("{} {}", d.driver_name, d.driver_info)),
        ("Vulkan API", d.api_version.clone()),
        ("subgroup size", d.subgroup_size.to_string()),
        (
            "timestamps",
            format!(
                "{} ({} valid bits, {} ns/tick)",
                yes_no(d.has_timestamps()),
                d.timestamp_valid_bits,
                d.timestamp_period_ns
            ),
        ),
        ("float atomicAdd", yes_no(d.float_atomic_add).into()),
        (
            "max workgroup size",
            format!(
                "{} (x), {} invocations",
                d.max_workgroup_size_x, d.max_workgroup_invocations
            ),
        ),
        (
            "max workgroup count",
            format!("{:?}", d.max_workgroup_count),
        ),
        (
            "max SSBO range",
            format!("{} bytes", d.max_storage_buffer_range),
        ),
        (
            "max shared memory",
            format!("{} bytes per workgroup", d.max_shared_memory_bytes),
        ),
        (
            "subgroup sizes",
            format!(
                "{} to {} (what subgroup size control can choose)",
                d.subgroup_size_range[0], d.subgroup_size_range[1]
            ),
        ),
        (
            "max texel buffer",
            format!("{} texels", d.max_texel_buffer_elements),
        ),
        (
            "compiler statistics",
            format!(
                "{} (VK_KHR_pipeline_executable_properties)",
                yes_no(d.pipeline_statistics)
            ),
        ),
        (
            "pipeline robustness",
            format!(
                "{} (VK_EXT_pipeline_robustness; vkerode never enables robustBufferAccess)",
                yes_no(d.pipeline_robustness)
            ),
        ),
        (
            "Vulkan memory model",
            format!("{} (with device scope)", yes_no(d.vulkan_memory_model)),
        ),
    ];
    for (what, value) in rows {
        say!("    {:<22}{value}", format!("{what}:"));
    }
}

pub fn print_outcome(outcome: &ErodeOutcome) {
    let r = &outcome.report;
    let f = &r.figures;
    let (w, h) = (outcome.before.width(), outcome.before.height());
    let algorithm = r.algorithm.as_str();
    match r.engine {
        Engine::Gpu => say!(
            "eroded {w}x{h} with {algorithm} on the GPU: {} dispatch(es), {} submission(s)",
            r.dispatches,
            r.submissions
        ),
        _ => say!(
            "eroded {w}x{h} with {algorithm} on the {}",
            r.provenance.device
        ),
    }
    let heights = &r.height_unit;
    for line in outcome.figures.summary(heights) {
        say!("  {line}");
    }
    match (f.time_source, f.gpu_ms) {
        (TimeSource::GpuTimestamps, Some(ms)) => {
            say!(
                "GPU time: {ms:.3} ms (timestamps); wall time {:.3} ms",
                f.wall_ms
            );
            // The wall time spans the GPU work, so this is the timestamps' fault.
            if ms > f.wall_ms {
                eprintln!("warning: the GPU time is longer than the wall time around it, which cannot be: this device's timestamps are not to be trusted");
            }
        }
        (TimeSource::WallClock, _) => eprintln!(
            "warning: this device has no timestamps; timing falls back to wall clock: {:.3} ms",
            f.wall_ms
        ),
        _ => say!("CPU time: {:.3} ms (wall clock)", f.wall_ms),
    }
    let counted = if r.engine == Engine::Gpu {
        say!(
            "compiler statistics of {}: {}",
            r.kernel.as_deref().unwrap_or("the kernel"),
            statistics_line(&r.compiler_statistics)
        );
        "counted in a separate instrumented run"
    } else {
        "counted by the reference"
    };
    let unit = f.unit.name();
    let rates: String = f
        .rates
        .iter()
        .map(|(name, value)| {
            let name = name.replace("_per_s", "/s");
            format!("   {name}: {:.4e}", value.as_f64().unwrap_or(f64::NAN))
        })
        .collect();
    say!(
        "{unit}/s: {:.4e}{rates}   ({} {unit}, {counted})",
        f.steps_per_s,
        f.steps
    );
    if let Some(c) = &r.ceiling {
        if let (Some(name), Some(percent)) = (c.ceiling, c.percent_of_peak) {
            say!("{percent:.1}% of this device's {name} ceiling (vkerode peak)");
        }
    }
    if let Some(g) = &r.gpm {
        say!(
            "NVML GPM over {:.0} ms of runs ({:.0}% busy): SM occupancy {:.1}%, SM {:.1}%, integer {:.1}%, FP32 {:.1}%, DRAM bandwidth {:.1}%",
            g.window_ms,
            g.busy_percent,
            g.sm_occupancy_percent,
            g.sm_util_percent,
            g.integer_util_percent,
            g.fp32_util_percent,
            g.dram_bandwidth_percent
        );
    }
    for warning in &r.warnings {
        eprintln!("warning: {warning}");
    }
    let c = &r.change;
    let u = heights.height_label();
    let channels = match (c.channel_mean_change, c.hillslope_mean_change) {
        (Some(channel), Some(hillslope)) => {
            format!("; mean over channels {channel:+.4} {u} vs hillslopes {hillslope:+.4} {u}")
        }
        _ => String::new(),
    };
    say!(
        "height change summed over cells: total {:.1} {v} (eroded {:.1} {v}, deposited {:.1} {v}), cells changed {:.1}%{channels}",
        c.total_change,
        c.eroded,
        c.deposited,
        c.changed_cells_share * 100.0,
        v = heights.sum_label()
    );
    let incision = match (c.channel_incision_before, c.channel_incision_after) {
        (Some(before), Some(after)) => {
            format!("channel incision: {before:.4} {u} before, {after:.4} {u} after; ")
        }
        _ => String::new(),
    };
    say!(
        "{incision}heights after from {:.3} {u} to {:.3} {u}",
        c.min_after,
        c.max_after,
    );
    if let Some(i) = &r.instrumented_run {
        say!(
            "the strategy's own figures are of the instrumented run: total change {:.1} {v}, against {:.1} {v} written by the timed run ({:+.3}%, {} cells differ, by up to {:.4} {u}){}",
            i.total_change,
            i.written_total_change,
            i.relative_difference * 100.0,
            i.cells_differing,
            i.max_cell_difference,
            // Where the runs differ at all, a user asks why: the cause is the strategy's
            // (racing adds), or a bug where it should not race, so only the fact is said.
            if i.cells_differing > 0 {
                "; the instrumented run is a second run of the job, by its counted build"
            } else {
                ""
            },
            u = heights.height_label(),
            v = heights.sum_label()
        );
    }
}

/// The heightmap `erode --input` read.
pub fn print_input(path: &Path, dem: &Dem, units: &GridUnits, source: CellSizeSource) {
    say!(
        "read {}: {} x {} cells, cell size {} x {} m ({}), vertical scale {}{}",
        path.display(),
        dem.heights.width(),
        dem.heights.height(),
        units.cell_size.x,
        units.cell_size.y,
        match source {
            CellSizeSource::Flag => "from --cell-size".to_string(),
            CellSizeSource::File => "from the file".to_string(),
            CellSizeSource::Geodesic(g) => format!(
                "from the file's degrees on its ellipsoid at {:.4} degrees latitude; the east-west spacing varies by {:.2}% over the map",
                g.latitude_deg,
                g.x_spread * 100.0
            ),
            CellSizeSource::Assumed => "assumed with --assume-cell-size".to_string(),
        },
        units.vertical_scale,
        if dem.geo.is_some() {
            ", georeferenced"
        } else {
            ""
        }
    );
    let missing = dem.missing_cells();
    if missing > 0 {
        say!("{missing} cells have no data: filled from their neighbours for the kernel, nodata again on export");
    }
}

/// `vkerode kernels`: each build's statistics, or why there are none.
pub fn print_kernels(device: &DeviceInfo, rows: &[KernelStatistics]) {
    for row in rows {
        say!(
            "{} (workgroup {}, lever {}): {}",
            row.variant.module_name(),
            row.workgroup,
            row.variant.lever.as_str(),
            statistics_line(&row.statistics)
        );
    }
    if !device.pipeline_statistics {
        say!(
            "{} does not offer VK_KHR_pipeline_executable_properties: no statistics to list",
            device.name
        );
    }
}

/// The statistics on one line, or why there are none.
fn statistics_line(statistics: &[CompilerStatistic]) -> String {
    if statistics.is_empty() {
        "none reported by the driver".into()
    } else {
        statistics_summary(statistics)
    }
}

/// Writes `text` to `path`, whole or not at all, if there is a path.
pub fn write_text(path: Option<&Path>, text: &str) -> anyhow::Result<()> {
    if let Some(path) = path {
        write_atomically(path, |out| std::io::Write::write_all(out, text.as_bytes()))?;
        say_wrote([path.to_path_buf()]);
    }
    Ok(())
}

pub fn say_wrote(files: impl IntoIterator<Item = std::path::PathBuf>) {
    for file in files {
        note!("wrote {}", file.display());
    }
}
