//! The strategies vkerode runs: one line each. A new strategy is its folder, its line
//! here and its settings field in [`super::RunSettings`].

use super::strategy::Strategy;
use super::{droplets, pipes, thermal};

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

/// Every strategy, in the order results list them.
pub static STRATEGIES: [&dyn Strategy; 3] = [&droplets::Droplets, &pipes::Pipes, &thermal::Thermal];

impl Algorithm {
    /// The strategy that runs it.
    pub fn strategy(self) -> &'static dyn Strategy {
        match self {
            Algorithm::Droplets => &droplets::Droplets,
            Algorithm::Pipes => &pipes::Pipes,
            Algorithm::Thermal => &thermal::Thermal,
        }
    }

    /// As configs and results spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Algorithm::Droplets => "droplets",
            Algorithm::Pipes => "pipes",
            Algorithm::Thermal => "thermal",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::ValueEnum;

    #[test]
    fn every_algorithm_is_listed_once_and_runs_its_own_strategy() {
        let listed: Vec<Algorithm> = STRATEGIES.iter().map(|s| s.algorithm()).collect();
        assert_eq!(listed, Algorithm::value_variants());
        for &a in Algorithm::value_variants() {
            assert_eq!(a.strategy().algorithm(), a);
            let spelled = serde_json::to_value(a).unwrap();
            assert_eq!(spelled, a.as_str());
        }
    }
}
