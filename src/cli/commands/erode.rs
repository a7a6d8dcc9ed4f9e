//! `vkerode erode`: one run of a strategy on generated terrain or a heightmap file.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use anyhow::{anyhow, bail, Context as _, Result};
use clap::parser::ValueSource;
use clap::{ArgMatches, Args, ValueEnum};
use indicatif::ProgressBar;

use crate::cli::open_device;
use crate::cli::options::{parse_cell_side, GpuArgs, InputLayout, RunLengthArgs};
use crate::cli::print::{
    bar_line, begin_json, print_input, print_json, print_outcome, progress_bar, say_wrote,
    show_progress, verbosity,
};
use vkerode::erosion::RunSettings;
use vkerode::experiment::sweep::Verbosity;
use vkerode::experiment::{
    run_erosion, write_outcome, Engine, ErodeRequest, InputError, InputUnits, OutputOptions,
    TerrainSource,
};
use vkerode::gpu::{ContextOptions, SubmissionDone};
use vkerode::progress::Progress;
use vkerode::terrain::formats::{with_companions, HeightFormat};
use vkerode::terrain::output::{default_out, StagedFolder};

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

pub fn run(options: &ContextOptions, args: &ErodeArgs) -> Result<()> {
    begin_json(args.json);
    let settings = args.checked_settings()?.clone();
    // Checked, cleared of dead runs' leftovers and staged before any work: before the
    // device opens where --out is given, else once the device names the default.
    let reads: Vec<PathBuf> = args.input.iter().flat_map(|i| with_companions(i)).collect();
    let stage = |out: &Path| StagedFolder::begin(out, args.force, &reads).context("--out");
    let given = args.out.as_deref().map(stage).transpose()?;
    let ctx = match args.engine {
        Engine::Gpu => Some(open_device(options)?),
        Engine::Cpu | Engine::CpuSequential => None,
    };
    let staged = match given {
        Some(staged) => staged,
        None => {
            let device = ctx.as_ref().map_or("cpu", |ctx| ctx.info().name.as_str());
            stage(&default_out("erode", None, device))?
        }
    };
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
    let request = ErodeRequest {
        terrain,
        settings,
        engine: args.engine,
        allow_long: args.run_length.allow_long_runs,
    };
    // Each stage counts its work in the strategy's units (steps, droplets), told as
    // the GPU completes the submissions that hold them.
    let bar = progress_bar(0, "");
    let submissions = Arc::new(AtomicUsize::new(0));
    if let Some(ctx) = &ctx {
        // Told between submissions, on the host: the timed GPU work runs on unchanged.
        let (shown, counted) = (bar.clone(), Arc::clone(&submissions));
        ctx.observe_submissions(Some(Arc::new(move |done: SubmissionDone| {
            // A run's submissions, not the reads and uploads between them.
            if done.units > 0 {
                shown.inc(done.units);
                counted.fetch_add(1, Ordering::Relaxed);
            }
        })));
    }
    let eroded = run_erosion(ctx.as_ref(), &request, &mut |event| {
        match event {
            Progress::Stage(_) => {
                detail_counted(&bar, &submissions);
                detail_elapsed(&bar);
            }
            Progress::Work { .. } => submissions.store(0, Ordering::Relaxed),
            _ => {}
        }
        show_progress(&bar, event)
    });
    if let Some(ctx) = &ctx {
        ctx.observe_submissions(None);
    }
    if eroded.is_ok() {
        detail_counted(&bar, &submissions);
        detail_elapsed(&bar);
    }
    bar.finish_and_clear();
    let mut outcome = eroded.with_context(|| match &args.input {
        Some(path) => format!("eroding {}", path.display()),
        None => "eroding the generated terrain".into(),
    })?;
    let output = OutputOptions {
        format: args.format,
        images: !args.no_images,
    };
    let bar = progress_bar(0, "");
    let written = write_outcome(staged.path(), &mut outcome, output, &mut |event| {
        if let Progress::Stage(_) = event {
            detail_elapsed(&bar);
        }
        show_progress(&bar, event)
    });
    detail_elapsed(&bar);
    bar.finish_and_clear();
    let (files, not_drawn) = written?;
    for warning in not_drawn {
        eprintln!("warning: {warning}");
    }
    let files = staged.publish(files)?;
    if args.json {
        print_json(&outcome.report)?;
    } else {
        print_outcome(&outcome);
    }
    say_wrote(files);
    Ok(())
}

/// Under --verbose, how long the stage on `bar` took, as it ends: "writing the
/// heightmaps: 1.2 s". Every stage is told, so that a slow one is seen.
fn detail_elapsed(bar: &ProgressBar) {
    let stage = bar.message();
    if verbosity() == Verbosity::Verbose && !stage.is_empty() && bar.length() == Some(0) {
        bar_line(
            bar,
            &format!("{stage}: {:.1} s", bar.elapsed().as_secs_f64()),
        );
    }
}

/// Under --verbose, what the stage on `bar` counted, where it counted its work: "pipes:
/// timed run (2 of 2): 500 of 500 steps in 7 GPU submission(s), 6.1 s".
fn detail_counted(bar: &ProgressBar, submissions: &AtomicUsize) {
    let Some(total) = bar.length().filter(|&total| total > 0) else {
        return;
    };
    if verbosity() == Verbosity::Verbose {
        let line = format!(
            "{}: {} of {total} {} in {} GPU submission(s), {:.1} s",
            bar.message(),
            bar.position(),
            bar.prefix(),
            submissions.load(Ordering::Relaxed),
            bar.elapsed().as_secs_f64()
        );
        bar_line(bar, &line);
    }
}
