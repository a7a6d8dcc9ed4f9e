//! The virtual-pipe strategy's settings (erode flags and config keys).

use serde::{Deserialize, Serialize};

use super::params::{Advection, Boundary, PipesParams};
use super::variant::{Fusion, Packing, PipesVariant, Tiles};
use crate::erosion::grid::GridSettings;
use crate::erosion::keys::SettingError;
use crate::erosion::workgroup::WorkgroupShape;
use crate::gpu::DeviceInfo;
use crate::terrain::MapInfo;

/// The grid kernels' settings. Every field is an `erode` flag and a config key.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, clap::Args)]
#[serde(default, deny_unknown_fields)]
pub struct PipesSettings {
    /// Time steps of the virtual-pipe model.
    #[arg(long, default_value_t = Self::DEFAULT.pipes_steps)]
    pub pipes_steps: u32,
    /// Its time step; at most sqrt(cell length^3 / (4 pipe area g)), the flux step's
    /// stability limit.
    #[arg(long, default_value_t = Self::DEFAULT.pipes_dt)]
    pub pipes_dt: f32,
    /// Water depth rained per unit time on every cell; a step's rain (rain x dt) at most
    /// the map's relief.
    #[arg(long, default_value_t = Self::DEFAULT.pipes_rain)]
    pub pipes_rain: f32,
    /// Share of the water evaporating per unit time.
    #[arg(long, default_value_t = Self::DEFAULT.pipes_evaporation)]
    pub pipes_evaporation: f32,
    /// Cross-section of the virtual pipes.
    #[arg(long, default_value_t = Self::DEFAULT.pipes_area)]
    pub pipes_area: f32,
    /// Kc: sediment capacity per unit of tilt and speed; at most relief / (Ks x cell
    /// length), past which one step could carve deeper than the map's relief.
    #[arg(long, default_value_t = Self::DEFAULT.pipes_capacity)]
    pub pipes_capacity: f32,
    /// Ks: dissolving rate; at most 1/dt (a step closes at most the whole gap to the
    /// capacity).
    #[arg(long, default_value_t = Self::DEFAULT.pipes_dissolving)]
    pub pipes_dissolving: f32,
    /// Kd: deposition rate; at most 1/dt.
    #[arg(long, default_value_t = Self::DEFAULT.pipes_deposition)]
    pub pipes_deposition: f32,
    /// Linear drag on the pipes' flux: each step keeps 1 - friction x dt of the previous
    /// flux, so that water stops sloshing (a basin's slosh from rest decays as about exp(-0.74
    /// friction t)); 0, Mei et al.'s frictionless model, sloshes without end; at most
    /// 1/dt.
    #[arg(long, default_value_t = Self::DEFAULT.pipes_friction)]
    pub pipes_friction: f32,
    /// What lies past the map's edges: walls (closed, Mei et al.'s), or a sea at
    /// pipes_base_level that water and the sediment it carries drain into (open).
    #[arg(long, value_enum, default_value_t = Self::DEFAULT.pipes_boundary)]
    pub pipes_boundary: Boundary,
    /// With open boundaries, the sea's surface past the edges: an edge cell whose water
    /// stands above it drains off the map, and no cell erodes below it.
    #[arg(long, default_value_t = Self::DEFAULT.pipes_base_level)]
    pub pipes_base_level: f32,
    /// Suspended sediment per volume of water at most; past it the excess is deposited
    /// where it is. Default: no cap.
    #[arg(long)]
    pub pipes_sediment_cap: Option<f32>,
    /// Lower bound of sin(tilt) in the capacity Kc sin(tilt) |v|: above 0, water on a
    /// flat bed dissolves it wherever it moves.
    #[arg(long, default_value_t = Self::DEFAULT.pipes_min_tilt)]
    pub pipes_min_tilt: f32,
    /// How sediment moves with the water: Mei et al.'s semi-Lagrangian advection (it
    /// does not conserve sediment), or upwind along the pipes (conserving; fused passes).
    #[arg(long, value_enum, default_value_t = Self::DEFAULT.pipes_advection)]
    pub pipes_advection: Advection,
    /// The grid kernels' passes: the model's five (none; semi-Lagrangian advection only)
    /// or two (fused).
    #[arg(long, value_enum, default_value_t = Self::DEFAULT.pipes_fusion)]
    pub pipes_fusion: Fusion,
    /// Flux and velocity as float32, or packed as half floats.
    #[arg(long, value_enum, default_value_t = Self::DEFAULT.pipes_packing)]
    pub pipes_packing: Packing,
    /// Neighbour reads of the fused passes from shared-memory tiles.
    #[arg(long, value_enum, default_value_t = Self::DEFAULT.pipes_tiles)]
    pub pipes_tiles: Tiles,
    /// Workgroup shape of the grid kernels, e.g. 16x16.
    #[arg(long, default_value_t = Self::DEFAULT.pipes_workgroup)]
    pub pipes_workgroup: WorkgroupShape,
    /// Steps between the balance checks of the counted run (water against initial +
    /// rain - evaporation, and the drift of terrain + sediment); 0 runs no counted run
    /// (the figures come from a timed run, unchecked).
    #[arg(long, default_value_t = Self::DEFAULT.pipes_check_every)]
    pub pipes_check_every: u32,
}

impl Default for PipesSettings {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl PipesSettings {
    /// The heading of its flags in `erode --help`.
    pub const HEADING: &'static str = "Virtual pipes (algorithm = pipes)";
    /// What it is, in the help of the `algorithm` setting.
    pub const CHOICE: &'static str = "the grid-centric virtual-pipe shallow-water model (Mei et al. 2007; its settings are the pipes_* ones)";

    pub const DEFAULT: PipesSettings = PipesSettings {
        pipes_steps: 500,
        pipes_dt: PipesParams::DEFAULT.dt,
        pipes_rain: PipesParams::DEFAULT.rain,
        pipes_evaporation: PipesParams::DEFAULT.evaporation,
        pipes_area: PipesParams::DEFAULT.pipe_area,
        pipes_capacity: PipesParams::DEFAULT.capacity,
        pipes_dissolving: PipesParams::DEFAULT.dissolving,
        pipes_deposition: PipesParams::DEFAULT.deposition,
        pipes_friction: PipesParams::DEFAULT.friction,
        pipes_boundary: PipesParams::DEFAULT.boundary,
        pipes_base_level: PipesParams::DEFAULT.base_level,
        pipes_sediment_cap: PipesParams::DEFAULT.sediment_cap,
        // Not the open implementations' 0.05 (PipesParams::DEFAULT): with it, water
        // moving on a flat bed dissolves it, and a bed of 0.007 relief under rain grows
        // without bound (docs/kernel.md, tests/pipes.rs).
        pipes_min_tilt: 0.0,
        // Not Mei et al.'s semi-Lagrangian advection (PipesParams::DEFAULT): it loses the
        // sediment it moves, and long runs erode without bound (docs/findings).
        pipes_advection: Advection::Upwind,
        pipes_fusion: Fusion::Fused,
        pipes_packing: Packing::F32,
        pipes_tiles: Tiles::None,
        pipes_workgroup: WorkgroupShape::DEFAULT,
        pipes_check_every: 100,
    };

    /// The unit of each key, for the config reference.
    pub const UNITS: &'static [(&'static str, &'static str)] = &[
        ("pipes_steps", "time steps"),
        ("pipes_dt", "time units"),
        ("pipes_rain", "kernel height units per time unit"),
        ("pipes_evaporation", "share per time unit"),
        ("pipes_area", "cell areas"),
        ("pipes_capacity", "per unit of tilt and speed"),
        ("pipes_dissolving", "per time unit"),
        ("pipes_deposition", "per time unit"),
        ("pipes_friction", "per time unit"),
        ("pipes_boundary", "choice"),
        ("pipes_base_level", "kernel height units"),
        ("pipes_sediment_cap", "sediment volume per water volume"),
        ("pipes_min_tilt", "sine of the tilt"),
        ("pipes_advection", "choice"),
        ("pipes_fusion", "choice"),
        ("pipes_packing", "choice"),
        ("pipes_tiles", "choice"),
        ("pipes_workgroup", "invocations x invocations"),
        ("pipes_check_every", "time steps"),
    ];

    /// The keys only the kernels use: the CPU reference is the model's five passes in
    /// float32, with no counted run to check.
    pub const GPU_ONLY: &'static [&'static str] = &[
        "pipes_fusion",
        "pipes_packing",
        "pipes_tiles",
        "pipes_workgroup",
        "pipes_check_every",
    ];
}

impl GridSettings for PipesSettings {
    type Variant = PipesVariant;
    type Params = PipesParams;

    fn steps(&self) -> u32 {
        self.pipes_steps
    }

    fn steps_mut(&mut self) -> &mut u32 {
        &mut self.pipes_steps
    }

    fn check_every(&self) -> u32 {
        self.pipes_check_every
    }

    fn params(&self) -> PipesParams {
        PipesParams {
            dt: self.pipes_dt,
            rain: self.pipes_rain,
            evaporation: self.pipes_evaporation,
            pipe_area: self.pipes_area,
            capacity: self.pipes_capacity,
            dissolving: self.pipes_dissolving,
            deposition: self.pipes_deposition,
            advection: self.pipes_advection,
            friction: self.pipes_friction,
            boundary: self.pipes_boundary,
            base_level: self.pipes_base_level,
            sediment_cap: self.pipes_sediment_cap,
            min_tilt: self.pipes_min_tilt,
            ..PipesParams::DEFAULT
        }
    }

    fn variant(&self) -> PipesVariant {
        PipesVariant {
            fusion: self.pipes_fusion,
            packing: self.pipes_packing,
            tiles: self.pipes_tiles,
            workgroup: self.pipes_workgroup,
        }
    }

    /// The model's rules, with the map's and the device's where they are known. Its
    /// fields are reached by address: no maxStorageBufferRange, no fixed point.
    fn check(
        &self,
        map: Option<MapInfo>,
        device: Option<&DeviceInfo>,
    ) -> Result<(), SettingError> {
        if self.pipes_steps == 0 {
            return Err(SettingError::new("pipes_steps", "must be at least 1"));
        }
        let params = self.params();
        params.check()?;
        if let Some(map) = map {
            params.check_relief(map.relief)?;
        }
        self.variant().check(params.advection, device)
    }
}
