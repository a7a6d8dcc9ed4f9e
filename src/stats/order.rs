//! Order statistics: quantiles, a sample's quartiles, and a distribution-free interval
//! of its median (nvbench's summary of a point's repetitions).

use serde::Serialize;
use statrs::distribution::{Binomial, DiscreteCDF};

/// The `q` quantile of sorted values (at least one), by linear interpolation between
/// order statistics (numpy's default, R's type 7; statrs's `quantile` is type 8, and
/// points.csv has always used this one): for `q` = 0.5 the median, the mean of the
/// middle two for an even count.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    let pos = q * (sorted.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

/// The order statistic at rank floor(q (n - 1)) of `values` (at least one), reordering
/// them: a selection, not a sort, for maps too large to sort (a picture's colour limit).
pub fn select_quantile(values: &mut [f32], q: f64) -> f32 {
    let k = ((values.len() - 1) as f64 * q) as usize;
    *values.select_nth_unstable_by(k, f32::total_cmp).1
}

/// The median of `values` (any order); `None` for none.
pub fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    Some(quantile(&sorted, 0.5))
}

/// Median and spread of a set of samples.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Quartiles {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub q1: f64,
    pub q3: f64,
}

impl Quartiles {
    /// Quartiles by [`quantile`]; NaN for no values.
    pub fn of(values: &[f64]) -> Self {
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let quantile = |q: f64| match sorted.is_empty() {
            true => f64::NAN,
            false => quantile(&sorted, q),
        };
        Self {
            median: quantile(0.5),
            min: quantile(0.0),
            max: quantile(1.0),
            q1: quantile(0.25),
            q3: quantile(0.75),
        }
    }

    /// (q3 - q1) / median.
    pub fn rel_iqr(&self) -> f64 {
        (self.q3 - self.q1) / self.median
    }

    /// Whether `value` lies beyond 1.5 interquartile ranges from the quartiles (Tukey).
    pub fn is_outlier(&self, value: f64) -> bool {
        let fence = 1.5 * (self.q3 - self.q1);
        value < self.q1 - fence || value > self.q3 + fence
    }
}

/// The share of each tail a median's interval leaves out: 2.5%, for 95%.
const MEDIAN_TAIL: f64 = 0.025;

/// A distribution-free 95% confidence interval of the median: order statistics
/// (x(r), x(n+1-r)), with r the largest rank for which P(Binomial(n, 1/2) < r) <= 2.5%.
/// With 5 samples or fewer no rank qualifies and the interval is the whole range: so few
/// repetitions cannot pin the median down. `None` for one sample.
pub fn median_interval(values: &[f64]) -> Option<(f64, f64)> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    if n < 2 {
        return None;
    }
    let coin = Binomial::new(0.5, n as u64).expect("p = 1/2 and n >= 2 make a binomial");
    let rank = (1..=n / 2)
        .take_while(|&r| coin.cdf(r as u64 - 1) <= MEDIAN_TAIL)
        .last()
        .unwrap_or(0);
    let low = rank.max(1) - 1;
    Some((sorted[low], sorted[n - 1 - low]))
}

/// The interval of new / base that the two medians' intervals allow, where no samples
/// are there to bootstrap: new's low over base's high to new's high over base's low
/// (wider than a bootstrap's, as both ends take both sides' worst).
pub fn ratio_bounds(base: (f64, f64), new: (f64, f64)) -> (f64, f64) {
    (new.0 / base.1, new.1 / base.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quartiles_interpolate_between_samples() {
        let s = Quartiles::of(&[4.0, 1.0, 3.0, 2.0, 5.0]);
        assert_eq!(
            (s.min, s.q1, s.median, s.q3, s.max),
            (1.0, 2.0, 3.0, 4.0, 5.0)
        );
        assert!((s.rel_iqr() - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(Quartiles::of(&[1.0, 2.0]).median, 1.5);
        assert_eq!(median(&[3.0, 1.0, 2.0, 10.0]), Some(2.5));
        assert_eq!(median(&[]), None);
        assert_eq!(ratio_bounds((1.0, 2.0), (3.0, 4.0)), (1.5, 4.0));
    }

    #[test]
    fn few_samples_give_the_whole_range_as_the_median_interval() {
        assert_eq!(median_interval(&[5.0]), None);
        assert_eq!(median_interval(&[3.0, 1.0, 2.0]), Some((1.0, 3.0)));
        let six: Vec<f64> = (1..=6).map(f64::from).collect();
        // At 6, rank 1 qualifies (P(K < 1) = 1/64): still the whole range.
        assert_eq!(median_interval(&six), Some((1.0, 6.0)));
    }

    #[test]
    fn the_median_interval_takes_the_ranks_of_the_published_table() {
        // The 95% ranks of the median's interval (Conover, Practical Nonparametric
        // Statistics, table A3; scipy.stats.binom.cdf(r - 1, n, 0.5) <= 0.025): the
        // interval is (x(r), x(n + 1 - r)).
        for (n, r) in [(6, 1), (9, 2), (10, 2), (20, 6), (50, 18), (100, 40)] {
            let values: Vec<f64> = (1..=n).map(f64::from).collect();
            let (low, high) = median_interval(&values).unwrap();
            assert_eq!((low, high), (f64::from(r), f64::from(n + 1 - r)), "n = {n}");
        }
    }
}
