//! The vkerode command line.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context as _, Result};
use clap::{Args, Parser, Subcommand};

use vkerode::erosion::{DropletJob, KernelParams};
use vkerode::experiment::{run_erosion, write_outcome, Engine, ErodeRequest, TimeSource};
use vkerode::gpu::{list_devices, Context, ContextOptions, DeviceInfo};
use vkerode::terrain::image::write_height_png16;
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
    /// Generate erosion-noise terrain and write it as a 16-bit PNG heightmap.
    Terrain {
        #[command(flatten)]
        terrain: TerrainArgs,
        /// Output PNG; a JSON sidecar with its height range is written beside it.
        #[arg(long)]
        out: PathBuf,
        /// Use the CPU port instead of the GPU shader.
        #[arg(long)]
        cpu: bool,
    },
    /// Generate terrain, erode it with the paper's droplet kernel, and write the
    /// heightmaps, shaded-relief pictures and timings.
    Erode(ErodeArgs),
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

#[derive(Args)]
struct ErodeArgs {
    #[command(flatten)]
    terrain: TerrainArgs,
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
    /// Droplets per dispatch at most. Default: one per 64 map cells, for stability.
    #[arg(long)]
    batch: Option<u32>,
    /// Output folder for heightmaps, pictures and run.json.
    #[arg(long, default_value = "out/erode")]
    out: PathBuf,
}

impl ErodeArgs {
    fn request(&self) -> ErodeRequest {
        ErodeRequest {
            terrain: self.terrain.spec(),
            job: DropletJob {
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
            },
            engine: self.engine,
            workgroup: self.workgroup,
            batch: self.batch,
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
        Command::Terrain { terrain, out, cpu } => terrain_command(&options, terrain, out, *cpu),
        Command::Erode(args) => erode(&options, args),
    }
}

fn open_device(options: &ContextOptions) -> Result<std::sync::Arc<Context>> {
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
    say!(
        "[{}] {}{}",
        d.index,
        d.name,
        if d.is_usable() {
            ""
        } else {
            "  (unusable: needs Vulkan 1.2 and a compute queue)"
        }
    );
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
}

fn terrain_command(
    options: &ContextOptions,
    args: &TerrainArgs,
    out: &Path,
    cpu: bool,
) -> Result<()> {
    if out.extension().and_then(|e| e.to_str()) != Some("png") {
        bail!(
            "--out {}: terrain is written as a 16-bit PNG, so the name must end in .png",
            out.display()
        );
    }
    let spec = args.spec();
    let map = if cpu {
        generate_on_cpu(&spec)?
    } else {
        generate_on_gpu(&open_device(options)?, &spec)?
    };
    write_height_png16(out, &map, "cells")?;
    let stats = map.stats();
    say!(
        "wrote {} ({} x {}, heights {:.3} to {:.3} cells, mean slope {:.3} per cell)",
        out.display(),
        map.width(),
        map.height(),
        stats.min,
        stats.max,
        map.mean_slope()
    );
    Ok(())
}

fn erode(options: &ContextOptions, args: &ErodeArgs) -> Result<()> {
    let request = args.request();
    request
        .job
        .validate()
        .context("checking the kernel parameters")?;
    request.terrain.validate().context("checking the terrain")?;
    let ctx = match request.engine {
        Engine::Gpu => Some(open_device(options)?),
        Engine::Cpu | Engine::CpuSequential => None,
    };
    let outcome = run_erosion(ctx.as_ref(), &request).context("eroding")?;
    let files = write_outcome(&args.out, &outcome)?;

    let r = &outcome.report;
    let f = &r.figures;
    match r.engine {
        Engine::Gpu => say!(
            "eroded {}x{} with {} droplets in {} dispatch(es) of at most {} (workgroup {})",
            r.terrain.width,
            r.terrain.height,
            r.job.droplets,
            r.dispatches,
            r.batch,
            r.workgroup
        ),
        _ => say!(
            "eroded {}x{} with {} droplets on the {}",
            r.terrain.width,
            r.terrain.height,
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
    say!(
        "height change: total {:.1}, cells changed {:.1}%, channels {:+.4} vs hillslopes {:+.4} on average",
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
    for file in files {
        say!("wrote {}", file.display());
    }
    Ok(())
}
