//! A sample's size, mean and spread, and Student's t distribution (statrs's) for the
//! interval of a mean.

use statrs::distribution::{ContinuousCDF, StudentsT};

/// Student's t with `df` degrees of freedom (df > 0, not necessarily whole, as Welch's
/// are); `None` outside.
fn students_t(df: f64) -> Option<StudentsT> {
    (df > 0.0)
        .then(|| StudentsT::new(0.0, 1.0, df).ok())
        .flatten()
}

/// P(T <= t) for Student's t with `df` degrees of freedom; NaN for a bad `df` or `t`.
pub fn t_cdf(t: f64, df: f64) -> f64 {
    match students_t(df) {
        Some(dist) if !t.is_nan() => dist.cdf(t),
        _ => f64::NAN,
    }
}

/// P(T > t): the upper tail, without the cancellation of 1 - cdf for large t.
pub fn t_sf(t: f64, df: f64) -> f64 {
    t_cdf(-t, df)
}

/// The t with P(T <= t) = p, for p in (0, 1) and df > 0 (NaN outside).
pub fn t_quantile(p: f64, df: f64) -> f64 {
    match students_t(df) {
        Some(dist) if p > 0.0 && p < 1.0 => dist.inverse_cdf(p),
        _ => f64::NAN,
    }
}

/// A sample's size, mean and (n - 1) standard deviation.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct Moments {
    pub n: usize,
    pub mean: f64,
    /// The sample standard deviation (n - 1 in the denominator).
    pub sd: f64,
}

impl Moments {
    /// NaN mean for no values, NaN spread for one.
    pub fn of(values: &[f64]) -> Self {
        let n = values.len();
        let mean = match n {
            0 => f64::NAN,
            _ => values.iter().sum::<f64>() / n as f64,
        };
        let sd = match n {
            0 | 1 => f64::NAN,
            _ => {
                let ss: f64 = values.iter().map(|v| (v - mean).powi(2)).sum();
                (ss / (n - 1) as f64).sqrt()
            }
        };
        Self { n, mean, sd }
    }

    /// The variance of the mean, sd² / n.
    pub fn variance_of_mean(&self) -> f64 {
        self.sd * self.sd / self.n as f64
    }

    /// Student's interval of the mean at `level` (0.95 for 95%); `None` with fewer
    /// than two values.
    pub fn mean_interval(&self, level: f64) -> Option<(f64, f64)> {
        if self.n < 2 {
            return None;
        }
        let half =
            t_quantile(0.5 + level / 2.0, (self.n - 1) as f64) * self.variance_of_mean().sqrt();
        Some((self.mean - half, self.mean + half))
    }
}

#[cfg(test)]
mod tests {
    use super::super::close;
    use super::*;

    /// scipy 1.17.1, `scipy.stats.t.cdf(t, df)`, printed with repr.
    const T_CDF: &[(f64, f64, f64)] = &[
        (1.0, 0.5, 0.6475836176504333),
        (1.0, -2.0, 0.14758361765043326),
        (2.0, 1.0, 0.7886751345948129),
        (3.5, 2.2, 0.948833359837272),
        (5.0, -1.3, 0.12515031708533855),
        (10.0, 0.0, 0.5),
        (17.3, 2.5, 0.9886262499120995),
        (30.0, -3.1, 0.0020922424302753724),
        (100.0, 1.96, 0.9736105493168852),
        (1000.0, 4.0, 0.9999659950403956),
        (2.5, 10.0, 0.9977792521163463),
        (0.7, 1.5, 0.7798174514903798),
        (20.0, -8.0, 5.828314135744255e-08),
        (4.0, -12.0, 0.0001382142742514865),
        (50.0, -6.5, 1.8176870981385475e-08),
    ];

    #[test]
    fn the_t_distribution_matches_scipy() {
        for &(df, t, expected) in T_CDF {
            close(t_cdf(t, df), expected, 1e-9, &format!("t_cdf({t}, {df})"));
        }
        // scipy.stats.t.ppf(p, df).
        for (p, df, expected) in [
            (0.975, 4.0, 2.7764451051977934),
            (0.95, 2.5, 2.5582186141359355),
            (0.025, 19.0, -2.09302405440831),
            (0.999, 7.3, 4.688865993538372),
        ] {
            close(
                t_quantile(p, df),
                expected,
                1e-9,
                &format!("t_ppf({p}, {df})"),
            );
        }
        assert!(t_cdf(1.0, 0.0).is_nan() && t_quantile(1.0, 4.0).is_nan());
        close(t_sf(2.0, 1.0), 1.0 - 0.8524163823495667, 1e-9, "t_sf");
    }

    #[test]
    fn t_quantiles_match_the_published_table() {
        // Two-sided 95% critical values (Fisher and Yates' table).
        for (df, t) in [
            (1.0, 12.7062),
            (4.0, 2.7764),
            (19.0, 2.0930),
            (1000.0, 1.9623),
        ] {
            assert!((t_quantile(0.975, df) - t).abs() < 1e-4, "df {df}");
            assert!((t_quantile(0.025, df) + t).abs() < 1e-4, "df {df}");
        }
    }

    #[test]
    fn the_mean_interval_is_students() {
        let moments = Moments::of(&[1.0, 2.0, 3.0, 4.0, 5.0]);
        let (lo, hi) = moments.mean_interval(0.95).unwrap();
        // 3 -+ 2.7764 x sqrt(2.5 / 5).
        assert!((lo - 1.0368).abs() < 1e-3 && (hi - 4.9632).abs() < 1e-3);
        assert_eq!(Moments::of(&[1.0]).mean_interval(0.95), None);
        assert!(Moments::of(&[]).mean.is_nan());
    }
}
