//! The studies, one layer above the core (`crate::experiment`): each uses the core's
//! runs, sweeps, results and reports, and the statistics of `crate::stats`, and nothing
//! below uses them. In order, lowest first: the speed variants' equivalence verdicts
//! (`equivalence/`), the strategies compared by dose (`strategy_comparison/`), and the
//! paper's claims judged on a device (`reproduce/`).

pub mod equivalence;
pub mod reproduce;
pub mod strategy_comparison;
