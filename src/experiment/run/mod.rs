//! One run end to end, for any strategy: its terrain (`terrain.rs`), the run and its
//! files (`erode.rs`), its figures (`figures.rs`), its time split by
//! replays (`split.rs`), and where it came from
//! (`provenance.rs`).

mod erode;
mod figures;
mod provenance;
mod split;
mod terrain;

pub use erode::{
    run_erosion, write_outcome, Engine, ErodeOutcome, ErodeReport, ErodeRequest, LandformChange,
    OutputOptions,
};
pub use figures::{gpm_counters, CeilingShare, ChangeFigures, RunFigures, TimeSource, CEILING};
pub use provenance::Provenance;
pub use split::TimeSplit;
pub use terrain::{
    prepare_terrain, InputError, InputUnits, PreparedTerrain, TerrainReport, TerrainSource,
};

/// A run that broke an invariant of the harness: a bug, not a setting or a device's
/// limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum InvariantError {
    #[error("the timed run read no heights back")]
    NoHeightsBack,
    #[error("the run changed the map's shape")]
    ShapeChanged,
    /// Fixed-point heights came back as float32, or the reverse.
    #[error("a run changed the map's shape or arithmetic")]
    ShapeOrArithmeticChanged,
}
