//! Two samples' difference of means, unpaired (Welch) or paired (the same seeds on both
//! sides), with its two-sided test of equal means, its interval, and the two one-sided
//! tests (TOST) of equivalence within a margin; and Holm's correction of a family.

use super::moments::{t_cdf, t_quantile, t_sf, Moments};

/// A difference of means (a - b), its standard error and degrees of freedom.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct MeanDifference {
    pub difference: f64,
    pub se: f64,
    /// Infinite where neither side has any spread.
    pub df: f64,
    /// Whether it is the mean of the pairs' differences (the sides share their seeds).
    pub paired: bool,
}

impl MeanDifference {
    /// Welch's: each side's own variance, the Welch–Satterthwaite degrees of freedom.
    /// `None` where either sample has fewer than two values.
    pub fn welch(a: &Moments, b: &Moments) -> Option<Self> {
        if a.n < 2 || b.n < 2 {
            return None;
        }
        let (va, vb) = (a.variance_of_mean(), b.variance_of_mean());
        let df = match va + vb {
            0.0 => f64::INFINITY,
            sum => sum * sum / (va * va / (a.n - 1) as f64 + vb * vb / (b.n - 1) as f64),
        };
        Some(Self {
            difference: a.mean - b.mean,
            se: (va + vb).sqrt(),
            df,
            paired: false,
        })
    }

    /// The paired one: the mean of `a[i] - b[i]` with n - 1 degrees of freedom, for two
    /// sides measured on the same units (seeds). Pairs with a non-finite side are left
    /// out; `None` with fewer than two pairs, or sides of other lengths.
    pub fn paired(a: &[f64], b: &[f64]) -> Option<Self> {
        if a.len() != b.len() {
            return None;
        }
        let differences: Vec<f64> = a
            .iter()
            .zip(b)
            .map(|(x, y)| x - y)
            .filter(|d| d.is_finite())
            .collect();
        let d = Moments::of(&differences);
        if d.n < 2 {
            return None;
        }
        let se = d.variance_of_mean().sqrt();
        Some(Self {
            difference: d.mean,
            se,
            df: match se {
                0.0 => f64::INFINITY,
                _ => (d.n - 1) as f64,
            },
            paired: true,
        })
    }

    /// The two-sided p of "the means are equal". Without spread the sides are
    /// different (p 0) where their means differ and not (p 1) where they are one.
    pub fn p_different(&self) -> f64 {
        if self.se == 0.0 {
            return if self.difference == 0.0 { 1.0 } else { 0.0 };
        }
        2.0 * t_sf((self.difference / self.se).abs(), self.df)
    }

    /// TOST: the larger of the two one-sided p-values of "the difference is at most
    /// -margin" and "at least +margin"; small where the difference lies within
    /// ±margin. Without spread: equivalent (p 0) where |difference| <= margin, and not
    /// (p 1) otherwise.
    pub fn p_equivalent(&self, margin: f64) -> f64 {
        if self.se == 0.0 {
            return if self.difference.abs() <= margin {
                0.0
            } else {
                1.0
            };
        }
        let lower = t_sf((self.difference + margin) / self.se, self.df);
        let upper = t_cdf((self.difference - margin) / self.se, self.df);
        lower.max(upper)
    }

    /// Its two-sided interval at `level` (0.90 is TOST's at alpha 0.05).
    pub fn interval(&self, level: f64) -> (f64, f64) {
        let half = match self.se {
            0.0 => 0.0,
            se => t_quantile(0.5 + level / 2.0, self.df) * se,
        };
        (self.difference - half, self.difference + half)
    }
}

/// Holm's step-down adjustment of a family of p-values, in their order: the i-th
/// smallest p times (m - i + 1), made monotone and capped at 1. A hypothesis is
/// rejected at level alpha where its adjusted p is at most alpha. NaN p-values (tests
/// that could not be run) stay NaN and count in the family's size. (statrs has none.)
pub fn holm(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&i, &j| p[i].total_cmp(&p[j]));
    let mut adjusted = vec![f64::NAN; m];
    let mut running: f64 = 0.0;
    for (rank, &i) in order.iter().enumerate() {
        if p[i].is_nan() {
            continue;
        }
        running = running.max(((m - rank) as f64 * p[i]).min(1.0));
        adjusted[i] = running;
    }
    adjusted
}

#[cfg(test)]
mod tests {
    use super::super::close;
    use super::*;

    #[test]
    fn welch_and_its_tost_match_scipy() {
        // scipy.stats.ttest_ind(a, b, equal_var=False): statistic -1.935024187953525,
        // pvalue 0.09287298515868019, df 7.235069684937751.
        let a = Moments::of(&[1.0, 2.0, 3.5, 2.2, 4.1]);
        let b = Moments::of(&[2.5, 3.9, 4.4, 3.1, 5.0, 4.2]);
        let w = MeanDifference::welch(&a, &b).unwrap();
        close(w.difference / w.se, -1.935024187953525, 1e-12, "t");
        close(w.df, 7.235069684937751, 1e-12, "df");
        close(w.p_different(), 0.09287298515868019, 1e-9, "p");
        // TOST at 1% of b's mean, from scipy.stats.t.sf and .cdf on Welch's t and df:
        // lower 0.028370128386678243, upper 0.0358379227167237.
        let a = Moments::of(&[100.0, 101.5, 99.2, 100.8, 100.1]);
        let b = Moments::of(&[100.4, 99.9, 100.6, 101.1, 99.5, 100.2]);
        let w = MeanDifference::welch(&a, &b).unwrap();
        close(
            w.p_equivalent(0.01 * b.mean.abs()),
            0.0358379227167237,
            1e-9,
            "TOST",
        );
        assert_eq!(MeanDifference::welch(&Moments::of(&[1.0]), &b), None);
    }

    #[test]
    fn the_paired_test_and_its_tost_match_scipy() {
        // Seeds shared by both sides, strongly correlated.
        let a = [10.2, 11.9, 9.4, 12.8, 10.9, 11.1];
        let b = [10.0, 11.5, 9.5, 12.1, 10.4, 10.8];
        // scipy.stats.ttest_rel(a, b): statistic 2.988071523335981, pvalue
        // 0.030514977133586075 (df 5).
        let p = MeanDifference::paired(&a, &b).unwrap();
        assert!(p.paired && p.df == 5.0);
        close(p.difference / p.se, 2.988071523335981, 1e-12, "t");
        close(p.p_different(), 0.030514977133586075, 1e-9, "p");
        // TOST within ±0.5: max(t.sf((d + 0.5) / se, 5), t.cdf((d - 0.5) / se, 5)).
        close(p.p_equivalent(0.5), 0.09769724589563648, 1e-9, "TOST");
        // Its 90% interval: d -+ t.ppf(0.95, 5) se.
        let (low, high) = p.interval(0.90);
        close(low, 0.10854527659996602, 1e-9, "low");
        close(high, 0.5581213900667006, 1e-9, "high");
        // Unpaired, the seeds' spread hides the same difference.
        let w = MeanDifference::welch(&Moments::of(&a), &Moments::of(&b)).unwrap();
        assert!(w.p_different() > 0.5, "{w:?}");
        assert_eq!(MeanDifference::paired(&a, &b[..5]), None);
    }

    #[test]
    fn holm_adjusts_in_the_order_of_the_p_values() {
        // statsmodels.stats.multitest.multipletests(p, method="holm")[1].
        let adjusted = holm(&[0.01, 0.04, 0.03, 0.005]);
        for (a, e) in adjusted.iter().zip([0.03, 0.06, 0.06, 0.02]) {
            close(*a, e, 1e-12, "holm");
        }
        // Capped at 1; a test that could not run stays NaN and counts in the family.
        let adjusted = holm(&[0.5, f64::NAN, 0.2]);
        close(adjusted[2], 0.6, 1e-12, "0.2 x 3");
        close(adjusted[0], 1.0, 1e-12, "capped");
        assert!(adjusted[1].is_nan());
    }
}
