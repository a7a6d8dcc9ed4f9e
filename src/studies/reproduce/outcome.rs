//! The outcome of a run, as reproduce.json holds it, and the reference bundle it is set
//! beside: one outcome per scale of the ladder, each claim compared only at its own
//! scale.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::budget::{Calibration, ScaleChoice};
use super::suite::{Better, ClaimKind, Reps, Scale};
use super::ReproduceError;
use crate::experiment::results::ResultsError;
use crate::stats::{Band, Verdict};
use crate::{readable_number, PathIoError};

/// The verdicts and everything they rest on.
pub const JSON_FILE: &str = "reproduce.json";

/// What a claim comes to on this device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ClaimVerdict {
    Holds,
    DoesNotHold,
    Inconclusive,
    /// A statement the paper does not make: its effect, and no verdict.
    Context,
    /// The budget ran out before its step.
    NotMeasured,
}

impl ClaimVerdict {
    pub fn as_str(self) -> &'static str {
        match self {
            ClaimVerdict::Holds => "holds",
            ClaimVerdict::DoesNotHold => "does not hold",
            ClaimVerdict::Inconclusive => "inconclusive",
            ClaimVerdict::Context => "context",
            ClaimVerdict::NotMeasured => "not measured",
        }
    }
}

/// A measured quantity with its interval.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Effect {
    /// What it is, e.g. "GPU time of 2 passes, staggered / unstaggered".
    pub what: String,
    pub value: f64,
    /// Its 95% interval (a bootstrap of the pooled repetitions for times, Student's
    /// over the seeds otherwise), where there is one.
    pub interval: Option<(f64, f64)>,
    /// Its unit ("ratio", "cells").
    pub unit: String,
    /// Which way the claim favours.
    pub better: Better,
}

impl Effect {
    /// "0.82 [0.80, 0.84]".
    pub fn value_text(&self) -> String {
        let n = |v: f64| readable_number(v);
        match self.interval {
            Some((low, high)) => format!("{} [{}, {}]", n(self.value), n(low), n(high)),
            None => n(self.value),
        }
    }

    /// "0.82 [0.80, 0.84] (ratio; lower is better)".
    pub fn text(&self) -> String {
        format!(
            "{} ({}; {})",
            self.value_text(),
            self.unit,
            self.better.as_str()
        )
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
    /// The interval against 1 ± margin: the same, lower, higher or unclear.
    pub verdict: Verdict,
}

/// One claim's outcome on this device.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ClaimResult {
    pub id: String,
    pub topic: String,
    pub paper: String,
    pub tested: String,
    pub kind: ClaimKind,
    pub verdict: ClaimVerdict,
    /// The effect's interval against its band of no effect (a context claim's only
    /// judgement); none where there is no interval to judge.
    pub interval_verdict: Option<Verdict>,
    /// The band of no effect: the noise threshold's, a count margin, or 0.
    pub band: Option<Band>,
    /// Why, in one sentence.
    pub why: String,
    pub effect: Option<Effect>,
    /// The map it was measured on.
    pub scale: Scale,
    /// The droplet seeds it rests on.
    pub seeds: Vec<u32>,
    /// The share of bootstrap draws of its seeds whose judgement differs from this one.
    pub flip_share: Option<f64>,
    /// Whether more than [`FRAGILE_SHARE`] of those draws flip it.
    pub fragile: bool,
    /// Whether the setting the claim favours stayed stable (the sweep's `unstable`
    /// judgement against the CPU reference); none where not judged.
    pub stable: Option<bool>,
    pub erosion: Option<ErosionCheck>,
    /// Further figures: (what, value).
    pub figures: Vec<(String, String)>,
    /// How it was measured, where that changed since the first bundles (its step's
    /// `Step::method`; empty for the first way): a reference measured otherwise is not
    /// set beside it.
    #[serde(default)]
    pub method: String,
}

/// A verdict that more than this share of bootstrap draws of its seeds would flip is
/// fragile.
pub const FRAGILE_SHARE: f64 = 0.10;

impl ClaimResult {
    /// What is compared with a reference: the verdict, or a context claim's interval
    /// verdict.
    fn reading(&self) -> (ClaimVerdict, Option<Verdict>) {
        match self.verdict {
            ClaimVerdict::Context => (self.verdict, self.interval_verdict),
            verdict => (verdict, None),
        }
    }

    /// Whether it gives an answer: holds or does not, or a context claim's interval
    /// beyond or within its band.
    fn decided(&self) -> bool {
        match self.verdict {
            ClaimVerdict::Holds | ClaimVerdict::DoesNotHold => true,
            ClaimVerdict::Context => self
                .interval_verdict
                .is_some_and(|s| !matches!(s, Verdict::Unclear | Verdict::Different)),
            ClaimVerdict::Inconclusive | ClaimVerdict::NotMeasured => false,
        }
    }

    /// "holds", "context: lower", "holds (fragile)".
    pub fn verdict_text(&self) -> String {
        let base = match (self.verdict, self.interval_verdict) {
            (ClaimVerdict::Context, Some(s)) => format!("context: {}", s.as_str()),
            (verdict, _) => verdict.as_str().to_string(),
        };
        match self.fragile {
            true => format!("{base} (fragile)"),
            false => base,
        }
    }
}

/// One unit of the suite as it ran: the budget's prediction of it, and what it took.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct UnitRun {
    pub step: String,
    pub seeds: Vec<u32>,
    /// The map's side.
    pub size: u32,
    pub reps: Reps,
    /// Seconds predicted just before it ran, and seconds it took.
    pub predicted_s: f64,
    pub taken_s: f64,
}

/// reproduce.json: the device, the scale, the budget kept, the threshold and every
/// claim's outcome.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Reproduction {
    pub device: String,
    pub driver: String,
    pub vulkan: String,
    pub commit: String,
    /// Seconds the suite was given.
    pub budget_s: f64,
    /// Seconds the calibration predicted the suite would take, as first planned (its
    /// cuts made).
    pub predicted_s: f64,
    /// Seconds it took, calibration included.
    pub elapsed_s: f64,
    pub calibration: Calibration,
    /// The scale chosen (a step the budget cut runs smaller: its claims say).
    pub scale: Scale,
    /// How it was chosen (none in a bundle made before it was recorded).
    #[serde(default)]
    pub scale_choice: Option<ScaleChoice>,
    /// The repetitions the last step ran with.
    pub reps: Reps,
    /// What the budget cut, in order.
    pub cuts: Vec<String>,
    /// Every unit run after the calibration, in order (none in a bundle made before
    /// they were recorded).
    #[serde(default)]
    pub units: Vec<UnitRun>,
    /// The noise threshold of the speed verdicts, in percent, and where it came from.
    pub threshold_percent: f64,
    pub threshold_source: String,
    pub claims: Vec<ClaimResult>,
}

impl Reproduction {
    /// Reads a reproduce.json; a path that is not a regular file is refused.
    pub fn read(path: &Path) -> Result<Self, ReproduceError> {
        let text = crate::read_input_text(path).map_err(PathIoError::at(path))?;
        serde_json::from_str(&text)
            .map_err(|e| PathIoError::new(path, std::io::Error::other(e)).into())
    }
}

/// How a claim stands beside the reference.
#[derive(Clone, Debug, PartialEq)]
pub enum Beside<'r> {
    /// The reference judged it at the same scale, the same way.
    Agrees(&'r ClaimResult),
    /// At the same scale, otherwise.
    Differs(&'r ClaimResult),
    /// The reference has it at other scales only.
    NotComparable { there: Vec<u32> },
    /// At the same scale, but measured another way.
    OtherMethod(&'r ClaimResult),
    /// The reference does not have it.
    Missing,
}

/// The reference bundle: one outcome per scale.
#[derive(Clone, Debug)]
pub struct ReferenceBundle {
    pub dir: PathBuf,
    pub by_size: BTreeMap<u32, Reproduction>,
}

impl ReferenceBundle {
    /// The bundle in `dir`: its reproduce.json, or one in each of its folders (one per
    /// scale); `None` where there is none.
    pub fn read(dir: &Path) -> Result<Option<Self>, ReproduceError> {
        let mut files = vec![dir.join(JSON_FILE)];
        if let Ok(entries) = std::fs::read_dir(dir) {
            let mut folders: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
            folders.sort();
            files.extend(folders.into_iter().map(|f| f.join(JSON_FILE)));
        }
        let mut by_size = BTreeMap::new();
        for file in files.iter().filter(|f| f.exists()) {
            let outcome = Reproduction::read(file)?;
            let size = outcome.scale.size;
            if by_size.insert(size, outcome).is_some() {
                return Err(ResultsError::Mismatch {
                    path: file.clone(),
                    reason: format!("a second outcome at {size}²; a bundle holds one a scale"),
                }
                .into());
            }
        }
        Ok((!by_size.is_empty()).then(|| Self {
            dir: dir.to_path_buf(),
            by_size,
        }))
    }

    pub fn sizes(&self) -> Vec<u32> {
        self.by_size.keys().copied().collect()
    }

    /// The device it was made on (the first scale's).
    pub fn device(&self) -> &str {
        self.by_size
            .values()
            .next()
            .map_or("", |r| r.device.as_str())
    }

    /// The claim `id` at every scale the reference ran it.
    fn at_scales(&self, id: &str) -> Vec<&ClaimResult> {
        self.by_size
            .values()
            .flat_map(|r| r.claims.iter())
            .filter(|c| c.id == id && c.verdict != ClaimVerdict::NotMeasured)
            .collect()
    }

    /// How `claim` stands beside the reference at its own scale.
    pub fn beside(&self, claim: &ClaimResult) -> Beside<'_> {
        let all = self.at_scales(&claim.id);
        match all.iter().find(|c| c.scale.size == claim.scale.size) {
            Some(c) if c.method != claim.method => Beside::OtherMethod(c),
            Some(c) if c.reading() == claim.reading() => Beside::Agrees(c),
            Some(c) => Beside::Differs(c),
            None if all.is_empty() => Beside::Missing,
            None => Beside::NotComparable {
                there: all.iter().map(|c| c.scale.size).collect(),
            },
        }
    }

    /// Where the reference's own decided verdicts on `id` differ between scales (an
    /// inconclusive one is short of evidence, not another answer): each scale's, as a
    /// sentence.
    pub fn scale_dependence(&self, id: &str) -> Option<String> {
        let all = self.at_scales(id);
        let decided: Vec<_> = all
            .iter()
            .filter(|c| c.decided())
            .map(|c| c.reading())
            .collect();
        let first = decided.first()?;
        decided.iter().any(|r| r != first).then(|| {
            let each: Vec<String> = all
                .iter()
                .map(|c| format!("{} at {}²", c.verdict_text(), c.scale.size))
                .collect();
            format!("depends on scale in the reference: {}", each.join("; "))
        })
    }
}

/// Sides as "1024², 2048²".
pub fn sides(sizes: &[u32]) -> String {
    let each: Vec<String> = sizes.iter().map(|s| format!("{s}²")).collect();
    each.join(", ")
}

impl Beside<'_> {
    /// The reference's column in the summary.
    pub fn text(&self, here: &ClaimResult) -> String {
        if here.verdict == ClaimVerdict::NotMeasured {
            return "not measured here".into();
        }
        let of = |c: &ClaimResult| {
            let effect = c.effect.as_ref().map_or("-".into(), Effect::value_text);
            format!("{}, {effect}", c.verdict_text())
        };
        match self {
            Beside::Agrees(c) => format!("{} (agrees)", of(c)),
            Beside::Differs(c) => format!("{} (differs)", of(c)),
            Beside::NotComparable { there } => format!(
                "not comparable ({}² here, {} there)",
                here.scale.size,
                sides(there)
            ),
            Beside::OtherMethod(c) => format!(
                "not comparable (measured another way there: {})",
                if c.method.is_empty() {
                    "before the method changed"
                } else {
                    c.method.as_str()
                }
            ),
            Beside::Missing => "not in the reference".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claim(size: u32, verdict: ClaimVerdict, interval_verdict: Option<Verdict>) -> ClaimResult {
        ClaimResult {
            id: "batching".into(),
            topic: "tiles".into(),
            paper: String::new(),
            tested: String::new(),
            kind: ClaimKind::Paper,
            verdict,
            interval_verdict,
            band: None,
            why: String::new(),
            effect: None,
            scale: Scale::at(size),
            seeds: vec![1, 2, 3],
            flip_share: None,
            fragile: false,
            stable: None,
            erosion: None,
            figures: Vec::new(),
            method: String::new(),
        }
    }

    fn bundle(claims: &[ClaimResult]) -> ReferenceBundle {
        let by_size = claims
            .iter()
            .map(|c| {
                let outcome = Reproduction {
                    device: "H200".into(),
                    driver: String::new(),
                    vulkan: String::new(),
                    commit: String::new(),
                    budget_s: 1.0,
                    predicted_s: 1.0,
                    elapsed_s: 1.0,
                    calibration: Calibration::of_runs(
                        Vec::new(),
                        Reps::for_budget(1.0),
                        String::new(),
                    ),
                    scale: c.scale,
                    scale_choice: None,
                    reps: Reps::for_budget(1.0),
                    cuts: Vec::new(),
                    units: Vec::new(),
                    threshold_percent: 3.6,
                    threshold_source: String::new(),
                    claims: vec![c.clone()],
                };
                (c.scale.size, outcome)
            })
            .collect();
        ReferenceBundle {
            dir: PathBuf::from("ref"),
            by_size,
        }
    }

    #[test]
    fn a_claim_measured_another_way_is_not_set_beside_the_reference() {
        // A bundle from before the grid's method changed: no method recorded.
        let reference = bundle(&[claim(2048, ClaimVerdict::Holds, Some(Verdict::Lower))]);
        let mut here = claim(2048, ClaimVerdict::Holds, Some(Verdict::Lower));
        here.method = crate::studies::reproduce::GRID_METHOD.into();
        let beside = reference.beside(&here);
        assert!(matches!(beside, Beside::OtherMethod(_)));
        assert_eq!(
            beside.text(&here),
            "not comparable (measured another way there: before the method changed)"
        );
        let mut same = reference.clone();
        for outcome in same.by_size.values_mut() {
            outcome.claims[0].method = here.method.clone();
        }
        assert!(matches!(same.beside(&here), Beside::Agrees(_)));
    }

    #[test]
    fn a_claim_is_compared_at_its_own_scale_only() {
        let reference = bundle(&[
            claim(1024, ClaimVerdict::Inconclusive, Some(Verdict::Unclear)),
            claim(2048, ClaimVerdict::Holds, Some(Verdict::Lower)),
        ]);
        let here = claim(2048, ClaimVerdict::Holds, Some(Verdict::Lower));
        assert!(matches!(reference.beside(&here), Beside::Agrees(_)));
        let other = claim(1024, ClaimVerdict::Holds, Some(Verdict::Lower));
        assert!(matches!(reference.beside(&other), Beside::Differs(_)));
        let small = claim(256, ClaimVerdict::Holds, Some(Verdict::Lower));
        let beside = reference.beside(&small);
        assert_eq!(
            beside.text(&small),
            "not comparable (256² here, 1024², 2048² there)"
        );
        let missing = claim(2048, ClaimVerdict::NotMeasured, None);
        assert_eq!(
            reference.beside(&missing).text(&missing),
            "not measured here"
        );
        let note = reference.scale_dependence("batching");
        // Inconclusive at 1024² is short of evidence: no scale dependence from it.
        assert_eq!(note, None);
        let reference = bundle(&[
            claim(1024, ClaimVerdict::DoesNotHold, Some(Verdict::Same)),
            claim(2048, ClaimVerdict::Holds, Some(Verdict::Lower)),
        ]);
        let note = reference.scale_dependence("batching").unwrap();
        assert!(
            note.contains("does not hold at 1024²") && note.contains("holds at 2048²"),
            "{note}"
        );
        let steady = bundle(&[claim(2048, ClaimVerdict::Holds, Some(Verdict::Lower))]);
        assert_eq!(steady.scale_dependence("batching"), None);
        let mut context = claim(2048, ClaimVerdict::Context, Some(Verdict::Higher));
        context.fragile = true;
        assert_eq!(context.verdict_text(), "context: higher (fragile)");
    }
}
