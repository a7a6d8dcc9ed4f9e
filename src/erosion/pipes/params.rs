//! The virtual-pipe model's parameters and their rules, its fields and their totals.

use serde::Serialize;

use crate::erosion::choice::setting_choice;
use crate::erosion::keys::SettingError;

/// The model's parameters; the defaults are the working values of open implementations
/// (rain 0.012, evaporation 0.015, pipe area 20, Kc 1, Ks 0.5, Kd 1).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct PipesParams {
    pub dt: f32,
    pub rain: f32,
    pub pipe_area: f32,
    pub gravity: f32,
    pub cell_length: f32,
    pub capacity: f32,
    pub dissolving: f32,
    pub deposition: f32,
    pub evaporation: f32,
    /// Lower bound of sin(tilt) in the capacity, so that water on flat cells still
    /// carries sediment (open implementations' 0.05). On a flat bed it lets any moving
    /// water dissolve the bed: see docs/kernel.md.
    pub min_tilt: f32,
    /// Water depth from which the capacity is whole; shallower water carries less.
    pub max_erosion_depth: f32,
    /// How the suspended sediment moves with the water.
    pub advection: Advection,
    /// Linear drag on the pipes' flux, per time unit: each step keeps 1 - friction dt of
    /// the previous flux before the head adds to it: while both one-way pipes of every
    /// pair carry water a free oscillation decays as exp(-friction t / 2), a slosh from
    /// rest as about exp(-0.74 friction t) (tests/pipes.rs). 0 is Mei et al.'s frictionless model.
    pub friction: f32,
    /// What lies past the map's edges.
    pub boundary: Boundary,
    /// With open boundaries, the water surface past the edges, in kernel height units:
    /// an edge cell whose surface stands above it drains through its edge pipes. It is
    /// the base level of the flow: erosion stops there (a cell below it only fills).
    pub base_level: f32,
    /// Suspended sediment per volume of water at most (None: no cap). Past it, the
    /// excess is deposited where it is.
    pub sediment_cap: Option<f32>,
}

setting_choice! {
    /// What lies past the map's edges.
    pub enum Boundary {
        /// Walls: no pipe leads off the map, so water leaves only by evaporation (Mei et
        /// al.'s).
        #[default]
        Closed,
        /// A sea at the base level: each edge cell has a one-way pipe to it per side off the
        /// map, through which water (and the sediment it carries) leaves; none comes back.
        Open,
    }
}

setting_choice! {
    /// How the suspended sediment moves with the water.
    pub enum Advection {
        /// Mei et al.'s: each cell takes the sediment at the point its water came from
        /// (bilinear, at most one cell back). It does not conserve sediment.
        #[default]
        SemiLagrangian,
        /// Along the pipes' outflows, each carrying its share of its cell's sediment, before
        /// the erosion step: what one cell sends another receives (the fused passes).
        Upwind,
    }
}

impl PipesParams {
    pub const DEFAULT: PipesParams = PipesParams {
        dt: 0.02,
        rain: 0.012,
        pipe_area: 20.0,
        gravity: 9.81,
        cell_length: 1.0,
        capacity: 1.0,
        dissolving: 0.5,
        deposition: 1.0,
        evaporation: 0.015,
        min_tilt: 0.05,
        max_erosion_depth: 0.1,
        advection: Advection::SemiLagrangian,
        friction: 0.0,
        boundary: Boundary::Closed,
        base_level: 0.0,
        sediment_cap: None,
    };

    /// The flux and depth updates form a symplectic Euler step of surface waves. With
    /// one flux per pair of cells its fastest grid mode has angular frequency
    /// sqrt(8 A g / l^3), stable for `dt <= sqrt(l^3 / (2 A g))`; but each pair has two
    /// one-way pipes, and once both carry water (as they do where flow reverses) a
    /// step's drop moves their net flow twice, which halves the bound on dt^2:
    /// `dt <= sqrt(l^3 / (4 A g))`. A lake at rest, perturbed, stays at rest up to that
    /// dt and blows up just past it (tests/pipes.rs). A larger dt is refused, naming the
    /// largest stable one. Errors name the setting (`pipes_dt`, ...).
    pub fn check(&self) -> Result<(), SettingError> {
        let named = [
            ("pipes_dt", self.dt),
            ("pipes_rain", self.rain),
            ("pipes_area", self.pipe_area),
            ("gravity", self.gravity),
            ("cell_length", self.cell_length),
            ("pipes_capacity", self.capacity),
            ("pipes_dissolving", self.dissolving),
            ("pipes_deposition", self.deposition),
            ("pipes_evaporation", self.evaporation),
            ("pipes_min_tilt", self.min_tilt),
            ("max_erosion_depth", self.max_erosion_depth),
            ("pipes_friction", self.friction),
            // No cap is always valid.
            ("pipes_sediment_cap", self.sediment_cap.unwrap_or(1.0)),
        ];
        let positive = [
            "pipes_dt",
            "cell_length",
            "max_erosion_depth",
            "pipes_sediment_cap",
        ];
        for (key, value) in named {
            if !value.is_finite() || value < 0.0 || (value == 0.0 && positive.contains(&key)) {
                let wanted = if positive.contains(&key) {
                    "positive"
                } else {
                    "zero or more"
                };
                return Err(SettingError::new(
                    key,
                    format!("must be {wanted}, got {value}"),
                ));
            }
        }
        if self.min_tilt > 1.0 {
            return Err(SettingError::new(
                "pipes_min_tilt",
                format!("is a sine: at most 1, got {}", self.min_tilt),
            ));
        }
        if !self.base_level.is_finite() {
            return Err(SettingError::new(
                "pipes_base_level",
                format!("must be a finite height, got {}", self.base_level),
            ));
        }
        let largest = self.largest_stable_dt();
        if self.dt > largest {
            return Err(SettingError::new(
                "pipes_dt",
                format!(
                    "time step {} breaks the flux step's stability (dt <= sqrt(cell length^3 / (4 pipe area g)), with both one-way pipes of a pair flowing): at most {largest}",
                    self.dt
                ),
            ));
        }
        let smallest = self.smallest_moving_dt();
        if self.dt < smallest {
            return Err(SettingError::new(
                "pipes_dt",
                format!(
                    "time step {:e} moves no water in float32: the depth a unit of head sends through a pipe in a step, dt^2 pipe area g / cell length^3, must be a normal float32 (GPUs flush smaller numbers to zero): at least {smallest:e}",
                    self.dt
                ),
            ));
        }
        if self.evaporation * self.dt > 1.0 {
            return Err(SettingError::new(
                "pipes_evaporation",
                format!(
                    "{} times the time step {} evaporates more than all the water in a step",
                    self.evaporation, self.dt
                ),
            ));
        }
        if self.friction * self.dt > 1.0 {
            return Err(SettingError::new(
                "pipes_friction",
                format!(
                    "{} is past 1 / time step = {}: a step would take more than the whole flux, reversing it (range 0 to 1/dt)",
                    self.friction,
                    1.0 / self.dt
                ),
            ));
        }
        // Ks dt and Kd dt are the shares of the gap to the capacity a step closes: past 1
        // a step overshoots the capacity and the sediment oscillates about it.
        for (key, rate) in [
            ("pipes_dissolving", self.dissolving),
            ("pipes_deposition", self.deposition),
        ] {
            if rate * self.dt > 1.0 {
                return Err(SettingError::new(
                    key,
                    format!(
                        "{rate} is past 1 / time step = {}: a step would close more than the whole gap to the capacity (range 0 to 1/dt)",
                        1.0 / self.dt
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The rules with the map, of `relief` (highest minus lowest height). In one step a
    /// cell loses at most Ks Kc l (dt Ks times the capacity Kc tilt speed share, with the
    /// tilt and the depth's share at most 1 and the speed clamped at l / dt), and gains
    /// rain dt of water: more than the relief (or one cell length, on a flatter map) in
    /// one step digs through or drowns the whole terrain at once, which erodes nothing.
    pub fn check_relief(&self, relief: f32) -> Result<(), SettingError> {
        let most = relief.max(self.cell_length);
        let carve = self.dissolving * self.capacity * self.cell_length;
        if carve > most {
            return Err(SettingError::new(
                "pipes_capacity",
                format!(
                    "{} lets one step carve up to Ks Kc l = {carve} height units, past the map's relief {most}: with dissolving rate {} Kc is at most {} (range 0 to relief / (Ks l))",
                    self.capacity,
                    self.dissolving,
                    most / (self.dissolving * self.cell_length)
                ),
            ));
        }
        if self.rain * self.dt > most {
            return Err(SettingError::new(
                "pipes_rain",
                format!(
                    "{} rains {} height units a step, past the map's relief {most}: at most {} (range 0 to relief / dt)",
                    self.rain,
                    self.rain * self.dt,
                    most / self.dt
                ),
            ));
        }
        Ok(())
    }

    /// The share of the previous flux a step keeps, 1 - friction dt: computed once, so
    /// that the CPU reference and the kernels (a specialization constant) use one float.
    pub fn flux_kept(&self) -> f32 {
        1.0 - self.friction * self.dt
    }

    pub fn largest_stable_dt(&self) -> f32 {
        (self.cell_length.powi(3) / (4.0 * self.pipe_area * self.gravity)).sqrt()
    }

    /// The smallest dt that moves water: below it (or below the smallest normal float32,
    /// where there are no pipes) the flux step's increments are subnormal, which GPUs
    /// flush to zero, so the water never moves.
    pub fn smallest_moving_dt(&self) -> f32 {
        let tiny = f64::from(f32::MIN_POSITIVE);
        let per_dt2 = f64::from(self.pipe_area) * f64::from(self.gravity)
            / f64::from(self.cell_length).powi(3);
        let moving = if per_dt2 > 0.0 {
            (tiny / per_dt2).sqrt()
        } else {
            0.0
        };
        moving.max(tiny) as f32
    }
}

/// The model's fields, row-major, with the flux the CPU reference carries between steps.
#[derive(Clone, Debug, PartialEq)]
pub struct PipesState {
    pub width: usize,
    pub height: usize,
    pub terrain: Vec<f32>,
    pub water: Vec<f32>,
    pub sediment: Vec<f32>,
    /// Outflow to the left, right, top and bottom neighbour.
    pub flux: Vec<[f32; 4]>,
    /// What left the map since the state was made: evaporated, and drained past the
    /// open edges (water and the sediment it carried).
    pub left: Drained,
}

/// What left the map, summed over cells (volumes of one cell's area).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Drained {
    pub evaporated: f64,
    /// Water that flowed past the open edges.
    pub outflow: f64,
    /// Sediment the outflow carried (the upwind transport's; the semi-Lagrangian
    /// advection keeps it on the map).
    pub sediment_outflow: f64,
}

impl PipesState {
    /// Dry terrain: no water, sediment or flow.
    pub fn dry(width: usize, height: usize, terrain: Vec<f32>) -> Self {
        let n = terrain.len();
        Self {
            width,
            height,
            terrain,
            water: vec![0.0; n],
            sediment: vec![0.0; n],
            flux: vec![[0.0; 4]; n],
            left: Drained::default(),
        }
    }

    pub fn totals(&self) -> Totals {
        Totals::of(&self.terrain, &self.sediment, &self.water)
    }
}

/// Terrain, sediment and water, each summed over the map (volumes of one cell's area).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Totals {
    pub terrain: f64,
    pub sediment: f64,
    pub water: f64,
}

impl Totals {
    pub fn of(terrain: &[f32], sediment: &[f32], water: &[f32]) -> Self {
        let sum = |v: &[f32]| v.iter().map(|&x| f64::from(x)).sum::<f64>();
        Self {
            terrain: sum(terrain),
            sediment: sum(sediment),
            water: sum(water),
        }
    }
}
