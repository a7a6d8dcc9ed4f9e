//! The statistics every study uses, on their own: nothing here knows of erosion, GPUs or
//! files. `compare`, `equivalence`, `reproduce` and `strategies` are its clients; no
//! other module computes a quantile, an interval or a test (tests/architecture.rs).
//!
//! - [`order`]: quantiles, quartiles and the distribution-free interval of a median.
//! - [`moments`]: a sample's mean and spread, Student's t and its interval of a mean.
//! - [`difference`]: two samples' difference of means, unpaired (Welch) or paired by
//!   seed, its two-sided test and TOST against a margin; Holm's correction.
//! - [`fit`]: the least-squares line and its slope's standard error.
//! - [`bootstrap`]: the percentile bootstrap of a ratio of medians, and resamples of
//!   seeds for a verdict's fragility.
//! - [`permutation`]: the permutation test on maps, unpaired or paired.
//! - [`verdict`]: the one [`Verdict`] an interval gives against a band of no effect.
//!
//! The distributions come from `statrs`; what is kept here is a few lines each on top of
//! them (the quantile rule points.csv has always used, Holm's step-down, the
//! bootstrap's generator).

pub mod bootstrap;
pub mod difference;
pub mod fit;
pub mod moments;
pub mod order;
pub mod permutation;
pub mod verdict;

pub use bootstrap::{flip_share, ratio_of_medians, SplitMix64};
pub use difference::{holm, MeanDifference};
pub use fit::LinearFit;
pub use moments::{t_cdf, t_quantile, t_sf, Moments};
pub use order::{median, median_interval, quantile, ratio_bounds, Quartiles};
pub use permutation::{
    paired_permutation_floor, paired_permutation_test, permutation_test, PermutationTest,
};
pub use verdict::{Band, Verdict};

/// Asserts that `actual` is within `tolerance` of `expected`, relatively: the tests'
/// comparison with published and scipy values.
#[cfg(test)]
fn close(actual: f64, expected: f64, tolerance: f64, what: &str) {
    let scale = expected.abs().max(1e-300);
    assert!(
        ((actual - expected) / scale).abs() <= tolerance,
        "{what}: {actual} against {expected}"
    );
}
