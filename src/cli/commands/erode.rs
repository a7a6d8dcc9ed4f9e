//! `vkerode erode`: one run of a strategy on generated terrain or a heightmap file.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context as _, Result};

use crate::cli::args::ErodeArgs;
use crate::cli::open_device;
use crate::cli::print::{
    begin_json, print_input, print_json, print_outcome, progress_bar, say_wrote, show_progress,
};
use vkerode::experiment::{
    run_erosion, write_outcome, Engine, ErodeRequest, OutputOptions, TerrainSource,
};
use vkerode::gpu::ContextOptions;
use vkerode::progress::Progress;
use vkerode::terrain::formats::with_companions;
use vkerode::terrain::output::{default_out, StagedFolder};

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
    // Each stage of the run restarts the count of its GPU submissions.
    let bar = progress_bar(0, "GPU submissions");
    if let Some(ctx) = &ctx {
        // Told between submissions, on the host: the timed GPU work runs on unchanged.
        let shown = bar.clone();
        ctx.observe_submissions(Some(Arc::new(move |done, of| {
            // A run's split submissions, not the one-submission reads between them.
            if of > 1 {
                show_progress(&shown, Progress::Done { done, total: of });
                if done == of {
                    detail!("a run of {of} GPU submissions completed");
                }
            }
        })));
    }
    let eroded = run_erosion(ctx.as_ref(), &request, &mut |event| {
        show_progress(&bar, event)
    });
    if let Some(ctx) = &ctx {
        ctx.observe_submissions(None);
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
    let (files, not_drawn) = write_outcome(staged.path(), &mut outcome, output)?;
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
