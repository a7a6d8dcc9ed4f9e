//! What a run must hold whatever its settings, as an error for when it does not.

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
