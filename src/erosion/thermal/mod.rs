//! Thermal erosion (Musgrave, Kolb and Mace 1989; Olsen 2004), grid-centric: material
//! slides to the neighbours past a talus angle, over float32 heights and with no
//! atomics. `params.rs` holds the model's parameters and rules, `variant.rs` the
//! kernels' axes, `kernel.rs` and `runner.rs` its passes (glsl/thermal_*.comp) and its
//! heights on the device, which `erosion/grid/` runs; `cpu.rs` is its reference on one
//! core or on all, `figures.rs` what a run says; `model.rs` is the model that the
//! grid's [`Strategy`](crate::erosion::Strategy) is built from.

mod cpu;
mod figures;
mod kernel;
mod model;
mod params;
mod runner;
mod settings;
mod variant;

pub use crate::erosion::workgroup::WorkgroupShape;
pub use cpu::{run_thermal_on_cpu, steepness, Steepness};
pub use figures::{check_mass, MassBalance, ThermalFigures};
pub use params::{rounding_bound, ThermalParams, OFFSETS, OPPOSITE, STEEP_SLACK};
pub use runner::{mass_of, MassCheck};
pub use settings::ThermalSettings;
pub use variant::{Fusion, ThermalVariant};

use crate::erosion::grid::{GridKernel, GridRunner};

/// The thermal strategy: its [`Strategy`](crate::erosion::Strategy) is the grid's, from
/// its [`GridModel`](crate::erosion::grid::GridModel) (`model.rs`).
pub struct Thermal;

/// The pipelines of one variant and one set of the model's parameters, timed and
/// counted.
pub type ThermalKernel = GridKernel<Thermal>;

/// One map's heights on the device. Each run starts from the map it was prepared with.
pub type ThermalRunner = GridRunner<Thermal>;
