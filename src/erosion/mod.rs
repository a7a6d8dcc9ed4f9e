//! Erosion strategies behind one interface ([`Strategy`], `strategy.rs`), listed in the
//! registry (`registry.rs`; `dispatch.rs` says which runs what): the paper's droplets (`droplets/`), the grid-centric
//! virtual pipes (`pipes/`) and thermal erosion (`thermal/`), each a folder cut the same
//! way (params and rules, settings, variant, kernel, runner, cpu reference). `settings.rs` gathers every strategy's
//! settings into the one set of keys that erode flags and configs share; `keys.rs` is
//! what a key is.

mod algorithm;
mod choice;
mod dispatch;
mod error;
mod grid;
pub mod keys;
mod registry;
pub mod settings;
mod steps;
mod strategy;
mod workgroup;

/// Each strategy's folder, from the registry's list.
macro_rules! modules_of {
    ($($(#[$attr:meta])* $variant:ident in $folder:ident with $settings:ident;)*) => {
        $(pub mod $folder;)*
    };
}
registry::strategy_list!(modules_of);

pub use algorithm::Algorithm;
pub use dispatch::{ALL_STRATEGIES, MAX_RUN_WORK};
pub use error::ErosionError;
pub use grid::GridSettings;
pub use keys::SettingError;
pub use settings::{RunSettings, TableError};
pub use strategy::{
    initial_cells, report_of, Ceiling, CountedRun, CpuEngine, CpuRun, Figures, Prepared, Replay,
    ReplayTraffic, Strategy, TimedRun, WorkUnit,
};
pub use workgroup::{WorkgroupShape, WorkgroupShapeError};
