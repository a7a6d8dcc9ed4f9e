//! `vkerode erode`: one run of a strategy on generated terrain or a heightmap file.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context as _, Result};

use crate::cli::args::ErodeArgs;
use crate::cli::open_device;
use crate::cli::print::{
    begin_json, print_input, print_json, print_outcome, progress_bar, say_wrote,
};
use vkerode::experiment::{
    run_erosion, write_outcome, Engine, ErodeRequest, OutputOptions, TerrainSource,
};
use vkerode::gpu::ContextOptions;
use vkerode::terrain::formats::with_companions;
use vkerode::terrain::output::StagedFolder;

pub fn run(options: &ContextOptions, args: &ErodeArgs) -> Result<()> {
    begin_json(args.json);
    let settings = args.checked_settings()?.clone();
    // Checked, cleared of dead runs' leftovers and staged before any work.
    let reads: Vec<PathBuf> = args.input.iter().flat_map(|i| with_companions(i)).collect();
    let staged = StagedFolder::begin(&args.out, args.force, &reads).context("--out")?;
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
    let ctx = match request.engine {
        Engine::Gpu => Some(open_device(options)?),
        Engine::Cpu | Engine::CpuSequential => None,
    };
    let bar = match &ctx {
        Some(_) => progress_bar(0, "GPU submissions"),
        None => indicatif::ProgressBar::hidden(),
    };
    if let Some(ctx) = &ctx {
        // Told between submissions, on the host: the timed GPU work runs on unchanged.
        let shown = bar.clone();
        ctx.observe_submissions(Some(Arc::new(move |done, of| {
            if of > 1 {
                shown.set_length(of as u64);
                shown.set_position(done as u64);
                if done == of {
                    detail!("a run of {of} GPU submissions completed");
                }
            }
        })));
    }
    bar.set_message(format!("{} run", request.settings.algorithm.as_str()));
    let eroded = run_erosion(ctx.as_ref(), &request);
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
