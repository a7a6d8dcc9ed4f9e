//! The statistics of an equivalence verdict, on their own: Student's t distribution
//! (through the regularized incomplete beta function), Welch's t-test, two one-sided
//! tests (TOST) against a margin, Holm's step-down correction, and a permutation test
//! on maps. Nothing here knows of erosion.

use crate::hash::pcg_hash;

/// ln Γ(x) for x > 0, by Lanczos' approximation (g = 7, nine coefficients), with the
/// reflection formula below 0.5: about 15 significant digits.
pub fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut sum = C[0];
    for (i, &c) in C.iter().enumerate().skip(1) {
        sum += c / (x + i as f64);
    }
    let t = x + G + 0.5;
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

/// The continued fraction of the incomplete beta function (modified Lentz), which
/// converges fast for x < (a + 1) / (a + b + 2).
fn beta_fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    const EPSILON: f64 = 1e-16;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let nonzero = |v: f64| if v.abs() < TINY { TINY } else { v };
    let mut c = 1.0;
    let mut d = 1.0 / nonzero(1.0 - qab * x / qap);
    let mut h = d;
    // One term of the fraction: its factor on h.
    let mut term = |aa: f64| {
        d = 1.0 / nonzero(1.0 + aa * d);
        c = nonzero(1.0 + aa / c);
        d * c
    };
    for m in 1..=1000 {
        let m = f64::from(m);
        let m2 = 2.0 * m;
        h *= term(m * (b - m) * x / ((qam + m2) * (a + m2)));
        let step = term(-(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)));
        h *= step;
        if (step - 1.0).abs() < EPSILON {
            break;
        }
    }
    h
}

/// The regularized incomplete beta function I_x(a, b), for a, b > 0 and x in [0, 1]
/// (NaN outside).
pub fn incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if !(a > 0.0 && b > 0.0 && (0.0..=1.0).contains(&x)) {
        return f64::NAN;
    }
    if x == 0.0 || x == 1.0 {
        return x;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    let front = ln_front.exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_fraction(a, b, x) / a
    } else {
        1.0 - front * beta_fraction(b, a, 1.0 - x) / b
    }
}

/// P(T <= t) for Student's t with `df` degrees of freedom (df > 0, not necessarily
/// whole, as Welch's are).
pub fn t_cdf(t: f64, df: f64) -> f64 {
    if t.is_nan() || df.is_nan() || df <= 0.0 {
        return f64::NAN;
    }
    if t.is_infinite() {
        return if t > 0.0 { 1.0 } else { 0.0 };
    }
    // P(|T| > |t|) = I_{df/(df+t^2)}(df/2, 1/2).
    let tail = 0.5 * incomplete_beta(df / 2.0, 0.5, df / (df + t * t));
    if t > 0.0 {
        1.0 - tail
    } else {
        tail
    }
}

/// P(T > t): the upper tail, without the cancellation of 1 - cdf for large t.
pub fn t_sf(t: f64, df: f64) -> f64 {
    t_cdf(-t, df)
}

/// The t with P(T <= t) = p, for p in (0, 1) and df > 0, by bisection on [`t_cdf`]
/// (NaN outside).
pub fn t_quantile(p: f64, df: f64) -> f64 {
    if !(p > 0.0 && p < 1.0 && df > 0.0) {
        return f64::NAN;
    }
    // Wide enough for p down to 1e-12 at df 1 (t about 3e11).
    let (mut lo, mut hi) = (-1e12, 1e12);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if t_cdf(mid, df) < p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// A sample's size, mean and (n - 1) variance.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct Summary {
    pub n: usize,
    pub mean: f64,
    /// The sample standard deviation (n - 1 in the denominator).
    pub sd: f64,
}

impl Summary {
    pub fn of(values: &[f64]) -> Self {
        let n = values.len();
        if n == 0 {
            return Self {
                n,
                mean: f64::NAN,
                sd: f64::NAN,
            };
        }
        let mean = values.iter().sum::<f64>() / n as f64;
        let sd = match n {
            1 => f64::NAN,
            _ => {
                let ss: f64 = values.iter().map(|v| (v - mean).powi(2)).sum();
                (ss / (n - 1) as f64).sqrt()
            }
        };
        Self { n, mean, sd }
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

    fn variance_of_mean(&self) -> f64 {
        self.sd * self.sd / self.n as f64
    }
}

/// Welch's comparison of two samples' means: the difference (a - b), its standard
/// error, and the Welch–Satterthwaite degrees of freedom.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Welch {
    pub difference: f64,
    pub se: f64,
    /// Infinite where both samples have no spread.
    pub df: f64,
}

impl Welch {
    /// `None` where either sample has fewer than two values.
    pub fn of(a: &Summary, b: &Summary) -> Option<Self> {
        if a.n < 2 || b.n < 2 {
            return None;
        }
        let (va, vb) = (a.variance_of_mean(), b.variance_of_mean());
        let se = (va + vb).sqrt();
        let df = match va + vb {
            0.0 => f64::INFINITY,
            sum => sum * sum / (va * va / (a.n - 1) as f64 + vb * vb / (b.n - 1) as f64),
        };
        Some(Self {
            difference: a.mean - b.mean,
            se,
            df,
        })
    }

    /// The two-sided p of "the means are equal". Two samples without spread are
    /// different (p 0) where their means differ and not (p 1) where they are one.
    pub fn p_different(&self) -> f64 {
        if self.se == 0.0 {
            return if self.difference == 0.0 { 1.0 } else { 0.0 };
        }
        2.0 * t_sf((self.difference / self.se).abs(), self.df)
    }

    /// TOST: the larger of the two one-sided p-values of "the difference is at most
    /// -margin" and "at least +margin"; small where the difference lies within
    /// ±margin. Samples without spread are equivalent (p 0) where |difference| <=
    /// margin, and not (p 1) otherwise.
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
}

/// Holm's step-down adjustment of a family of p-values, in their order: the i-th
/// smallest p times (m - i + 1), made monotone and capped at 1. A hypothesis is
/// rejected at level alpha where its adjusted p is at most alpha. NaN p-values (tests
/// that could not be run) stay NaN and count in the family's size.
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

/// The statistic of the map test: the mean over cells of the squared difference of
/// the two groups' mean maps.
fn mean_map_distance(maps: &[&[f32]], in_a: &[bool]) -> f64 {
    let cells = maps[0].len();
    let count_a = in_a.iter().filter(|&&a| a).count() as f64;
    let count_b = maps.len() as f64 - count_a;
    let mut sum_a = vec![0.0f64; cells];
    let mut sum_b = vec![0.0f64; cells];
    for (map, &a) in maps.iter().zip(in_a) {
        let sums = if a { &mut sum_a } else { &mut sum_b };
        for (s, &v) in sums.iter_mut().zip(map.iter()) {
            *s += f64::from(v);
        }
    }
    sum_a
        .iter()
        .zip(&sum_b)
        .map(|(a, b)| (a / count_a - b / count_b).powi(2))
        .sum::<f64>()
        / cells as f64
}

/// A permutation test's outcome.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct PermutationTest {
    /// The observed statistic.
    pub statistic: f64,
    /// (1 + permutations at least as extreme) / (1 + permutations).
    pub p: f64,
    pub permutations: usize,
}

/// Whether maps `a` and `b` (each one run's map, all of one length) come from one
/// distribution: the mean squared difference of the groups' mean maps against its
/// distribution over `permutations` random relabellings of the runs (a reproducible
/// shuffle from `seed`). `None` where a group is empty or the maps differ in length.
pub fn permutation_test(
    a: &[&[f32]],
    b: &[&[f32]],
    permutations: usize,
    seed: u32,
) -> Option<PermutationTest> {
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let maps: Vec<&[f32]> = a.iter().chain(b).copied().collect();
    if maps
        .iter()
        .any(|m| m.len() != maps[0].len() || m.is_empty())
    {
        return None;
    }
    let mut labels: Vec<bool> = (0..maps.len()).map(|i| i < a.len()).collect();
    let observed = mean_map_distance(&maps, &labels);
    let mut state = seed;
    let mut next = |bound: usize| {
        state = pcg_hash(state);
        ((u64::from(state) * bound as u64) >> 32) as usize
    };
    let mut extreme = 0usize;
    for _ in 0..permutations {
        // Fisher–Yates.
        for i in (1..labels.len()).rev() {
            labels.swap(i, next(i + 1));
        }
        // Ties count as extreme: the observed labelling's own value counts too.
        if mean_map_distance(&maps, &labels) >= observed * (1.0 - 1e-12) {
            extreme += 1;
        }
    }
    Some(PermutationTest {
        statistic: observed,
        p: (1 + extreme) as f64 / (1 + permutations) as f64,
        permutations,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(t_quantile(1.0, 4.0).is_nan());
    }

    #[test]
    fn the_mean_interval_is_students() {
        let summary = Summary::of(&[1.0, 2.0, 3.0, 4.0, 5.0]);
        let (lo, hi) = summary.mean_interval(0.95).unwrap();
        // 3 -+ 2.7764 x sqrt(2.5 / 5).
        assert!((lo - 1.0368).abs() < 1e-3 && (hi - 4.9632).abs() < 1e-3);
        assert_eq!(Summary::of(&[1.0]).mean_interval(0.95), None);
    }
}
