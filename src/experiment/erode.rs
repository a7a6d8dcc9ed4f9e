//! One erosion run end to end: terrain, a timed run, a count of the work it did,
//! figures, and the files that record it.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;

use super::figures::{ChangeFigures, RunFigures, TimeSource};
use super::provenance::Provenance;
use super::settings::{RunSettings, SettingError};
use super::ExperimentError;
use crate::erosion::cpu::{erode_parallel, erode_sequential};
use crate::erosion::{
    AtomicMode, Contention, DropletJob, DropletKernel, FixedHeightfield, Lever, RunMode, WorkCount,
};
use crate::gpu::{CompilerStatistic, Context};
use crate::terrain::files::write_atomically;
use crate::terrain::formats::{write_dem, Dem, GeoTags, HeightFormat};
use crate::terrain::image::shaded_relief;
use crate::terrain::metrics::Landform;
use crate::terrain::nodata::fill_missing;
use crate::terrain::pictures::{erosion_map, relief_with_legend, side_by_side, RgbImage};
use crate::terrain::units::{CellSizeSource, GridUnits};
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

/// Where the terrain comes from.
#[derive(Clone, Debug)]
pub enum TerrainSource {
    /// Erosion noise of the settings' size, seed and relief, generated on the run's
    /// device (or the CPU for CPU engines).
    Noise,
    /// A heightmap file, as read, with the units that turn it into kernel heights.
    File {
        path: PathBuf,
        dem: Box<Dem>,
        units: GridUnits,
        cell_size_source: CellSizeSource,
    },
}

/// The terrain as `run.json` records it.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "source", rename_all = "kebab-case")]
pub enum TerrainReport {
    Noise(TerrainSpec),
    File {
        path: PathBuf,
        width: usize,
        height: usize,
        /// Cells with no data (nodata or NaN), filled before erosion.
        missing_cells: usize,
        units: GridUnits,
        cell_size_source: CellSizeSource,
        /// Whether the file was a GeoTIFF whose georeferencing the TIFF outputs keep.
        georeferenced: bool,
    },
}

/// What to erode and how. The kernel settings (workgroup, batches, atomics, variant,
/// SPIR-V, lever) apply to the GPU engine only.
#[derive(Clone, Debug)]
pub struct ErodeRequest {
    pub terrain: TerrainSource,
    pub settings: RunSettings,
    pub engine: Engine,
}

#[derive(Clone, Copy, Debug, Serialize)]
pub struct LandformChange {
    pub before: Landform,
    pub after: Landform,
}

/// Everything an erosion run measured, as written to `run.json`.
#[derive(Clone, Debug, Serialize)]
pub struct ErodeReport {
    pub provenance: Provenance,
    pub engine: Engine,
    pub terrain: TerrainReport,
    pub job: DropletJob,
    pub workgroup: u32,
    pub batch: u32,
    pub dispatches: usize,
    /// Landform metrics of the terrain before and after, in kernel units (cells).
    pub landform: LandformChange,
    /// GPU submissions of the timed run: its dispatches split to stay under
    /// `--max-submission-ms`.
    pub submissions: usize,
    pub figures: RunFigures,
    /// On the GPU, from a separate instrumented run of the same job: it races as the
    /// timed run does but is not the same run, so its counts estimate the timed run's.
    pub work: WorkCount,
    pub atomics: AtomicMode,
    /// The droplet module that ran (GPU only).
    pub kernel: Option<String>,
    pub lever: Lever,
    /// The driver's compiler statistics of that module's pipeline, each under the
    /// driver's name; empty on the CPU and where the driver reports none.
    pub compiler_statistics: Vec<CompilerStatistic>,
    /// From the instrumented run (GPU only): hits per cell, subgroup conflicts, mass.
    pub contention: Option<Contention>,
    pub change: ChangeFigures,
}

/// The terrain before and after, with the report.
pub struct ErodeOutcome<R = ErodeReport> {
    /// In kernel height units (cells).
    pub before: Heightmap,
    pub after: Heightmap,
    /// Cells the input had no data for; filled for the kernel, nodata again on export.
    pub missing: Vec<bool>,
    pub units: GridUnits,
    /// Label of the exported height units: "m" for a DEM with a cell size, else "cells".
    pub export_units: String,
    /// The input's nodata value, reused on export.
    pub nodata: Option<f32>,
    /// The input's georeferencing, kept in every TIFF written.
    pub geo: Option<GeoTags>,
    /// What run.json says.
    pub report: R,
}

impl<R> ErodeOutcome<R> {
    /// The outcome of `terrain` eroded to `after`, with `report`.
    pub(super) fn of(terrain: PreparedTerrain, after: Heightmap, report: R) -> Self {
        Self {
            before: terrain.heights,
            after,
            missing: terrain.missing,
            units: terrain.units,
            export_units: terrain.export_units,
            nodata: terrain.nodata,
            geo: terrain.geo,
            report,
        }
    }

    /// `map` in export units, with the missing cells missing again.
    fn exported(&self, map: &Heightmap) -> Dem {
        let mut heights = map.map(|h| self.units.from_kernel(h));
        for (h, &missing) in heights.data_mut().iter_mut().zip(&self.missing) {
            if missing {
                *h = f32::NAN;
            }
        }
        Dem {
            heights,
            nodata: self.nodata,
            units: self.export_units.clone(),
            cell_size: Some(self.units.cell_size),
            geo: self.geo.clone(),
        }
    }
}

/// Initial kernel heights, missing-cell mask and what the report says of them.
pub(super) struct PreparedTerrain {
    pub(super) heights: Heightmap,
    missing: Vec<bool>,
    units: GridUnits,
    export_units: String,
    nodata: Option<f32>,
    geo: Option<GeoTags>,
    pub(super) report: TerrainReport,
}

pub(super) fn prepare_terrain(
    source: &TerrainSource,
    spec: &TerrainSpec,
    gpu: Option<&Arc<Context>>,
) -> Result<PreparedTerrain, ExperimentError> {
    match source {
        TerrainSource::Noise => {
            let heights = match gpu {
                Some(ctx) => generate_on_gpu(ctx, spec)?,
                None => generate_on_cpu(spec)?,
            };
            Ok(PreparedTerrain {
                missing: vec![false; heights.data().len()],
                heights,
                units: GridUnits::default(),
                export_units: "cells".into(),
                nodata: None,
                geo: None,
                report: TerrainReport::Noise(*spec),
            })
        }
        TerrainSource::File {
            path,
            dem,
            units,
            cell_size_source,
        } => {
            let mut elevations = dem.heights.clone();
            let missing = fill_missing(&mut elevations);
            let export_units = if units.is_identity() && !dem.units.is_empty() {
                dem.units.clone()
            } else if units.is_identity() {
                "cells".into()
            } else {
                "m".into()
            };
            Ok(PreparedTerrain {
                heights: elevations.map(|e| units.to_kernel(e)),
                report: TerrainReport::File {
                    path: path.clone(),
                    width: dem.heights.width(),
                    height: dem.heights.height(),
                    missing_cells: missing.iter().filter(|&&m| m).count(),
                    units: *units,
                    cell_size_source: *cell_size_source,
                    georeferenced: dem.geo.is_some(),
                },
                geo: dem.geo.clone(),
                missing,
                units: *units,
                export_units,
                nodata: dem.nodata,
            })
        }
    }
}

/// Refuses a map whose relief rounds away in the fixed point (a tiny vertical scale):
/// the kernel would erode a flat plane.
fn refuse_vanished_relief(heights: &Heightmap, fixed: &[i32]) -> Result<(), ExperimentError> {
    let stats = heights.stats();
    let (low, high) = fixed
        .iter()
        .fold((i32::MAX, i32::MIN), |(lo, hi), &c| (lo.min(c), hi.max(c)));
    if stats.max > stats.min && low == high {
        return Err(SettingError::new(
            "vertical_scale",
            format!(
                "the relief of {} kernel height units vanishes in the fixed point (every cell is {low}); raise --vertical-scale or --scale",
                stats.max - stats.min
            ),
        )
        .into());
    }
    Ok(())
}

/// What an engine's run of the job gave.
struct EngineRun {
    cells: Vec<i32>,
    figures: RunFigures,
    work: WorkCount,
    contention: Option<Contention>,
    dispatches: usize,
    submissions: usize,
    provenance: Provenance,
}

/// An instrumented run to count the work, then the timed run; one upload of the map
/// serves both, each starting from a fresh copy.
fn run_on_gpu(
    ctx: &Arc<Context>,
    kernel: &DropletKernel,
    map: &FixedHeightfield,
    job: &DropletJob,
    batch: u32,
) -> Result<EngineRun, ExperimentError> {
    let mut runner = kernel.prepare(map)?;
    // The instrumented run first: its rate (slower than the timed kernel's) sizes the
    // timed run's submissions, which then need not be split per dispatch.
    let counted = runner.execute(job, batch, RunMode::COUNTED)?;
    let timed = runner.execute(job, batch, RunMode::TIMED)?;
    let work = counted.work.unwrap_or_default();
    let source = match timed.gpu_time {
        Some(_) => TimeSource::GpuTimestamps,
        None => TimeSource::WallClock,
    };
    Ok(EngineRun {
        figures: RunFigures::new(source, timed.gpu_time, timed.wall_time, &work),
        cells: timed.cells,
        work,
        contention: counted.contention,
        dispatches: timed.dispatches,
        submissions: timed.submissions,
        provenance: Provenance::collect(ctx.info()),
    })
}

fn run_on_cpu(engine: Engine, map: &FixedHeightfield, job: &DropletJob) -> EngineRun {
    let mut cells = map.cells.to_vec();
    let (w, h) = (map.width as usize, map.height as usize);
    let started = Instant::now();
    let work = match engine {
        Engine::CpuSequential => erode_sequential(&mut cells, w, h, job),
        _ => erode_parallel(&mut cells, w, h, job),
    };
    EngineRun {
        cells,
        figures: RunFigures::new(TimeSource::CpuWallClock, None, started.elapsed(), &work),
        work,
        contention: None,
        dispatches: 0,
        submissions: 0,
        provenance: Provenance::cpu(match engine {
            Engine::CpuSequential => 1,
            _ => rayon::current_num_threads(),
        }),
    }
}

/// Runs the request; `ctx` is needed for the GPU engine only.
pub fn run_erosion(
    ctx: Option<&Arc<Context>>,
    request: &ErodeRequest,
) -> Result<ErodeOutcome, ExperimentError> {
    let settings = &request.settings;
    let job = settings.job();
    let scale = job.params.fixed_point_scale;
    let gpu = match request.engine {
        Engine::Gpu => Some(ctx.ok_or(ExperimentError::NoDeviceForGpuEngine)?),
        Engine::Cpu | Engine::CpuSequential => None,
    };
    let device = gpu.map(|ctx| ctx.info());
    match request.terrain {
        TerrainSource::Noise => settings.check(device)?,
        TerrainSource::File { .. } => settings.check_job(device)?,
    }
    let kernel = match gpu {
        Some(ctx) => Some(DropletKernel::for_params(
            ctx,
            settings.workgroup,
            &job.params,
            settings.kernel_variant(),
        )?),
        None => None,
    };
    let terrain = prepare_terrain(&request.terrain, &settings.terrain(), gpu)?;
    let (w, h) = (terrain.heights.width(), terrain.heights.height());
    settings.check_map(w as u32, h as u32, device)?;
    let initial = terrain.heights.to_fixed(scale)?;
    refuse_vanished_relief(&terrain.heights, &initial)?;
    let before = Heightmap::from_fixed(w, h, &initial, scale)?;
    let batch = settings.droplets_per_dispatch(initial.len() as u64);

    let map = FixedHeightfield::new(w as u32, h as u32, &initial);
    let run = match (gpu, &kernel) {
        (Some(ctx), Some(kernel)) => run_on_gpu(ctx, kernel, &map, &job, batch)?,
        _ => run_on_cpu(request.engine, &map, &job),
    };
    let EngineRun {
        cells,
        figures,
        work,
        contention,
        dispatches,
        submissions,
        provenance,
    } = run;
    let after = Heightmap::from_fixed(w, h, &cells, scale)?;
    let report = ErodeReport {
        provenance,
        engine: request.engine,
        terrain: terrain.report.clone(),
        job,
        workgroup: settings.workgroup,
        batch,
        dispatches,
        landform: LandformChange {
            before: Landform::of(&before),
            after: Landform::of(&after),
        },
        submissions,
        figures,
        work,
        atomics: settings.atomic_mode(),
        kernel: kernel.as_ref().map(|k| k.variant().module_name()),
        lever: settings.lever,
        compiler_statistics: kernel
            .as_ref()
            .map(|k| k.statistics().to_vec())
            .unwrap_or_default(),
        contention,
        change: ChangeFigures::between(&before, &after, &initial, &cells),
    };
    // Before as the kernel saw it: in fixed point.
    Ok(ErodeOutcome {
        before,
        ..ErodeOutcome::of(terrain, after, report)
    })
}

/// What an erosion run writes into its output folder.
#[derive(Clone, Copy, Debug)]
pub struct OutputOptions {
    pub format: HeightFormat,
    /// Shaded relief, erosion map and the before/after figure.
    pub images: bool,
}

/// Writes the heightmaps before and after (in export units, nodata restored), the
/// pictures, and `run.json`; returns the files written.
pub fn write_outcome<R: Serialize>(
    dir: &Path,
    outcome: &ErodeOutcome<R>,
    options: OutputOptions,
) -> Result<Vec<PathBuf>, ExperimentError> {
    std::fs::create_dir_all(dir).map_err(|source| ExperimentError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let before = outcome.exported(&outcome.before);
    let after = outcome.exported(&outcome.after);
    let mut written = Vec::new();
    for (name, dem) in [("before", &before), ("after", &after)] {
        let path = dir.join(format!("{name}.{}", options.format.extension()));
        written.extend(write_dem(&path, options.format, dem)?);
    }
    // The change as data: after minus before, in the exported units, placed as the input.
    let change = Dem {
        heights: after.heights.zip_map(&before.heights, |a, b| a - b),
        ..after.clone()
    };
    let change_path = dir.join("erosion.tif");
    written.extend(write_dem(&change_path, HeightFormat::Tif, &change)?);
    if options.images {
        let stats = before.heights.stats();
        let range = (stats.min, stats.max);
        let cell = outcome.units.cell_size;
        let before_relief = shaded_relief(&before.heights, cell, range);
        let after_relief = shaded_relief(&after.heights, cell, range);
        // Metres on a grid of known cells; cells of one unit for generated terrain.
        let (units, length) = match outcome.export_units.as_str() {
            "m" => ("m", cell.x),
            other => (other, 1.0),
        };
        let width = before.heights.width();
        let legend = |relief: &RgbImage| relief_with_legend(relief, range, units, width, length);
        let figures = [
            ("before_relief.png", legend(&before_relief)),
            ("after_relief.png", legend(&after_relief)),
            (
                "erosion.png",
                erosion_map(&before.heights, &after.heights, &outcome.export_units),
            ),
            (
                "before_after.png",
                side_by_side(&before_relief, &after_relief, ["before", "after erosion"]),
            ),
        ];
        for (name, image) in figures {
            let path = dir.join(name);
            image.write_png(&path)?;
            written.push(path);
        }
    }
    let report_path = dir.join("run.json");
    write_atomically(&report_path, |out| {
        serde_json::to_writer_pretty(&mut *out, &outcome.report).map_err(std::io::Error::other)
    })?;
    written.push(report_path);
    Ok(written)
}
