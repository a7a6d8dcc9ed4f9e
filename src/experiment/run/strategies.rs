//! Strategies against each other (`vkerode strategies experiments/strategies.toml`):
//! each strategy the config names a table for, on the same terrains, each given the same
//! GPU time, with their erosion maps side by side, their balance, the landform metrics
//! and each one's throughput in its own unit.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::super::{ConfigError, ExperimentError};
use super::erode::{run_erosion, Engine, ErodeOutcome, ErodeRequest};
use super::terrain::{prepare_terrain, InputError, InputUnits, TerrainSource};
use crate::erosion::settings::NoiseSettings;
use crate::erosion::{Algorithm, ErosionError, RunSettings, STRATEGIES};
use crate::gpu::Context;
use crate::table::{Column, Row, Section};
use crate::terrain::files::write_atomically;
use crate::terrain::image::CellSize;
use crate::terrain::metrics::Landform;
use crate::terrain::output::slug;
use crate::terrain::pictures::{erosion_map, side_by_side};
use crate::terrain::units::HEIGHT_UNIT_MEANING;
use crate::terrain::MapInfo;

/// The keys of a strategies config besides its strategies' tables.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Header {
    name: String,
    description: String,
    /// GPU seconds each strategy spends on each terrain.
    gpu_seconds: f64,
    terrain: Vec<StrategyTerrain>,
}

/// One terrain: erosion noise of a size and seed, or a heightmap file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StrategyTerrain {
    /// Its folder in the output: letters, digits, '-' or '_'.
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

/// A loaded config: every terrain with the checked settings of each strategy on it.
pub struct Strategies {
    pub name: String,
    pub description: String,
    pub gpu_seconds: f64,
    pub plans: Vec<TerrainPlan>,
}

pub struct TerrainPlan {
    pub terrain: StrategyTerrain,
    /// The terrain as read when the config was loaded.
    pub source: TerrainSource,
    /// Each strategy's settings, in the registry's order.
    pub runs: Vec<RunSettings>,
}

/// Whether `name` can be a folder name: letters, digits, '-' or '_'.
fn plain_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

impl Strategies {
    /// Reads and checks `path`: errors name the file and the key, before any GPU work.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let error = |key: &str, reason: String| ConfigError {
            file: path.to_path_buf(),
            key: key.into(),
            reason,
        };
        let text = crate::read_input_text(path).map_err(|e| error("(file)", e.to_string()))?;
        let mut table: toml::Table =
            toml::from_str(&text).map_err(|e| error("(syntax)", e.message().into()))?;
        let tables: Vec<(Algorithm, toml::Table)> = STRATEGIES
            .iter()
            .filter_map(|s| {
                let key = s.algorithm().as_str();
                Some((s.algorithm(), table.remove(key)?))
            })
            .map(|(algorithm, value)| match value {
                toml::Value::Table(t) => Ok((algorithm, t)),
                _ => Err(error(
                    algorithm.as_str(),
                    "must be a table of settings".into(),
                )),
            })
            .collect::<Result<_, _>>()?;
        let header = Header::deserialize(toml::Value::Table(table))
            .map_err(|e| error("(syntax)", e.message().into()))?;
        if tables.is_empty() {
            let names: Vec<&str> = STRATEGIES.iter().map(|s| s.algorithm().as_str()).collect();
            return Err(error(
                "(strategies)",
                format!(
                    "name at least one strategy's table: [{}]",
                    names.join("], [")
                ),
            ));
        }
        if !plain_name(&header.name) {
            return Err(error(
                "name",
                format!("{:?} must be letters, digits, '-' or '_'", header.name),
            ));
        }
        if !(header.gpu_seconds.is_finite() && header.gpu_seconds > 0.0) {
            return Err(error(
                "gpu_seconds",
                "must be a positive number of seconds".into(),
            ));
        }
        if header.terrain.is_empty() {
            return Err(error("terrain", "name at least one [[terrain]]".into()));
        }
        for (i, t) in header.terrain.iter().enumerate() {
            if !plain_name(&t.name) {
                return Err(error(
                    "terrain.name",
                    format!(
                        "{:?} must be letters, digits, '-' or '_' (it names a folder)",
                        t.name
                    ),
                ));
            }
            if header.terrain[..i].iter().any(|other| other.name == t.name) {
                return Err(error(
                    "terrain.name",
                    format!("{:?} is named twice", t.name),
                ));
            }
            if t.input.is_some() == (t.size.is_some() || t.seed.is_some()) {
                return Err(error(
                    "terrain",
                    format!(
                        "{}: give an input file, or a size and seed of noise, not both",
                        t.name
                    ),
                ));
            }
            if let Some([x, y]) = t.cell_size {
                if t.input.is_none() {
                    return Err(error(
                        "terrain.cell_size",
                        format!(
                            "{}: a cell size is for an input file without georeferencing; noise is in cells",
                            t.name
                        ),
                    ));
                }
                if let Err(reason) = (CellSize { x, y }).check() {
                    return Err(error("terrain.cell_size", format!("{}: {reason}", t.name)));
                }
            }
        }
        let config_dir = path.parent().unwrap_or(Path::new("."));
        let plans = header
            .terrain
            .iter()
            .map(|t| {
                // Every file read here, so that a missing one stops the run before any
                // GPU work rather than after the terrains before it.
                let source = t
                    .source(config_dir)
                    .map_err(|e| error("terrain.input", format!("{}: {e}", t.name)))?;
                let map = t
                    .map(&source)
                    .map_err(|e| error("terrain.input", format!("{}: {e}", t.name)))?;
                let runs = tables
                    .iter()
                    .map(|(algorithm, settings)| {
                        settings_of(*algorithm, settings, t, map)
                            .map_err(|reason| error(algorithm.as_str(), reason))
                    })
                    .collect::<Result<_, ConfigError>>()?;
                Ok(TerrainPlan {
                    terrain: t.clone(),
                    source,
                    runs,
                })
            })
            .collect::<Result<_, ConfigError>>()?;
        Ok(Self {
            name: header.name,
            description: header.description,
            gpu_seconds: header.gpu_seconds,
            plans,
        })
    }

    /// Where a run on `device` writes without `--out`: `results/<name>/<device>`.
    pub fn default_out(&self, device: &str) -> PathBuf {
        Path::new("results").join(&self.name).join(slug(device))
    }
}

/// The settings of `algorithm` on `terrain` (a file's map where it is one): its table,
/// with the terrain's size and seed, checked without a device.
fn settings_of(
    algorithm: Algorithm,
    table: &toml::Table,
    terrain: &StrategyTerrain,
    file_map: Option<MapInfo>,
) -> Result<RunSettings, String> {
    // A key of another strategy, or of the terrain, would be ignored here.
    let own = algorithm.strategy().settings_units();
    if let Some(key) = table.keys().find(|k| !own.iter().any(|(o, _)| o == k)) {
        let name = algorithm.as_str();
        return Err(match RunSettings::owner_of(key) {
            Some(owner) => format!("`{key}` is a setting of {}, not of {name}", owner.as_str()),
            None if NoiseSettings::UNITS.iter().any(|(k, _)| k == key) => {
                format!(
                    "`{key}` is a terrain's setting, which [[terrain]] gives, not one of {name}"
                )
            }
            None if RunSettings::keys().contains(key) => {
                format!("`{key}` is the table's name here, [{name}]")
            }
            None => {
                let keys: Vec<String> = own.iter().map(|(k, _)| format!("`{k}`")).collect();
                format!("unknown field `{key}`, expected one of {}", keys.join(", "))
            }
        });
    }
    let mut table = table.clone();
    // The key as configs spell it, from the one serde spelling of Algorithm.
    let spelled = toml::Value::try_from(algorithm).map_err(|e| e.to_string())?;
    table.insert("algorithm".into(), spelled);
    for (key, value) in [("size", terrain.size), ("seed", terrain.seed)] {
        if let Some(v) = value {
            table.insert(key.into(), toml::Value::Integer(i64::from(v)));
        }
    }
    let settings = RunSettings::from_table(&table)?;
    let checked = match file_map {
        None => settings.check(None),
        Some(map) => settings
            .check_job(None)
            .and_then(|()| settings.check_map(map, None)),
    };
    checked.map_err(|e| e.to_string())?;
    Ok(settings)
}

impl StrategyTerrain {
    fn source(&self, config_dir: &Path) -> Result<TerrainSource, ExperimentError> {
        let Some(input) = &self.input else {
            return Ok(TerrainSource::Noise);
        };
        let units = InputUnits {
            cell_size: self.cell_size.map(|[x, y]| CellSize { x, y }),
            ..InputUnits::DEFAULT
        };
        TerrainSource::read(&config_dir.join(input), None, units).map_err(|e| match e {
            InputError::NoCellSize { .. } => ExperimentError::Run(format!(
                "{}: {e}; give the terrain a cell_size = [x, y]",
                self.name
            )),
            InputError::Format(e) => e.into(),
            InputError::Units(e) => e.into(),
        })
    }

    /// The map of a file's terrain in kernel units, as the strategies will see it;
    /// `None` for noise, whose map the settings give.
    fn map(&self, source: &TerrainSource) -> Result<Option<MapInfo>, ExperimentError> {
        match source {
            TerrainSource::Noise => Ok(None),
            TerrainSource::File { .. } => {
                // The spec is for noise only; a file is read as it is.
                let prepared = prepare_terrain(source, &RunSettings::DEFAULT.terrain(), None)?;
                Ok(Some(MapInfo::of(&prepared.heights)))
            }
        }
    }
}

/// A strategy's run on one terrain, as the columns of `strategies.csv` it shares with
/// every strategy.
#[derive(Clone, Debug, Default, Serialize)]
struct StrategyColumns {
    terrain: String,
    algorithm: String,
    width: usize,
    height: usize,
    /// The dose: droplets, or time steps of a grid.
    work: u64,
    gpu_ms: f64,
    unit: String,
    steps_per_s: f64,
    height_unit: String,
    eroded: f64,
    deposited: f64,
    net_change: f64,
    sediment_left: f64,
}

impl Section for StrategyColumns {
    const COLUMNS: &'static [(&'static str, &'static str, &'static str)] = &[
        ("terrain", "text", "the [[terrain]] the strategies ran on"),
        ("algorithm", "text", "the strategy"),
        ("width", "cells", "the map's width"),
        ("height", "cells", "the map's height"),
        ("work", "droplets or time steps", "the calibrated dose that filled gpu_seconds"),
        ("gpu_ms", "ms", "GPU time of the run (timestamps)"),
        ("unit", "text", "what steps_per_s counts: droplet-steps or cell-steps"),
        ("steps_per_s", "unit/s", "the run's steps per GPU second, in its own unit"),
        ("height_unit", "text", HEIGHT_UNIT_MEANING),
        ("eroded", "height units x cells", "sum of the lowering of the cells that went down"),
        ("deposited", "height units x cells", "sum of the raising of the cells that went up"),
        ("net_change", "height units x cells", "deposited - eroded"),
        (
            "sediment_left",
            "height units x cells",
            "eroded material still in transport at the end (droplets' load at death, suspended sediment)",
        ),
    ];
}

/// Runs work units of the first amount, then as many as fill `gpu_seconds` at the rate
/// that run had.
fn at_equal_time(
    ctx: &Arc<Context>,
    settings: &RunSettings,
    terrain: &TerrainSource,
    gpu_seconds: f64,
) -> Result<(u64, f64, ErodeOutcome), ExperimentError> {
    let strategy = settings.strategy();
    let run = |dose: u64| -> Result<(f64, ErodeOutcome), ExperimentError> {
        let request = ErodeRequest {
            terrain: terrain.clone(),
            settings: strategy.with_dose(settings, dose),
            engine: Engine::Gpu,
            // The dose is what fits in gpu_seconds.
            allow_long: true,
        };
        let outcome = run_erosion(Some(ctx), &request)?;
        let ms = outcome
            .report
            .figures
            .gpu_ms
            .ok_or(ExperimentError::Erosion(ErosionError::Unsupported(
                "GPU timestamps, which equal GPU time needs",
            )))?;
        Ok((ms, outcome))
    };
    let first = strategy.dose(settings);
    let (ms, _) = run(first)?;
    let dose = ((gpu_seconds * 1e3 / ms.max(1e-6)) * first as f64)
        .round()
        .max(1.0) as u64;
    let (ms, outcome) = run(dose)?;
    Ok((dose, ms, outcome))
}

/// The row of one strategy's run; `None` for the header alone.
fn row(terrain: &str, run: Option<(&RunSettings, u64, f64, &ErodeOutcome)>) -> Row {
    let mut row = Row::default();
    let common = run.map(|(settings, dose, gpu_ms, outcome)| {
        let change = &outcome.report.change;
        let figures = &outcome.report.figures;
        StrategyColumns {
            terrain: terrain.into(),
            algorithm: settings.algorithm.as_str().into(),
            width: outcome.before.width(),
            height: outcome.before.height(),
            work: dose,
            gpu_ms,
            unit: figures.unit.name().into(),
            steps_per_s: figures.steps_per_s,
            height_unit: outcome.report.height_unit.name.clone(),
            eroded: change.eroded,
            deposited: change.deposited,
            net_change: change.deposited - change.eroded,
            sediment_left: outcome
                .report
                .height_unit
                .of(outcome.figures.sediment_left()),
        }
    });
    row.push(common.as_ref());
    let landform = run.map(|(_, _, _, o)| o.report.landform);
    row.push_suffixed(
        landform.as_ref().map(|l| &l.before),
        "_before",
        "before the run",
    );
    row.push_suffixed(
        landform.as_ref().map(|l| &l.after),
        "_after",
        "after the run",
    );
    for strategy in STRATEGIES.iter() {
        let columns: Vec<Column> = strategy.figures_columns();
        let values = run
            .filter(|(s, ..)| s.algorithm == strategy.algorithm())
            .map(|(_, _, gpu_ms, o)| {
                let mut values = o.figures.values(gpu_ms / 1e3);
                o.report.height_unit.convert_values(&columns, &mut values);
                values
            });
        row.push_columns(columns, values);
    }
    row
}

/// The columns of strategies.csv.
pub fn strategies_columns() -> Vec<Column> {
    row("", None).columns
}

/// Runs every strategy of the config on every terrain and writes into `dir`:
/// `strategies.csv`, and per terrain the erosion maps side by side and each run's
/// `<algorithm>.json`. Returns a line per run and the files written.
pub fn run_strategies(
    ctx: &Arc<Context>,
    strategies: &Strategies,
    dir: &Path,
    mut say: impl FnMut(String),
) -> Result<(Vec<String>, Vec<PathBuf>), ExperimentError> {
    let mut rows = Vec::new();
    let mut lines = Vec::new();
    let mut written = Vec::new();
    for plan in &strategies.plans {
        let terrain = &plan.terrain;
        let source = &plan.source;
        let folder = dir.join(&terrain.name);
        std::fs::create_dir_all(&folder).map_err(|source| ExperimentError::Io {
            path: folder.clone(),
            source,
        })?;
        let mut maps = Vec::new();
        for settings in &plan.runs {
            let name = settings.algorithm.as_str();
            say(format!("{}: {name}", terrain.name));
            let (dose, gpu_ms, outcome) =
                at_equal_time(ctx, settings, source, strategies.gpu_seconds)?;
            let row = row(&terrain.name, Some((settings, dose, gpu_ms, &outcome)));
            lines.push(describe(&terrain.name, settings, dose, gpu_ms, &outcome));
            rows.push(row.values);
            let path = folder.join(format!("{name}.json"));
            write_atomically(&path, |out| {
                serde_json::to_writer_pretty(&mut *out, &outcome.report)
                    .map_err(std::io::Error::other)
            })?;
            written.push(path);
            // In the map's units, as its legend says.
            let [before, after] =
                [&outcome.before, &outcome.after].map(|c| outcome.exported(&c.heightmap()).heights);
            maps.push((
                erosion_map(
                    &before,
                    &after,
                    outcome.units().cell_size,
                    &outcome.terrain.export_units,
                ),
                name,
            ));
        }
        let panels: Vec<_> = maps.iter().map(|(image, name)| (image, *name)).collect();
        let path = folder.join("erosion.png");
        side_by_side(&panels).write_png(&path)?;
        written.push(path);
    }
    let csv_path = dir.join("strategies.csv");
    write_atomically(&csv_path, |out| {
        let mut csv = csv::Writer::from_writer(out);
        let header: Vec<String> = strategies_columns().into_iter().map(|c| c.name).collect();
        csv.write_record(&header).map_err(std::io::Error::other)?;
        for row in &rows {
            csv.write_record(row).map_err(std::io::Error::other)?;
        }
        csv.flush()
    })?;
    written.push(csv_path);
    Ok((lines, written))
}

/// One line of what a run did.
fn describe(
    terrain: &str,
    settings: &RunSettings,
    dose: u64,
    gpu_ms: f64,
    outcome: &ErodeOutcome,
) -> String {
    let r = &outcome.report;
    let (before, after): (&Landform, &Landform) = (&r.landform.before, &r.landform.after);
    format!(
        "{terrain} {}: {dose} {} in {gpu_ms:.1} ms, {:.3e} {}/s; eroded {:.1}, deposited {:.1}; incision {:.3} -> {:.3}",
        settings.algorithm.as_str(),
        settings.strategy().dose_key(),
        r.figures.steps as f64 / (gpu_ms / 1e3),
        r.figures.unit.name(),
        r.change.eroded,
        r.change.deposited,
        before.channel_incision,
        after.channel_incision,
    )
}
