//! The paper's other strategy, grid-centric: the virtual-pipe shallow-water erosion of
//! Mei, Decaudin and Hu (2007), over float32 fields and with no atomics. `params.rs`
//! holds the model's parameters and rules, `variant.rs` the kernels' axes, `kernel.rs`
//! and `runner.rs` its passes (glsl/pipes_*.comp) and its fields on the device, which
//! `erosion/grid/` runs; `cpu.rs` is its sequential reference, `figures.rs` what a run
//! says; `model.rs` is the model that the grid's [`Strategy`](crate::erosion::Strategy)
//! is built from.

mod cpu;
mod figures;
mod kernel;
mod model;
mod params;
mod runner;
mod settings;
mod variant;

pub use crate::erosion::workgroup::WorkgroupShape;
pub use cpu::run_pipes_on_cpu;
pub use figures::{check_water, PipesBalance, PipesFigures};
pub use params::{Advection, Boundary, Drained, PipesParams, PipesState, Totals};
pub use runner::{BalanceCheck, PipesFields};
pub use settings::PipesSettings;
pub use variant::{Fusion, Packing, PipesVariant, Tiles};

use crate::erosion::grid::{GridKernel, GridRunner};

/// The sediment cap of a comparison of strategies whose table sets none, in volumes per
/// volume of water: water carrying more than its own volume is a landslide, not a flow
/// (uncapped, comparison runs carried 33 volumes per volume off the map).
pub const COMPARISON_SEDIMENT_CAP: f32 = 1.0;

/// The virtual-pipe strategy: its [`Strategy`](crate::erosion::Strategy) is the grid's,
/// from its [`GridModel`](crate::erosion::grid::GridModel) (`model.rs`).
pub struct Pipes;

/// The pipelines of one variant and one set of the model's parameters, timed and
/// counted.
pub type PipesKernel = GridKernel<Pipes>;

/// One map's fields on the device. Each run starts from the map it was prepared with.
pub type PipesRunner = GridRunner<Pipes>;
