//! One run end to end, for any strategy: its terrain (`terrain.rs`), the run and its
//! files (`erode.rs`), its figures (`figures.rs`), its time split by
//! replays (`split.rs`), where it came from (`provenance.rs`), and what it must hold
//! whatever its settings (`invariant.rs`).

mod erode;
mod error;
mod figures;
mod invariant;
mod provenance;
mod split;
mod terrain;

pub use erode::{
    run_erosion, write_outcome, Engine, ErodeOutcome, ErodeReport, ErodeRequest, LandformChange,
    OutputOptions,
};
pub use error::RunError;
pub use figures::{gpm_counters, CeilingShare, ChangeFigures, RunFigures, TimeSource, CEILING};
pub use invariant::InvariantError;
pub use provenance::Provenance;
pub use split::TimeSplit;
pub use terrain::{
    prepare_terrain, InputError, InputUnits, PreparedTerrain, TerrainReport, TerrainSource,
};
