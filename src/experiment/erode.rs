//! One erosion run end to end: terrain, a timed run, a count of the work it did,
//! figures, and the files that record it.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;

use super::figures::{ChangeFigures, RunFigures, TimeSource};
use super::provenance::Provenance;
use super::ExperimentError;
use crate::erosion::cpu::{erode_parallel, erode_sequential};
use crate::erosion::{default_batch, DropletJob, DropletKernel, FixedHeightfield, WorkCount};
use crate::gpu::Context;
use crate::terrain::files::write_atomically;
use crate::terrain::image::{write_height_png16, write_shaded_relief, CellSize};
use crate::terrain::{generate_on_cpu, generate_on_gpu, Heightmap, TerrainSpec};

/// What runs the droplets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Engine {
    /// glsl/droplet.comp on a Vulkan device.
    Gpu,
    /// The CPU reference on every core (rayon, atomic adds).
    Cpu,
    /// The CPU reference on one core, droplets in id order: deterministic.
    CpuSequential,
}

/// What to erode and how.
#[derive(Clone, Debug)]
pub struct ErodeRequest {
    pub terrain: TerrainSpec,
    pub job: DropletJob,
    pub engine: Engine,
    pub workgroup: u32,
    /// Droplets per dispatch; `None` picks [`default_batch`]. GPU only.
    pub batch: Option<u32>,
}

/// Everything an erosion run measured, as written to `run.json`.
#[derive(Clone, Debug, Serialize)]
pub struct ErodeReport {
    pub provenance: Provenance,
    pub engine: Engine,
    pub terrain: TerrainSpec,
    pub job: DropletJob,
    pub workgroup: u32,
    pub batch: u32,
    pub dispatches: usize,
    pub figures: RunFigures,
    /// On the GPU, from a separate instrumented run of the same job: it races as the
    /// timed run does but is not the same run, so its counts estimate the timed run's.
    pub work: WorkCount,
    pub change: ChangeFigures,
}

/// The terrain before and after, with the report.
pub struct ErodeOutcome {
    pub before: Heightmap,
    pub after: Heightmap,
    pub report: ErodeReport,
}

/// Runs the request; `ctx` is needed for the GPU engine only.
pub fn run_erosion(
    ctx: Option<&Arc<Context>>,
    request: &ErodeRequest,
) -> Result<ErodeOutcome, ExperimentError> {
    request.job.validate()?;
    request.terrain.validate()?;
    let (w, h) = (
        request.terrain.width as usize,
        request.terrain.height as usize,
    );
    let scale = request.job.params.fixed_point_scale;
    let gpu = match request.engine {
        Engine::Gpu => Some(ctx.ok_or(ExperimentError::NoDeviceForGpuEngine)?),
        Engine::Cpu | Engine::CpuSequential => None,
    };
    let kernel = match gpu {
        Some(ctx) => Some(DropletKernel::new(ctx, request.workgroup, scale)?),
        None => None,
    };
    let terrain = match gpu {
        Some(ctx) => generate_on_gpu(ctx, &request.terrain)?,
        None => generate_on_cpu(&request.terrain)?,
    };
    let initial = terrain.to_fixed(scale)?;
    let before = Heightmap::from_fixed(w, h, &initial, scale)?;
    let batch = request
        .batch
        .unwrap_or_else(|| default_batch(initial.len() as u64));

    let (cells, figures, work, dispatches, provenance) = match (gpu, &kernel) {
        (Some(ctx), Some(kernel)) => {
            let map =
                FixedHeightfield::new(request.terrain.width, request.terrain.height, &initial);
            let timed = kernel.run(&map, &request.job, batch)?;
            let work = kernel
                .run_counted(&map, &request.job, batch)?
                .work
                .unwrap_or_default();
            let source = match timed.gpu_time {
                Some(_) => TimeSource::GpuTimestamps,
                None => TimeSource::WallClock,
            };
            let figures = RunFigures::new(source, timed.gpu_time, timed.wall_time, &work);
            let provenance = Provenance::collect(ctx.info());
            (timed.cells, figures, work, timed.batches.len(), provenance)
        }
        _ => {
            let mut cells = initial.clone();
            let started = Instant::now();
            let work = match request.engine {
                Engine::CpuSequential => erode_sequential(&mut cells, w, h, &request.job),
                _ => erode_parallel(&mut cells, w, h, &request.job),
            };
            let wall = started.elapsed();
            let figures = RunFigures::new(TimeSource::CpuWallClock, None, wall, &work);
            (cells, figures, work, 0, Provenance::cpu())
        }
    };
    let after = Heightmap::from_fixed(w, h, &cells, scale)?;
    let report = ErodeReport {
        provenance,
        engine: request.engine,
        terrain: request.terrain,
        job: request.job,
        workgroup: request.workgroup,
        batch,
        dispatches,
        figures,
        work,
        change: ChangeFigures::between(&before, &after, &initial, &cells),
    };
    Ok(ErodeOutcome {
        before,
        after,
        report,
    })
}

/// The files an erosion run writes into its output folder.
pub fn write_outcome(dir: &Path, outcome: &ErodeOutcome) -> Result<Vec<PathBuf>, ExperimentError> {
    std::fs::create_dir_all(dir).map_err(|source| ExperimentError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let stats = outcome.before.stats();
    let range = (stats.min, stats.max);
    let cell = CellSize::default();
    let mut written = Vec::new();
    for (name, map) in [("before", &outcome.before), ("after", &outcome.after)] {
        let height_png = dir.join(format!("{name}.png"));
        write_height_png16(&height_png, map, "cells")?;
        let relief_png = dir.join(format!("{name}_relief.png"));
        write_shaded_relief(&relief_png, map, cell, range)?;
        written.extend([
            height_png.clone(),
            height_png.with_extension("json"),
            relief_png,
        ]);
    }
    let report_path = dir.join("run.json");
    write_atomically(&report_path, |out| {
        serde_json::to_writer_pretty(&mut *out, &outcome.report).map_err(std::io::Error::other)
    })?;
    written.push(report_path);
    Ok(written)
}
