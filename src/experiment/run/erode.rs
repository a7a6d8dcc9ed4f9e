//! One erosion run end to end, for every strategy: terrain, a count of the work (the
//! instrumented run), a timed run, figures, and the files that record it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

use super::figures::{gpm_counters, CeilingShare, ChangeFigures, RunFigures, TimeSource};
use super::invariant::InvariantError;
use super::provenance::Provenance;
use super::terrain::{prepare_terrain, PreparedTerrain, TerrainReport, TerrainSource};
use super::RunError;
use crate::erosion::{initial_cells, Algorithm, CpuEngine, Figures, RunSettings};
use crate::gpu::{CompilerStatistic, Context};
use crate::probes::ceilings::Ceilings;
use crate::probes::gpu_state::{GpmCounters, GpuMonitor};
use crate::progress::{Progress, Tell};
use crate::terrain::files::write_atomically;
use crate::terrain::formats::{export_warning, write_dem, Dem, HeightFormat};
use crate::terrain::metrics::Landform;
use crate::terrain::pictures::{
    before_after, drawn, erosion_map_of_change, relief_with_legend, shaded_relief, MapUnits,
    RgbImage,
};
use crate::terrain::units::{GridUnits, HeightUnit};
use crate::terrain::MapInfo;
use crate::terrain::{Cells, Change, Heightmap};
use crate::PathIoError;
use rayon::prelude::*;

/// What runs the strategy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, clap::ValueEnum, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Engine {
    /// Its kernels on a Vulkan device.
    Gpu,
    /// Its CPU reference on every core (the droplets race through atomic adds).
    Cpu,
    /// Its CPU reference on one core, in a fixed order: deterministic.
    CpuSequential,
}

impl Engine {
    fn cpu(self) -> Option<CpuEngine> {
        match self {
            Engine::Gpu => None,
            Engine::Cpu => Some(CpuEngine::Parallel),
            Engine::CpuSequential => Some(CpuEngine::Sequential),
        }
    }
}

/// What to erode and how. The kernel settings (workgroups, variants) apply to the GPU
/// engine only.
#[derive(Clone, Debug)]
pub struct ErodeRequest {
    pub terrain: TerrainSource,
    pub settings: RunSettings,
    pub engine: Engine,
    /// Run past [`crate::erosion::MAX_RUN_WORK`] (`--allow-long-runs`).
    pub allow_long: bool,
}

#[derive(Clone, Copy, Debug, Serialize, schemars::JsonSchema)]
pub struct LandformChange {
    pub before: Landform,
    pub after: Landform,
}

impl LandformChange {
    /// Of maps in kernel units, taken in the DEM's own: heights back in metres on its
    /// grid of metres (cells on cells for generated terrain). The two maps' figures are
    /// computed side by side.
    pub fn between(before: &Heightmap, after: &Heightmap, units: &GridUnits) -> Self {
        let (before, after) = rayon::join(
            || Landform::of_kernel(before, units),
            || Landform::of_kernel(after, units),
        );
        Self { before, after }
    }
}

/// On the GPU the strategy's own figures (its mass balance) come from the instrumented
/// run, and the heights written (and `change`) from the timed run: two runs of one job,
/// which race differently. How far apart they ended, in the map's height units.
#[derive(Clone, Copy, Debug, Serialize, schemars::JsonSchema)]
pub struct InstrumentedRun {
    /// The instrumented run's sum of (after - before).
    pub total_change: f64,
    /// The same of the heights written.
    pub written_total_change: f64,
    /// (written - instrumented) / |instrumented|; 0 where both are 0.
    pub relative_difference: f64,
    pub cells_differing: usize,
    pub max_cell_difference: f64,
}

impl InstrumentedRun {
    fn against(
        initial: &Cells,
        counted: &Cells,
        written: &Cells,
        unit: &HeightUnit,
    ) -> Option<Self> {
        let total = Change::between(initial, counted)?.total;
        let written_total = Change::between(initial, written)?.total;
        let apart = Change::between(counted, written)?;
        let difference = written_total - total;
        Some(Self {
            total_change: unit.of(total),
            written_total_change: unit.of(written_total),
            relative_difference: match difference {
                0.0 => 0.0,
                d => d / total.abs(),
            },
            cells_differing: apart.changed,
            max_cell_difference: unit.of(apart.max_abs()),
        })
    }
}

/// Everything an erosion run measured, as written to `run.json`: the common figures,
/// then the strategy's own.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct ErodeReport {
    pub provenance: Provenance,
    pub engine: Engine,
    pub algorithm: Algorithm,
    pub terrain: TerrainReport,
    /// The module(s) that ran (GPU only).
    pub kernel: Option<String>,
    /// The driver's compiler statistics of that module's pipeline, each under the
    /// driver's name; empty on the CPU and where the driver reports none.
    pub compiler_statistics: Vec<CompilerStatistic>,
    pub dispatches: usize,
    /// GPU submissions of the timed run: its dispatches split to stay under
    /// `--max-submission-ms`.
    pub submissions: usize,
    /// Time and throughput of the timed run; the steps are the instrumented run's
    /// count (it races as the timed run does but is not the same run).
    pub figures: RunFigures,
    /// The throughput against the strategy's ceiling (GPU runs with timestamps).
    pub ceiling: Option<CeilingShare>,
    /// NVML GPM's hardware counters over a window of timed runs after the
    /// timed run (NVIDIA Hopper and newer; absent elsewhere).
    pub gpm: Option<GpmCounters>,
    /// Landform metrics of the terrain before and after, in the exported units (metres
    /// for a DEM, cells for generated terrain); null past 2^24 cells (4096²), which
    /// `warnings` says.
    pub landform: Option<LandformChange>,
    pub change: ChangeFigures,
    /// Why a figure is missing or a cache was not written, if one is or was not.
    pub warnings: Vec<String>,
    /// Where the strategy's own figures come from a run other than the heights written.
    pub instrumented_run: Option<InstrumentedRun>,
    /// The unit of every figure documented in height units, the strategy's own too.
    pub height_unit: HeightUnit,
    /// The strategy's own fields.
    #[serde(flatten)]
    pub strategy: serde_json::Map<String, serde_json::Value>,
}

/// The terrain before and after, with the report.
pub struct ErodeOutcome {
    /// As the strategy saw them, in kernel height units (cells).
    pub before: Cells,
    pub after: Cells,
    pub terrain: PreparedTerrain,
    /// The strategy's own figures, for callers that compare strategies.
    pub figures: Box<dyn Figures>,
    /// What run.json says.
    pub report: ErodeReport,
}

impl ErodeOutcome {
    /// `map` in export units, with the missing cells missing again.
    pub fn exported(&self, map: &Heightmap) -> Dem {
        export(&self.terrain, map)
    }

    pub fn units(&self) -> &GridUnits {
        &self.terrain.units
    }

    /// How its maps are measured: their heights' unit and the ground of a cell.
    pub fn map_units(&self) -> MapUnits {
        MapUnits {
            height: self.terrain.export_units.clone(),
            cell: self.units().cell_size,
            length: self.units().length_unit,
        }
    }
}

/// `map` in `t`'s export units, with the missing cells missing again.
fn export(t: &PreparedTerrain, map: &Heightmap) -> Dem {
    let mut heights = map.clone();
    let missing = |i: usize| t.missing.get(i) == Some(&true);
    (heights.data_mut().par_iter_mut().enumerate()).for_each(|(i, h)| {
        *h = match missing(i) {
            true => f32::NAN,
            false => t.from_kernel(*h),
        };
    });
    Dem {
        heights,
        nodata: t.nodata,
        units: t.export_units.clone(),
        cell_size: Some(t.units.cell_size),
        geo: t.geo.clone(),
    }
}

/// What one engine's runs gave: the heights after, the strategy's figures and the
/// common ones.
struct EngineRun {
    after: Cells,
    /// The instrumented run's heights, where it is not the run whose heights are kept.
    counted_after: Option<Cells>,
    figures: Box<dyn Figures>,
    run: RunFigures,
    kernel: Option<String>,
    compiler_statistics: Vec<CompilerStatistic>,
    dispatches: usize,
    submissions: usize,
    provenance: Provenance,
    gpm: Option<GpmCounters>,
}

/// The instrumented run to count the work, then the timed run whose heights are the
/// outcome; one upload of the map serves both. The instrumented run goes first: its
/// rate sizes the timed run's submissions, which then need not be split per dispatch.
fn run_on_gpu(
    ctx: &Arc<Context>,
    settings: &RunSettings,
    initial: &Cells,
    tell: Tell,
) -> Result<EngineRun, RunError> {
    let strategy = settings.strategy();
    let algorithm = settings.algorithm.as_str();
    tell(Progress::Stage(format!(
        "{algorithm}: building the kernels"
    )));
    let mut prepared = strategy.prepare(ctx, settings, initial)?;
    tell(Progress::Stage(format!(
        "{algorithm}: counted run (1 of 2)"
    )));
    // Each run's submissions count its dose: the steps or droplets it runs.
    let work = Progress::Work {
        total: strategy.dose(settings),
        unit: strategy.unit().dose_name(),
    };
    tell(work.clone());
    let counted = prepared.run_counted()?;
    tell(Progress::Stage(format!("{algorithm}: timed run (2 of 2)")));
    tell(work);
    let timed = prepared.run_timed(true)?;
    let gpm = match GpuMonitor::for_device(ctx.info()) {
        Some(monitor) => {
            tell(Progress::Stage(format!("{algorithm}: NVML GPM counters")));
            gpm_counters(&monitor, prepared.as_mut())?
        }
        None => None,
    };
    let source = match timed.gpu_time {
        Some(_) => TimeSource::GpuTimestamps,
        None => TimeSource::WallClock,
    };
    Ok(EngineRun {
        after: timed.cells.ok_or(InvariantError::NoHeightsBack)?,
        counted_after: Some(counted.cells),
        run: RunFigures::new(
            source,
            timed.gpu_time,
            timed.wall_time,
            strategy.unit(),
            counted.work,
        )
        .with_rates(counted.figures.as_ref()),
        figures: counted.figures,
        kernel: Some(prepared.kernel()),
        compiler_statistics: prepared.statistics().to_vec(),
        dispatches: prepared.dispatches(),
        submissions: timed.submissions,
        provenance: Provenance::collect(ctx.info()),
        gpm,
    })
}

fn run_on_cpu(
    engine: CpuEngine,
    settings: &RunSettings,
    initial: &Cells,
) -> Result<EngineRun, RunError> {
    let strategy = settings.strategy();
    let run = strategy.run_on_cpu(engine, settings, initial)?;
    Ok(EngineRun {
        run: RunFigures::new(
            TimeSource::CpuWallClock,
            None,
            run.wall_time,
            strategy.unit(),
            run.work,
        )
        .with_rates(run.figures.as_ref()),
        after: run.cells,
        counted_after: None,
        figures: run.figures,
        kernel: None,
        compiler_statistics: Vec::new(),
        dispatches: 0,
        submissions: 0,
        provenance: Provenance::cpu(run.threads),
        gpm: None,
    })
}

/// Runs the request; `ctx` is needed for the GPU engine only.
pub fn run_erosion(
    ctx: Option<&Arc<Context>>,
    request: &ErodeRequest,
    tell: Tell,
) -> Result<ErodeOutcome, RunError> {
    let settings = &request.settings;
    let strategy = settings.strategy();
    let gpu = match request.engine.cpu() {
        None => Some(ctx.ok_or(RunError::NoDeviceForGpuEngine)?),
        Some(_) => None,
    };
    let device = gpu.map(|ctx| ctx.info());
    match request.terrain {
        TerrainSource::Noise => settings.check(device)?,
        TerrainSource::File { .. } => settings.check_job(device)?,
    }
    tell(Progress::Stage(format!(
        "{}: preparing the terrain",
        settings.algorithm.as_str()
    )));
    let terrain = prepare_terrain(&request.terrain, &settings.terrain(), gpu)?;
    // Noise was checked on its map as set (its relief bounds its heights), before it
    // was generated; a file's rules wait for its heights.
    let map = MapInfo::of(&terrain.heights);
    if let TerrainSource::File { .. } = request.terrain {
        settings.check_map(map, device)?;
    }
    settings.check_run_length(map, request.allow_long)?;
    let initial = initial_cells(&terrain.heights, strategy.arithmetic(settings))?;
    let run = match (request.engine.cpu(), gpu) {
        (Some(engine), _) => {
            let name = clap::ValueEnum::to_possible_value(&request.engine);
            let name = name.as_ref().map_or("cpu", |v| v.get_name());
            tell(Progress::Stage(format!(
                "{} on --engine {name}",
                settings.algorithm.as_str()
            )));
            run_on_cpu(engine, settings, &initial)?
        }
        (None, Some(ctx)) => run_on_gpu(ctx, settings, &initial, tell)?,
        (None, None) => return Err(RunError::NoDeviceForGpuEngine),
    };
    tell(Progress::Stage(format!(
        "{}: figures (the ceiling, the change, the landform)",
        settings.algorithm.as_str()
    )));
    let mut warnings = Vec::new();
    let ceiling = match (gpu, run.run.gpu_ms) {
        (Some(ctx), Some(_)) => {
            let mut ceilings = Ceilings::new(ctx);
            let map = MapInfo::of(&terrain.heights);
            let share = CeilingShare::of(
                strategy.ceiling(settings, map),
                run.run.steps_per_s,
                &mut ceilings,
            )?;
            warnings.extend(ceilings.warning);
            // A ceiling the kernel beats bounds nothing: say so where it is quoted.
            if let Some(percent) = share.as_ref().and_then(|s| s.percent_of_peak) {
                if percent > 100.0 {
                    warnings.push(format!(
                        "the run reached {percent:.0}% of its {} ceiling, which therefore does not bound it (caches serve what the ceiling counts as memory traffic)",
                        share.as_ref().and_then(|s| s.ceiling).unwrap_or("device")
                    ));
                }
            }
            share
        }
        (Some(_), None) => {
            warnings.push("no GPU timestamps: no share of the ceiling".into());
            None
        }
        (None, _) => None,
    };
    let landform = Landform::feasible(initial.len() as u64).then(|| {
        LandformChange::between(&initial.heightmap(), &run.after.heightmap(), &terrain.units)
    });
    if landform.is_none() {
        warnings.push(format!(
            "no landform figures: the map's {} cells are past the {} they are computed for (they take minutes a map on the CPU)",
            initial.len(),
            crate::terrain::metrics::LANDFORM_MAX_CELLS
        ));
    }
    let height_unit = terrain.height_unit();
    let mut strategy_report = run.figures.report();
    height_unit.convert_report(strategy.report_fields(), &mut strategy_report);
    let report = ErodeReport {
        provenance: run.provenance,
        engine: request.engine,
        algorithm: settings.algorithm,
        terrain: terrain.report.clone(),
        kernel: run.kernel,
        compiler_statistics: run.compiler_statistics,
        dispatches: run.dispatches,
        submissions: run.submissions,
        figures: run.run,
        ceiling,
        gpm: run.gpm,
        landform,
        change: ChangeFigures::between(
            &initial,
            &run.after,
            terrain.units.kernel_spacing(),
            &height_unit,
            &terrain.missing,
        )
        .ok_or(InvariantError::ShapeChanged)?,
        warnings,
        instrumented_run: match &run.counted_after {
            Some(counted) => InstrumentedRun::against(&initial, counted, &run.after, &height_unit),
            None => None,
        },
        height_unit,
        strategy: strategy_report,
    };
    Ok(ErodeOutcome {
        before: initial,
        after: run.after,
        terrain,
        figures: run.figures,
        report,
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
/// change as data, `run.json`, then the pictures; returns the files written, and a
/// warning for each picture that could not be drawn. What the heightmaps' format
/// leaves out joins the report's warnings. One map in export units is held at a time
/// (each is 16 GiB at 65536²), with what the pictures need of it: its relief, at most
/// a thousand pixels a side.
pub fn write_outcome(
    dir: &Path,
    outcome: &mut ErodeOutcome,
    options: OutputOptions,
    tell: Tell,
) -> Result<(Vec<PathBuf>, Vec<String>), RunError> {
    std::fs::create_dir_all(dir).map_err(PathIoError::at(dir))?;
    tell(Progress::Stage("writing the heightmaps".into()));
    let terrain = &outcome.terrain;
    let path = |name: &str| dir.join(format!("{name}.{}", options.format.extension()));
    let (cell, units) = (outcome.units().cell_size, outcome.map_units());
    let mut written = Vec::new();
    let before = export(terrain, &outcome.before.heightmap());
    let export_warnings = export_warning(&before, options.format);
    let stats = before.heights.stats();
    let range = (stats.min, stats.max);
    let width = before.heights.width();
    written.extend(write_dem(&path("before"), options.format, &before)?);
    let relief = |dem: &Dem| {
        options
            .images
            .then(|| shaded_relief(&dem.heights, cell, range))
    };
    let before_relief = relief(&before);
    drop(before);
    let after = export(terrain, &outcome.after.heightmap());
    written.extend(write_dem(&path("after"), options.format, &after)?);
    let after_relief = relief(&after);
    // The change as data: after minus before, in the exported units, placed as the input.
    let mut change = after;
    let missing = |i: usize| terrain.missing.get(i) == Some(&true);
    (change.heights.data_mut().par_iter_mut().enumerate()).for_each(|(i, h)| {
        *h = match missing(i) {
            true => f32::NAN,
            false => {
                terrain.from_kernel(outcome.after.height_at(i))
                    - terrain.from_kernel(outcome.before.height_at(i))
            }
        };
    });
    written.extend(write_dem(
        &dir.join("erosion.tif"),
        HeightFormat::Tif,
        &change,
    )?);
    outcome.report.warnings.extend(export_warnings);
    let report_path = dir.join("run.json");
    write_atomically(&report_path, |out| {
        serde_json::to_writer_pretty(&mut *out, &outcome.report).map_err(std::io::Error::other)
    })?;
    written.push(report_path);
    // The pictures last, each on its own: one that cannot be drawn is a warning.
    let mut warnings = Vec::new();
    if let (Some(before_relief), Some(after_relief)) = (before_relief, after_relief) {
        tell(Progress::Stage("drawing the pictures".into()));
        let legend = |relief: &RgbImage| relief_with_legend(relief, range, &units, width);
        let figures = [
            ("before_relief.png", legend(&before_relief)),
            ("after_relief.png", legend(&after_relief)),
            (
                "erosion.png",
                erosion_map_of_change(&change.heights, units.clone()),
            ),
            (
                "before_after.png",
                before_after(&before_relief, &after_relief, range, &units, width),
            ),
        ];
        for (name, image) in figures {
            let path = dir.join(name);
            match drawn(|| image.write_png(&path)) {
                Ok(()) => written.push(path),
                Err(reason) => warnings.push(format!(
                    "{name} was not drawn ({reason}); the heightmaps and run.json are written"
                )),
            }
        }
    }
    Ok((written, warnings))
}
