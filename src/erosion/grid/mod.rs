//! What the grid strategies (`pipes/`, `thermal/`) share, and a future stream-power or
//! shallow-water model would: their [`Strategy`](crate::erosion::Strategy)
//! (`strategy.rs`), the pipelines of their passes, timed and counted (`kernel.rs`), their
//! kernel and runner (`model.rs`), and a map's time steps, timed or checked in chunks
//! (`runner.rs`). Each model keeps its
//! own physics (`model.rs` says what it gives): its settings and parameters, its
//! kernels' build, its fields and their roles in each pass, its balance and figures.

mod kernel;
mod model;
mod runner;
mod strategy;

pub use kernel::{numbered, GridPipelines};
pub use model::{
    check_addressed, ms_per_step, Chunk, GridFields, GridKernel, GridModel, GridNames, GridRunner,
    GridSettings, GridVariant,
};
