//! The command line's top level: the commands, each with its flags in its own module
//! (`commands/`), and the flags every command takes.

use clap::{Args, Parser, Subcommand};

use super::commands::compare::{self, CompareArgs};
use super::commands::completions::CompletionsArgs;
use super::commands::convert::ConvertArgs;
use super::commands::devices::DevicesArgs;
use super::commands::docs::{DocsArgs, ManArgs};
use super::commands::equivalence::EquivalenceArgs;
use super::commands::erode::ErodeArgs;
use super::commands::kernels::KernelsArgs;
use super::commands::maps::MapsArgs;
use super::commands::merge::MergeArgs;
use super::commands::peak::PeakArgs;
use super::commands::plot::PlotArgs;
use super::commands::report::ReportArgs;
use super::commands::reproduce::ReproduceArgs;
use super::commands::strategies::StrategiesArgs;
use super::commands::sweep::SweepArgs;
use super::commands::terrain::TerrainArgs;
use vkerode::experiment::sweep::Verbosity;
use vkerode::terrain::output::DEFAULT_OUT_RULE;

/// The command line's one grammar, shown by `vkerode --help` and docs/cli.md.
const GRAMMAR: &str = "Outputs: --out DIR is always a folder, on every command that writes several files (erode, sweep, strategies, peak, equivalence, merge, plot, docs). A single file gets a flag named for its kind (--markdown FILE.md, --html FILE.html, --csv FILE.csv), or a positional OUTPUT where writing it is the command's whole job (terrain, convert, maps). One overwrite rule: every output, file or folder, that already exists is refused unless --force replaces it (sweep: --resume continues it instead; plot adds its two charts to the folder, refusing only charts of the same name). --set SECTION.KEY=VALUE overrides a key of the config a command loads (sweep, strategies, equivalence). --quiet and --verbose go with every command; the device flags (--device, --validate, --max-submission-ms) with the commands that open a device.";

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

impl VerbosityArgs {
    pub fn level(&self) -> Verbosity {
        match (self.quiet, self.verbose) {
            (true, _) => Verbosity::Quiet,
            (false, true) => Verbosity::Verbose,
            (false, false) => Verbosity::Normal,
        }
    }
}

#[derive(Subcommand)]
pub enum Command {
    /// List Vulkan devices and what vkerode needs to know of them.
    Devices(DevicesArgs),
    /// Generate erosion-noise terrain and write it as a heightmap file.
    Terrain(TerrainArgs),
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
    Strategies(StrategiesArgs),
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
    Peak(PeakArgs),
    /// List the driver's compiler statistics (registers, binary size, stack, local and
    /// shared memory on NVIDIA) of droplet kernel variants at given workgroup sizes.
    Kernels(KernelsArgs),
    /// Draw a throughput chart (PNG and SVG) from one or more points.csv files.
    Plot(PlotArgs),
    /// Set the erosion maps of erode runs (their erosion.tif) side by side as one PNG,
    /// each with its scale bar, on one colour scale where their ranges allow it; the
    /// picture says which.
    Maps(MapsArgs),
    /// Match the points of two sweeps and judge each pair (help from `compare_about`).
    #[command(about = compare::about())]
    Compare(CompareArgs),
    /// A finished sweep's points as a markdown table (results folder or points.csv);
    /// with --html, also all of it as one self-contained HTML page.
    Report(ReportArgs),
    /// Join the results folders of a sweep's shards into one.
    Merge(MergeArgs),
    /// Print a shell completion script for vkerode (bash, zsh, fish, elvish, powershell).
    Completions(CompletionsArgs),
    /// Print vkerode's man page (roff), or a command's (`vkerode man erode`); `make docs`
    /// writes them all into docs/man/man1/ (`MANPATH=docs/man man vkerode-erode`).
    Man(ManArgs),
    /// Write the generated references into a folder: cli.md (every command and flag),
    /// config.md (every config key with its meaning, default and unit), results.md
    /// (every CSV column and JSON field with its meaning and unit) and experiments.md
    /// (every experiments/*.toml from its description). `make docs` writes docs/.
    Docs(DocsArgs),
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
    Convert(ConvertArgs),
}
