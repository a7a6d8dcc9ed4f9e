//! A point's timed repetitions and their summary, the way nvbench keeps them: every
//! sample, the median and quartiles, a distribution-free interval of the median, and
//! the outliers marked, never dropped.

use serde::Serialize;

/// One timed repetition.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Sample {
    /// GPU-timestamp time of the dispatches (wall time where there are no timestamps).
    pub gpu_ms: f64,
    /// Host time of the whole submission: upload, dispatches and waiting.
    pub wall_ms: f64,
    /// Beyond 1.5 IQR of the point's quartiles: kept, and marked.
    pub outlier: bool,
}

/// Why the repetitions stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum StopReason {
    /// The relative IQR reached the target.
    NoiseTarget,
    /// The maximum number of repetitions ran.
    MaxReps,
    /// The time budget ran out.
    TimeBudget,
}

impl StopReason {
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::NoiseTarget => "noise-target",
            StopReason::MaxReps => "max-reps",
            StopReason::TimeBudget => "time-budget",
        }
    }
}

/// The `q` quantile of sorted values (at least one), by linear interpolation between
/// order statistics: for `q` = 0.5 the median, the mean of the middle two for an even
/// count.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    let pos = q * (sorted.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

/// Median and spread of a set of samples.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Summary {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub q1: f64,
    pub q3: f64,
}

impl Summary {
    /// Quartiles by linear interpolation between order statistics.
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
    // Binomial probabilities in log space: 2^-n underflows past n = 1074.
    let ln_half_n = -(n as f64) * std::f64::consts::LN_2;
    let (mut ln_choose, mut cdf, mut below) = (0.0f64, 0.0f64, 0usize);
    for k in 0..n / 2 {
        cdf += (ln_choose + ln_half_n).exp();
        if cdf > 0.025 {
            break;
        }
        below = k + 1;
        ln_choose += ((n - k) as f64 / (k + 1) as f64).ln();
    }
    let low = below.max(1) - 1;
    Some((sorted[low], sorted[n - 1 - low]))
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Measurement {
    pub samples: Vec<Sample>,
    pub stop: StopReason,
    pub gpu_ms: Summary,
    /// 95% confidence interval of the median GPU time; `None` for one repetition.
    pub gpu_ms_ci: Option<(f64, f64)>,
    pub wall_ms: Summary,
}

impl Measurement {
    /// Summarises the samples and marks the outliers among their GPU times.
    pub fn of(mut samples: Vec<Sample>, stop: StopReason) -> Self {
        let gpu_ms: Vec<f64> = samples.iter().map(|s| s.gpu_ms).collect();
        let wall: Vec<f64> = samples.iter().map(|s| s.wall_ms).collect();
        let summary = Summary::of(&gpu_ms);
        for sample in &mut samples {
            sample.outlier = summary.is_outlier(sample.gpu_ms);
        }
        Self {
            gpu_ms: summary,
            gpu_ms_ci: median_interval(&gpu_ms),
            wall_ms: Summary::of(&wall),
            samples,
            stop,
        }
    }

    /// Repetitions whose GPU time lies beyond 1.5 IQR of the quartiles.
    pub fn outliers(&self) -> usize {
        self.samples.iter().filter(|s| s.outlier).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quartiles_interpolate_between_samples() {
        let s = Summary::of(&[4.0, 1.0, 3.0, 2.0, 5.0]);
        assert_eq!(
            (s.min, s.q1, s.median, s.q3, s.max),
            (1.0, 2.0, 3.0, 4.0, 5.0)
        );
        assert!((s.rel_iqr() - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(Summary::of(&[1.0, 2.0]).median, 1.5);
    }

    #[test]
    fn a_planted_slow_repetition_is_flagged_and_kept() {
        let mut times = vec![104.0, 103.5, 104.2, 104.8, 103.9, 104.1, 104.4, 103.7];
        times.insert(0, 191.0);
        let samples = times
            .iter()
            .map(|&gpu_ms| Sample {
                gpu_ms,
                wall_ms: gpu_ms,
                outlier: false,
            })
            .collect();
        let m = Measurement::of(samples, StopReason::MaxReps);
        assert_eq!(m.samples.len(), 9, "kept");
        assert_eq!(m.outliers(), 1);
        assert!(m.samples[0].outlier);
        let (low, high) = m.gpu_ms_ci.unwrap();
        assert!(low <= m.gpu_ms.median && m.gpu_ms.median <= high);
        assert!(high < 191.0, "the outlier is outside the median's interval");
    }

    #[test]
    fn few_samples_give_the_whole_range_as_the_median_interval() {
        assert_eq!(median_interval(&[5.0]), None);
        assert_eq!(median_interval(&[3.0, 1.0, 2.0]), Some((1.0, 3.0)));
        let many: Vec<f64> = (0..100).map(f64::from).collect();
        let (low, high) = median_interval(&many).unwrap();
        assert!(
            low > 35.0 && high < 65.0 && low < 49.5 && high > 49.5,
            "{low} {high}"
        );
    }
}
