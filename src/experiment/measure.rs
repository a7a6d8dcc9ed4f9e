//! Measuring one point the way nvbench does: warm-up, then timed repetitions with GPU
//! timestamps until the noise is low, the repetitions run out or the time budget does.

use std::time::{Duration, Instant};

use serde::Serialize;

use super::config::MeasureSettings;
use crate::erosion::{DropletJob, DropletRunner, ErosionError, RunMode};

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
        let quantile = |q: f64| {
            if sorted.is_empty() {
                return f64::NAN;
            }
            let pos = q * (sorted.len() - 1) as f64;
            let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
            sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
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

/// The stopping rule, apart from the GPU: given the samples so far and the time spent,
/// whether to stop and why.
pub fn should_stop(
    settings: &MeasureSettings,
    gpu_ms: &[f64],
    spent: Duration,
) -> Option<StopReason> {
    let reps = gpu_ms.len() as u32;
    if reps >= settings.min_reps && Summary::of(gpu_ms).rel_iqr() <= settings.target_rel_iqr {
        return Some(StopReason::NoiseTarget);
    }
    if reps >= settings.max_reps {
        return Some(StopReason::MaxReps);
    }
    // min_reps is a floor: the budget stops a point only once it has them.
    if spent.as_secs_f64() >= settings.time_budget_s && reps >= settings.min_reps {
        return Some(StopReason::TimeBudget);
    }
    None
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

/// A warm-up run more than this much faster than the one before means the GPU's clocks
/// are still rising (from idle, after the CPU's share of the previous point, say).
const STILL_WARMING: f64 = 0.02;
/// Warm-up runs past the configured ones, at most, while the clocks rise.
const EXTRA_WARMUP: u32 = 20;
/// GPU time the warm-up spends at least: a GPU raises its clocks from idle in a step
/// after some sustained load (on the H200, runs at idle clocks repeat at the same slow
/// time before the step), which comparing runs alone cannot see.
const MIN_WARMUP_S: f64 = 0.3;

/// The configured warm-up runs (at least two, to compare), then more while each is
/// over 2% faster than the one before or the warm-up has spent less than
/// [`MIN_WARMUP_S`] of GPU time, up to [`EXTRA_WARMUP`] more: timed repetitions start on
/// a settled GPU. Returns the runs made.
fn warm_up<E>(configured: u32, mut run: impl FnMut() -> Result<f64, E>) -> Result<u32, E> {
    if configured == 0 {
        return Ok(0);
    }
    let mut previous: Option<f64> = None;
    let (mut runs, mut total) = (0, 0.0);
    while runs < configured + EXTRA_WARMUP {
        let seconds = run()?;
        runs += 1;
        total += seconds;
        let settled = previous.is_some_and(|p| seconds >= p * (1.0 - STILL_WARMING));
        previous = Some(seconds);
        if runs >= configured && settled && total >= MIN_WARMUP_S {
            break;
        }
    }
    Ok(runs)
}

/// Warm-up runs, then timed repetitions of `job` on `runner`, each from a fresh copy
/// of the terrain, uploaded outside the timed region.
pub fn measure(
    runner: &mut DropletRunner,
    job: &DropletJob,
    batch: u32,
    settings: &MeasureSettings,
) -> Result<Measurement, ErosionError> {
    measure_runs(settings, || {
        let run = runner.execute(job, batch, RunMode::TIMED_ONLY)?;
        Ok((run.gpu_time, run.wall_time))
    })
}

/// Warm-up runs, then timed repetitions of `run`, which returns its GPU time (`None`
/// without timestamps: the wall time stands in) and its wall time.
pub fn measure_runs<E>(
    settings: &MeasureSettings,
    mut run: impl FnMut() -> Result<(Option<Duration>, Duration), E>,
) -> Result<Measurement, E> {
    warm_up(settings.warmup, || {
        let (gpu, wall) = run()?;
        Ok::<f64, E>(gpu.unwrap_or(wall).as_secs_f64())
    })?;
    let started = Instant::now();
    let mut samples = Vec::new();
    let mut gpu_ms = Vec::new();
    let stop = loop {
        let (gpu, wall) = run()?;
        let sample = Sample {
            gpu_ms: gpu.unwrap_or(wall).as_secs_f64() * 1e3,
            wall_ms: wall.as_secs_f64() * 1e3,
            outlier: false,
        };
        samples.push(sample);
        gpu_ms.push(sample.gpu_ms);
        if let Some(reason) = should_stop(settings, &gpu_ms, started.elapsed()) {
            break reason;
        }
    };
    Ok(Measurement::of(samples, stop))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warm_up_goes_on_while_the_runs_still_speed_up() {
        fn times(list: &[f64]) -> impl FnMut() -> Result<f64, ()> + '_ {
            let mut it = list.iter().copied();
            move || Ok(it.next().unwrap_or(1.0))
        }
        // Clocks rising from idle: 40, 30, 22, 20 ms, then settled at 19.9 (runs of
        // 100 ms, so the minimum warm-up time is spent by then).
        let rising = [0.40, 0.30, 0.22, 0.20, 0.199, 0.20];
        assert_eq!(warm_up(2, times(&rising)), Ok(5));
        // A settled GPU stops at the configured count once the minimum time is spent.
        assert_eq!(warm_up(3, times(&[0.2, 0.2, 0.2, 0.2])), Ok(3));
        // Short runs at the same slow time go on until the minimum time: 15 of 20 ms.
        assert_eq!(warm_up(2, times(&[0.02; 40])), Ok(15));
        assert_eq!(
            warm_up(0, times(&[0.04])),
            Ok(0),
            "no warm-up asked, none made"
        );
        // Never settling stops after the extra runs.
        let falling: Vec<f64> = (0..40).map(|i| 1.0 / f64::from(i + 1)).collect();
        assert_eq!(warm_up(2, times(&falling)), Ok(2 + EXTRA_WARMUP));
    }

    fn settings(target: f64, max_reps: u32, budget: f64) -> MeasureSettings {
        MeasureSettings {
            warmup: 0,
            min_reps: 3,
            max_reps,
            target_rel_iqr: target,
            time_budget_s: budget,
        }
    }

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
    fn an_unreachable_noise_target_stops_at_the_maximum_repetitions() {
        // Alternating samples never get a relative IQR of zero.
        let noisy: Vec<f64> = (0..10)
            .map(|i| if i % 2 == 0 { 1.0 } else { 2.0 })
            .collect();
        let rule = settings(0.0, 10, 1e9);
        for n in 1..10 {
            assert_eq!(
                should_stop(&rule, &noisy[..n], Duration::ZERO),
                None,
                "after {n}"
            );
        }
        assert_eq!(
            should_stop(&rule, &noisy, Duration::ZERO),
            Some(StopReason::MaxReps)
        );
    }

    #[test]
    fn quiet_samples_stop_at_the_noise_target_and_slow_ones_at_the_budget() {
        let quiet = [10.0, 10.01, 9.99];
        assert_eq!(
            should_stop(&settings(0.02, 50, 1e9), &quiet, Duration::ZERO),
            Some(StopReason::NoiseTarget)
        );
        assert_eq!(
            should_stop(&settings(0.02, 50, 1e9), &quiet[..2], Duration::ZERO),
            None,
            "min_reps first"
        );
        let noisy = [1.0, 3.0, 2.0];
        assert_eq!(
            should_stop(&settings(0.02, 50, 5.0), &noisy, Duration::from_secs(6)),
            Some(StopReason::TimeBudget)
        );
    }

    #[test]
    fn the_budget_cannot_cut_a_point_below_min_reps() {
        let slow = settings(0.0, 50, 1.0);
        for n in 1..3 {
            let one = vec![22_000.0; n];
            assert_eq!(should_stop(&slow, &one, Duration::from_secs(60)), None);
        }
        let three = [22_000.0, 22_100.0, 21_900.0];
        assert_eq!(
            should_stop(&slow, &three, Duration::from_secs(60)),
            Some(StopReason::TimeBudget)
        );
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
