//! Droplets against pipes (`vkerode strategies experiments/strategies.toml`): both of the
//! paper's strategies on the same terrains, each given the same GPU time, with their
//! erosion maps side by side, their mass balance, the landform metrics and each one's
//! throughput in its own unit.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::config::ConfigError;
use super::erode::{run_erosion, Engine, ErodeOutcome, ErodeReport, ErodeRequest, TerrainSource};
use super::pipes::{run_pipes, PipesReport};
use super::settings::RunSettings;
use super::ExperimentError;
use crate::erosion::{Algorithm, ErosionError};
use crate::gpu::Context;
use crate::terrain::files::write_atomically;
use crate::terrain::formats::read_dem;
use crate::terrain::image::CellSize;
use crate::terrain::metrics::Landform;
use crate::terrain::pictures::{erosion_map, side_by_side};
use crate::terrain::units::{CellSizeSource, GridUnits};
use crate::terrain::Heightmap;

/// `experiments/strategies.toml` as written.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StrategiesConfig {
    pub name: String,
    pub description: String,
    /// GPU seconds each strategy spends on each terrain.
    pub gpu_seconds: f64,
    pub terrain: Vec<StrategyTerrain>,
    /// Settings of the droplet runs (RunSettings keys); `droplets` is calibrated.
    #[serde(default)]
    pub droplets: toml::Table,
    /// Settings of the grid runs (RunSettings keys); `pipes_steps` is calibrated.
    #[serde(default)]
    pub pipes: toml::Table,
}

/// One terrain: erosion noise of a size and seed, or a heightmap file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StrategyTerrain {
    pub name: String,
    #[serde(default)]
    pub size: Option<u32>,
    #[serde(default)]
    pub seed: Option<u32>,
    /// A heightmap, relative to the config's folder.
    #[serde(default)]
    pub input: Option<PathBuf>,
    /// Metres per cell east-west and north-south, for a file without georeferencing.
    #[serde(default)]
    pub cell_size: Option<[f32; 2]>,
}

/// One strategy on one terrain, as a row of `strategies.csv`.
#[derive(Clone, Debug, Serialize)]
pub struct StrategyRow {
    pub terrain: String,
    pub algorithm: Algorithm,
    pub width: usize,
    pub height: usize,
    /// Droplets, or time steps of the grid.
    pub work: u64,
    pub gpu_ms: f64,
    /// droplet-steps or cell-steps.
    pub unit: &'static str,
    pub steps_per_s: f64,
    /// From the maps before and after, in height units (cells) summed over cells.
    pub eroded: f64,
    pub deposited: f64,
    pub net_change: f64,
    /// Each strategy's own balance: sediment a droplet still carried when it died or
    /// left the map, or the grid's suspended sediment and advection drift.
    pub sediment_left: f64,
    pub advection_drift: Option<f64>,
    pub hypsometric_integral_before: f64,
    pub hypsometric_integral_after: f64,
    pub mean_slope_before: f64,
    pub mean_slope_after: f64,
    pub drainage_density_before: f64,
    pub drainage_density_after: f64,
    pub concavity_before: Option<f64>,
    pub concavity_after: Option<f64>,
    pub channel_incision_before: f64,
    pub channel_incision_after: f64,
}

/// A loaded config: every terrain with the checked settings of both strategies on it.
pub struct Strategies {
    pub config: StrategiesConfig,
    pub plans: Vec<TerrainPlan>,
}

pub struct TerrainPlan {
    pub terrain: StrategyTerrain,
    pub droplets: RunSettings,
    pub pipes: RunSettings,
}

impl Strategies {
    /// Reads and checks `path`: errors name the file and the key, before any GPU work.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let error = |key: &str, reason: String| ConfigError {
            file: path.to_path_buf(),
            key: key.into(),
            reason,
        };
        let text = std::fs::read_to_string(path).map_err(|e| error("(file)", e.to_string()))?;
        let config: StrategiesConfig =
            toml::from_str(&text).map_err(|e| error("(syntax)", e.message().into()))?;
        if !(config.gpu_seconds.is_finite() && config.gpu_seconds > 0.0) {
            return Err(error(
                "gpu_seconds",
                "must be a positive number of seconds".into(),
            ));
        }
        if config.terrain.is_empty() {
            return Err(error("terrain", "name at least one [[terrain]]".into()));
        }
        for t in &config.terrain {
            if t.input.is_some() == (t.size.is_some() || t.seed.is_some()) {
                return Err(error(
                    "terrain",
                    format!(
                        "{}: give an input file, or a size and seed of noise, not both",
                        t.name
                    ),
                ));
            }
        }
        let plans = config
            .terrain
            .iter()
            .map(|t| {
                let settings = |key, algorithm| {
                    config
                        .settings(algorithm, t)
                        .map_err(|reason| error(key, reason))
                };
                Ok(TerrainPlan {
                    terrain: t.clone(),
                    droplets: settings("droplets", Algorithm::Droplets)?,
                    pipes: settings("pipes", Algorithm::Pipes)?,
                })
            })
            .collect::<Result<_, ConfigError>>()?;
        Ok(Self { config, plans })
    }
}

impl StrategiesConfig {
    /// The settings of `algorithm` on `terrain`.
    fn settings(
        &self,
        algorithm: Algorithm,
        terrain: &StrategyTerrain,
    ) -> Result<RunSettings, String> {
        let mut table = match algorithm {
            Algorithm::Droplets => self.droplets.clone(),
            Algorithm::Pipes => self.pipes.clone(),
        };
        // The key as configs spell it, from the one serde spelling of Algorithm.
        let spelled = toml::Value::try_from(algorithm).map_err(|e| e.to_string())?;
        table.insert("algorithm".into(), spelled);
        for (key, value) in [("size", terrain.size), ("seed", terrain.seed)] {
            if let Some(v) = value {
                table.insert(key.into(), toml::Value::Integer(i64::from(v)));
            }
        }
        let settings: RunSettings = table
            .try_into()
            .map_err(|e: toml::de::Error| e.message().to_string())?;
        let checked = match terrain.input {
            None => settings.check(None),
            Some(_) => settings.check_job(None),
        };
        checked.map_err(|e| e.to_string())?;
        Ok(settings)
    }
}

impl StrategyTerrain {
    fn source(&self, config_dir: &Path) -> Result<TerrainSource, ExperimentError> {
        let Some(input) = &self.input else {
            return Ok(TerrainSource::Noise);
        };
        let path = config_dir.join(input);
        let mut dem = read_dem(&path, None)?;
        let cell_size_source = match (self.cell_size, dem.cell_size) {
            (Some([x, y]), _) => {
                dem.cell_size = Some(CellSize { x, y });
                CellSizeSource::Flag
            }
            (None, Some(_)) => CellSizeSource::File,
            (None, None) => CellSizeSource::Assumed,
        };
        Ok(TerrainSource::File {
            path,
            units: GridUnits {
                cell_size: dem.cell_size.unwrap_or_default(),
                vertical_scale: 1.0,
            },
            dem: Box::new(dem),
            cell_size_source,
        })
    }
}

/// What one strategy's run on one terrain gave.
struct StrategyRun {
    before: Heightmap,
    after: Heightmap,
    units: String,
    work: u64,
    gpu_ms: f64,
    steps: u64,
    sediment_left: f64,
    advection_drift: Option<f64>,
    landform: (Landform, Landform),
    report: StrategyReport,
}

/// A run's `run.json`.
#[derive(Serialize)]
#[serde(untagged)]
enum StrategyReport {
    Droplets(Box<ErodeReport>),
    Pipes(Box<PipesReport>),
}

/// Runs work units of the first amount, then as many as fill `gpu_seconds` at the rate
/// that run had: `run(work)` returns its GPU milliseconds with the outcome.
fn at_equal_time<T>(
    gpu_seconds: f64,
    first: u64,
    mut run: impl FnMut(u64) -> Result<(f64, T), ExperimentError>,
) -> Result<(u64, f64, T), ExperimentError> {
    let (ms, _) = run(first)?;
    let work = ((gpu_seconds * 1e3 / ms.max(1e-6)) * first as f64)
        .round()
        .max(1.0) as u64;
    let (ms, outcome) = run(work)?;
    Ok((work, ms, outcome))
}

fn no_timestamps() -> ExperimentError {
    ErosionError::Unsupported("GPU timestamps, which equal GPU time needs").into()
}

fn run_droplets(
    ctx: &Arc<Context>,
    settings: &RunSettings,
    terrain: TerrainSource,
    gpu_seconds: f64,
) -> Result<StrategyRun, ExperimentError> {
    let mut request = ErodeRequest {
        terrain,
        settings: settings.clone(),
        engine: Engine::Gpu,
    };
    let (droplets, gpu_ms, outcome) =
        at_equal_time(gpu_seconds, u64::from(settings.droplets), |n| {
            request.settings.droplets = u32::try_from(n).unwrap_or(u32::MAX);
            let outcome = run_erosion(Some(ctx), &request)?;
            let ms = outcome.report.figures.gpu_ms.ok_or_else(no_timestamps)?;
            Ok((ms, outcome))
        })?;
    let r = &outcome.report;
    let contention = r.contention.clone().unwrap_or_default();
    Ok(StrategyRun {
        units: outcome.export_units.clone(),
        work: droplets,
        gpu_ms,
        steps: r.work.steps,
        sediment_left: contention.mass_at_death + contention.mass_off_edge,
        advection_drift: None,
        landform: (r.landform.before, r.landform.after),
        report: StrategyReport::Droplets(Box::new(r.clone())),
        before: outcome.before,
        after: outcome.after,
    })
}

fn run_grid(
    ctx: &Arc<Context>,
    settings: &RunSettings,
    terrain: &TerrainSource,
    gpu_seconds: f64,
) -> Result<StrategyRun, ExperimentError> {
    let mut settings = settings.clone();
    let (steps, gpu_ms, outcome): (u64, f64, ErodeOutcome<_>) =
        at_equal_time(gpu_seconds, u64::from(settings.pipes_steps), |n| {
            settings.pipes_steps = u32::try_from(n).unwrap_or(u32::MAX);
            let outcome = run_pipes(ctx, terrain, &settings.terrain(), &settings)?;
            let ms = outcome.report.gpu_ms.ok_or_else(no_timestamps)?;
            Ok((ms, outcome))
        })?;
    let r = &outcome.report;
    Ok(StrategyRun {
        units: outcome.export_units.clone(),
        work: steps,
        gpu_ms,
        steps: steps * (outcome.before.data().len() as u64),
        sediment_left: r.balance.sediment_after,
        advection_drift: Some(r.balance.advection_drift),
        landform: (r.landform.before, r.landform.after),
        report: StrategyReport::Pipes(Box::new(r.clone())),
        before: outcome.before,
        after: outcome.after,
    })
}

impl StrategyRun {
    fn row(&self, terrain: &str, algorithm: Algorithm) -> StrategyRow {
        let (mut eroded, mut deposited) = (0.0, 0.0);
        for (b, a) in self.before.data().iter().zip(self.after.data()) {
            let d = f64::from(a - b);
            if d < 0.0 {
                eroded -= d;
            } else {
                deposited += d;
            }
        }
        let (before, after) = &self.landform;
        StrategyRow {
            terrain: terrain.into(),
            algorithm,
            width: self.before.width(),
            height: self.before.height(),
            work: self.work,
            gpu_ms: self.gpu_ms,
            unit: match algorithm {
                Algorithm::Droplets => "droplet-steps",
                Algorithm::Pipes => "cell-steps",
            },
            steps_per_s: self.steps as f64 / (self.gpu_ms / 1e3),
            eroded,
            deposited,
            net_change: deposited - eroded,
            sediment_left: self.sediment_left,
            advection_drift: self.advection_drift,
            hypsometric_integral_before: before.hypsometric_integral,
            hypsometric_integral_after: after.hypsometric_integral,
            mean_slope_before: before.mean_slope,
            mean_slope_after: after.mean_slope,
            drainage_density_before: before.drainage_density,
            drainage_density_after: after.drainage_density,
            concavity_before: before.concavity,
            concavity_after: after.concavity,
            channel_incision_before: before.channel_incision,
            channel_incision_after: after.channel_incision,
        }
    }
}

/// Runs both strategies on every terrain of `config` (read from `config_dir`) and
/// writes into `dir`: `strategies.csv`, and per terrain the two erosion maps side by
/// side and each run's `run.json`. Returns the rows and the files written.
pub fn run_strategies(
    ctx: &Arc<Context>,
    strategies: &Strategies,
    config_dir: &Path,
    dir: &Path,
    mut say: impl FnMut(String),
) -> Result<(Vec<StrategyRow>, Vec<PathBuf>), ExperimentError> {
    let mut rows = Vec::new();
    let mut written = Vec::new();
    let seconds = strategies.config.gpu_seconds;
    for plan in &strategies.plans {
        let terrain = &plan.terrain;
        say(format!("{}: droplets", terrain.name));
        let source = terrain.source(config_dir)?;
        let droplets = run_droplets(ctx, &plan.droplets, source.clone(), seconds)?;
        say(format!("{}: pipes", terrain.name));
        let grid = run_grid(ctx, &plan.pipes, &source, seconds)?;
        let folder = dir.join(&terrain.name);
        std::fs::create_dir_all(&folder).map_err(|source| ExperimentError::Io {
            path: folder.clone(),
            source,
        })?;
        for (run, algorithm) in [(&droplets, Algorithm::Droplets), (&grid, Algorithm::Pipes)] {
            rows.push(run.row(&terrain.name, algorithm));
            let name = match algorithm {
                Algorithm::Droplets => "droplets.json",
                Algorithm::Pipes => "pipes.json",
            };
            let path = folder.join(name);
            write_atomically(&path, |out| {
                serde_json::to_writer_pretty(&mut *out, &run.report).map_err(std::io::Error::other)
            })?;
            written.push(path);
        }
        let maps = side_by_side(
            &erosion_map(&droplets.before, &droplets.after, &droplets.units),
            &erosion_map(&grid.before, &grid.after, &grid.units),
            ["droplets", "virtual pipes"],
        );
        let path = folder.join("erosion.png");
        maps.write_png(&path)?;
        written.push(path);
    }
    let csv_path = dir.join("strategies.csv");
    write_atomically(&csv_path, |out| {
        let mut csv = csv::Writer::from_writer(out);
        for row in &rows {
            csv.serialize(row).map_err(std::io::Error::other)?;
        }
        csv.flush()
    })?;
    written.push(csv_path);
    Ok((rows, written))
}
