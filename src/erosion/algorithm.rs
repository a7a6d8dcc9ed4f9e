//! The strategy a run uses, as the `algorithm` setting names it (the registry says
//! which [`super::Strategy`] runs each).

/// The strategy a run uses, as the `algorithm` setting names it.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    serde::Serialize,
    serde::Deserialize,
    clap::ValueEnum,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Algorithm {
    /// The paper's: one thread per droplet, atomicAdd on a fixed-point heightfield.
    #[default]
    Droplets,
    /// The grid-centric virtual-pipe shallow-water model (Mei et al. 2007).
    Pipes,
    /// Thermal erosion: material slides to the neighbours past a talus angle
    /// (Musgrave, Kolb and Mace 1989).
    Thermal,
}
