//! A point's timed repetitions and their summary, the way nvbench keeps them: every
//! sample, the median and quartiles, a distribution-free interval of the median (both
//! from `stats`), and the outliers marked, never dropped.

use serde::Serialize;

use crate::stats::{median_interval, Quartiles};

/// Whether `ms` can be a recorded time: finite and above 0 (a NaN lies outside no
/// interval, and a time of 0 or below makes a ratio of nothing).
pub fn is_time(ms: f64) -> bool {
    ms.is_finite() && ms > 0.0
}

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

/// The warm-up runs before the timed repetitions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct WarmUp {
    pub runs: u32,
    /// Their GPU-timestamp time (wall time where there are no timestamps), in seconds.
    pub gpu_s: f64,
    /// Host time from the first run's submission to the last one's end, in seconds.
    pub wall_s: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Measurement {
    pub warmup: WarmUp,
    pub samples: Vec<Sample>,
    /// Host time of the timed repetitions, from the first one's submission to the last
    /// one's end, in seconds.
    pub timed_wall_s: f64,
    pub stop: StopReason,
    pub gpu_ms: Quartiles,
    /// 95% confidence interval of the median GPU time; `None` for one repetition.
    pub gpu_ms_ci: Option<(f64, f64)>,
    pub wall_ms: Quartiles,
}

impl Measurement {
    /// Summarises the samples and marks the outliers among their GPU times.
    pub fn of(mut samples: Vec<Sample>, stop: StopReason) -> Self {
        let timed_wall_s = samples.iter().map(|s| s.wall_ms / 1e3).sum();
        let gpu_ms: Vec<f64> = samples.iter().map(|s| s.gpu_ms).collect();
        let wall: Vec<f64> = samples.iter().map(|s| s.wall_ms).collect();
        let summary = Quartiles::of(&gpu_ms);
        for sample in &mut samples {
            sample.outlier = summary.is_outlier(sample.gpu_ms);
        }
        Self {
            warmup: WarmUp::default(),
            timed_wall_s,
            gpu_ms: summary,
            gpu_ms_ci: median_interval(&gpu_ms),
            wall_ms: Quartiles::of(&wall),
            samples,
            stop,
        }
    }

    /// GPU-timestamp seconds of the runs the statistics rest on: the warm-up and the
    /// timed repetitions.
    pub fn gpu_s(&self) -> f64 {
        let timed: f64 = self.samples.iter().map(|s| s.gpu_ms / 1e3).sum();
        self.warmup.gpu_s + timed
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
}
