//! Measuring one point the way nvbench does: warm-up, then timed repetitions with GPU
//! timestamps until the noise is low, the repetitions run out or the time budget does.

use std::time::{Duration, Instant};

use super::config::MeasureSettings;
use crate::experiment::results::{Measurement, Sample, StopReason, WarmUp};
use crate::stats::Quartiles;

/// The stopping rule, apart from the GPU: given the samples so far and the time spent,
/// whether to stop and why.
pub fn should_stop(
    settings: &MeasureSettings,
    gpu_ms: &[f64],
    spent: Duration,
) -> Option<StopReason> {
    let reps = gpu_ms.len() as u32;
    if reps >= settings.min_reps && Quartiles::of(gpu_ms).rel_iqr() <= settings.target_rel_iqr {
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

/// A warm-up run more than this much faster than the one before means the GPU's clocks
/// are still rising (from idle, after the CPU's share of the previous point, say).
const STILL_WARMING: f64 = 0.02;
/// Warm-up runs past the configured ones, at most, while the clocks rise.
const EXTRA_WARMUP: u32 = 20;
/// GPU time the warm-up spends at least, however short each run: a GPU raises its
/// clocks from idle in a step after some sustained load (on the H200, runs at idle
/// clocks repeat at the same slow time before the step), which comparing runs alone
/// cannot see. Runs of a tenth of a millisecond need thousands.
const MIN_WARMUP_S: f64 = 0.3;
/// Warm-up runs at most, and host time at most, for runs so short that even the
/// minimum GPU time would take longer than the submissions are worth.
const MAX_WARMUP_RUNS: u32 = 20_000;
const MAX_WARMUP_WALL: Duration = Duration::from_secs(5);

/// The configured warm-up runs (at least two, to compare), then more while each is
/// over 2% faster than the one before (up to [`EXTRA_WARMUP`] more) and until the
/// warm-up has spent [`MIN_WARMUP_S`] of GPU time (up to [`MAX_WARMUP_RUNS`] runs or
/// [`MAX_WARMUP_WALL`] of host time): timed
/// repetitions start on a settled GPU. Returns the runs made and their summed times.
fn warm_up<E>(configured: u32, mut run: impl FnMut() -> Result<f64, E>) -> Result<(u32, f64), E> {
    if configured == 0 {
        return Ok((0, 0.0));
    }
    let mut previous: Option<f64> = None;
    let (mut runs, mut total) = (0, 0.0);
    let started = Instant::now();
    while runs < MAX_WARMUP_RUNS && (runs < configured || started.elapsed() < MAX_WARMUP_WALL) {
        let seconds = run()?;
        runs += 1;
        total += seconds;
        let settled = previous.is_some_and(|p| seconds >= p * (1.0 - STILL_WARMING))
            || runs >= configured + EXTRA_WARMUP;
        previous = Some(seconds);
        if runs >= configured && settled && total >= MIN_WARMUP_S {
            break;
        }
    }
    Ok((runs, total))
}

/// Warm-up runs, then timed repetitions of `run`, which returns its GPU time (`None`
/// without timestamps: the wall time stands in) and its wall time.
pub fn measure_runs<E>(
    settings: &MeasureSettings,
    mut run: impl FnMut() -> Result<(Option<Duration>, Duration), E>,
) -> Result<Measurement, E> {
    let warming = Instant::now();
    let (runs, gpu_s) = warm_up(settings.warmup, || {
        let (gpu, wall) = run()?;
        Ok::<f64, E>(gpu.unwrap_or(wall).as_secs_f64())
    })?;
    let warmup = WarmUp {
        runs,
        gpu_s,
        wall_s: warming.elapsed().as_secs_f64(),
    };
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
    Ok(Measurement {
        warmup,
        timed_wall_s: started.elapsed().as_secs_f64(),
        ..Measurement::of(samples, stop)
    })
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
        let runs = |made: Result<(u32, f64), ()>| made.map(|(runs, _)| runs);
        // Clocks rising from idle: 40, 30, 22, 20 ms, then settled at 19.9 (runs of
        // 100 ms, so the minimum warm-up time is spent by then).
        let rising = [0.40, 0.30, 0.22, 0.20, 0.199, 0.20];
        assert_eq!(runs(warm_up(2, times(&rising))), Ok(5));
        let (_, seconds) = warm_up(2, times(&rising)).unwrap();
        assert!((seconds - 1.319).abs() < 1e-12, "the runs' times add up");
        // A settled GPU stops at the configured count once the minimum time is spent.
        assert_eq!(runs(warm_up(3, times(&[0.2, 0.2, 0.2, 0.2]))), Ok(3));
        // Short runs at the same slow time go on until the minimum time: 15 of 20 ms,
        // and past the extra runs for runs of a tenth of a millisecond (0.3 s of 1/8192 s).
        assert_eq!(runs(warm_up(2, times(&[0.02; 40]))), Ok(15));
        assert_eq!(runs(warm_up(2, times(&[1.0 / 8192.0; 4000]))), Ok(2458));
        // Runs too short to reach it stop at the most runs.
        assert_eq!(
            runs(warm_up(2, times(&[1e-9; 30_000]))),
            Ok(MAX_WARMUP_RUNS)
        );
        assert_eq!(
            runs(warm_up(0, times(&[0.04]))),
            Ok(0),
            "no warm-up asked, none made"
        );
        // Never settling stops after the extra runs.
        let falling: Vec<f64> = (0..40).map(|i| 1.0 / f64::from(i + 1)).collect();
        assert_eq!(runs(warm_up(2, times(&falling))), Ok(2 + EXTRA_WARMUP));
    }

    fn settings(target: f64, max_reps: u32, budget: f64) -> MeasureSettings {
        MeasureSettings {
            warmup: 0,
            min_reps: 3,
            max_reps,
            target_rel_iqr: target,
            time_budget_s: budget,
            replay: false,
            judge: true,
            landform: true,
        }
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
}
