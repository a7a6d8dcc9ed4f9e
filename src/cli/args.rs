//! The command line's types: commands, their flags and the parsers of flag values.

use std::path::PathBuf;

use anyhow::{anyhow, bail, Result};
use clap::parser::ValueSource;
use clap::{ArgMatches, Args, Parser, Subcommand, ValueEnum};

use vkerode::erosion::droplets::{
    AtomicMode, DropletSettings, DropletShader, Lever, SpawnMode, SpirvBuild,
};
use vkerode::erosion::settings::NoiseSettings;
use vkerode::erosion::RunSettings;
use vkerode::experiment::report::baseline::{check_name as check_baseline_name, BASELINES_DIR};
use vkerode::experiment::report::noise::{DEFAULT_THRESHOLD, RERUN_NOISE_FILE};
use vkerode::experiment::report::plot::{self, PlotRequest, RATE};
use vkerode::experiment::results::Existing;
use vkerode::experiment::sweep::config::{LoadOptions, DEFAULT_MAX_POINTS};
use vkerode::experiment::sweep::{
    parse_out, OnPointError, Shard, SweepOptions, Verbosity, DEFAULT_OUT,
};
use vkerode::experiment::{Engine, InputError, InputUnits, TerrainSource};
use vkerode::gpu::{ContextOptions, DEFAULT_MAX_SUBMISSION_MS};
use vkerode::stats::bootstrap::MIN_SAMPLES;
use vkerode::studies::equivalence::EquivalenceOptions;
use vkerode::studies::reproduce;
use vkerode::terrain::files::Overwrite;
use vkerode::terrain::formats::{read_dem, Dem, HeightFormat};
use vkerode::terrain::image::CellSize;
use vkerode::terrain::output::DEFAULT_OUT_RULE;

/// The command line's one grammar, shown by `vkerode --help` and docs/cli.md.
const GRAMMAR: &str = "Outputs: --out DIR is always a folder, on every command that writes several files (erode, sweep, strategies, peak, equivalence, merge, plot, docs). A single file gets a flag named for its kind (--markdown FILE.md, --html FILE.html, --csv FILE.csv), or a positional OUTPUT where writing it is the command's whole job (terrain, convert). One overwrite rule: every output, file or folder, that already exists is refused unless --force replaces it (sweep: --resume continues it instead; plot adds its two charts to the folder, refusing only charts of the same name). --set SECTION.KEY=VALUE overrides a key of the config a command loads (sweep, strategies, equivalence). --quiet and --verbose go with every command; the device flags (--device, --validate, --max-submission-ms) with the commands that open a device.";

/// `--version`: the package's, and the commit the binary was built from.
const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("VKERODE_GIT_COMMIT"),
    ")"
);

/// The grammar with the rule of default output folders, written once in the library.
fn grammar() -> String {
    format!("{GRAMMAR} {DEFAULT_OUT_RULE}")
}

/// A Vulkan compute research harness for GPU hydraulic erosion.
#[derive(Parser)]
#[command(version = VERSION, about, long_about = None, after_long_help = grammar())]
pub struct Cli {
    #[command(flatten)]
    pub verbosity: VerbosityArgs,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// The results folder (or its points.csv).
    pub results: PathBuf,
    /// Also write the table to this markdown file.
    #[arg(long, value_name = "FILE.md")]
    pub markdown: Option<PathBuf>,
    /// Also write one self-contained HTML page (no network, no scripts): provenance and
    /// clocks, the points table, a throughput chart against each numeric axis (inline
    /// SVG), the folder's pictures, the config, and verdicts against --baseline.
    #[arg(long, value_name = "FILE.html")]
    pub html: Option<PathBuf>,
    /// Add to the page compare's verdict on each point against this base: a results
    /// folder (or points.csv), else the name of a baseline in --baselines.
    #[arg(long, value_name = "DIR_OR_NAME", requires = "html")]
    pub baseline: Option<PathBuf>,
    /// The folder of named baselines.
    #[arg(long, value_name = "DIR", default_value = BASELINES_DIR)]
    pub baselines: PathBuf,
    /// The noise threshold in percent (help from `threshold_help`).
    #[arg(long, value_name = "PERCENT", value_parser = parse_threshold, help = threshold_help(), requires = "baseline")]
    pub threshold: Option<f64>,
    /// Replace the --markdown and --html files if they exist (by default they are refused).
    #[arg(long)]
    pub force: bool,
    /// Print the points as one JSON document on stdout (docs/schemas/), the other lines on stderr.
    #[arg(long)]
    pub json: bool,
}

/// How much the commands print, for every command. Results, warnings and errors print
/// whatever is chosen.
#[derive(Args)]
pub struct VerbosityArgs {
    /// Print only results, warnings and errors: no progress bars, no informational lines.
    #[arg(long, short, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
    /// Print more detail: how the device was chosen, each sweep point's repetitions and
    /// median, each split erode run's submissions, each strategies run.
    #[arg(long, short, global = true)]
    pub verbose: bool,
}

/// The device flags, on the commands that open a device (and only those).
#[derive(Args)]
pub struct GpuArgs {
    /// Device to run on: an index from `vkerode devices` or a name substring.
    /// Default: the first discrete GPU, else integrated, else CPU (lavapipe).
    #[arg(long, value_parser = clap::builder::NonEmptyStringValueParser::new())]
    device: Option<String>,
    /// Turn on the Khronos validation layer with synchronization validation
    /// (also VKERODE_VALIDATE=1).
    #[arg(long)]
    validate: bool,
    /// The longest one GPU submission is expected to run, in ms: droplet runs are split
    /// into more submissions (by the measured rate) to stay under desktop OS watchdogs
    /// (Windows kills a submission after about 2 s).
    #[arg(long, default_value_t = DEFAULT_MAX_SUBMISSION_MS,
          value_parser = clap::value_parser!(u32).range(1..))]
    max_submission_ms: u32,
}

impl VerbosityArgs {
    pub fn level(&self) -> Verbosity {
        match (self.quiet, self.verbose) {
            (true, _) => Verbosity::Quiet,
            (false, true) => Verbosity::Verbose,
            (false, false) => Verbosity::Normal,
        }
    }
}

impl GpuArgs {
    pub fn options(&self) -> ContextOptions {
        ContextOptions {
            device: self.device.clone(),
            validation: self.validate,
            max_submission_ms: Some(self.max_submission_ms),
        }
    }
}

#[derive(Subcommand)]
pub enum Command {
    /// List Vulkan devices and what vkerode needs to know of them.
    Devices {
        /// Print the devices as one JSON document on stdout (docs/schemas/).
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        gpu: GpuArgs,
    },
    /// Generate erosion-noise terrain and write it as a heightmap file.
    Terrain {
        #[command(flatten)]
        terrain: NoiseSettings,
        /// Output heightmap (.tif, .png or .raw; see --format).
        output: PathBuf,
        /// Output format. Default: from the file name's extension.
        #[arg(long, value_enum)]
        format: Option<HeightFormat>,
        /// Use the CPU port instead of the GPU shader.
        #[arg(long)]
        cpu: bool,
        /// Replace OUTPUT (and the files written beside it) if it exists (by default
        /// it is refused).
        #[arg(long)]
        force: bool,
        #[command(flatten)]
        gpu: GpuArgs,
    },
    /// Generate terrain (or read --input), erode it with a strategy (--algorithm: the
    /// paper's droplets by default, the virtual pipes, or thermal erosion), and write
    /// the heightmaps, pictures and timings.
    Erode(Box<ErodeArgs>),
    /// Run an experiment config (experiments/*.toml): every point of its sweep,
    /// measured with GPU timestamps and recorded in its --out folder
    /// (results/<experiment>/<device>/ by default).
    Sweep(SweepArgs),
    /// Strategies compared by dose: each strategy a config names a table for, on each of
    /// its terrains (experiments/strategies.toml), over its seeds, at each level of
    /// matched water; the landform figures against the erosion done, with intervals
    /// over seeds (dose.csv, <terrain>/dose.png), GPU time as its cost, every run in
    /// strategies.csv.
    Strategies {
        config: PathBuf,
        /// Output folder. Default: out/strategies/<config name>/<device>.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Replace the folder whole if it already holds files (by default it is refused).
        #[arg(long)]
        force: bool,
        /// Override a setting of the config, e.g. `--set seeds=[1]`,
        /// `--set measure.min_reps=3`, `--set pipes.pipes_dt=0.01` (values in TOML).
        #[arg(long = "set", value_name = "[SECTION.]KEY=VALUE")]
        overrides: Vec<String>,
        #[command(flatten)]
        gpu: GpuArgs,
    },
    /// The paper's claims on this device, in one command: a suite sized to --budget
    /// measures each (workgroup size, batched spawning, staggered dispatch, fixed-point
    /// atomics against float and racy adds, the grid-centric strategy) and gives it a
    /// verdict (holds, does not hold, inconclusive) with its effect and interval, the
    /// stability and erosion of the setting it favours, beside the committed reference
    /// (the H200's). Writes reproduce.json, summary.md, report.html and every sweep.
    Reproduce(ReproduceArgs),
    /// Measure the device's int atomicAdd rates (random addresses, and droplet-shaped
    /// walks), its memory bandwidth (a streaming copy, the grid kernels' ceiling) and
    /// its cache microbenchmark (load latency and read bandwidth against working set,
    /// 4 KiB up), print them and cache them for sweeps' percent-of-peak.
    Peak {
        /// Also write peak.json and, for each probe that has rows, its CSV (random.csv,
        /// walk.csv, copy.csv, cache_latency.csv, cache_bandwidth.csv) into this folder.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Replace the --out folder whole if it already holds files (by default it is
        /// refused).
        #[arg(long, requires = "out")]
        force: bool,
        /// Run only the copy and the cache microbenchmark; the cached atomic rates are kept.
        #[arg(long)]
        cache_only: bool,
        /// Print the table (peak.json's) as one JSON document on stdout (docs/schemas/),
        /// the other lines on stderr.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        gpu: GpuArgs,
    },
    /// List the driver's compiler statistics (registers, binary size, stack, local and
    /// shared memory on NVIDIA) of droplet kernel variants at given workgroup sizes.
    Kernels(KernelsArgs),
    /// Draw a throughput chart (PNG and SVG) from one or more points.csv files.
    Plot(PlotArgs),
    /// Match the points of two sweeps and judge each pair (help from `compare_about`).
    #[command(about = compare_about())]
    Compare(CompareArgs),
    /// A finished sweep's points as a markdown table (results folder or points.csv);
    /// with --html, also all of it as one self-contained HTML page.
    Report(ReportArgs),
    /// Join the results folders of a sweep's shards into one.
    Merge {
        /// Shard folders (each with meta.json, points.csv, samples.csv).
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
        /// Folder for the merged results.
        #[arg(long)]
        out: PathBuf,
        /// Merge even when the shards do not cover every point of the sweep; meta.json
        /// then lists the missing points.
        #[arg(long)]
        partial: bool,
        /// Replace the folder whole if it already holds files (by default it is refused).
        #[arg(long)]
        force: bool,
    },
    /// Print a shell completion script for vkerode (bash, zsh, fish, elvish, powershell).
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print vkerode's man page (roff), or a command's (`vkerode man erode`); `make docs`
    /// writes them all into docs/man/man1/ (`MANPATH=docs/man man vkerode-erode`).
    Man {
        /// The command whose page to print. Default: vkerode(1).
        command: Option<String>,
    },
    /// Write the generated references into a folder: cli.md (every command and flag),
    /// config.md (every config key with its meaning, default and unit), results.md
    /// (every CSV column and JSON field with its meaning and unit) and experiments.md
    /// (every experiments/*.toml from its description). `make docs` writes docs/.
    Docs {
        /// The folder (docs/ for the committed references).
        #[arg(long)]
        out: PathBuf,
        /// The experiment configs to index.
        #[arg(long, default_value = "experiments")]
        experiments: PathBuf,
        /// Replace the references in --out if they exist (by default they are refused).
        #[arg(long)]
        force: bool,
    },
    /// Whether the droplets' speed variants erode as the paper's kernel does: each
    /// variant over many droplet seeds in one configuration, against (a) the paper's
    /// kernel in the same configuration and (b) the sequential CPU reference of the same
    /// job (cached per job in --out). TOST with fixed margins and the two-sided test per
    /// figure, paired by droplet seed, Holm-corrected, and a permutation test on the
    /// smoothed change maps; a verdict per figure and per variant and reference
    /// (docs/equivalence.md). Writes runs.csv, verdicts.csv, verdicts.md and
    /// equivalence.json.
    Equivalence(Box<EquivalenceArgs>),
    /// Convert a heightmap between TIFF, 16-bit PNG, raw float32 (.raw, .r32), r16 and
    /// OpenEXR (PFM: read only).
    Convert {
        #[command(flatten)]
        input: InputArgs,
        /// Output heightmap.
        output: PathBuf,
        /// Output format. Default: from the output's extension.
        #[arg(long, value_enum)]
        format: Option<HeightFormat>,
        /// Replace OUTPUT (and the files written beside it) if it exists (by default
        /// it is refused).
        #[arg(long)]
        force: bool,
    },
}

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
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        if text.trim() == "all" {
            return Ok(Self::All);
        }
        let indices = text
            .split(',')
            .map(|i| i.trim().parse::<usize>())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| format!("{text:?} is not `all` or device indices such as 0,1"))?;
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

#[derive(Args)]
pub struct ReproduceArgs {
    /// How long the whole suite may take: seconds, or with a unit ("90s", "10m").
    /// Default: 10 minutes on a GPU, 2 on a CPU device (lavapipe).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub budget: Option<f64>,
    /// Only these claims, by id (comma-separated): their steps alone run. Default: every
    /// claim (docs/reproduce.md lists the ids).
    #[arg(long, value_name = "ID,...", value_delimiter = ',', value_parser = parse_claim)]
    pub claims: Vec<&'static reproduce::Claim>,
    /// Run every step on this map side (64 to 4096, a power of two) instead of the
    /// largest the budget fits; the budget still cuts repetitions, seeds and steps.
    #[arg(long, value_name = "SIDE", value_parser = parse_side)]
    pub size: Option<u32>,
    /// The reference bundle to set the results beside: a folder of reproduce.json, or of
    /// one folder per scale. Default: results/reproduce/nvidia-h200 where it exists (run
    /// from the repository); a folder given must exist.
    #[arg(long, value_name = "DIR", conflicts_with = "no_reference")]
    pub reference: Option<PathBuf>,
    /// Set the results beside no reference (a reference run itself).
    #[arg(long)]
    pub no_reference: bool,
    /// Judge again, by this build's rules and without a device, the suite whose folders
    /// DIR holds (an earlier --out, or one scale of a reference bundle), and rewrite its
    /// reproduce.json, summary.md and report.html; what ran stays as recorded.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["out", "force", "budget", "claims", "size"])]
    pub rejudge: Option<PathBuf>,
    /// Output folder, written whole at the end. Default: out/reproduce/<device>.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Replace --out whole if it already holds files (by default it is refused).
    #[arg(long)]
    pub force: bool,
    /// Print reproduce.json as one JSON document on stdout (docs/schemas/), the other
    /// lines on stderr.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub gpu: GpuArgs,
}

/// A claim of the suite, by its id.
fn parse_claim(text: &str) -> Result<&'static reproduce::Claim, String> {
    reproduce::claim(text.trim()).ok_or_else(|| {
        let ids: Vec<&str> = reproduce::CLAIMS.iter().map(|c| c.id).collect();
        format!("no claim {text:?}; the claims are {}", ids.join(", "))
    })
}

/// A side the suite may run at.
fn parse_side(text: &str) -> Result<u32, String> {
    let sides: Vec<u32> = reproduce::sizes().collect();
    text.trim()
        .parse::<u32>()
        .ok()
        .filter(|s| sides.contains(s))
        .ok_or_else(|| {
            let listed: Vec<String> = sides.iter().map(u32::to_string).collect();
            format!("{text:?} is not a side of the suite: {}", listed.join(", "))
        })
}

/// A duration in seconds: a number of seconds, or humantime's ("90s", "10m", "1h 30m").
fn parse_duration(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let seconds = t
        .parse::<f64>()
        .ok()
        .or_else(|| humantime::parse_duration(t).ok().map(|d| d.as_secs_f64()));
    match seconds {
        Some(seconds) if seconds.is_finite() && seconds > 0.0 => Ok(seconds),
        _ => Err(format!(
            "{text:?} is not a finite duration above 0 in seconds, minutes or hours (600, 90s, 10m or 1h)"
        )),
    }
}

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
    /// PERCENT above 1 too (at or below the threshold: any "slower" point).
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

#[derive(Args)]
pub struct KernelsArgs {
    /// Kernels, comma-separated.
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = [DropletShader::Paper, DropletShader::Fast])]
    pub variant: Vec<DropletShader>,
    /// Workgroup sizes, comma-separated.
    #[arg(long, value_delimiter = ',', default_values_t = [DropletSettings::DEFAULT.workgroup])]
    pub workgroup: Vec<u32>,
    /// L1 levers, comma-separated.
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = [DropletSettings::DEFAULT.lever])]
    pub lever: Vec<Lever>,
    #[arg(long, value_enum, default_value_t = DropletSettings::DEFAULT.atomics)]
    pub atomics: AtomicMode,
    #[arg(long, value_enum, default_value_t = DropletSettings::DEFAULT.spawn)]
    pub spawn: SpawnMode,
    #[arg(long, value_enum, default_value_t = DropletSettings::DEFAULT.spirv)]
    pub spirv: SpirvBuild,
    /// Also write the statistics to this CSV file, one row per statistic.
    #[arg(long, value_name = "FILE.csv")]
    pub csv: Option<PathBuf>,
    /// Replace the --csv file if it exists (by default it is refused).
    #[arg(long, requires = "csv")]
    pub force: bool,
    /// Print the statistics as one JSON document on stdout (docs/schemas/), the other lines on stderr.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub gpu: GpuArgs,
}

impl KernelsArgs {
    /// The settings every listed build shares.
    pub fn base(&self) -> DropletSettings {
        DropletSettings {
            atomics: self.atomics,
            spawn: self.spawn,
            spirv: self.spirv,
            ..DropletSettings::DEFAULT
        }
    }
}

#[derive(Args)]
pub struct PlotArgs {
    /// points.csv files; several devices' files can share one chart.
    #[arg(required = true)]
    pub csvs: Vec<PathBuf>,
    /// Column on the x axis.
    #[arg(long)]
    pub x: String,
    /// Metric on the y axis: a points.csv column, or steps_per_s for each row's rate in
    /// its strategy's unit (droplet_steps_per_s or cell_steps_per_s).
    #[arg(long, default_value = RATE)]
    pub y: String,
    /// Column whose values each get their own series.
    #[arg(long)]
    pub series: Option<String>,
    /// Only rows where COLUMN equals VALUE ("phases=4"); may be repeated.
    #[arg(long = "where", value_name = "COLUMN=VALUE", value_parser = parse_filter)]
    pub filters: Vec<(String, String)>,
    /// Output folder: NAME.png and NAME.svg are written into it (other files in it stay).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// The charts' file name without extension. Default: Y-by-X, as
    /// steps_per_s-by-workgroup.
    #[arg(long, value_name = "STEM", value_parser = parse_file_stem)]
    pub name: Option<String>,
    /// Replace NAME.png and NAME.svg if either exists (by default they are refused).
    #[arg(long)]
    pub force: bool,
}

impl PlotArgs {
    pub fn request(self) -> PlotRequest {
        let name = self
            .name
            .unwrap_or_else(|| plot::default_name(&self.y, &self.x));
        PlotRequest {
            out: self.out.join(name),
            csvs: self.csvs,
            x: self.x,
            y: self.y,
            series: self.series,
            filters: self.filters,
            overwrite: Overwrite::forced(self.force),
        }
    }
}

/// How to read a heightmap file.
#[derive(Args)]
pub struct InputArgs {
    /// Heightmap file: single-band TIFF/GeoTIFF (float32, float64, 8, 16 or 32-bit
    /// integers), grayscale PNG (8 or 16 bits), OpenEXR, one-channel PFM, r16, or raw
    /// little-endian float32 (.raw, or Gaea's square .r32).
    #[arg(value_name = "INPUT")]
    pub path: PathBuf,
    #[command(flatten)]
    pub layout: InputLayout,
}

/// What a heightmap file may not say of itself.
#[derive(Args, Clone, Copy, Default, PartialEq)]
pub struct InputLayout {
    /// Width in cells of a raw float32 input.
    #[arg(long, requires = "height")]
    width: Option<usize>,
    /// Height in cells of a raw float32 input.
    #[arg(long, requires = "width")]
    height: Option<usize>,
    /// Grid spacing in metres, "X" or "X,Y". Default: the file's (GeoTIFF tags, in a
    /// linear unit or in degrees on the CRS's ellipsoid; or the sidecar).
    #[arg(long, value_parser = parse_cell_size)]
    cell_size: Option<CellSize>,
}

impl InputLayout {
    /// The cells of a headerless raw file, where given.
    fn raw_size(&self) -> Option<(usize, usize)> {
        self.width.zip(self.height)
    }

    pub fn read(&self, path: &std::path::Path) -> Result<Dem> {
        let mut dem = read_dem(path, self.raw_size())?;
        if let Some(cell) = self.cell_size {
            dem.cell_size = Some(cell);
        }
        Ok(dem)
    }
}

impl InputArgs {
    /// The file as `convert` writes it: a --cell-size also goes into its georeferencing.
    pub fn read(&self) -> Result<Dem> {
        let mut dem = self.layout.read(&self.path)?;
        if let Some(cell_size) = self.layout.cell_size {
            dem.geo = Some(dem.geo_with_cell_size(cell_size));
        }
        Ok(dem)
    }
}

/// The bound on one run's length, shared by erode and sweep.
#[derive(Args, Clone, Copy, Debug)]
pub struct RunLengthArgs {
    /// Run past the bound on one run's work (droplets x lifetime, or time steps x
    /// cells; the refusal states it), which is otherwise refused before any work.
    #[arg(long)]
    pub allow_long_runs: bool,
}

#[derive(Args)]
pub struct ErodeArgs {
    #[command(flatten)]
    pub settings: RunSettings,
    #[command(flatten)]
    pub run_length: RunLengthArgs,
    /// Erode this heightmap instead of generated terrain (see `vkerode convert --help`
    /// for the formats). Its cells with no data are filled, and nodata again on export.
    /// Its cell size turns elevations into kernel units (cells): elevation x
    /// vertical-scale / cell size; exports turn them back into metres.
    #[arg(long, conflicts_with_all = ["size", "relief"])]
    pub input: Option<PathBuf>,
    #[command(flatten)]
    pub layout: InputLayout,
    /// For an --input that states no cell size in metres (no georeferencing, or a CRS
    /// vkerode cannot measure): assume square cells of this many metres. Without it, or
    /// --cell-size, such an input is refused: the cell size scales every height.
    #[arg(long, value_name = "METRES", requires = "input", conflicts_with = "cell_size", value_parser = parse_cell_side)]
    pub assume_cell_size: Option<f32>,
    /// Vertical exaggeration applied to --input elevations before erosion.
    #[arg(long, default_value_t = InputUnits::DEFAULT.vertical_scale, requires = "input")]
    pub vertical_scale: f32,
    /// What runs the strategy: its kernels on the GPU, or its CPU reference.
    #[arg(long, value_enum, default_value_t = Engine::Gpu)]
    pub engine: Engine,
    /// Format of the heightmaps written.
    #[arg(long, value_enum, default_value_t = HeightFormat::Tif)]
    pub format: HeightFormat,
    /// Write no pictures, only heightmaps and run.json.
    #[arg(long)]
    pub no_images: bool,
    /// Output folder, written whole at the end: never a mix of two runs. Default:
    /// out/erode/<device> (out/erode/cpu for the CPU engines).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Replace --out whole if it already holds files (by default it is refused).
    #[arg(long)]
    pub force: bool,
    /// Print run.json's report as one JSON document on stdout (docs/schemas/), the
    /// other lines on stderr.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub gpu: GpuArgs,
    /// The settings' keys given on the command line rather than defaulted
    /// ([`ErodeArgs::given_in`]).
    #[arg(skip)]
    pub given: Vec<String>,
}

impl ErodeArgs {
    /// The settings' keys `matches` (erode's) has from the command line.
    pub fn given_in(matches: &ArgMatches) -> Vec<String> {
        RunSettings::keys()
            .into_iter()
            .filter(|key| matches.value_source(key) == Some(ValueSource::CommandLine))
            .collect()
    }

    /// The terrain to erode: the settings' noise, or the --input file as read.
    pub fn terrain(&self) -> Result<TerrainSource> {
        let Some(path) = &self.input else {
            return Ok(TerrainSource::Noise);
        };
        TerrainSource::read(path, self.layout.raw_size(), self.input_units()).map_err(|e| match e {
            InputError::NoCellSize { .. } => anyhow!(
                "{e}; give it with --cell-size X[,Y], or assume square cells with --assume-cell-size METRES"
            ),
            e => e.into(),
        })
    }

    /// What turns --input's elevations into kernel heights.
    fn input_units(&self) -> InputUnits {
        InputUnits {
            cell_size: self.layout.cell_size,
            assume_cell_size: self.assume_cell_size,
            vertical_scale: self.vertical_scale,
        }
    }

    /// The settings, checked before any device is opened; errors name the flag.
    pub fn checked_settings(&self) -> Result<&RunSettings> {
        let s = &self.settings;
        let checked = match self.input {
            None => s.check(None),
            Some(_) => s.check_job(None),
        };
        if let Err(e) = checked {
            bail!("{}: {}", e.flag(), e.reason);
        }
        if let Err(e) = s.check_given(&self.given, self.engine != Engine::Gpu) {
            let with = if RunSettings::owner_of(e.key) == Some(s.algorithm) {
                let engine = self.engine.to_possible_value();
                format!("--engine {}", engine.as_ref().map_or("", |v| v.get_name()))
            } else {
                format!("--algorithm {}", s.algorithm.as_str())
            };
            bail!("{} conflicts with {with}: {}", e.flag(), e.reason);
        }
        if self.input.is_none() && self.layout != InputLayout::default() {
            bail!("--width, --height and --cell-size describe an --input file");
        }
        if let Err(e) = self.input_units().check() {
            bail!("{}: {}", e.flag(), e.reason);
        }
        Ok(s)
    }
}

#[derive(Args)]
pub struct EquivalenceArgs {
    /// An equivalence config (experiments/equivalence*.toml): `[fixed]` settings,
    /// `[axes]` whose product is the configurations, and `[equivalence]` options (the
    /// flags below replace them). Without one, the settings flags give one
    /// configuration.
    pub config: Option<PathBuf>,
    #[command(flatten)]
    pub settings: RunSettings,
    #[command(flatten, next_help_heading = "Equivalence")]
    pub options: EquivalenceOptions,
    #[command(flatten)]
    pub run_length: RunLengthArgs,
    /// Output folder, written whole at the end; its reference-cache/ keeps the
    /// sequential runs for a rerun with --force. Default: out/equivalence/<device>, with
    /// the config's name between where one is given.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Replace --out whole if it already holds files (by default it is refused); its
    /// cached sequential runs are reused.
    #[arg(long)]
    pub force: bool,
    /// Also reuse the sequential runs cached in this folder (an earlier equivalence
    /// output, or its reference-cache/); may be repeated.
    #[arg(long, value_name = "DIR")]
    pub reference_cache: Vec<PathBuf>,
    /// Print equivalence.json's report as one JSON document on stdout (docs/schemas/),
    /// the other lines on stderr.
    #[arg(long)]
    pub json: bool,
    /// Override a setting of the config, e.g. `--set fixed.size=128`,
    /// `--set equivalence.seeds=5` (values in TOML); needs a config.
    #[arg(long = "set", value_name = "SECTION.KEY=VALUE", requires = "config")]
    pub overrides: Vec<String>,
    #[command(flatten)]
    pub gpu: GpuArgs,
    /// The settings' keys given on the command line.
    #[arg(skip)]
    pub given: Vec<String>,
    /// The equivalence options given on the command line.
    #[arg(skip)]
    pub options_given: Vec<String>,
}

impl EquivalenceArgs {
    /// Records which settings and options `matches` (equivalence's) has from the
    /// command line.
    pub fn with_given(mut self, matches: &ArgMatches) -> Self {
        let given = |keys: Vec<String>| -> Vec<String> {
            keys.into_iter()
                .filter(|key| matches.value_source(key) == Some(ValueSource::CommandLine))
                .collect()
        };
        self.given = given(RunSettings::keys());
        self.options_given = given(vkerode::erosion::keys::keys_of::<EquivalenceOptions>());
        self
    }
}

/// `plot --name`: one file name, with no folder (--out's) and no extension (.png and
/// .svg are added).
fn parse_file_stem(text: &str) -> Result<String, String> {
    match !text.is_empty() && !text.contains(['/', '\\', '.']) {
        true => Ok(text.to_string()),
        false => Err(format!(
            "{text:?} is not a file name without folder or extension (--out gives the folder; .png and .svg are added)"
        )),
    }
}

fn parse_filter(text: &str) -> Result<(String, String), String> {
    text.split_once('=')
        .map(|(c, v)| (c.trim().to_string(), v.trim().to_string()))
        .ok_or_else(|| format!("{text:?} is not COLUMN=VALUE"))
}

/// `compare`'s description, with the fewest repetitions a verdict needs.
fn compare_about() -> String {
    format!(
        "Match the points of two sweeps (results folders or points.csv files) by their settings (all of them, or as --pair-by and --ignore say) and say, for each, whether NEW is faster, slower or the same as BASE, or unclear: by a bootstrap interval of the ratio of medians from both sets' samples.csv, against a noise threshold (by default the spread measured between reruns on the device). A pair gets no verdict where a side has fewer than {MIN_SAMPLES} repetitions or missed its noise target; no match at all is an error that names the settings that differ. Named baselines: --save-baseline and --baseline"
    )
}

/// `--threshold`'s help, with the default and the table it comes from.
fn threshold_help() -> String {
    format!(
        "The noise threshold in percent: \"faster\" and \"slower\" need the whole interval of new / base beyond 1 ± PERCENT/100, \"same\" needs it within. Default: the spread measured between reruns on the sets' device ({RERUN_NOISE_FILE}), else {}",
        vkerode::readable_number(DEFAULT_THRESHOLD * 100.0)
    )
}

/// A baseline's name, by the library's rule.
fn parse_baseline_name(text: &str) -> Result<String, String> {
    check_baseline_name(text)
        .map(|()| text.to_string())
        .map_err(|e| e.to_string())
}

/// `--threshold`: a relative change, given in percent, finite, above 0 and below 100
/// (at 100, nothing could be faster).
fn parse_threshold(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v < 100.0 => Ok(v / 100.0),
        _ => Err(format!(
            "{text:?} is not a percentage above 0 and below 100 (2 calls changes within 2% the same)"
        )),
    }
}

/// A threshold of `--fail-slower`: a point fails when its time exceeds the base's by
/// more than this share, so it is finite and above 0.
fn parse_percent(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!(
            "{text:?} is not a percentage above 0 (10 fails on a point more than 10% slower)"
        )),
    }
}

fn parse_cell_side(text: &str) -> Result<f32, String> {
    match text.trim().parse::<f32>() {
        Ok(v) => CellSize::check_side(v).map(|()| v),
        Err(_) => Err(format!("{text:?} is not a number of metres")),
    }
}

fn parse_cell_size(text: &str) -> Result<CellSize, String> {
    let parse = parse_cell_side;
    match text.split_once(',') {
        Some((x, y)) => Ok(CellSize {
            x: parse(x)?,
            y: parse(y)?,
        }),
        None => parse(text).map(|v| CellSize { x: v, y: v }),
    }
}
