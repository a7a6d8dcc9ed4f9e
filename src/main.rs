//! The vkerode command line: parses the flags, opens the device and hands the work to
//! the library; `cli::args` holds the flags, `cli::report` what is printed.

#![deny(unsafe_code)]

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{bail, Context as _, Result};
use clap::Parser;

/// `println!` that stays quiet when stdout is closed (`vkerode ... | head`), where
/// `println!` would panic.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

mod cli;

use cli::args::{
    Cli, Command, DeviceList, ErodeArgs, InputArgs, KernelsArgs, SweepArgs, TerrainArgs,
};
use cli::report::{
    print_device, print_input, print_kernels, print_outcome, print_pipes_outcome, say_wrote,
    write_text,
};
use vkerode::erosion::Algorithm;
use vkerode::experiment::compare::{compare, report};
use vkerode::experiment::config::Experiment;
use vkerode::experiment::device_slug;
use vkerode::experiment::kernels::{kernel_statistics, kernel_variants, write_statistics_csv};
use vkerode::experiment::peak::measure_peaks;
use vkerode::experiment::pipes::run_pipes;
use vkerode::experiment::plot;
use vkerode::experiment::results::{merge, FAILED_CSV};
use vkerode::experiment::strategies::{run_strategies, Strategies};
use vkerode::experiment::sweep::{dry_run, run_sweep};
use vkerode::experiment::TerrainSource;
use vkerode::experiment::{run_erosion, write_outcome, Engine, ErodeRequest, OutputOptions};
use vkerode::gpu::{list_devices, Context, ContextOptions};
use vkerode::terrain::formats::{write_dem, Dem, HeightFormat};
use vkerode::terrain::image::CellSize;
use vkerode::terrain::output::StagedFolder;
use vkerode::terrain::{generate_on_cpu, generate_on_gpu};

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<()> {
    let options = cli.gpu.options();
    match cli.command {
        Command::Devices => devices(&options),
        Command::Terrain {
            terrain,
            out,
            format,
            cpu,
        } => terrain_command(&options, &terrain, &out, format, cpu),
        Command::Erode(args) => erode(&options, &args),
        Command::Convert {
            input,
            output,
            format,
        } => convert(&input, &output, format),
        Command::Sweep(args) => sweep(&options, &args),
        Command::Compare {
            base,
            new,
            out,
            fail_slower,
        } => compare_command(&base, &new, out.as_deref(), fail_slower),
        Command::Report { results, out } => {
            let table = report(&results)?;
            say!("{table}");
            write_text(out.as_deref(), &table)
        }
        Command::Peak {
            out,
            force,
            cache_only,
        } => {
            let staged = out
                .map(|dir| StagedFolder::begin(&dir, force))
                .transpose()?;
            let ctx = open_device(&options)?;
            let (table, cached) = measure_peaks(&ctx, cache_only, |line| say!("{line}"))?;
            say!("cached in {}", cached.display());
            if let Some(staged) = staged {
                let written = table.write(staged.path())?;
                say_wrote(staged.publish(written)?);
            }
            Ok(())
        }
        Command::Strategies { config, out, force } => {
            strategies(&options, &config, out.as_deref(), force)
        }
        Command::Kernels(args) => kernels(&options, &args),
        Command::Plot(args) => {
            let plotted = plot::plot(&args.request())?;
            if !plotted.left_out.is_empty() {
                eprintln!(
                    "warning: left out {} row(s) with a non-finite or absurd value: {}",
                    plotted.left_out.len(),
                    plotted.left_out.join(", ")
                );
            }
            say_wrote(plotted.files);
            Ok(())
        }
        Command::Merge {
            inputs,
            out,
            partial,
            force,
        } => {
            let points = merge(&inputs, &out, partial, force)?;
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

fn devices(options: &ContextOptions) -> Result<()> {
    let devices = list_devices(options).context("listing Vulkan devices")?;
    if devices.is_empty() {
        bail!("no Vulkan device found; install mesa-vulkan-drivers for the CPU device lavapipe");
    }
    devices.iter().for_each(print_device);
    Ok(())
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

fn write_heightmap(out: &Path, format: HeightFormat, dem: &Dem) -> Result<()> {
    say_wrote(write_dem(out, format, dem)?);
    let stats = dem.heights.stats();
    say!(
        "{} x {} cells, heights {} to {}{}, {} cells with no data",
        dem.heights.width(),
        dem.heights.height(),
        stats.min,
        stats.max,
        if dem.units.is_empty() {
            String::new()
        } else {
            format!(" {}", dem.units)
        },
        dem.missing_cells()
    );
    Ok(())
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
    say!("mean slope {:.3} per cell", heights.mean_slope());
    let dem = Dem {
        geo: None,
        heights,
        nodata: None,
        units: "cells".into(),
        cell_size: Some(CellSize::default()),
    };
    write_heightmap(out, format, &dem)
}

fn convert(input: &InputArgs, output: &Path, format: Option<HeightFormat>) -> Result<()> {
    let format = output_format(output, format)?;
    write_heightmap(output, format, &input.read()?)
}

fn erode(options: &ContextOptions, args: &ErodeArgs) -> Result<()> {
    let settings = args.checked_settings()?.clone();
    if settings.algorithm == Algorithm::Pipes && args.engine != Engine::Gpu {
        bail!("--engine chooses what runs the droplets; --algorithm pipes runs on the GPU only");
    }
    // Checked, cleared of dead runs' leftovers and staged before any work.
    let staged = StagedFolder::begin(&args.out, args.force).context("--out")?;
    let terrain = args.terrain()?;
    if let TerrainSource::File {
        path,
        dem,
        units,
        cell_size_source,
    } = &terrain
    {
        print_input(path, dem, units, *cell_size_source);
    }
    let output = OutputOptions {
        format: args.format,
        images: !args.no_images,
    };
    if settings.algorithm == Algorithm::Pipes {
        let ctx = open_device(options)?;
        let outcome = run_pipes(&ctx, &terrain, &settings.terrain(), &settings)
            .context("eroding with the virtual-pipe model")?;
        let files = write_outcome(staged.path(), &outcome, output)?;
        let files = staged.publish(files)?;
        print_pipes_outcome(&outcome.report);
        say_wrote(files);
        return Ok(());
    }
    let request = ErodeRequest {
        terrain,
        settings,
        engine: args.engine,
    };
    let ctx = match request.engine {
        Engine::Gpu => Some(open_device(options)?),
        Engine::Cpu | Engine::CpuSequential => None,
    };
    let outcome = run_erosion(ctx.as_ref(), &request).with_context(|| match &args.input {
        Some(path) => format!("eroding {}", path.display()),
        None => "eroding the generated terrain".into(),
    })?;
    let files = write_outcome(staged.path(), &outcome, output)?;
    let files = staged.publish(files)?;
    print_outcome(&outcome);
    say_wrote(files);
    Ok(())
}

fn sweep(options: &ContextOptions, args: &SweepArgs) -> Result<()> {
    let (config, overrides) = (&args.config, &args.overrides);
    // Syntax, types and values first, with no device; then the device's limits.
    Experiment::load(config, overrides, None)?;
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
    let experiment = Experiment::load(config, overrides, Some(ctx.info()))?;
    let sweep = args.options();
    if args.dry_run {
        say!("{}", dry_run(&experiment, ctx.info(), &sweep));
        return Ok(());
    }
    let shard = sweep.shard.map(|s| format!(", shard {s}"));
    say!(
        "{}: {} points{}",
        experiment.config.name,
        experiment.points.len(),
        shard.unwrap_or_default()
    );
    let summary = run_sweep(&contexts, &experiment, &sweep)?;
    say!(
        "measured {} points ({} already recorded) into {}",
        summary.measured,
        summary.skipped,
        summary.dir.display()
    );
    let table = report(&summary.dir)?;
    say!("{table}");
    write_text(args.summary.as_deref(), &table)?;
    let failed_csv = summary.dir.join(FAILED_CSV);
    if let Some(stopped) = summary.stopped {
        bail!(
            "the sweep stopped at {stopped}; the points before it are recorded, the failure is in {}. Rerun with --resume to measure the rest",
            failed_csv.display()
        );
    }
    if !summary.failed.is_empty() {
        bail!(
            "{} point(s) failed on the GPU ({}); the others are recorded. --resume measures the failed ones again",
            summary.failed.len(),
            failed_csv.display()
        );
    }
    Ok(())
}

fn compare_command(
    base: &Path,
    new: &Path,
    out: Option<&Path>,
    fail_slower: Option<f64>,
) -> Result<()> {
    let compared = compare(base, new)?;
    let table = compared.markdown(base, new);
    say!("{table}");
    write_text(out, &table)?;
    if let Some(percent) = fail_slower {
        let slower = compared.slower_than(percent);
        if !slower.is_empty() {
            eprintln!(
                "error: {} point(s) slower than the base by more than {percent}%: {}",
                slower.len(),
                slower
                    .iter()
                    .map(|c| c.label.as_str())
                    .collect::<Vec<_>>()
                    .join("; ")
            );
            std::process::exit(3);
        }
    }
    Ok(())
}

fn strategies(
    options: &ContextOptions,
    config: &Path,
    out: Option<&Path>,
    force: bool,
) -> Result<()> {
    let strategies = Strategies::load(config)?;
    let ctx = open_device(options)?;
    let out = out.map_or_else(
        || {
            Path::new("results")
                .join(&strategies.config.name)
                .join(device_slug(&ctx.info().name))
        },
        Path::to_path_buf,
    );
    let staged = StagedFolder::begin(&out, force).context("--out")?;
    let config_dir = config.parent().unwrap_or(Path::new("."));
    let (rows, written) = run_strategies(&ctx, &strategies, config_dir, staged.path(), |line| {
        say!("{line}")
    })
    .with_context(|| format!("running {}", config.display()))?;
    for r in &rows {
        say!(
            "{} {:?}: {} in {:.1} ms, {:.3e} {}/s; eroded {:.1}, deposited {:.1}; incision {:.3} -> {:.3}",
            r.terrain,
            r.algorithm,
            r.work,
            r.gpu_ms,
            r.steps_per_s,
            r.unit,
            r.eroded,
            r.deposited,
            r.channel_incision_before,
            r.channel_incision_after
        );
    }
    say_wrote(staged.publish(written)?);
    Ok(())
}

fn kernels(options: &ContextOptions, args: &KernelsArgs) -> Result<()> {
    let base = args.base();
    let (variants, notes) = kernel_variants(&args.variant, &args.lever, &base);
    notes.iter().for_each(|note| say!("{note}"));
    let ctx = open_device(options)?;
    let rows = kernel_statistics(&ctx, &variants, &args.workgroup, base.scale)?;
    print_kernels(ctx.info(), &rows);
    if let Some(path) = &args.out {
        write_statistics_csv(path, &rows)?;
        say_wrote([path.clone()]);
    }
    Ok(())
}
