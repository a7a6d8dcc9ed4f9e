//! Each claim judged from its sweep's files: an effect with its interval, against the
//! noise threshold where the claim is about speed, with the stability of the setting
//! it favours and whether that setting erodes as its base does.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::suite::{Claim, Measurement, SweepPlan, ATOMICS, BATCHING, STAGGER, WORKGROUP};
use crate::experiment::equivalence::margin_of;
use crate::experiment::results::{
    read_points, read_samples, ResultsError, StopReason, Table, POINTS_CSV, SAMPLES_CSV,
};
use crate::readable_number;
use crate::stats::bootstrap::RESAMPLES;
use crate::stats::{median, ratio_of_medians, Band, Moments as Summary, Verdict};

/// A claim's verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ClaimVerdict {
    Holds,
    DoesNotHold,
    Inconclusive,
}

impl ClaimVerdict {
    pub fn as_str(self) -> &'static str {
        match self {
            ClaimVerdict::Holds => "holds",
            ClaimVerdict::DoesNotHold => "does not hold",
            ClaimVerdict::Inconclusive => "inconclusive",
        }
    }
}

/// A measured quantity with its interval.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Effect {
    /// What it is, e.g. "GPU time at workgroup 8 / at workgroup 64".
    pub what: String,
    pub value: f64,
    /// Its 95% interval (a bootstrap of the pooled repetitions for times, Student's
    /// over the seeds otherwise), where there is one.
    pub interval: Option<(f64, f64)>,
    /// Its unit ("ratio", "cells").
    pub unit: String,
}

impl Effect {
    /// "0.82 [0.80, 0.84]".
    pub fn text(&self) -> String {
        let n = |v: f64| readable_number(v);
        let unit = match self.unit.as_str() {
            "ratio" => String::new(),
            unit => format!(" {unit}"),
        };
        match self.interval {
            Some((low, high)) => format!("{}{unit} [{}, {}]", n(self.value), n(low), n(high)),
            None => format!("{}{unit}", n(self.value)),
        }
    }
}

/// Whether the setting a claim favours erodes as its base does: the ratio of their net
/// changes, paired by seed, against the equivalence command's margin (TOST: its 90%
/// interval within 1 ± margin).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ErosionCheck {
    /// Mean over seeds of (new net change) / (base net change).
    pub ratio: f64,
    /// Its 90% Student interval; none with fewer than two seeds.
    pub interval: Option<(f64, f64)>,
    /// The relative margin (`total_change` in the equivalence margins).
    pub margin: f64,
    /// "same", "different" or "inconclusive".
    pub verdict: String,
}

/// One claim's outcome on this device.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ClaimResult {
    pub id: String,
    pub topic: String,
    pub paper: String,
    pub tested: String,
    pub verdict: ClaimVerdict,
    /// Why, in one sentence.
    pub why: String,
    pub effect: Option<Effect>,
    /// Whether the setting the claim favours stayed stable (the sweep's `unstable`
    /// judgement against the CPU reference); none where not judged.
    pub stable: Option<bool>,
    pub erosion: Option<ErosionCheck>,
    /// Further figures: (what, value).
    pub figures: Vec<(String, String)>,
}

/// One sweep's points and repetitions.
pub struct SweepFiles {
    table: Table,
    /// GPU times of each (point, worker).
    samples: BTreeMap<(usize, usize), Vec<f64>>,
}

impl SweepFiles {
    pub fn read(dir: &Path) -> Result<Self, ResultsError> {
        let table = read_points(&dir.join(POINTS_CSV))?;
        let mut samples: BTreeMap<(usize, usize), Vec<f64>> = BTreeMap::new();
        for s in read_samples(&dir.join(SAMPLES_CSV))? {
            samples
                .entry((s.point, s.worker))
                .or_default()
                .push(s.gpu_ms);
        }
        Ok(Self { table, samples })
    }

    /// The rows whose columns hold these values.
    fn rows(&self, filter: &[(&str, &str)]) -> Vec<usize> {
        (0..self.table.rows.len())
            .filter(|&r| filter.iter().all(|(k, v)| self.table.get(r, k) == Some(*v)))
            .collect()
    }

    fn key(&self, row: usize) -> Option<(usize, usize)> {
        let n = |c| self.table.number(row, c).map(|v| v as usize);
        Some((n("point")?, n("worker").unwrap_or(0)))
    }

    /// Every repetition of the rows' points.
    fn pooled(&self, rows: &[usize]) -> Vec<f64> {
        rows.iter()
            .filter_map(|&r| self.samples.get(&self.key(r)?))
            .flatten()
            .copied()
            .collect()
    }

    /// The first row that stopped before its noise target, as a reason.
    fn missed_target(&self, rows: &[usize]) -> Option<String> {
        rows.iter().find_map(|&r| {
            let reason = self.table.get(r, "stop_reason").unwrap_or("");
            (reason != StopReason::NoiseTarget.as_str()).then(|| {
                let iqr = self.table.number(r, "gpu_ms_rel_iqr").map(readable_number);
                format!(
                    "point {} stopped at {} (relative IQR {})",
                    self.table.get(r, "point").unwrap_or("?"),
                    if reason.is_empty() {
                        "no noise target"
                    } else {
                        reason
                    },
                    iqr.unwrap_or_else(|| "-".into())
                )
            })
        })
    }

    /// Column `column` of each row, by the row's droplet seed (the mean where a seed has
    /// several rows).
    fn by_seed(&self, rows: &[usize], column: &str) -> BTreeMap<u32, f64> {
        let mut sums: BTreeMap<u32, (f64, usize)> = BTreeMap::new();
        for &r in rows {
            let (Some(seed), Some(v)) = (
                self.table.number(r, "droplet_seed"),
                self.table.number(r, column),
            ) else {
                continue;
            };
            let entry = sums.entry(seed as u32).or_default();
            *entry = (entry.0 + v, entry.1 + 1);
        }
        sums.into_iter()
            .map(|(s, (sum, n))| (s, sum / n as f64))
            .collect()
    }

    /// Whether every row is stable: `Some(false)` if one is not, none where unjudged.
    fn stable(&self, rows: &[usize]) -> Option<bool> {
        let judged: Vec<bool> = rows
            .iter()
            .filter_map(|&r| match self.table.get(r, "unstable")? {
                "true" => Some(false),
                "false" => Some(true),
                _ => None,
            })
            .collect();
        (!judged.is_empty()).then(|| judged.iter().all(|&s| s))
    }

    /// The values column `column` takes in the rows, in their order, each once.
    fn distinct(&self, rows: &[usize], column: &str) -> Vec<String> {
        let mut values: Vec<String> = Vec::new();
        for v in rows.iter().filter_map(|&r| self.table.get(r, column)) {
            if !values.iter().any(|seen| seen == v) {
                values.push(v.to_string());
            }
        }
        values
    }

    /// The median time of the rows of each droplet seed (their repetitions pooled).
    fn seed_medians(&self, rows: &[usize]) -> BTreeMap<u32, f64> {
        let mut by_seed: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
        for &r in rows {
            if let Some(seed) = self.table.number(r, "droplet_seed") {
                by_seed.entry(seed as u32).or_default().push(r);
            }
        }
        by_seed
            .into_iter()
            .filter_map(|(seed, rows)| Some((seed, self.median_ms(&rows)?)))
            .collect()
    }

    /// The median of the rows' pooled repetitions, in ms.
    fn median_ms(&self, rows: &[usize]) -> Option<f64> {
        median(&self.pooled(rows))
    }
}

/// The speed of `new` against `base`: the ratio of their pooled medians with its
/// bootstrap interval, and its verdict against `threshold`, or why there is none.
fn speed(
    files: &SweepFiles,
    base: &[usize],
    new: &[usize],
    what: String,
    threshold: f64,
) -> (Option<Effect>, Result<Verdict, String>) {
    let (b, n) = (files.pooled(base), files.pooled(new));
    let (Some(base_ms), Some(new_ms)) = (files.median_ms(base), files.median_ms(new)) else {
        return (None, Err("a side has no repetitions".into()));
    };
    let interval = ratio_of_medians(&b, &n, RESAMPLES);
    let effect = Effect {
        what,
        value: new_ms / base_ms,
        interval,
        unit: "ratio".into(),
    };
    let missed = files
        .missed_target(base)
        .or_else(|| files.missed_target(new));
    // Repetitions pooled over seeds weigh timing jitter only: each seed's own ratio
    // must fall on the verdict's side too.
    let per_seed: Vec<(u32, f64)> = files
        .seed_medians(base)
        .into_iter()
        .filter_map(|(seed, b)| Some((seed, files.seed_medians(new).get(&seed)? / b)))
        .collect();
    let disagreeing = |verdict: Verdict| {
        per_seed.iter().find(|&&(_, ratio)| {
            Verdict::of((ratio, ratio), Band::around_one(threshold)) != verdict
        })
    };
    let verdict = match (missed, interval) {
        (Some(why), _) => Err(format!("no speed verdict: {why}")),
        (None, None) => Err("no speed verdict: no interval".into()),
        (None, Some(i)) => {
            let verdict = Verdict::of(i, Band::around_one(threshold));
            match (verdict, disagreeing(verdict)) {
                (Verdict::Unclear | Verdict::Different, _) | (_, None) => Ok(verdict),
                (_, Some((seed, ratio))) => Err(format!(
                    "no speed verdict: the pooled ratio is {}, but seed {seed}'s alone is {}",
                    verdict.as_time(),
                    readable_number(*ratio)
                )),
            }
        }
    };
    (Some(effect), verdict)
}

/// The mean of `values`, 0 for none.
fn mean_or_zero(values: &[f64]) -> f64 {
    match values.len() {
        0 => 0.0,
        _ => Summary::of(values).mean,
    }
}

/// The seeds' paired ratios of `column`, new over base.
fn paired_ratios(files: &SweepFiles, base: &[usize], new: &[usize], column: &str) -> Vec<f64> {
    let (b, n) = (files.by_seed(base, column), files.by_seed(new, column));
    b.iter()
        .filter_map(|(seed, &bv)| Some(n.get(seed)? / bv))
        .filter(|r| r.is_finite())
        .collect()
}

/// The erosion check of `new` against `base` (net change, paired by seed).
fn erosion(files: &SweepFiles, base: &[usize], new: &[usize]) -> Option<ErosionCheck> {
    let ratios = paired_ratios(files, base, new, "total_height_change");
    if ratios.is_empty() {
        return None;
    }
    let summary = Summary::of(&ratios);
    let interval = summary.mean_interval(0.90);
    let (margin, _) = margin_of("total_change");
    let verdict = match interval {
        Some((low, high)) if low >= 1.0 - margin && high <= 1.0 + margin => "same",
        Some((low, high)) if high < 1.0 - margin || low > 1.0 + margin => "different",
        _ => "inconclusive",
    };
    Some(ErosionCheck {
        ratio: summary.mean,
        interval,
        margin,
        verdict: verdict.into(),
    })
}

/// What a speed claim comes to: faster (and stable) holds.
fn faster_verdict(
    verdict: &Result<Verdict, String>,
    stable: Option<bool>,
    new: &str,
) -> (ClaimVerdict, String) {
    match verdict {
        Err(why) => (ClaimVerdict::Inconclusive, why.clone()),
        Ok(Verdict::Lower) if stable == Some(false) => (
            ClaimVerdict::DoesNotHold,
            format!("{new} is faster, but only by running unstable"),
        ),
        Ok(Verdict::Lower) => (
            ClaimVerdict::Holds,
            format!("{new} is faster beyond the noise threshold"),
        ),
        Ok(Verdict::Same) => (
            ClaimVerdict::DoesNotHold,
            format!("{new} is the same speed, within the noise threshold"),
        ),
        Ok(Verdict::Higher) => (ClaimVerdict::DoesNotHold, format!("{new} is slower")),
        Ok(Verdict::Unclear | Verdict::Different) => (
            ClaimVerdict::Inconclusive,
            "the interval reaches both within and beyond the noise threshold".into(),
        ),
    }
}

/// The sweeps' files the claims read, by sweep.
pub struct Evidence<'a> {
    pub sweeps: BTreeMap<&'static str, SweepFiles>,
    /// strategies.csv of the grid claim.
    pub strategies: &'a Table,
    /// The noise threshold, relative.
    pub threshold: f64,
}

impl Evidence<'_> {
    fn sweep(&self, plan: &SweepPlan) -> &SweepFiles {
        &self.sweeps[plan.name]
    }

    pub fn judge(&self, claim: &Claim) -> ClaimResult {
        let mut result = ClaimResult {
            id: claim.id.into(),
            topic: claim.topic.into(),
            paper: claim.paper.into(),
            tested: claim.tested.into(),
            verdict: ClaimVerdict::Inconclusive,
            why: String::new(),
            effect: None,
            stable: None,
            erosion: None,
            figures: Vec::new(),
        };
        match (claim.id, claim.measured_by) {
            ("workgroup", _) => self.workgroup(&mut result),
            ("batching", _) => self.batching(&mut result),
            ("stagger-collisions", _) => self.stagger_collisions(&mut result),
            ("stagger-speed", _) => self.stagger_speed(&mut result),
            ("atomics-deterministic", _) => self.deterministic(&mut result),
            ("atomics-races", _) => self.races(&mut result),
            (_, Measurement::Strategies) => self.grid(&mut result),
            (id, _) => result.why = format!("no judgement for claim {id}"),
        }
        if result
            .erosion
            .as_ref()
            .is_some_and(|e| e.verdict == "different")
        {
            result.why +=
                "; it erodes differently from its base, so the two speeds are of different answers";
        }
        result
    }

    fn workgroup(&self, r: &mut ClaimResult) {
        let files = self.sweep(&WORKGROUP);
        let base = files.rows(&[("workgroup", "64")]);
        let all: Vec<usize> = (0..files.table.rows.len()).collect();
        let sizes: Vec<String> = files
            .distinct(&all, "workgroup")
            .into_iter()
            .filter(|w| w != "64")
            .collect();
        // The fastest stable one: a workgroup that is faster by blowing up refutes nothing.
        let fastest = sizes
            .iter()
            .filter_map(|w| {
                let rows = files.rows(&[("workgroup", w)]);
                let unstable = files.stable(&rows) == Some(false);
                Some((w, unstable, files.median_ms(&rows)?))
            })
            .min_by(|a, b| a.1.cmp(&b.1).then(a.2.total_cmp(&b.2)))
            .map(|(w, _, ms)| (w, ms));
        let Some((best, _)) = fastest else {
            r.why = "the sweep has no workgroup but 64".into();
            return;
        };
        for w in &sizes {
            let rows = files.rows(&[("workgroup", w)]);
            if let (Some(ms), Some(base_ms)) = (files.median_ms(&rows), files.median_ms(&base)) {
                r.figures.push((
                    format!("GPU time at workgroup {w} / at 64"),
                    readable_number(ms / base_ms),
                ));
            }
        }
        let new = files.rows(&[("workgroup", best)]);
        let (effect, verdict) = speed(
            files,
            &base,
            &new,
            format!(
                "GPU time at workgroup {best} (the fastest other, stable where one is) / at 64"
            ),
            self.threshold,
        );
        r.effect = effect;
        r.stable = files.stable(&new);
        r.erosion = erosion(files, &base, &new);
        (r.verdict, r.why) = match verdict {
            Err(why) => (ClaimVerdict::Inconclusive, why),
            Ok(Verdict::Lower) => (ClaimVerdict::DoesNotHold, format!("workgroup {best} is faster than 64 beyond the noise threshold")),
            Ok(Verdict::Same | Verdict::Higher) => (ClaimVerdict::Holds, format!("no workgroup is faster than 64 beyond the noise threshold (the fastest other: {best})")),
            Ok(Verdict::Unclear | Verdict::Different) => (ClaimVerdict::Inconclusive, format!("workgroup {best}'s interval reaches both within and beyond the noise threshold")),
        };
    }

    fn batching(&self, r: &mut ClaimResult) {
        let files = self.sweep(&BATCHING);
        let base = files.rows(&[("spawn", "global")]);
        let mut candidates: Vec<(String, Vec<usize>, f64, Option<bool>)> = Vec::new();
        let tiled = files.rows(&[("spawn", "tiled")]);
        for side in files.distinct(&tiled, "tile") {
            let rows = files.rows(&[("spawn", "tiled"), ("tile", &side)]);
            if let (Some(ms), Some(base_ms)) = (files.median_ms(&rows), files.median_ms(&base)) {
                let stable = files.stable(&rows);
                r.figures.push((
                    format!("GPU time with {side}² tiles / global"),
                    format!(
                        "{}{}",
                        readable_number(ms / base_ms),
                        if stable == Some(false) {
                            " (unstable)"
                        } else {
                            ""
                        }
                    ),
                ));
                candidates.push((side, rows, ms, stable));
            }
        }
        // The fastest stable tile, else the fastest.
        candidates.sort_by(|a, b| {
            (a.3 == Some(false))
                .cmp(&(b.3 == Some(false)))
                .then(a.2.total_cmp(&b.2))
        });
        let Some((side, new, _, stable)) = candidates.into_iter().next() else {
            r.why = "the sweep has no tiled points".into();
            return;
        };
        let (effect, verdict) = speed(
            files,
            &base,
            &new,
            format!("GPU time with {side}² tiles / with global spawning"),
            self.threshold,
        );
        r.effect = effect;
        r.stable = stable;
        r.erosion = erosion(files, &base, &new);
        (r.verdict, r.why) =
            faster_verdict(&verdict, stable, &format!("spawning in {side}² tiles"));
    }

    fn stagger_rows(&self) -> (&SweepFiles, Vec<usize>, Vec<usize>) {
        let files = self.sweep(&STAGGER);
        (
            files,
            files.rows(&[("stagger", "off")]),
            files.rows(&[("stagger", "on")]),
        )
    }

    fn stagger_speed(&self, r: &mut ClaimResult) {
        let (files, off, on) = self.stagger_rows();
        let (effect, verdict) = speed(
            files,
            &off,
            &on,
            "GPU time of 2 passes staggered / unstaggered".into(),
            self.threshold,
        );
        r.effect = effect;
        r.stable = files.stable(&on);
        r.erosion = erosion(files, &off, &on);
        (r.verdict, r.why) = faster_verdict(&verdict, r.stable, "staggered dispatch");
    }

    fn stagger_collisions(&self, r: &mut ClaimResult) {
        let (files, off, on) = self.stagger_rows();
        let column = "subgroup_conflicts_per_1000";
        let ratios = paired_ratios(files, &off, &on, column);
        for (name, rows) in [("unstaggered", &off), ("staggered", &on)] {
            let per_seed: Vec<f64> = files.by_seed(rows, column).into_values().collect();
            r.figures.push((
                format!("subgroup conflicts per 1000 atomics, {name}"),
                readable_number(mean_or_zero(&per_seed)),
            ));
        }
        if ratios.is_empty() {
            r.why = "no seed had subgroup conflicts to cut without stagger".into();
            return;
        }
        let summary = Summary::of(&ratios);
        let interval = summary.mean_interval(0.95);
        r.effect = Some(Effect {
            what: "subgroup conflicts per 1000 atomics, staggered / unstaggered (mean over seeds)"
                .into(),
            value: summary.mean,
            interval,
            unit: "ratio".into(),
        });
        (r.verdict, r.why) = match interval {
            Some((_, high)) if high < 1.0 => (
                ClaimVerdict::Holds,
                "staggering cuts the conflicts at every plausible mean".into(),
            ),
            Some((low, _)) if low >= 1.0 => (
                ClaimVerdict::DoesNotHold,
                "staggering does not cut the conflicts".into(),
            ),
            Some(_) => (
                ClaimVerdict::Inconclusive,
                "the interval of the ratio reaches both sides of 1".into(),
            ),
            None => (
                ClaimVerdict::Inconclusive,
                "one seed gives no interval".into(),
            ),
        };
    }

    fn deterministic(&self, r: &mut ClaimResult) {
        let files = self.sweep(&ATOMICS);
        let column = "rerun_cells_differing";
        for mode in ["int", "float", "racy", "deterministic"] {
            let per_seed = files.by_seed(&files.rows(&[("atomics", mode)]), column);
            let text = match per_seed.values().copied().reduce(f64::max) {
                Some(most) => format!("{} (the most over seeds)", readable_number(most)),
                None => "not run (the device lacks it)".into(),
            };
            r.figures
                .push((format!("cells differing between two reruns, {mode}"), text));
        }
        let int = files.rows(&[("atomics", "int")]);
        for mode in ["float", "racy", "deterministic"] {
            let rows = files.rows(&[("atomics", mode)]);
            if let (Some(ms), Some(int_ms)) = (files.median_ms(&rows), files.median_ms(&int)) {
                r.figures.push((
                    format!("GPU time, {mode} / int"),
                    readable_number(ms / int_ms),
                ));
            }
        }
        let differing = files.by_seed(&int, column);
        let Some(most) = differing.values().copied().reduce(f64::max) else {
            r.why = "the sweep's int points have no rerun counts".into();
            return;
        };
        r.effect = Some(Effect {
            what: "cells differing between two reruns of int atomics (the most over seeds)".into(),
            value: most,
            interval: None,
            unit: "cells".into(),
        });
        (r.verdict, r.why) = match most {
            0.0 => (
                ClaimVerdict::Holds,
                format!(
                    "reruns left every cell the same at all {} seeds",
                    differing.len()
                ),
            ),
            _ => (
                ClaimVerdict::DoesNotHold,
                "reruns of the same droplets differ".into(),
            ),
        };
    }

    fn races(&self, r: &mut ClaimResult) {
        let files = self.sweep(&ATOMICS);
        // Each seed's `column` over the net change it intended.
        let share = |mode: &str, column: &str| -> Vec<f64> {
            let rows = files.rows(&[("atomics", mode)]);
            let (part, intended) = (
                files.by_seed(&rows, column),
                files.by_seed(&rows, "mass_intended"),
            );
            part.iter()
                .filter_map(|(seed, &v)| Some(v / intended.get(seed)?.abs()))
                .filter(|v| v.is_finite())
                .collect()
        };
        let (racy, int) = (share("racy", "mass_lost"), share("int", "mass_lost"));
        let truncated = mean_or_zero(&share("int", "mass_truncated"));
        r.figures.push((
            "mass the int fixed point's truncation dropped / the net change intended".into(),
            readable_number(truncated),
        ));
        if racy.is_empty() || int.is_empty() {
            r.why = "the sweep lacks racy or int points".into();
            return;
        }
        let summary = Summary::of(&racy);
        r.effect = Some(Effect {
            what: "mass racy adds lost / the net change intended (mean over seeds)".into(),
            value: summary.mean,
            interval: summary.mean_interval(0.95),
            unit: "ratio".into(),
        });
        let int_lost = int.iter().any(|&v| v != 0.0);
        (r.verdict, r.why) = if int_lost {
            (
                ClaimVerdict::DoesNotHold,
                "int atomics lost mass too".into(),
            )
        } else if racy.iter().all(|&v| v > 0.0) {
            (
                ClaimVerdict::Holds,
                format!(
                    "racy adds lost mass at all {} seeds, int atomics none",
                    racy.len()
                ),
            )
        } else if racy.iter().all(|&v| v == 0.0) {
            (
                ClaimVerdict::DoesNotHold,
                "racy adds lost nothing at this scale".into(),
            )
        } else {
            (
                ClaimVerdict::Inconclusive,
                "racy adds lost mass at some seeds only".into(),
            )
        };
    }

    fn grid(&self, r: &mut ClaimResult) {
        let table = self.strategies;
        let cost = |algorithm: &str| -> BTreeMap<u32, f64> {
            (0..table.rows.len())
                .filter(|&row| table.get(row, "algorithm") == Some(algorithm))
                .filter_map(|row| {
                    let seed = table.number(row, "seed")? as u32;
                    Some((
                        seed,
                        table.number(row, "gpu_ms")? / table.number(row, "eroded_depth")?,
                    ))
                })
                .collect()
        };
        let (droplets, pipes) = (cost("droplets"), cost("pipes"));
        let ratios: Vec<f64> = droplets
            .iter()
            .filter_map(|(seed, &d)| Some(pipes.get(seed)? / d))
            .filter(|v| v.is_finite())
            .collect();
        for (name, costs) in [("droplets", &droplets), ("pipes", &pipes)] {
            let per_seed: Vec<f64> = costs.values().copied().collect();
            r.figures.push((
                format!("GPU ms per height unit of eroded depth, {name}"),
                readable_number(mean_or_zero(&per_seed)),
            ));
        }
        let missed = (0..table.rows.len()).find_map(|row| {
            let reason = table.get(row, "stop_reason")?;
            (reason != StopReason::NoiseTarget.as_str()).then(|| {
                format!(
                    "a {} run stopped at {reason}",
                    table.get(row, "algorithm").unwrap_or("?")
                )
            })
        });
        if ratios.is_empty() {
            r.why = "no seed eroded with both strategies".into();
            return;
        }
        let summary = Summary::of(&ratios);
        let interval = summary.mean_interval(0.95);
        r.effect = Some(Effect {
            what: "GPU time per eroded depth, grid / droplets (mean over seeds)".into(),
            value: summary.mean,
            interval,
            unit: "ratio".into(),
        });
        (r.verdict, r.why) = match (missed, interval) {
            (Some(why), _) => (
                ClaimVerdict::Inconclusive,
                format!("no cost verdict: {why}"),
            ),
            (None, None) => (
                ClaimVerdict::Inconclusive,
                "one seed gives no interval".into(),
            ),
            (None, Some(i)) => match Verdict::of(i, Band::around_one(self.threshold)) {
                Verdict::Lower => (
                    ClaimVerdict::Holds,
                    "the grid erodes for less GPU time".into(),
                ),
                Verdict::Same => (
                    ClaimVerdict::Holds,
                    "the two cost the same within the noise threshold".into(),
                ),
                Verdict::Higher => (
                    ClaimVerdict::DoesNotHold,
                    "the grid costs more GPU time per eroded depth".into(),
                ),
                Verdict::Unclear | Verdict::Different => (
                    ClaimVerdict::Inconclusive,
                    "the interval reaches both within and beyond the noise threshold".into(),
                ),
            },
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: [&str; 9] = [
        "point",
        "worker",
        "workgroup",
        "spawn",
        "tile",
        "droplet_seed",
        "stop_reason",
        "unstable",
        "total_height_change",
    ];

    /// A point: its settings, whether it met its noise target and stayed stable, its
    /// net change, and its repetitions.
    struct Planted<'a> {
        workgroup: &'a str,
        spawn: &'a str,
        tile: &'a str,
        seed: u32,
        met_target: bool,
        unstable: bool,
        net_change: f64,
        times_ms: Vec<f64>,
    }

    fn files(points: &[Planted]) -> SweepFiles {
        let mut table = Table {
            header: HEADER.map(String::from).to_vec(),
            rows: Vec::new(),
        };
        let mut samples = BTreeMap::new();
        for (i, p) in points.iter().enumerate() {
            let stop = match p.met_target {
                true => StopReason::NoiseTarget,
                false => StopReason::MaxReps,
            };
            table.rows.push(vec![
                i.to_string(),
                "0".into(),
                p.workgroup.into(),
                p.spawn.into(),
                p.tile.into(),
                p.seed.to_string(),
                stop.as_str().into(),
                p.unstable.to_string(),
                p.net_change.to_string(),
            ]);
            samples.insert((i, 0), p.times_ms.clone());
        }
        SweepFiles { table, samples }
    }

    /// Repetitions around `ms`, within 0.4%.
    fn around(ms: f64) -> Vec<f64> {
        [0.998, 1.0, 1.002, 0.999, 1.001, 1.004, 0.996]
            .map(|f| f * ms)
            .to_vec()
    }

    fn point<'a>(workgroup: &'a str, seed: u32, ms: f64) -> Planted<'a> {
        Planted {
            workgroup,
            spawn: "global",
            tile: "64",
            seed,
            met_target: true,
            unstable: false,
            net_change: -100.0 - f64::from(seed),
            times_ms: around(ms),
        }
    }

    fn judged(sweep: &'static str, points: Vec<Planted>, claim: &str) -> ClaimResult {
        let empty = Table {
            header: Vec::new(),
            rows: Vec::new(),
        };
        let evidence = Evidence {
            sweeps: BTreeMap::from([(sweep, files(&points))]),
            strategies: &empty,
            threshold: 0.036,
        };
        let claim = super::super::CLAIMS.iter().find(|c| c.id == claim).unwrap();
        evidence.judge(claim)
    }

    #[test]
    fn a_faster_workgroup_than_64_refutes_it_and_one_within_the_noise_does_not() {
        let faster = judged(
            "workgroup",
            vec![
                point("64", 1, 10.0),
                point("64", 2, 10.0),
                point("8", 1, 5.0),
                point("8", 2, 5.0),
            ],
            "workgroup",
        );
        assert_eq!(faster.verdict, ClaimVerdict::DoesNotHold, "{faster:?}");
        let effect = faster.effect.unwrap();
        assert!((effect.value - 0.5).abs() < 0.01, "{effect:?}");
        let (low, high) = effect.interval.unwrap();
        assert!(low <= 0.5 && (0.5..0.51).contains(&high), "{effect:?}");
        // Both seeds' net changes the same: the same erosion, at any margin.
        assert_eq!(faster.erosion.unwrap().verdict, "same");

        let within = judged(
            "workgroup",
            vec![
                point("64", 1, 10.0),
                point("64", 2, 10.0),
                point("8", 1, 9.9),
                point("8", 2, 9.9),
            ],
            "workgroup",
        );
        assert_eq!(within.verdict, ClaimVerdict::Holds, "{within:?}");

        let mut missed = point("8", 2, 5.0);
        missed.met_target = false;
        let unjudged = judged(
            "workgroup",
            vec![
                point("64", 1, 10.0),
                point("64", 2, 10.0),
                point("8", 1, 5.0),
                missed,
            ],
            "workgroup",
        );
        assert_eq!(unjudged.verdict, ClaimVerdict::Inconclusive, "{unjudged:?}");
        assert!(unjudged.why.contains("max-reps"), "{}", unjudged.why);
    }

    #[test]
    fn a_pooled_speed_up_one_seed_does_not_share_has_no_verdict() {
        // Seed 5's workgroup 8 runs no faster than its 64: pooled, 8 still looks faster.
        let mut points: Vec<Planted> = (1..=5).map(|seed| point("64", seed, 10.0)).collect();
        points.extend((1..=4).map(|seed| point("8", seed, 5.0)));
        points.push(point("8", 5, 9.9));
        let split = judged("workgroup", points, "workgroup");
        assert_eq!(split.verdict, ClaimVerdict::Inconclusive, "{split:?}");
        assert!(split.why.contains("seed 5"), "{}", split.why);
    }

    #[test]
    fn batching_holds_only_for_a_faster_tile_that_stays_stable() {
        let tiled = |seed, unstable, net_change| Planted {
            spawn: "tiled",
            tile: "32",
            unstable,
            net_change,
            ..point("64", seed, 7.0)
        };
        let stable = judged(
            "batching",
            vec![
                point("64", 1, 10.0),
                point("64", 2, 10.0),
                tiled(1, false, -101.0),
                tiled(2, false, -102.0),
            ],
            "batching",
        );
        assert_eq!(stable.verdict, ClaimVerdict::Holds, "{stable:?}");
        assert_eq!(stable.stable, Some(true));

        let unstable = judged(
            "batching",
            vec![
                point("64", 1, 10.0),
                point("64", 2, 10.0),
                tiled(1, true, -150.0),
                tiled(2, false, -160.0),
            ],
            "batching",
        );
        assert_eq!(unstable.verdict, ClaimVerdict::DoesNotHold, "{unstable:?}");
        assert!(unstable.why.contains("unstable"), "{}", unstable.why);
        // 1.5 times the base's net change at both seeds: a different erosion.
        assert_eq!(unstable.erosion.unwrap().verdict, "different");
    }
}
