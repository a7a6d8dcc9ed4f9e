//! Each claim judged from its step's files for a draw of seeds: an effect with its
//! interval against the claim's band, read in the direction the claim favours; for a
//! speed claim also the stability of the setting it favours and whether that setting
//! erodes as its base does. One rule judges the seeds run and every bootstrap draw of
//! them, whose share of other judgements is the verdict's fragility.

use std::collections::{BTreeMap, BTreeSet};

use super::evidence::{joined, paired_ratios, Figure, Setting, StepFiles};
use super::outcome::{ClaimResult, ClaimVerdict, Effect, ErosionCheck, FRAGILE_SHARE};
use super::suite::{BandRule, Better, Claim, ClaimKind, Scale, Step, COUNT_MARGIN};
use crate::experiment::results::columns::TOTAL_CHANGE;
use crate::readable_number;
use crate::stats::bootstrap::RESAMPLES;
use crate::stats::{flip_share, ratio_of_medians, Band, Moments, Verdict};
use crate::studies::equivalence::margin_of;

/// Bootstrap draws of the seeds that weigh a verdict's fragility.
pub const FRAGILITY_DRAWS: usize = 200;
/// Seeds a verdict needs for its fragility to be weighed.
pub const FRAGILITY_MIN_SEEDS: usize = 3;
/// Resamples of each draw's ratio of medians (a tenth of a verdict's: the draws
/// themselves carry the seeds' spread).
const FRAGILITY_RESAMPLES: usize = 1_000;

/// The steps' files, and the noise threshold of the speed verdicts.
pub struct Evidence {
    pub steps: BTreeMap<&'static str, StepFiles>,
    /// Relative: 0.036 is 3.6%.
    pub threshold: f64,
}

/// An estimate with its 95% interval, where it has one.
type Estimate = (f64, Option<(f64, f64)>);

/// One judgement of a claim on one draw of seeds.
#[derive(Clone, Debug, Default)]
struct Judged {
    verdict: Option<ClaimVerdict>,
    interval_verdict: Option<Verdict>,
    why: String,
    effect: Option<Estimate>,
    /// The setting the effect is of, where the claim picks one ("workgroup 8").
    chosen: Option<String>,
    stable: Option<bool>,
    erosion: Option<ErosionCheck>,
    figures: Vec<(String, String)>,
}

impl Judged {
    /// What a draw is compared by.
    fn key(&self) -> (Option<ClaimVerdict>, Option<Verdict>) {
        (self.verdict, self.interval_verdict)
    }
}

/// What a paper claim's interval comes to, read in the direction it favours.
fn reading(better: Better, interval_verdict: Verdict) -> ClaimVerdict {
    match (better, interval_verdict) {
        (Better::Lower, Verdict::Lower) | (Better::Higher, Verdict::Higher) => ClaimVerdict::Holds,
        (_, Verdict::Same | Verdict::Lower | Verdict::Higher) => ClaimVerdict::DoesNotHold,
        (_, Verdict::Unclear | Verdict::Different) => ClaimVerdict::Inconclusive,
    }
}

/// "faster", "the same speed" or "slower" of a ratio of times.
fn speed_words(v: Verdict) -> &'static str {
    match v {
        Verdict::Lower => "faster beyond the noise threshold",
        Verdict::Higher => "slower beyond the noise threshold",
        Verdict::Same => "the same speed within the noise threshold",
        Verdict::Unclear | Verdict::Different => {
            "neither: its interval reaches both within and beyond the noise threshold"
        }
    }
}

/// The mean over seeds with its 95% Student interval, where there are two seeds or more.
fn over_seeds(values: &[f64]) -> Estimate {
    let m = Moments::of(values);
    (m.mean, m.mean_interval(0.95))
}

/// Two sides' values per seed, each's mean as a figure (`figure` names it), and the
/// mean over seeds of their paired ratios (the second over the first) as the effect:
/// its interval, or none (`j.why` then says why).
fn paired_effect(
    j: &mut Judged,
    sides: [(&str, &[(u32, f64)]); 2],
    figure: impl Fn(&str) -> String,
    no_pair: &str,
) -> Option<(f64, f64)> {
    for (name, per_seed) in sides {
        let values: Vec<f64> = per_seed.iter().map(|(_, v)| *v).collect();
        j.figures
            .push((figure(name), readable_number(Moments::of(&values).mean)));
    }
    let ratios: Vec<f64> = paired_ratios(sides[0].1, sides[1].1)
        .into_iter()
        .map(|(_, r)| r)
        .collect();
    if ratios.is_empty() {
        j.why = no_pair.into();
        return None;
    }
    let (mean, interval) = over_seeds(&ratios);
    j.effect = Some((mean, interval));
    if interval.is_none() {
        j.why = "one seed gives no interval".into();
    }
    interval
}

impl Evidence {
    fn band(&self, claim: &Claim) -> Option<Band> {
        match claim.band {
            BandRule::NoiseThreshold => Some(Band::around_one(self.threshold)),
            BandRule::CountMargin => Some(Band::around_one(COUNT_MARGIN)),
            BandRule::Zero => Some(Band::around(0.0, 0.0)),
            BandRule::Exact => None,
        }
    }

    fn files(&self, step: Step) -> Option<&StepFiles> {
        self.steps.get(step.name())
    }

    /// How `step` measured, as its files say: grid runs that record no sea
    /// (`base_level`) were measured before the grid's method changed.
    fn method(&self, step: Step) -> &'static str {
        match self.files(step) {
            Some(files) if step == Step::Grid && !files.records_base_level() => "",
            _ => step.method(),
        }
    }

    /// The seeds `claim`'s step ran.
    pub fn seeds(&self, claim: &Claim) -> Vec<u32> {
        self.files(claim.step).map_or(Vec::new(), StepFiles::seeds)
    }

    /// `claim`'s outcome at `scale`: judged on every seed run, its fragility weighed
    /// over bootstrap draws of them.
    pub fn result(&self, claim: &Claim, scale: Scale) -> ClaimResult {
        let seeds = self.seeds(claim);
        let band = self.band(claim);
        let mut judged = match self.files(claim.step) {
            Some(_) if !seeds.is_empty() => self.judge(claim, &seeds, RESAMPLES),
            _ => Judged {
                verdict: Some(ClaimVerdict::NotMeasured),
                why: "not measured: the budget ran out before its step".into(),
                ..Judged::default()
            },
        };
        // A draw of one seed, repeated, has no spread over seeds to weigh: it is left
        // out; with two seeds every other draw is the seeds themselves, so fragility is
        // weighed from three.
        let flip = (seeds.len() >= FRAGILITY_MIN_SEEDS)
            .then(|| {
                flip_share(seeds.len(), FRAGILITY_DRAWS, &judged.key(), |draw| {
                    let distinct: BTreeSet<usize> = draw.iter().copied().collect();
                    (distinct.len() >= 2).then(|| {
                        let drawn: Vec<u32> = draw.iter().map(|&i| seeds[i]).collect();
                        self.judge(claim, &drawn, FRAGILITY_RESAMPLES).key()
                    })
                })
            })
            .flatten();
        let fragile = flip.is_some_and(|f| f > FRAGILE_SHARE);
        if fragile {
            judged.why += &format!(
                "; fragile: {}% of bootstrap draws of its {} seeds judge it otherwise",
                readable_number(flip.unwrap_or(0.0) * 100.0),
                seeds.len()
            );
        }
        if judged.erosion.as_ref().is_some_and(|e| e.verdict.differs()) {
            judged.why +=
                "; it erodes differently from its base, so the two speeds are of different answers";
        }
        let what = match &judged.chosen {
            Some(chosen) => format!("{} ({chosen})", claim.effect.what),
            None => claim.effect.what.to_string(),
        };
        ClaimResult {
            id: claim.id.into(),
            topic: claim.topic.into(),
            paper: claim.paper.into(),
            tested: claim.tested.into(),
            kind: claim.kind,
            verdict: judged.verdict.unwrap_or(ClaimVerdict::Inconclusive),
            interval_verdict: judged.interval_verdict,
            band,
            why: judged.why,
            effect: judged.effect.map(|(value, interval)| Effect {
                what,
                value,
                interval,
                unit: claim.effect.unit.into(),
                better: claim.effect.better,
            }),
            scale,
            seeds,
            flip_share: flip,
            fragile,
            stable: judged.stable,
            erosion: judged.erosion,
            figures: judged.figures,
            method: self.method(claim.step).into(),
        }
    }

    /// `claim` on the seeds of `draw`, with `resamples` for a ratio of medians.
    fn judge(&self, claim: &Claim, draw: &[u32], resamples: usize) -> Judged {
        let Some(files) = self.files(claim.step) else {
            return Judged::default();
        };
        let band = self.band(claim);
        let mut judged = match claim.id {
            "workgroup" => self.workgroup(files, draw, resamples),
            "batching" => self.batching(files, draw, resamples),
            "stagger-speed" => self.stagger_speed(files, draw, resamples),
            "stagger-collisions" => stagger_collisions(files, draw, band),
            "atomics-deterministic" => deterministic(files, draw),
            "atomics-races" => races(files, draw, band),
            "grid" => grid(files, draw, band),
            id => Judged {
                why: format!("no judgement for claim {id}"),
                ..Judged::default()
            },
        };
        if judged.verdict.is_none() {
            judged.verdict = Some(match (claim.kind, judged.interval_verdict) {
                (ClaimKind::Context, _) => ClaimVerdict::Context,
                (ClaimKind::Paper, Some(s)) => reading(claim.effect.better, s),
                (ClaimKind::Paper, None) => ClaimVerdict::Inconclusive,
            });
        }
        judged
    }

    /// The speed of `new` against `base` on `draw`: the ratio of their pooled medians
    /// with its bootstrap interval, and its verdict, or why there is none.
    fn speed(
        &self,
        files: &StepFiles,
        base: &[usize],
        new: &[usize],
        draw: &[u32],
        resamples: usize,
    ) -> (Option<Estimate>, Result<Verdict, NoSpeedVerdict>) {
        let (base, new) = (files.drawn(base, draw), files.drawn(new, draw));
        let (Some(base_ms), Some(new_ms)) = (files.median_ms(&base), files.median_ms(&new)) else {
            return (None, Err(NoSpeedVerdict::NoRepetitions));
        };
        let interval = ratio_of_medians(&files.pooled(&base), &files.pooled(&new), resamples);
        let effect = Some((new_ms / base_ms, interval));
        let band = Band::around_one(self.threshold);
        if let Some(why) = files.unweighable(&base).or_else(|| files.unweighable(&new)) {
            return (effect, Err(NoSpeedVerdict::Unweighable(why)));
        }
        let Some(interval) = interval else {
            return (effect, Err(NoSpeedVerdict::NoInterval));
        };
        let verdict = Verdict::of(interval, band);
        // Repetitions pooled over seeds weigh timing jitter only: each seed's own ratio
        // must fall on the verdict's side too.
        let ratios = paired_ratios(
            &files.seed_medians(&base, draw),
            &files.seed_medians(&new, draw),
        );
        let disagreeing = ratios
            .iter()
            .find(|(_, r)| Verdict::of((*r, *r), band) != verdict)
            .map(|(seed, r)| (r, seed));
        match (verdict, disagreeing) {
            (Verdict::Unclear, _) | (_, None) => (effect, Ok(verdict)),
            (_, Some((&ratio, &seed))) => (
                effect,
                Err(NoSpeedVerdict::SeedDisagrees {
                    pooled: verdict,
                    seed,
                    ratio,
                }),
            ),
        }
    }

    fn workgroup(&self, files: &StepFiles, draw: &[u32], resamples: usize) -> Judged {
        let mut j = Judged::default();
        let base = files.rows(&[(Setting::Workgroup, "64")]);
        let mut sizes: Vec<String> = files
            .distinct(&files.rows(&[]), Setting::Workgroup)
            .into_iter()
            .filter(|w| w != "64")
            .collect();
        sizes.sort_by_key(|w| w.parse::<u32>().unwrap_or(u32::MAX));
        let base_ms = files.median_ms(&files.drawn(&base, draw));
        // The fastest stable one: a workgroup that is faster by blowing up says nothing.
        let mut fastest: Option<(String, bool, f64)> = None;
        for w in &sizes {
            let rows = files.rows(&[(Setting::Workgroup, w)]);
            let Some(ms) = files.median_ms(&files.drawn(&rows, draw)) else {
                continue;
            };
            let unstable = files.stable(&rows) == Some(false);
            if let Some(base_ms) = base_ms {
                j.figures.push((
                    format!("GPU time at workgroup {w} / at 64"),
                    readable_number(ms / base_ms),
                ));
            }
            let better = fastest
                .as_ref()
                .is_none_or(|(_, u, best)| (unstable, ms) < (*u, *best));
            if better {
                fastest = Some((w.clone(), unstable, ms));
            }
        }
        let Some((best, _, _)) = fastest else {
            j.why = "the sweep has no workgroup but 64".into();
            return j;
        };
        let new = files.rows(&[(Setting::Workgroup, &best)]);
        let (effect, verdict) = self.speed(files, &base, &new, draw, resamples);
        j.effect = effect;
        j.chosen = Some(format!("workgroup {best}"));
        j.stable = files.stable(&new);
        j.erosion = erosion(files, &base, &new, draw);
        (j.interval_verdict, j.why) = match verdict {
            Ok(v) => (
                Some(v),
                match v {
                    Verdict::Lower => format!(
                        "workgroup {best} is faster than 64 beyond the noise threshold"
                    ),
                    Verdict::Higher => format!(
                        "every other workgroup is slower than 64 beyond the noise threshold (the fastest: {best})"
                    ),
                    Verdict::Same => format!(
                        "no workgroup is faster than 64 beyond the noise threshold (the fastest other, {best}, runs at its speed)"
                    ),
                    Verdict::Unclear | Verdict::Different => format!(
                        "workgroup {best}'s interval reaches both within and beyond the noise threshold"
                    ),
                },
            ),
            Err(why) => (None, why.to_string()),
        };
        j
    }

    fn batching(&self, files: &StepFiles, draw: &[u32], resamples: usize) -> Judged {
        let mut j = Judged::default();
        let base = files.rows(&[(Setting::Spawn, "global")]);
        let base_ms = files.median_ms(&files.drawn(&base, draw));
        let tiled = files.rows(&[(Setting::Spawn, "tiled")]);
        let mut candidates: Vec<(String, Vec<usize>, f64, Option<bool>)> = Vec::new();
        for side in files.distinct(&tiled, Setting::Tile) {
            let rows = files.rows(&[(Setting::Spawn, "tiled"), (Setting::Tile, &side)]);
            let (Some(ms), Some(base_ms)) = (files.median_ms(&files.drawn(&rows, draw)), base_ms)
            else {
                continue;
            };
            let stable = files.stable(&rows);
            let unstable = if stable == Some(false) {
                " (unstable)"
            } else {
                ""
            };
            j.figures.push((
                format!("GPU time with {side}² tiles / global"),
                format!("{}{unstable}", readable_number(ms / base_ms)),
            ));
            candidates.push((side, rows, ms, stable));
        }
        // The fastest stable tile, else the fastest.
        candidates.sort_by(|a, b| {
            (a.3 == Some(false))
                .cmp(&(b.3 == Some(false)))
                .then(a.2.total_cmp(&b.2))
        });
        let Some((side, new, _, stable)) = candidates.into_iter().next() else {
            j.why = "the sweep has no tiled points".into();
            return j;
        };
        let (effect, verdict) = self.speed(files, &base, &new, draw, resamples);
        j.effect = effect;
        j.chosen = Some(format!("{side}² tiles"));
        j.stable = stable;
        j.erosion = erosion(files, &base, &new, draw);
        faster_claim(&mut j, verdict, &format!("spawning in {side}² tiles"));
        j
    }

    fn stagger_speed(&self, files: &StepFiles, draw: &[u32], resamples: usize) -> Judged {
        let mut j = Judged::default();
        let (off, on) = (
            files.rows(&[(Setting::Stagger, "off")]),
            files.rows(&[(Setting::Stagger, "on")]),
        );
        let (effect, verdict) = self.speed(files, &off, &on, draw, resamples);
        j.effect = effect;
        j.stable = files.stable(&on);
        j.erosion = erosion(files, &off, &on, draw);
        faster_claim(&mut j, verdict, "staggered dispatch");
        j
    }
}

/// Why a speed comparison gives no verdict; its words are the claim's "why".
#[derive(Debug, thiserror::Error)]
pub enum NoSpeedVerdict {
    #[error("a side has no repetitions")]
    NoRepetitions,
    /// A point's timing could not be weighed (stopped before its noise target, …).
    #[error("no speed verdict: {0}")]
    Unweighable(String),
    #[error("no speed verdict: no interval")]
    NoInterval,
    /// The pooled ratio's side is not every seed's own.
    #[error(
        "no speed verdict: the pooled ratio is {}, but seed {seed}'s alone is {}",
        pooled.as_time(),
        readable_number(*ratio)
    )]
    SeedDisagrees {
        pooled: Verdict,
        seed: u32,
        ratio: f64,
    },
}

/// A claim that `new` is faster: its interval's verdict and why; faster by running unstable
/// does not hold.
fn faster_claim(j: &mut Judged, verdict: Result<Verdict, NoSpeedVerdict>, new: &str) {
    match verdict {
        Err(why) => j.why = why.to_string(),
        Ok(v) => {
            j.interval_verdict = Some(v);
            j.why = format!("{new} is {}", speed_words(v));
            if v == Verdict::Lower && j.stable == Some(false) {
                j.verdict = Some(ClaimVerdict::DoesNotHold);
                j.why = format!("{new} is faster, but only by running unstable");
            }
        }
    }
}

/// The erosion check of `new` against `base` on `draw` (net change, paired by seed).
fn erosion(files: &StepFiles, base: &[usize], new: &[usize], draw: &[u32]) -> Option<ErosionCheck> {
    let column = Figure::TotalHeightChange;
    let ratios: Vec<f64> = paired_ratios(
        &files.per_seed(base, column, draw),
        &files.per_seed(new, column, draw),
    )
    .into_iter()
    .map(|(_, r)| r)
    .collect();
    if ratios.is_empty() {
        return None;
    }
    let moments = Moments::of(&ratios);
    let interval = moments.mean_interval(0.90);
    let (margin, _) = margin_of(TOTAL_CHANGE.0);
    Some(ErosionCheck {
        ratio: moments.mean,
        interval,
        margin,
        verdict: interval.map_or(Verdict::Unclear, |i| {
            Verdict::of(i, Band::around_one(margin))
        }),
    })
}

fn stagger_collisions(files: &StepFiles, draw: &[u32], band: Option<Band>) -> Judged {
    let mut j = Judged::default();
    let column = Figure::SubgroupConflicts;
    let (off, on) = (
        files.rows(&[(Setting::Stagger, "off")]),
        files.rows(&[(Setting::Stagger, "on")]),
    );
    let (off_seeds, on_seeds) = (
        files.per_seed(&off, column, draw),
        files.per_seed(&on, column, draw),
    );
    let interval = paired_effect(
        &mut j,
        [("unstaggered", &off_seeds), ("staggered", &on_seeds)],
        |name| format!("subgroup conflicts per 1000 atomics, {name} (mean over seeds)"),
        "no seed had subgroup conflicts to cut without stagger",
    );
    let (Some(interval), Some(band)) = (interval, band) else {
        return j;
    };
    let v = Verdict::of(interval, band);
    j.interval_verdict = Some(v);
    let margin = readable_number(COUNT_MARGIN * 100.0);
    j.why = match v {
        Verdict::Lower => {
            format!("staggering cuts the conflicts by more than {margin}% at every plausible mean")
        }
        Verdict::Same => format!("staggering changes the conflicts by less than {margin}%"),
        Verdict::Higher => "staggering raises the conflicts".into(),
        Verdict::Unclear | Verdict::Different => {
            format!("the interval of the ratio reaches both within and beyond 1 ± {margin}%")
        }
    };
    j
}

fn deterministic(files: &StepFiles, draw: &[u32]) -> Judged {
    let mut j = Judged::default();
    let column = Figure::RerunCellsDiffering;
    for mode in ["int", "float", "racy", "deterministic"] {
        let per_seed = files.per_seed(&files.rows(&[(Setting::Atomics, mode)]), column, draw);
        let text = match per_seed.iter().map(|(_, v)| *v).reduce(f64::max) {
            Some(most) => format!("{} (the most over seeds)", readable_number(most)),
            None => "not run (the device lacks it)".into(),
        };
        j.figures
            .push((format!("cells differing between two reruns, {mode}"), text));
    }
    let int = files.rows(&[(Setting::Atomics, "int")]);
    for mode in ["float", "racy", "deterministic"] {
        let rows = files.drawn(&files.rows(&[(Setting::Atomics, mode)]), draw);
        let int_rows = files.drawn(&int, draw);
        if let (Some(ms), Some(int_ms)) = (files.median_ms(&rows), files.median_ms(&int_rows)) {
            j.figures.push((
                format!("GPU time, {mode} / int"),
                readable_number(ms / int_ms),
            ));
        }
    }
    let differing = files.per_seed(&int, column, draw);
    let Some(most) = differing.iter().map(|(_, v)| *v).reduce(f64::max) else {
        j.why = "the sweep's int points have no rerun counts".into();
        return j;
    };
    j.effect = Some((most, None));
    (j.verdict, j.why) = match most {
        0.0 => (
            Some(ClaimVerdict::Holds),
            format!(
                "reruns left every cell the same at all {} seeds",
                differing.len()
            ),
        ),
        _ => (
            Some(ClaimVerdict::DoesNotHold),
            "reruns of the same droplets differ".into(),
        ),
    };
    j
}

fn races(files: &StepFiles, draw: &[u32], band: Option<Band>) -> Judged {
    let mut j = Judged::default();
    // Each seed's `column` over the net change it intended.
    let share = |mode: &str, column: Figure| -> Vec<f64> {
        let rows = files.rows(&[(Setting::Atomics, mode)]);
        let intended = files.per_seed(&rows, Figure::MassIntended, draw);
        joined(&files.per_seed(&rows, column, draw), &intended)
            .into_iter()
            .map(|(_, v, i)| v / i.abs())
            .filter(|v| v.is_finite())
            .collect()
    };
    let (racy, int) = (
        share("racy", Figure::MassLost),
        share("int", Figure::MassLost),
    );
    j.figures.push((
        "mass the int fixed point's truncation dropped / the net change intended (mean over seeds)"
            .into(),
        readable_number(Moments::of(&share("int", Figure::MassTruncated)).mean),
    ));
    if racy.is_empty() || int.is_empty() {
        j.why = "the sweep lacks racy or int points".into();
        return j;
    }
    let (mean, interval) = over_seeds(&racy);
    j.effect = Some((mean, interval));
    if int.iter().any(|&v| v != 0.0) {
        j.verdict = Some(ClaimVerdict::DoesNotHold);
        j.why = "int atomics lost mass too".into();
        return j;
    }
    let (Some(interval), Some(band)) = (interval, band) else {
        j.why = "one seed gives no interval".into();
        return j;
    };
    let v = Verdict::of(interval, band);
    j.interval_verdict = Some(v);
    j.why = match v {
        Verdict::Higher => format!(
            "racy adds lost mass (the interval over {} seeds lies above 0), int atomics none",
            racy.len()
        ),
        Verdict::Same => "racy adds lost nothing at this scale".into(),
        _ => "the interval of racy adds' loss reaches 0".into(),
    };
    j
}

fn grid(files: &StepFiles, draw: &[u32], band: Option<Band>) -> Judged {
    let mut j = Judged::default();
    let cost = |algorithm: &str| -> Vec<(u32, f64)> {
        let rows = files.rows(&[(Setting::Algorithm, algorithm)]);
        let depth = files.per_seed(&rows, Figure::ErodedDepth, draw);
        joined(&files.per_seed(&rows, Figure::GpuMs, draw), &depth)
            .into_iter()
            .map(|(seed, ms, depth)| (seed, ms / depth))
            .collect()
    };
    let (droplets, pipes) = (cost("droplets"), cost("pipes"));
    let interval = paired_effect(
        &mut j,
        [("droplets", &droplets), ("pipes", &pipes)],
        |name| format!("GPU ms per height unit of eroded depth, {name} (mean over seeds)"),
        "no seed eroded with both strategies",
    );
    // The cost is weighed over seeds, whose spread dwarfs a long run's timing noise: a
    // run needs no noise target of its own.
    if let (Some(interval), Some(band)) = (interval, band) {
        let v = Verdict::of(interval, band);
        j.interval_verdict = Some(v);
        j.why = match v {
            Verdict::Lower => "the grid erodes for less GPU time beyond the noise threshold",
            Verdict::Same => "the two cost the same within the noise threshold",
            Verdict::Higher => {
                "the grid costs more GPU time per eroded depth beyond the noise threshold"
            }
            Verdict::Unclear | Verdict::Different => {
                "the interval reaches both within and beyond the noise threshold"
            }
        }
        .into();
    }
    j
}

#[cfg(test)]
mod tests {
    use super::super::evidence::planted::{files, Row};
    use super::super::suite::{claim, CLAIMS};
    use super::*;
    use crate::experiment::results::StopReason;

    /// A point of the workgroup or batching sweep: its settings, whether it met its
    /// noise target and stayed stable, its net change, and its repetitions.
    struct Point<'a> {
        workgroup: &'a str,
        spawn: &'a str,
        tile: &'a str,
        seed: u32,
        met_target: bool,
        unstable: bool,
        net_change: f64,
        times_ms: Vec<f64>,
    }

    /// Twelve repetitions around `ms`, within 0.4%.
    fn around(ms: f64) -> Vec<f64> {
        [
            0.998, 1.0, 1.002, 0.999, 1.001, 1.004, 0.996, 1.0, 0.999, 1.001, 1.0, 0.998,
        ]
        .map(|f| f * ms)
        .to_vec()
    }

    fn point<'a>(workgroup: &'a str, seed: u32, ms: f64) -> Point<'a> {
        Point {
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

    fn judged(step: &'static str, points: Vec<Point>, id: &str) -> ClaimResult {
        let rows: Vec<Row> = points
            .iter()
            .map(|p| Row {
                settings: vec![
                    ("workgroup", p.workgroup.into()),
                    ("spawn", p.spawn.into()),
                    ("tile", p.tile.into()),
                    (
                        "stop_reason",
                        match p.met_target {
                            true => StopReason::NoiseTarget,
                            false => StopReason::MaxReps,
                        }
                        .as_str()
                        .into(),
                    ),
                    ("unstable", p.unstable.to_string()),
                    ("total_height_change", p.net_change.to_string()),
                ],
                seed: p.seed,
                times_ms: p.times_ms.clone(),
            })
            .collect();
        let evidence = Evidence {
            steps: BTreeMap::from([(step, files(&rows))]),
            threshold: 0.036,
        };
        evidence.result(claim(id).unwrap(), Scale::at(1024))
    }

    #[test]
    fn every_claim_has_a_judgement() {
        let evidence = Evidence {
            steps: BTreeMap::new(),
            threshold: 0.036,
        };
        for c in CLAIMS {
            let files = files(&[]);
            let judged = Evidence {
                steps: BTreeMap::from([(c.step.name(), files)]),
                ..evidence
            }
            .judge(c, &[1], RESAMPLES);
            assert!(!judged.why.starts_with("no judgement"), "{}", c.id);
            let missing = Evidence {
                steps: BTreeMap::new(),
                threshold: 0.036,
            }
            .result(c, Scale::at(64));
            assert_eq!(missing.verdict, ClaimVerdict::NotMeasured, "{}", c.id);
        }
    }

    #[test]
    fn a_faster_workgroup_is_context_and_never_a_verdict() {
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
        assert_eq!(faster.verdict, ClaimVerdict::Context, "{faster:?}");
        assert_eq!(faster.interval_verdict, Some(Verdict::Lower));
        let effect = faster.effect.unwrap();
        assert!((effect.value - 0.5).abs() < 0.01, "{effect:?}");
        assert!(
            effect.text().ends_with("(ratio; lower is better)"),
            "{}",
            effect.text()
        );
        assert!(effect.what.ends_with("(workgroup 8)"), "{}", effect.what);
        // Both seeds' net changes the same: the same erosion, at any margin.
        assert_eq!(faster.erosion.unwrap().verdict, Verdict::Same);
        assert_eq!(faster.seeds, [1, 2]);
        assert!(!faster.fragile, "both seeds agree: {:?}", faster.flip_share);

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
        assert_eq!(unjudged.interval_verdict, None, "{unjudged:?}");
        assert!(unjudged.why.contains("max-reps"), "{}", unjudged.why);
    }

    #[test]
    fn too_few_repetitions_give_no_speed_verdict() {
        let mut few = point("8", 2, 5.0);
        few.times_ms.truncate(5);
        let judged = judged(
            "workgroup",
            vec![
                point("64", 1, 10.0),
                point("64", 2, 10.0),
                point("8", 1, 5.0),
                few,
            ],
            "workgroup",
        );
        assert_eq!(judged.interval_verdict, None, "{judged:?}");
        assert!(judged.why.contains("ran 5 repetitions"), "{}", judged.why);
    }

    #[test]
    fn a_pooled_speed_up_one_seed_does_not_share_is_unjudged_and_fragile() {
        // Seed 5's tiles run no faster than global: pooled, the tiles still look faster.
        let tiled = |seed, ms| Point {
            spawn: "tiled",
            tile: "32",
            ..point("64", seed, ms)
        };
        let mut points: Vec<Point> = (1..=5).map(|seed| point("64", seed, 10.0)).collect();
        points.extend((1..=4).map(|seed| tiled(seed, 5.0)));
        points.push(tiled(5, 9.9));
        let split = judged("batching", points, "batching");
        assert_eq!(split.verdict, ClaimVerdict::Inconclusive, "{split:?}");
        assert!(split.why.contains("seed 5"), "{}", split.why);
        // Draws without seed 5 (a third of them) find it faster: fragile.
        assert!(split.fragile, "{:?}", split.flip_share);
        assert!(split.why.contains("fragile"), "{}", split.why);
    }

    #[test]
    fn batching_holds_only_for_a_faster_tile_that_stays_stable() {
        let tiled = |seed, unstable, net_change| Point {
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
        assert!(unstable.erosion.unwrap().verdict.differs());
    }

    #[test]
    fn a_cut_in_collisions_holds_only_once_its_interval_clears_the_margin() {
        let collisions = |pairs: &[(f64, f64)]| {
            let rows: Vec<Row> = pairs
                .iter()
                .enumerate()
                .flat_map(|(i, &(off, on))| {
                    [("off", off), ("on", on)].map(|(stagger, conflicts)| Row {
                        settings: vec![
                            ("stagger", stagger.into()),
                            ("subgroup_conflicts_per_1000", conflicts.to_string()),
                        ],
                        seed: i as u32 + 1,
                        times_ms: around(1.0),
                    })
                })
                .collect();
            Evidence {
                steps: BTreeMap::from([("stagger", files(&rows))]),
                threshold: 0.036,
            }
            .result(claim("stagger-collisions").unwrap(), Scale::at(1024))
        };
        // Three seeds spread from 0.35 to 1.05: the interval reaches past 1.
        let wide = collisions(&[(10.0, 3.5), (10.0, 10.5), (10.0, 7.0)]);
        assert_eq!(wide.verdict, ClaimVerdict::Inconclusive, "{wide:?}");
        assert_eq!(wide.interval_verdict, Some(Verdict::Unclear));
        // A draw of one seed thrice has no spread to weigh and is left out: the draws
        // of two or three seeds all straddle the band too, so it is not fragile.
        assert!(!wide.fragile, "{:?}", wide.flip_share);
        assert!(wide.flip_share.is_some());
        // With two seeds fragility is not weighed.
        let two = collisions(&[(10.0, 3.5), (10.0, 10.5)]);
        assert_eq!((two.flip_share, two.fragile), (None, false));
        // Nine seeds around 0.7: below 0.95.
        let many: Vec<(f64, f64)> = (0..9)
            .map(|i| (10.0, 6.5 + f64::from(i % 3) * 0.5))
            .collect();
        let tight = collisions(&many);
        assert_eq!(tight.verdict, ClaimVerdict::Holds, "{tight:?}");
        assert_eq!(tight.seeds.len(), 9);
        assert!(!tight.fragile, "{:?}", tight.flip_share);
    }
}
