//! `vkerode erode`: one run of a strategy on generated terrain or a heightmap file.

use anyhow::{Context as _, Result};

use crate::cli::args::ErodeArgs;
use crate::cli::open_device;
use crate::cli::print::{begin_json, print_input, print_json, print_outcome, say_wrote};
use vkerode::experiment::{
    run_erosion, write_outcome, Engine, ErodeRequest, OutputOptions, TerrainSource,
};
use vkerode::gpu::ContextOptions;
use vkerode::terrain::output::StagedFolder;

pub fn run(options: &ContextOptions, args: &ErodeArgs) -> Result<()> {
    begin_json(args.json);
    let settings = args.checked_settings()?.clone();
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
    let mut outcome = run_erosion(ctx.as_ref(), &request).with_context(|| match &args.input {
        Some(path) => format!("eroding {}", path.display()),
        None => "eroding the generated terrain".into(),
    })?;
    let output = OutputOptions {
        format: args.format,
        images: !args.no_images,
    };
    let files = write_outcome(staged.path(), &mut outcome, output)?;
    let files = staged.publish(files)?;
    if args.json {
        print_json(&outcome.report)?;
    } else {
        print_outcome(&outcome);
    }
    say_wrote(files);
    Ok(())
}
