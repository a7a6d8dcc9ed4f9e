//! A strategies config (`experiments/strategies.toml`), read and checked before any GPU
//! work: its terrains, its dose axis (water per cell), its seeds, and each strategy's
//! settings at each dose.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::erosion::settings::NoiseSettings;
use crate::erosion::{Algorithm, RunSettings, SettingError, TableError, ALL_STRATEGIES};
use crate::experiment::run::RunError;
use crate::experiment::run::{prepare_terrain, InputError, InputUnits, TerrainSource};
use crate::experiment::sweep::config::{apply_override, MeasureSettings, DOSE_AXIS_KEY};
use crate::experiment::ConfigError;
use crate::terrain::image::CellSize;
use crate::terrain::output::default_out;
use crate::terrain::{Heightmap, MapInfo};

/// The keys of a strategies config besides its strategies' tables.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Header {
    name: String,
    description: String,
    /// The dose axis: the water each run rains, as a depth over every cell in kernel
    /// height units, in increasing order.
    water_per_cell: Vec<f64>,
    /// The repetitions: each the noise's terrain seed and the droplets' seed.
    seeds: Vec<u32>,
    /// How each run's cost (GPU time) is measured, as a sweep's points are.
    #[serde(default)]
    measure: MeasureSettings,
    /// The one sea every strategy's water drains into past the map's edges: "lowest-edge"
    /// (the surface of each terrain's lowest edge cell) or a height in kernel height units.
    #[serde(default)]
    base_level: BaseLevelSpelling,
    /// When each strategy's water falls: "lifetime" (all of it within a droplet's
    /// lifetime, the water routed alike) or "own-rate" (at the rate of each strategy's own
    /// settings, however long that takes).
    #[serde(default)]
    water_timing: WaterTiming,
    terrain: Vec<StrategyTerrain>,
}

/// `base_level` as a config writes it.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
enum BaseLevelSpelling {
    Height(f32),
    Named(String),
}

impl Default for BaseLevelSpelling {
    fn default() -> Self {
        Self::Named(LOWEST_EDGE.into())
    }
}

const LOWEST_EDGE: &str = "lowest-edge";

/// The sea of a comparison: where every strategy's water leaves the map.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BaseLevel {
    /// At each terrain's lowest edge cell, so that no strategy's water leaves from
    /// below the terrain it flows on.
    LowestEdge,
    /// At this height, in kernel height units.
    Height(f32),
}

impl BaseLevel {
    /// The sea's surface for a run on `terrain` (kernel height units).
    pub fn on(self, terrain: &Heightmap) -> f32 {
        match self {
            BaseLevel::Height(h) => h,
            BaseLevel::LowestEdge => {
                let (w, h) = (terrain.width(), terrain.height());
                (0..w)
                    .flat_map(|x| [(x, 0), (x, h - 1)])
                    .chain((0..h).flat_map(|y| [(0, y), (w - 1, y)]))
                    .map(|(x, y)| terrain.at(x, y))
                    .fold(f32::INFINITY, f32::min)
            }
        }
    }
}

impl std::fmt::Display for BaseLevel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BaseLevel::LowestEdge => f.write_str(LOWEST_EDGE),
            BaseLevel::Height(h) => write!(f, "{h}"),
        }
    }
}

/// When each strategy's water falls.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum WaterTiming {
    /// Every strategy rains its water within the shortest lifetime of any strategy's
    /// water (a droplet's), so the same water is routed for the same time.
    #[default]
    Lifetime,
    /// Each strategy rains at its own settings' rate: the same water in, routed for as
    /// long as that takes.
    OwnRate,
}

/// One terrain: erosion noise of a size (its seeds are the config's), or a heightmap
/// file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StrategyTerrain {
    /// Its folder in the output: letters, digits, '-' or '_'.
    pub name: String,
    #[serde(default)]
    pub size: Option<u32>,
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
    pub water_per_cell: Vec<f64>,
    pub seeds: Vec<u32>,
    pub measure: MeasureSettings,
    pub base_level: BaseLevel,
    pub water_timing: WaterTiming,
    pub plans: Vec<TerrainPlan>,
}

pub struct TerrainPlan {
    pub terrain: StrategyTerrain,
    /// The terrain as read when the config was loaded.
    pub source: TerrainSource,
    /// Each strategy's runs, in the registry's order.
    pub strategies: Vec<StrategyPlan>,
}

/// One strategy on one terrain: its settings at each dose of the config's water.
pub struct StrategyPlan {
    pub algorithm: Algorithm,
    /// Per entry of `water_per_cell`: the settings with their dose, and the water that
    /// dose rains (the dose is whole, so it may differ a little from the level's).
    pub doses: Vec<(RunSettings, f64)>,
}

impl StrategyPlan {
    /// The settings of dose `level` on a run of `seed`: the noise's seed and, as
    /// everywhere, the droplets' seed.
    pub fn settings(&self, level: usize, seed: u32) -> RunSettings {
        let mut settings = self.doses[level].0.clone();
        settings.noise.seed = seed;
        settings
    }
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
        Self::load_with(path, &[])
    }

    /// [`Strategies::load`] with `--set` assignments applied first: a strategy's
    /// table's key (`pipes.pipes_dt`), `measure.KEY`, `water_per_cell`, `seeds`,
    /// `base_level` or `water_timing`.
    pub fn load_with(path: &Path, overrides: &[String]) -> Result<Self, ConfigError> {
        let text = crate::read_input_text(path).map_err(|e| ConfigError {
            file: path.to_path_buf(),
            key: "(file)".into(),
            reason: e.to_string(),
        })?;
        Self::parse(path, &text, overrides)
    }

    /// Checks `text`, a config as if read from `path` (its inputs are relative to
    /// `path`'s folder), with `overrides` applied as [`Strategies::load_with`] does.
    pub fn parse(path: &Path, text: &str, overrides: &[String]) -> Result<Self, ConfigError> {
        let error = |key: &str, reason: String| ConfigError {
            file: path.to_path_buf(),
            key: key.into(),
            reason,
        };
        let mut table: toml::Table =
            toml::from_str(text).map_err(|e| error("(syntax)", e.message().into()))?;
        let mut sections = vec!["measure"];
        sections.extend(ALL_STRATEGIES.iter().map(|s| s.algorithm().as_str()));
        for assignment in overrides {
            apply_override(
                &mut table,
                assignment,
                &sections,
                &["water_per_cell", "seeds", "base_level", "water_timing"],
            )
            .map_err(|e| error(&format!("--set {assignment}"), e.to_string()))?;
        }
        let tables: Vec<(Algorithm, toml::Table)> = ALL_STRATEGIES
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
        if table.contains_key("gpu_seconds") {
            return Err(error(
                "gpu_seconds",
                format!(
                    "strategies are compared by dose, not at equal GPU time: give `{DOSE_AXIS_KEY}` and `seeds`"
                ),
            ));
        }
        let header = Header::deserialize(toml::Value::Table(table))
            .map_err(|e| error("(syntax)", e.message().into()))?;
        if tables.is_empty() {
            let names: Vec<&str> = ALL_STRATEGIES
                .iter()
                .map(|s| s.algorithm().as_str())
                .collect();
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
        if header.water_per_cell.is_empty()
            || header
                .water_per_cell
                .iter()
                .any(|w| !(w.is_finite() && *w > 0.0))
            || header.water_per_cell.windows(2).any(|w| w[0] >= w[1])
        {
            return Err(error(
                "water_per_cell",
                "must be positive depths in increasing order, at least one".into(),
            ));
        }
        if header.seeds.is_empty()
            || (1..header.seeds.len()).any(|i| header.seeds[..i].contains(&header.seeds[i]))
        {
            return Err(error(
                "seeds",
                "must be distinct seeds, at least one".into(),
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
            if t.input.is_some() == t.size.is_some() {
                return Err(error(
                    "terrain",
                    format!(
                        "{}: give an input file, or a size of noise (its seeds are `seeds`), not both",
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
        let base_level = match &header.base_level {
            BaseLevelSpelling::Height(h) if h.is_finite() => BaseLevel::Height(*h),
            BaseLevelSpelling::Named(name) if name == LOWEST_EDGE => BaseLevel::LowestEdge,
            other => {
                return Err(error(
                    "base_level",
                    format!(
                    "{other:?}: give \"{LOWEST_EDGE}\" or a finite height in kernel height units"
                ),
                ))
            }
        };
        // Matched routing: the water falls within the shortest life any strategy's has.
        let duration = match header.water_timing {
            WaterTiming::OwnRate => None,
            WaterTiming::Lifetime => tables
                .iter()
                .filter_map(|(algorithm, table)| {
                    let mut table = table.clone();
                    table.insert("algorithm".into(), toml::Value::try_from(algorithm).ok()?);
                    let settings = RunSettings::from_table(&table).ok()?;
                    algorithm.strategy().water_lifetime(&settings)
                })
                .reduce(f64::min),
        };
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
                let strategies = tables
                    .iter()
                    .map(|(algorithm, settings)| {
                        plan_of(
                            *algorithm,
                            settings,
                            t,
                            map,
                            &header.water_per_cell,
                            duration,
                        )
                        .map_err(|e| error(algorithm.as_str(), e.to_string()))
                    })
                    .collect::<Result<_, ConfigError>>()?;
                Ok(TerrainPlan {
                    terrain: t.clone(),
                    source,
                    strategies,
                })
            })
            .collect::<Result<_, ConfigError>>()?;
        Ok(Self {
            name: header.name,
            description: header.description,
            water_per_cell: header.water_per_cell,
            seeds: header.seeds,
            measure: header.measure,
            base_level,
            water_timing: header.water_timing,
            plans,
        })
    }

    /// Where a run on `device` writes without `--out`: `results/<name>/<device>`.
    /// How many runs the config makes: every strategy on every terrain, at every level
    /// of water, for every seed.
    pub fn runs(&self) -> usize {
        let per_seed: usize = self
            .plans
            .iter()
            .flat_map(|plan| &plan.strategies)
            .map(|strategy| strategy.doses.len())
            .sum();
        per_seed * self.seeds.len()
    }

    pub fn default_out(&self, device: &str) -> PathBuf {
        default_out("strategies", Some(&self.name), device)
    }
}

/// The runs of `algorithm` on `terrain` (a file's map where it is one): its table, with
/// the terrain's size and the dose that rains each of `water`, checked without a
/// device.
fn plan_of(
    algorithm: Algorithm,
    table: &toml::Table,
    terrain: &StrategyTerrain,
    file_map: Option<MapInfo>,
    water: &[f64],
    duration: Option<f64>,
) -> Result<StrategyPlan, PlanRefusal> {
    let strategy = algorithm.strategy();
    let name = algorithm.as_str();
    // The dose, the seeds and the boundary are the comparison's, not a table's.
    let set_here = [strategy.dose_key(), "droplet_seed"];
    for key in set_here.iter().chain(strategy.comparison_keys()) {
        if table.contains_key(*key) && strategy.settings_units().iter().any(|(k, _)| k == key) {
            return Err(PlanRefusal::SetByComparison { key, table: name });
        }
    }
    // A key of another strategy, or of the terrain, would be ignored here.
    let own = strategy.settings_units();
    if let Some(key) = table.keys().find(|k| !own.iter().any(|(o, _)| o == k)) {
        let key = key.clone();
        return Err(match RunSettings::owner_of(&key) {
            Some(owner) => PlanRefusal::OtherStrategy {
                key,
                owner: owner.as_str(),
                table: name,
            },
            None if NoiseSettings::UNITS.iter().any(|(k, _)| *k == key) => {
                PlanRefusal::TerrainKey { key, table: name }
            }
            None if RunSettings::keys().contains(&key) => {
                PlanRefusal::TableName { key, table: name }
            }
            None => TableError::UnknownKey {
                key,
                expected: own.iter().map(|(k, _)| k.to_string()).collect(),
            }
            .into(),
        });
    }
    let mut table = table.clone();
    // The key as configs spell it, from the one serde spelling of Algorithm.
    let spelled = toml::Value::try_from(algorithm)?;
    table.insert("algorithm".into(), spelled);
    if let Some(size) = terrain.size {
        table.insert("size".into(), toml::Value::Integer(i64::from(size)));
    }
    let settings = RunSettings::from_table(&table)?;
    let map = file_map.unwrap_or_else(|| settings.noise_map());
    let Some(per_dose) = strategy.water_per_dose(&settings, map) else {
        return Err(PlanRefusal::NoWater { table: name });
    };
    let doses = water
        .iter()
        .map(|&w| {
            if let Some(settings) = duration.and_then(|d| strategy.raining_within(&settings, w, d))
            {
                let rained = strategy.dose(&settings) as f64
                    * strategy.water_per_dose(&settings, map).unwrap_or(0.0);
                return checked(&settings, file_map, w).map(|()| (settings, rained));
            }
            let dose = (w / per_dose).round();
            let settings = strategy.with_dose(&settings, dose as u64);
            // Matched water holds only to half a unit of dose.
            if dose < 1.0 || strategy.dose(&settings) as f64 != dose {
                return Err(PlanRefusal::NoWholeDose {
                    water: w,
                    doses: w / per_dose,
                    key: strategy.dose_key(),
                });
            }
            checked(&settings, file_map, w)?;
            let rained = strategy.dose(&settings) as f64 * per_dose;
            Ok((settings, rained))
        })
        .collect::<Result<_, PlanRefusal>>()?;
    Ok(StrategyPlan { algorithm, doses })
}

/// Why a strategy's table makes no runs on a terrain; `table` is the strategy's.
#[derive(Debug, thiserror::Error)]
enum PlanRefusal {
    #[error(
        "`{key}` is set by the comparison (water_per_cell, seeds, base_level), not by [{table}]"
    )]
    SetByComparison {
        key: &'static str,
        table: &'static str,
    },
    #[error("`{key}` is a setting of {owner}, not of {table}")]
    OtherStrategy {
        key: String,
        owner: &'static str,
        table: &'static str,
    },
    #[error("`{key}` is a terrain's setting, which [[terrain]] gives, not one of {table}")]
    TerrainKey { key: String, table: &'static str },
    #[error("`{key}` is the table's name here, [{table}]")]
    TableName { key: String, table: &'static str },
    #[error(transparent)]
    Settings(#[from] TableError),
    /// The strategy's name as a key, which serde writes.
    #[error(transparent)]
    Spelling(#[from] toml::ser::Error),
    #[error("{table} moves no water, and the strategies are compared at matched water input")]
    NoWater { table: &'static str },
    /// `doses`: of the dose key's unit, which must come out whole.
    #[error("water_per_cell = {water} needs {doses:.3} {key} on this map, not a whole number from 1 to the setting's most")]
    NoWholeDose {
        water: f64,
        doses: f64,
        key: &'static str,
    },
    #[error("at water_per_cell = {water}: {error}")]
    AtWater { water: f64, error: SettingError },
}

/// `settings` checked as a run on the terrain's map (`file_map`, or the noise's).
fn checked(
    settings: &RunSettings,
    file_map: Option<MapInfo>,
    water: f64,
) -> Result<(), PlanRefusal> {
    match file_map {
        None => settings.check(None),
        Some(map) => settings
            .check_job(None)
            .and_then(|()| settings.check_map(map, None)),
    }
    .map_err(|error| PlanRefusal::AtWater { water, error })
}

/// Why a terrain's `input` is no terrain.
#[derive(Debug, thiserror::Error)]
enum TerrainInputError {
    #[error("{terrain}: {error}; give the terrain a cell_size = [x, y]")]
    NoCellSize { terrain: String, error: InputError },
    #[error(transparent)]
    Input(InputError),
}

impl StrategyTerrain {
    fn source(&self, config_dir: &Path) -> Result<TerrainSource, TerrainInputError> {
        let Some(input) = &self.input else {
            return Ok(TerrainSource::Noise);
        };
        let units = InputUnits {
            cell_size: self.cell_size.map(|[x, y]| CellSize { x, y }),
            ..InputUnits::DEFAULT
        };
        TerrainSource::read(&config_dir.join(input), None, units).map_err(|e| match e {
            InputError::NoCellSize { .. } => TerrainInputError::NoCellSize {
                terrain: self.name.clone(),
                error: e,
            },
            e => TerrainInputError::Input(e),
        })
    }

    /// The map of a file's terrain in kernel units, as the strategies will see it;
    /// `None` for noise, whose map the settings give.
    fn map(&self, source: &TerrainSource) -> Result<Option<MapInfo>, RunError> {
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
