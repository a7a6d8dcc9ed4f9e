//! What the grid strategies (`pipes/`, `thermal/`) share, and a future stream-power or
//! shallow-water model would: the pipelines of their passes, timed and counted
//! (`kernel.rs`), and the recording of their time steps over one map (`runner.rs`).
//! Each keeps its own physics: its fields and their roles in each pass, its parameters,
//! its balance.

mod kernel;
mod runner;

pub(crate) use kernel::{numbered, GridPipelines};
pub(crate) use runner::{record_steps, submit_chunk};
