//! `vkerode strategies experiments/strategies.toml`: the strategies compared by dose,
//! not by GPU time. Each strategy the config names a table for runs on each terrain,
//! over each seed, once per level of water (`water_per_cell`: every strategy rains the
//! same water at each level, by the unit mapping its `water_per_dose` states), each run
//! fresh from the terrain. The landform figures are then followed against the erosion
//! each run did, with the seeds' means and intervals; GPU time stays as the cost of that
//! erosion.
//!
//! Its parts: the config (`config.rs`), one run's row of strategies.csv (`runs.rs`),
//! and the trajectories gathered over seeds, dose.csv and its charts (`dose.rs`).

mod config;
mod dose;
mod error;
mod runs;

pub use config::{BaseLevel, Strategies, StrategyPlan, StrategyTerrain, TerrainPlan, WaterTiming};
pub use dose::{dose_columns, redraw_dose_csv, DOSE_CHART, INTERVAL_LEVEL};
pub use error::ComparisonError;
pub use runs::{records_base_level, strategies_columns, RunRecord, RunRecords};

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::erosion::ErosionError;
use crate::erosion::RunSettings;
use crate::experiment::results::Measurement;
use crate::experiment::run::{
    prepare_terrain, run_erosion, Engine, ErodeOutcome, ErodeRequest, TerrainSource,
};
use crate::experiment::sweep::config::MeasureSettings;
use crate::experiment::sweep::measure_runs;
use crate::gpu::Context;
use crate::terrain::files::write_atomically;
use crate::terrain::pictures::{drawn, erosion_maps_side_by_side, ErosionChange};
use crate::PathIoError;
use dose::{draw_trajectories, DoseRun};
use runs::{describe, Measured, RunAt};

/// Every run: its settings, dose, water and figures.
pub const STRATEGIES_CSV: &str = "strategies.csv";
/// The runs gathered over seeds per terrain, strategy and level.
pub const DOSE_CSV: &str = "dose.csv";

fn write_csv(
    path: &Path,
    header: Vec<String>,
    rows: &[Vec<String>],
) -> Result<(), ComparisonError> {
    write_atomically(path, |out| {
        let mut csv = csv::Writer::from_writer(out);
        csv.write_record(&header).map_err(std::io::Error::other)?;
        for row in rows {
            csv.write_record(row).map_err(std::io::Error::other)?;
        }
        csv.flush()
    })?;
    Ok(())
}

/// One run of the comparison: the erosion, from the terrain, then its cost measured as
/// a sweep's point is (warm-up, then repetitions until the noise is low).
fn erode_and_time(
    ctx: &Arc<Context>,
    terrain: &TerrainSource,
    settings: &RunSettings,
    measure: &MeasureSettings,
) -> Result<(ErodeOutcome, Measurement), ComparisonError> {
    let request = ErodeRequest {
        terrain: terrain.clone(),
        settings: settings.clone(),
        engine: Engine::Gpu,
        // The dose is the water's, however long it runs.
        allow_long: true,
    };
    let outcome = run_erosion(Some(ctx), &request, &mut |_| {})?;
    if outcome.report.figures.gpu_ms.is_none() {
        return Err(ComparisonError::NoTimestamps);
    }
    let mut prepared = settings
        .strategy()
        .prepare(ctx, settings, &outcome.before)?;
    let cost = measure_runs(measure, || {
        let run = prepared.run_timed(false)?;
        Ok::<_, ErosionError>((run.gpu_time, run.wall_time))
    })?;
    drop(prepared);
    Ok((outcome, cost))
}

/// The sea of the comparison's runs of `seed` on `plan`'s terrain (kernel height units).
fn sea_of(
    ctx: &Arc<Context>,
    strategies: &Strategies,
    plan: &TerrainPlan,
    seed: u32,
) -> Result<f32, ComparisonError> {
    let Some(first) = plan.strategies.first() else {
        return Ok(0.0);
    };
    let spec = first.settings(0, seed).terrain();
    let terrain = prepare_terrain(&plan.source, &spec, Some(ctx))?;
    Ok(strategies.base_level.on(&terrain.heights))
}

/// The change of a run, in the map's units, for its erosion map.
fn erosion_change_of(outcome: &ErodeOutcome) -> ErosionChange {
    let [before, after] =
        [&outcome.before, &outcome.after].map(|c| outcome.exported(&c.heightmap()).heights);
    ErosionChange::of(&before, &after, outcome.map_units())
}

/// Runs every strategy of the config on every terrain, seed and level of water, and
/// writes into `dir`: `strategies.csv` and `dose.csv`; per terrain the trajectories'
/// chart, and of the first seed at the most water each strategy's `<algorithm>.json`
/// and the erosion maps side by side. Returns a line per run and the files written.
pub fn run_strategies(
    ctx: &Arc<Context>,
    strategies: &Strategies,
    dir: &Path,
    mut say: impl FnMut(String),
) -> Result<(Vec<String>, Vec<PathBuf>), ComparisonError> {
    let mut rows = Vec::new();
    let mut dose_runs = Vec::new();
    let mut lines = Vec::new();
    let mut written = Vec::new();
    let levels = strategies.water_per_cell.len();
    // Each terrain's pictures, drawn once every run is written: a chart never costs
    // the runs.
    let mut pictures = Vec::new();
    for plan in &strategies.plans {
        let terrain = plan.terrain.name.as_str();
        let folder = dir.join(terrain);
        std::fs::create_dir_all(&folder).map_err(PathIoError::at(&folder))?;
        let mut maps = Vec::new();
        for (s, &seed) in strategies.seeds.iter().enumerate() {
            let sea = sea_of(ctx, strategies, plan, seed)?;
            for strategy in &plan.strategies {
                let name = strategy.algorithm.as_str();
                for (level, &(_, water_rained)) in strategy.doses.iter().enumerate() {
                    let settings = strategy
                        .algorithm
                        .strategy()
                        .in_comparison(&strategy.settings(level, seed), sea);
                    let at = RunAt {
                        terrain,
                        seed,
                        water_per_cell: strategies.water_per_cell[level],
                        water_rained,
                        base_level: sea,
                    };
                    say(format!(
                        "{terrain} seed {seed}: {name} at water {} per cell",
                        at.water_per_cell
                    ));
                    let (outcome, cost) =
                        erode_and_time(ctx, &plan.source, &settings, &strategies.measure)?;
                    let measured = Measured {
                        at,
                        settings: &settings,
                        cost: &cost,
                        outcome: &outcome,
                    };
                    rows.push(runs::row(Some(&measured)).values);
                    lines.push(describe(&measured));
                    if level == 0 {
                        dose_runs.push(DoseRun::of(None, &measured));
                    }
                    dose_runs.push(DoseRun::of(Some(level), &measured));
                    // The runs shown: the first seed's at the most water.
                    if s == 0 && level + 1 == levels {
                        let path = folder.join(format!("{name}.json"));
                        write_atomically(&path, |out| {
                            serde_json::to_writer_pretty(&mut *out, &outcome.report)
                                .map_err(std::io::Error::other)
                        })?;
                        written.push(path);
                        maps.push((erosion_change_of(&outcome), name));
                    }
                }
            }
        }
        pictures.push((folder, terrain, maps));
    }
    let header = |columns: Vec<crate::table::Column>| columns.into_iter().map(|c| c.name).collect();
    let csv_path = dir.join(STRATEGIES_CSV);
    write_csv(&csv_path, header(strategies_columns()), &rows)?;
    written.push(csv_path);
    let dose_path = dir.join(DOSE_CSV);
    let records = dose::dose_records(&dose_runs, &strategies.water_per_cell);
    write_csv(&dose_path, header(dose_columns()), &records)?;
    written.push(dose_path);
    for (folder, terrain, maps) in pictures {
        let erosion_map = || {
            let panels: Vec<_> = maps.iter().map(|(change, name)| (change, *name)).collect();
            let path = folder.join("erosion.png");
            erosion_maps_side_by_side(&panels).write_png(&path)?;
            Ok(vec![path])
        };
        let dose_chart = || {
            draw_trajectories(
                &folder.join(DOSE_CHART),
                terrain,
                &dose_runs,
                &strategies.water_per_cell,
            )
        };
        for draw in [&erosion_map as &dyn Fn() -> _, &dose_chart] {
            match drawn(draw) {
                Ok(paths) => written.extend(paths),
                Err(reason) => lines.push(format!(
                    "warning: {terrain}: a picture was not drawn ({reason}); every run is in {STRATEGIES_CSV} and {DOSE_CSV}"
                )),
            }
        }
    }
    Ok((lines, written))
}
