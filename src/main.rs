//! The vkerode command line.

#![deny(unsafe_code)]

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{bail, Context as _, Result};
use clap::{Args, Parser, Subcommand, ValueEnum};

use vkerode::erosion::KernelVariant;
use vkerode::erosion::{
    AtomicMode, DropletJob, KernelParams, Lever, Passes, Spawn, SpawnMode, SpirvBuild, TileOrder,
};
use vkerode::experiment::config::{Experiment, KernelChoice};
use vkerode::experiment::kernels::{kernel_statistics, write_statistics_csv};
use vkerode::experiment::peak::{
    cache_report, load_cached, measure_cache, save_cached, PeakProbe, PeakTable, RANDOM_FOOTPRINTS,
    WALK_SIDES,
};
use vkerode::experiment::plot::{self, PlotRequest};
use vkerode::experiment::results::merge;
use vkerode::experiment::sweep::{run_sweep, Shard, SweepOptions};
use vkerode::experiment::{
    run_erosion, write_outcome, Engine, ErodeOutcome, ErodeRequest, OutputOptions, TerrainReport,
    TerrainSource, TimeSource,
};
use vkerode::gpu::{
    list_devices, statistics_summary, CompilerStatistic, Context, ContextOptions, DeviceInfo,
};
use vkerode::terrain::formats::{read_dem, write_dem, Dem, HeightFormat};
use vkerode::terrain::image::CellSize;
use vkerode::terrain::units::GridUnits;
use vkerode::terrain::{generate_on_cpu, generate_on_gpu, TerrainSpec, DEFAULT_RELIEF_PER_SIDE};

/// `println!` that stays quiet when stdout is closed (`vkerode ... | head`), where
/// `println!` would panic.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

/// A Vulkan compute research harness for GPU hydraulic erosion.
#[derive(Parser)]
#[command(version, about, long_about = None)]
struct Cli {
    #[command(flatten)]
    gpu: GpuArgs,
    #[command(subcommand)]
    command: Command,
}

#[derive(Args)]
struct GpuArgs {
    /// Device to run on: an index from `vkerode devices` or a name substring.
    /// Default: the first discrete GPU, else integrated, else CPU (lavapipe).
    #[arg(long, global = true)]
    device: Option<String>,
    /// Turn on the Khronos validation layer with synchronization validation
    /// (also VKERODE_VALIDATE=1).
    #[arg(long, global = true)]
    validate: bool,
}

#[derive(Subcommand)]
enum Command {
    /// List Vulkan devices and what vkerode needs to know of them.
    Devices,
    /// Generate erosion-noise terrain and write it as a heightmap file.
    Terrain {
        #[command(flatten)]
        terrain: TerrainArgs,
        /// Output heightmap (.tif, .png or .raw; see --format).
        #[arg(long)]
        out: PathBuf,
        /// Output format. Default: from the file name's extension.
        #[arg(long, value_enum)]
        format: Option<HeightFormat>,
        /// Use the CPU port instead of the GPU shader.
        #[arg(long)]
        cpu: bool,
    },
    /// Generate terrain (or read --input), erode it with the paper's droplet kernel, and
    /// write the heightmaps, pictures and timings.
    Erode(Box<ErodeArgs>),
    /// Run an experiment config (experiments/*.toml): every point of its sweep,
    /// measured with GPU timestamps and recorded in results/<experiment>/<device>/.
    Sweep {
        /// The experiment config.
        config: PathBuf,
        /// Root folder of results.
        #[arg(long, default_value = "results")]
        results: PathBuf,
        /// Continue an interrupted sweep: skip the points already recorded.
        #[arg(long)]
        resume: bool,
        /// Run only every n-th point, starting at the i-th ("i/n", 0-based): one part of
        /// a sweep split over GPUs or jobs. `vkerode merge` joins the parts.
        #[arg(long)]
        shard: Option<Shard>,
        /// No progress bar.
        #[arg(long)]
        quiet: bool,
        /// Override a setting of the config, e.g. `--set fixed.size=1024`,
        /// `--set axes.workgroup=[32,64]`, `--set measure.max_reps=10` (values in TOML).
        /// Overrides are part of the recorded config.
        #[arg(long = "set", value_name = "SECTION.KEY=VALUE")]
        overrides: Vec<String>,
    },
    /// Measure the device's int atomicAdd rates (random addresses, and droplet-shaped
    /// walks) and its cache microbenchmark (load latency and read bandwidth against
    /// working set, 4 KiB up), print them and cache them for sweeps' percent-of-peak.
    Peak {
        /// Also write peak.json and one CSV per probe into this folder.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Run only the cache microbenchmark; the cached atomic rates are kept.
        #[arg(long)]
        cache_only: bool,
    },
    /// List the driver's compiler statistics (registers, binary size, stack, local and
    /// shared memory on NVIDIA) of droplet kernel variants at given workgroup sizes.
    Kernels {
        /// Kernels, comma-separated.
        #[arg(long, value_enum, value_delimiter = ',', default_values_t = [KernelChoice::Paper, KernelChoice::Fast])]
        variant: Vec<KernelChoice>,
        /// Workgroup sizes, comma-separated.
        #[arg(long, value_delimiter = ',', default_values_t = [64])]
        workgroup: Vec<u32>,
        /// L1 levers, comma-separated.
        #[arg(long, value_enum, value_delimiter = ',', default_values_t = [Lever::None])]
        lever: Vec<Lever>,
        #[arg(long, value_enum, default_value_t = AtomicMode::Int)]
        atomics: AtomicMode,
        #[arg(long, value_enum, default_value_t = SpawnMode::Global)]
        spawn: SpawnMode,
        #[arg(long, value_enum, default_value_t = SpirvBuild::Verbatim)]
        spirv: SpirvBuild,
        /// Also write the statistics as CSV, one row per statistic.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Draw a throughput chart (PNG and SVG) from one or more points.csv files.
    Plot {
        /// points.csv files; several devices' files can share one chart.
        #[arg(required = true)]
        csvs: Vec<PathBuf>,
        /// Column on the x axis.
        #[arg(long)]
        x: String,
        /// Metric on the y axis.
        #[arg(long, default_value = "steps_per_s")]
        y: String,
        /// Column whose values each get their own series.
        #[arg(long)]
        series: Option<String>,
        /// Only rows where COLUMN equals VALUE ("phases=4"); may be repeated.
        #[arg(long = "where", value_name = "COLUMN=VALUE", value_parser = parse_filter)]
        filters: Vec<(String, String)>,
        /// Output path; .png and .svg are written.
        #[arg(long)]
        out: PathBuf,
    },
    /// Join the results folders of a sweep's shards into one.
    Merge {
        /// Shard folders (each with meta.json, points.csv, samples.csv).
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
        /// Folder for the merged results.
        #[arg(long)]
        out: PathBuf,
    },
    /// Convert a heightmap between TIFF, 16-bit PNG and raw float32.
    Convert {
        #[command(flatten)]
        input: InputArgs,
        /// Output heightmap.
        output: PathBuf,
        /// Output format. Default: from the output's extension.
        #[arg(long, value_enum)]
        format: Option<HeightFormat>,
    },
}

#[derive(Args)]
struct TerrainArgs {
    /// Side of the square map, in cells.
    #[arg(long, default_value_t = 512)]
    size: u32,
    /// Terrain seed; 0 is the seed shader's own window of the noise.
    #[arg(long, default_value_t = 1)]
    seed: u32,
    /// Relief in cell units: noise heights in [0, 1] are multiplied by it.
    /// Default: 2 x size, which gives a mean slope of about one per cell.
    #[arg(long)]
    relief: Option<f32>,
}

impl TerrainArgs {
    fn spec(&self) -> TerrainSpec {
        TerrainSpec {
            relief: self
                .relief
                .unwrap_or(DEFAULT_RELIEF_PER_SIDE * self.size as f32),
            ..TerrainSpec::square(self.size, self.seed)
        }
    }
}

/// How to read a heightmap file.
#[derive(Args)]
struct InputArgs {
    /// Heightmap file: single-band TIFF/GeoTIFF (float32, int16, uint16, uint8),
    /// grayscale PNG (8 or 16 bits), or raw little-endian float32.
    #[arg(value_name = "INPUT")]
    path: PathBuf,
    /// Width in cells of a raw float32 input.
    #[arg(long, requires = "height")]
    width: Option<usize>,
    /// Height in cells of a raw float32 input.
    #[arg(long, requires = "width")]
    height: Option<usize>,
    /// Grid spacing in metres, "X" or "X,Y". Default: the file's sidecar, else 1.
    #[arg(long, value_parser = parse_cell_size)]
    cell_size: Option<CellSize>,
}

impl InputArgs {
    fn read(&self) -> Result<Dem> {
        let size = self.width.zip(self.height);
        let mut dem = read_dem(&self.path, size)?;
        if let Some(cell) = self.cell_size {
            dem.cell_size = Some(cell);
        }
        Ok(dem)
    }
}

fn parse_filter(text: &str) -> Result<(String, String), String> {
    text.split_once('=')
        .map(|(c, v)| (c.trim().to_string(), v.trim().to_string()))
        .ok_or_else(|| format!("{text:?} is not COLUMN=VALUE"))
}

fn parse_cell_size(text: &str) -> Result<CellSize, String> {
    let parse = |s: &str| match s.trim().parse::<f32>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!("{s:?} is not a positive number of metres")),
    };
    match text.split_once(',') {
        Some((x, y)) => Ok(CellSize {
            x: parse(x)?,
            y: parse(y)?,
        }),
        None => parse(text).map(|v| CellSize { x: v, y: v }),
    }
}

#[derive(Args)]
struct ErodeArgs {
    #[command(flatten)]
    terrain: TerrainArgs,
    /// Erode this heightmap instead of generated terrain (see `vkerode convert --help`
    /// for the formats). Its cells with no data are filled, and nodata again on export.
    #[arg(long, conflicts_with_all = ["size", "relief"])]
    input: Option<PathBuf>,
    /// Width in cells of a raw float32 --input.
    #[arg(long, requires = "height", requires = "input")]
    width: Option<usize>,
    /// Height in cells of a raw float32 --input.
    #[arg(long, requires = "width", requires = "input")]
    height: Option<usize>,
    /// Grid spacing of --input in metres, "X" or "X,Y". Heights become kernel units
    /// (cells) as elevation x vertical-scale / X; exports turn them back into metres.
    #[arg(long, value_parser = parse_cell_size, requires = "input")]
    cell_size: Option<CellSize>,
    /// Vertical exaggeration applied to --input elevations before erosion.
    #[arg(long, default_value_t = 1.0, requires = "input")]
    vertical_scale: f32,
    /// Number of droplets.
    #[arg(long, default_value_t = 300_000)]
    droplets: u32,
    /// Droplet spawn seed. Default: the terrain seed.
    #[arg(long)]
    droplet_seed: Option<u32>,
    /// INERTIA: share of the previous direction kept each step.
    #[arg(long, default_value_t = 0.05)]
    inertia: f32,
    /// CAPACITY_FACTOR: sediment capacity per unit of slope, speed and water.
    #[arg(long, default_value_t = 4.0)]
    capacity: f32,
    /// EROSION_RATE: share of the capacity deficit eroded per step.
    #[arg(long, default_value_t = 0.3)]
    erosion: f32,
    /// DEPOSITION_RATE: share of the excess sediment deposited per step.
    #[arg(long, default_value_t = 0.3)]
    deposition: f32,
    /// EVAPORATION_RATE: share of the water lost per step.
    #[arg(long, default_value_t = 0.01)]
    evaporation: f32,
    /// MAX_LIFETIME: steps per droplet at most.
    #[arg(long, default_value_t = 30)]
    lifetime: u32,
    /// Fixed-point units per height unit (the paper's 1000).
    #[arg(long, default_value_t = 1000.0)]
    scale: f32,
    /// What runs the droplets: the paper's kernel on the GPU, or the CPU reference.
    #[arg(long, value_enum, default_value_t = Engine::Gpu)]
    engine: Engine,
    /// Workgroup size (local_size_x; the paper uses 64).
    #[arg(long, default_value_t = 64)]
    workgroup: u32,
    /// How modifyHeight adds: int (the paper's fixed point and atomicAdd), float
    /// (float atomics, where the device has them) or racy (a plain read-modify-write).
    #[arg(long, value_enum, default_value_t = AtomicMode::Int)]
    atomics: AtomicMode,
    /// Where droplets start: global (the paper's) or tiled (each workgroup in one tile).
    #[arg(long, value_enum, default_value_t = SpawnMode::Global)]
    spawn: SpawnMode,
    /// Tile side in cells, for --spawn tiled.
    #[arg(long, default_value_t = 32)]
    tile: u32,
    /// Which tile consecutive workgroups get, for --spawn tiled.
    #[arg(long, value_enum, default_value_t = TileOrder::Linear)]
    tile_order: TileOrder,
    /// Checkerboard colours (1, 4 or 9), each its own dispatch, for --spawn tiled.
    #[arg(long, default_value_t = 1)]
    phases: u32,
    /// Droplets per dispatch at most. Default: one per 64 map cells, for stability.
    #[arg(long)]
    batch: Option<u32>,
    /// The kernel: the paper's, or vkerode's fast variant of it (int atomics, one pass).
    #[arg(long, value_enum, default_value_t = KernelChoice::Paper)]
    variant: KernelChoice,
    /// SPIR-V as build.rs compiled it verbatim, or through shaderc's optimiser.
    #[arg(long, value_enum, default_value_t = SpirvBuild::Verbatim)]
    spirv: SpirvBuild,
    /// How the heightfield's loads reach the cache (the L1 experiments): as built, no
    /// shared memory declared, a readonly binding, a texel buffer, or robustness off.
    #[arg(long, value_enum, default_value_t = Lever::None)]
    lever: Lever,
    /// Dispatch passes each droplet's life is split over, its state kept in a buffer.
    #[arg(long, default_value_t = 1)]
    passes: u32,
    /// Start droplet i in pass i mod --passes, so droplets of every age run together.
    #[arg(long)]
    stagger: bool,
    /// Droplets read frozen heights and add into a delta buffer applied after each
    /// dispatch: reruns are bit-identical. Same as --atomics deterministic.
    #[arg(long)]
    deterministic: bool,
    /// Format of the heightmaps written.
    #[arg(long, value_enum, default_value_t = HeightFormat::Tif)]
    format: HeightFormat,
    /// Write no pictures, only heightmaps and run.json.
    #[arg(long)]
    no_images: bool,
    /// Output folder.
    #[arg(long, default_value = "out/erode")]
    out: PathBuf,
}

impl ErodeArgs {
    fn terrain(&self) -> Result<TerrainSource> {
        let Some(path) = &self.input else {
            return Ok(TerrainSource::Noise(self.terrain.spec()));
        };
        if !(self.vertical_scale.is_finite() && self.vertical_scale > 0.0) {
            bail!(
                "--vertical-scale must be a positive number, got {}",
                self.vertical_scale
            );
        }
        let input = InputArgs {
            path: path.clone(),
            width: self.width,
            height: self.height,
            cell_size: self.cell_size,
        };
        let dem = input.read()?;
        let units = GridUnits {
            cell_size: dem.cell_size.unwrap_or_default(),
            vertical_scale: self.vertical_scale,
        };
        Ok(TerrainSource::File {
            path: path.clone(),
            dem,
            units,
        })
    }

    fn job(&self) -> DropletJob {
        DropletJob {
            droplets: self.droplets,
            seed: self.droplet_seed.unwrap_or(self.terrain.seed),
            params: KernelParams {
                inertia: self.inertia,
                capacity: self.capacity,
                erosion: self.erosion,
                deposition: self.deposition,
                evaporation: self.evaporation,
                lifetime: self.lifetime,
                fixed_point_scale: self.scale,
            },
            spawn: Spawn {
                mode: self.spawn,
                tile: self.tile,
                order: self.tile_order,
                phases: self.phases,
            },
            passes: Passes {
                count: self.passes,
                stagger: self.stagger,
            },
        }
    }

    fn atomics(&self) -> Result<AtomicMode> {
        match (self.deterministic, self.atomics) {
            (false, mode) => Ok(mode),
            (true, AtomicMode::Int | AtomicMode::Deterministic) => Ok(AtomicMode::Deterministic),
            (true, mode) => bail!(
                "--deterministic needs int atomics, not --atomics {}",
                mode.as_str()
            ),
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<()> {
    let options = ContextOptions {
        device: cli.gpu.device.clone(),
        validation: cli.gpu.validate,
    };
    match &cli.command {
        Command::Devices => devices(&options),
        Command::Terrain {
            terrain,
            out,
            format,
            cpu,
        } => terrain_command(&options, terrain, out, *format, *cpu),
        Command::Erode(args) => erode(&options, args),
        Command::Convert {
            input,
            output,
            format,
        } => convert(input, output, *format),
        Command::Sweep {
            config,
            results,
            resume,
            shard,
            quiet,
            overrides,
        } => {
            let sweep_options = SweepOptions {
                results_root: results.clone(),
                resume: *resume,
                shard: *shard,
                quiet: *quiet,
            };
            sweep(&options, config, overrides, &sweep_options)
        }
        Command::Peak { out, cache_only } => peak(&options, out.as_deref(), *cache_only),
        Command::Kernels {
            variant,
            workgroup,
            lever,
            atomics,
            spawn,
            spirv,
            out,
        } => {
            // Only what selects the build matters: the spawn mode, one pass.
            let job = DropletJob {
                droplets: 1,
                seed: 1,
                params: KernelParams::default(),
                spawn: Spawn {
                    mode: *spawn,
                    ..Spawn::default()
                },
                passes: Passes::default(),
            };
            let mut variants = Vec::new();
            for v in variant {
                for &lever in lever {
                    let variant = v.variant(&job, *atomics, *spirv, lever);
                    match variant.unsupported() {
                        Some(reason) => say!(
                            "{} with lever {}: no build ({reason})",
                            v.to_possible_value()
                                .map_or_else(String::new, |p| p.get_name().to_string()),
                            lever.as_str()
                        ),
                        None => variants.push(variant),
                    }
                }
            }
            kernels(&options, &variants, workgroup, out.as_deref())
        }
        Command::Plot {
            csvs,
            x,
            y,
            series,
            filters,
            out,
        } => {
            let request = PlotRequest {
                csvs: csvs.clone(),
                x: x.clone(),
                y: y.clone(),
                series: series.clone(),
                filters: filters.clone(),
                out: plot::stem(out),
            };
            for file in plot::plot(&request)? {
                say!("wrote {}", file.display());
            }
            Ok(())
        }
        Command::Merge { inputs, out } => {
            let points = merge(inputs, out)?;
            say!(
                "merged {points} points from {} folders into {}",
                inputs.len(),
                out.display()
            );
            Ok(())
        }
    }
}

fn open_device(options: &ContextOptions) -> Result<Arc<Context>> {
    let ctx = Context::new(options).context("setting up the Vulkan device")?;
    let info = ctx.info();
    say!(
        "device: {} ({}), driver {} {}, Vulkan {}",
        info.name,
        info.device_type,
        info.driver_name,
        info.driver_info,
        info.api_version
    );
    Ok(ctx)
}

fn devices(options: &ContextOptions) -> Result<()> {
    let devices = list_devices(options).context("listing Vulkan devices")?;
    if devices.is_empty() {
        bail!("no Vulkan device found; install mesa-vulkan-drivers for the CPU device lavapipe");
    }
    for d in &devices {
        print_device(d);
    }
    Ok(())
}

fn print_device(d: &DeviceInfo) {
    let yes_no = |b: bool| if b { "yes" } else { "no" };
    let usable = if d.is_usable() {
        ""
    } else {
        "  (unusable: needs Vulkan 1.2 and a compute queue)"
    };
    say!("[{}] {}{usable}", d.index, d.name);
    say!("    type:                 {}", d.device_type);
    say!(
        "    driver:               {} {}",
        d.driver_name,
        d.driver_info
    );
    say!("    Vulkan API:           {}", d.api_version);
    say!("    subgroup size:        {}", d.subgroup_size);
    say!(
        "    timestamps:           {} ({} valid bits, {} ns/tick)",
        yes_no(d.has_timestamps()),
        d.timestamp_valid_bits,
        d.timestamp_period_ns
    );
    say!("    float atomicAdd:      {}", yes_no(d.float_atomic_add));
    say!(
        "    max workgroup size:   {} (x), {} invocations",
        d.max_workgroup_size_x,
        d.max_workgroup_invocations
    );
    say!(
        "    max workgroup count:  [{}, {}, {}]",
        d.max_workgroup_count[0],
        d.max_workgroup_count[1],
        d.max_workgroup_count[2]
    );
    say!(
        "    max SSBO range:       {} bytes",
        d.max_storage_buffer_range
    );
    say!(
        "    max shared memory:    {} bytes per workgroup",
        d.max_shared_memory_bytes
    );
    say!(
        "    subgroup sizes:       {} to {} (what subgroup size control can choose)",
        d.subgroup_size_range[0],
        d.subgroup_size_range[1]
    );
    say!(
        "    max texel buffer:     {} texels",
        d.max_texel_buffer_elements
    );
    say!(
        "    compiler statistics:  {} (VK_KHR_pipeline_executable_properties)",
        yes_no(d.pipeline_statistics)
    );
    say!(
        "    pipeline robustness:  {} (VK_EXT_pipeline_robustness; vkerode never enables robustBufferAccess)",
        yes_no(d.pipeline_robustness)
    );
    say!(
        "    Vulkan memory model:  {} (with device scope)",
        yes_no(d.vulkan_memory_model)
    );
}

/// The format asked for, or the one the file name implies.
fn output_format(path: &Path, format: Option<HeightFormat>) -> Result<HeightFormat> {
    format
        .or_else(|| HeightFormat::from_path(path))
        .with_context(|| {
            format!(
                "{}: cannot tell the format from the name; use .tif, .png or .raw, or --format",
                path.display()
            )
        })
}

fn terrain_command(
    options: &ContextOptions,
    args: &TerrainArgs,
    out: &Path,
    format: Option<HeightFormat>,
    cpu: bool,
) -> Result<()> {
    let format = output_format(out, format)?;
    let spec = args.spec();
    let heights = if cpu {
        generate_on_cpu(&spec)?
    } else {
        generate_on_gpu(&open_device(options)?, &spec)?
    };
    let stats = heights.stats();
    let slope = heights.mean_slope();
    let dem = Dem {
        heights,
        nodata: None,
        units: "cells".into(),
        cell_size: Some(CellSize::default()),
    };
    for file in write_dem(out, format, &dem)? {
        say!("wrote {}", file.display());
    }
    say!(
        "{} x {} cells, heights {:.3} to {:.3} cells, mean slope {slope:.3} per cell",
        dem.heights.width(),
        dem.heights.height(),
        stats.min,
        stats.max,
    );
    Ok(())
}

fn convert(input: &InputArgs, output: &Path, format: Option<HeightFormat>) -> Result<()> {
    let format = output_format(output, format)?;
    let dem = input.read()?;
    let missing = dem.missing_cells();
    for file in write_dem(output, format, &dem)? {
        say!("wrote {}", file.display());
    }
    let stats = dem.heights.stats();
    say!(
        "{} x {} cells, heights {} to {}{}, {missing} cells with no data",
        dem.heights.width(),
        dem.heights.height(),
        stats.min,
        stats.max,
        if dem.units.is_empty() {
            String::new()
        } else {
            format!(" {}", dem.units)
        }
    );
    Ok(())
}

fn erode(options: &ContextOptions, args: &ErodeArgs) -> Result<()> {
    let job = args.job();
    job.validate().context("checking the kernel parameters")?;
    let terrain = args.terrain()?;
    match &terrain {
        TerrainSource::Noise(spec) => spec.validate().context("checking the terrain")?,
        TerrainSource::File { path, dem, units } => {
            let missing = dem.missing_cells();
            say!(
                "read {}: {} x {} cells, cell size {} x {}, vertical scale {}",
                path.display(),
                dem.heights.width(),
                dem.heights.height(),
                units.cell_size.x,
                units.cell_size.y,
                units.vertical_scale
            );
            if missing > 0 {
                say!("{missing} cells have no data: filled from their neighbours for the kernel, nodata again on export");
            }
        }
    }
    let request = ErodeRequest {
        terrain,
        job,
        engine: args.engine,
        workgroup: args.workgroup,
        batch: args.batch,
        atomics: args.atomics()?,
        variant: args.variant,
        spirv: args.spirv,
        lever: args.lever,
    };
    let ctx = match request.engine {
        Engine::Gpu => Some(open_device(options)?),
        Engine::Cpu | Engine::CpuSequential => None,
    };
    let outcome = run_erosion(ctx.as_ref(), &request).with_context(|| match &request.terrain {
        TerrainSource::File { path, .. } => format!("eroding {}", path.display()),
        TerrainSource::Noise(_) => "eroding the generated terrain".into(),
    })?;
    let output = OutputOptions {
        format: args.format,
        images: !args.no_images,
    };
    let files = write_outcome(&args.out, &outcome, output)?;
    print_outcome(&outcome);
    for file in files {
        say!("wrote {}", file.display());
    }
    Ok(())
}

fn print_outcome(outcome: &ErodeOutcome) {
    let r = &outcome.report;
    let f = &r.figures;
    let (w, h) = (outcome.before.width(), outcome.before.height());
    match r.engine {
        Engine::Gpu => say!(
            "eroded {w}x{h} with {} droplets in {} dispatch(es) of at most {} (workgroup {})",
            r.job.droplets,
            r.dispatches,
            r.batch,
            r.workgroup
        ),
        _ => say!(
            "eroded {w}x{h} with {} droplets on the {}",
            r.job.droplets,
            r.provenance.device
        ),
    }
    match (f.time_source, f.gpu_ms) {
        (TimeSource::GpuTimestamps, Some(ms)) => {
            say!(
                "GPU time: {ms:.3} ms (timestamps); wall time {:.3} ms",
                f.wall_ms
            )
        }
        (TimeSource::WallClock, _) => eprintln!(
            "warning: this device has no timestamps; timing falls back to wall clock: {:.3} ms",
            f.wall_ms
        ),
        _ => say!("CPU time: {:.3} ms (wall clock)", f.wall_ms),
    }
    if r.engine == Engine::Gpu {
        say!(
            "compiler statistics of {}: {}",
            r.kernel.as_deref().unwrap_or("the kernel"),
            statistics_line(&r.compiler_statistics)
        );
    }
    let counted = if r.engine == Engine::Gpu {
        "counted in a separate instrumented run"
    } else {
        "counted by the reference"
    };
    say!(
        "droplets/s: {:.4e}   droplet-steps/s: {:.4e}   ({} steps, {counted})",
        f.droplets_per_s,
        f.steps_per_s,
        r.work.steps
    );
    let c = &r.change;
    let units = if matches!(r.terrain, TerrainReport::Noise(_)) {
        "cells"
    } else {
        "kernel height units (cells)"
    };
    say!(
        "height change in {units}: total {:.1}, cells changed {:.1}%, channels {:+.4} vs hillslopes {:+.4} on average",
        c.total_change,
        c.changed_cells_share * 100.0,
        c.channel_mean_change,
        c.hillslope_mean_change
    );
    say!(
        "channel incision: {:.4} before, {:.4} after",
        c.channel_incision_before,
        c.channel_incision_after
    );
}

fn sweep(
    options: &ContextOptions,
    config: &Path,
    overrides: &[String],
    sweep: &SweepOptions,
) -> Result<()> {
    // Syntax, types and values first, with no device; then the device's limits.
    Experiment::load(config, overrides, None)?;
    let ctx = open_device(options)?;
    let experiment = Experiment::load(config, overrides, Some(ctx.info()))?;
    say!(
        "{}: {} points{}",
        experiment.config.name,
        experiment.points.len(),
        sweep
            .shard
            .map(|s| format!(", shard {s}"))
            .unwrap_or_default()
    );
    let summary = run_sweep(&ctx, &experiment, sweep)?;
    say!(
        "measured {} points ({} already recorded) into {}",
        summary.measured,
        summary.skipped,
        summary.dir.display()
    );
    Ok(())
}

fn kernels(
    options: &ContextOptions,
    variants: &[KernelVariant],
    workgroups: &[u32],
    out: Option<&Path>,
) -> Result<()> {
    let ctx = open_device(options)?;
    let rows = kernel_statistics(
        &ctx,
        variants,
        workgroups,
        KernelParams::default().fixed_point_scale,
    )?;
    for row in &rows {
        say!(
            "{} (workgroup {}, lever {}): {}",
            row.variant.module_name(),
            row.workgroup,
            row.variant.lever.as_str(),
            statistics_line(&row.statistics)
        );
    }
    if !ctx.info().pipeline_statistics {
        say!(
            "{} does not offer VK_KHR_pipeline_executable_properties: no statistics to list",
            ctx.info().name
        );
    }
    if let Some(path) = out {
        write_statistics_csv(path, &rows)?;
        say!("wrote {}", path.display());
    }
    Ok(())
}

/// The statistics on one line, or why there are none.
fn statistics_line(statistics: &[CompilerStatistic]) -> String {
    if statistics.is_empty() {
        "none reported by the driver".into()
    } else {
        statistics_summary(statistics)
    }
}

fn peak(options: &ContextOptions, out: Option<&Path>, cache_only: bool) -> Result<()> {
    let ctx = open_device(options)?;
    let info = ctx.info();
    let mut table = if cache_only {
        load_cached(info).unwrap_or_else(|| PeakTable::empty(info))
    } else {
        atomic_peaks(&ctx)?
    };
    let (latency, bandwidth) = measure_cache(&ctx, |_| {})?;
    for line in cache_report(&latency, &bandwidth) {
        say!("{line}");
    }
    table.cache_latency = latency;
    table.cache_bandwidth = bandwidth;
    let cached = save_cached(info, &table)?;
    say!("cached in {}", cached.display());
    if let Some(dir) = out {
        for path in table.write(dir)? {
            say!("wrote {}", path.display());
        }
    }
    Ok(())
}

/// The random-address and droplet-shaped walk probes, printed as they are measured.
fn atomic_peaks(ctx: &Arc<Context>) -> Result<PeakTable> {
    let info = ctx.info();
    let probe = PeakProbe::new(ctx)?;
    let mut table = PeakTable::empty(info);
    say!("random-address atomicAdd (int):");
    say!(
        "  {:>12} {:>14} {:>14}",
        "addresses",
        "footprint",
        "G atomics/s"
    );
    for addresses in RANDOM_FOOTPRINTS {
        if !probe.fits(u64::from(addresses)) {
            say!("  {addresses:>12}   does not fit this device's maxStorageBufferRange");
            continue;
        }
        let r = probe.random(addresses)?;
        say!(
            "  {:>12} {:>11} KiB {:>14.2}",
            addresses,
            r.footprint_bytes / 1024,
            r.atomics_per_s / 1e9
        );
        table.random.push(r);
    }
    say!("droplet-shaped walks (30 unit steps, 2x2 atomicAdd per step):");
    say!(
        "  {:>8} {:>12} {:>16} {:>14}",
        "map",
        "footprint",
        "G walk-steps/s",
        "G atomics/s"
    );
    for side in WALK_SIDES {
        if !probe.fits(u64::from(side).pow(2)) {
            say!("  {side:>8}   does not fit this device's maxStorageBufferRange");
            continue;
        }
        let w = probe.walk(side)?;
        say!(
            "  {:>8} {:>8} MiB {:>16.2} {:>14.2}",
            format!("{side}²"),
            w.footprint_bytes >> 20,
            w.walk_steps_per_s / 1e9,
            w.atomics_per_s / 1e9
        );
        table.walk.push(w);
    }
    Ok(table)
}
