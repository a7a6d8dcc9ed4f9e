//! The budget: what the calibration measured, what it predicts each unit of the suite
//! costs, and what the suite cuts, in order, when what is left would overrun: fewer
//! repetitions first, then the third seed, then a smaller scale for the steps not yet
//! begun, then those steps themselves. After every unit the prediction learns from
//! what the unit took, and the cuts are decided again from the whole plan: a cut made
//! on a prediction that proved too high is undone.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use serde::{Deserialize, Serialize};

use super::error::ReproduceError;
use super::suite::{
    sizes, Reps, Scale, Step, SweepPlan, BASE_SEEDS, BELOW_LADDER, LADDER, THIRD_SEED,
};
use crate::readable_number;
use crate::stats::bootstrap::MIN_SAMPLES;
use crate::stats::{LinearFit, Moments};

/// The share of the budget the calibration may spend: on an H200, measuring both kinds
/// from 64² to 512² took 16 s, and the suite is chosen up to one side past what was
/// measured, so a 120 s budget needs about this much to reach the ladder's 1024².
pub const CALIBRATION_SHARE: f64 = 0.2;
/// The share of the budget kept at the end, at least [`FINISH_LEAST_S`], for the
/// verdicts (their bootstrap draws) and the files.
pub const FINISH_SHARE: f64 = 0.02;
/// The least kept at the end, in seconds.
pub const FINISH_LEAST_S: f64 = 2.0;
/// The least budget the suite takes, in seconds, refused below before any work: its
/// calibration always runs at 64², which on lavapipe (the slowest device it runs on) took
/// 12 s on two idle cores and 21 s on two busy ones (a grid seed 11 to 20 s of it), and
/// there a budget of 20 s was overrun while one of 25 s was kept.
pub const BUDGET_FLOOR_S: f64 = 30.0;

/// The seconds kept at the end of a budget of `budget_s`.
pub fn reserve_s(budget_s: f64) -> f64 {
    (FINISH_SHARE * budget_s).max(FINISH_LEAST_S)
}

/// Refuses a budget below [`BUDGET_FLOOR_S`].
pub fn check_budget(budget_s: f64) -> Result<(), ReproduceError> {
    match budget_s >= BUDGET_FLOOR_S {
        true => Ok(()),
        false => Err(ReproduceError::BudgetBelowFloor {
            budget_s,
            floor_s: BUDGET_FLOOR_S,
        }),
    }
}

/// Seconds against cells: `fixed_s` plus `per_cell_s` for each cell of the map.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Line {
    pub fixed_s: f64,
    pub per_cell_s: f64,
}

impl Line {
    pub fn at(&self, cells: f64) -> f64 {
        self.fixed_s + self.per_cell_s * cells
    }

    /// The line of wall time against cells through `walls`, neither part below zero: the
    /// least-squares line where it rises from a fixed part at or above zero. Runs whose
    /// line does not rise (one run, or noise about a cost that does not grow with the
    /// map) are a fixed cost, their mean, none of it per cell; runs whose line would start
    /// below zero are all per cell, at the line's slope (a little dearer than the line,
    /// never cheaper). `None` for no runs.
    pub fn fit(walls: &[(f64, f64)]) -> Option<Self> {
        if walls.is_empty() {
            return None;
        }
        let seconds: Vec<f64> = walls.iter().map(|&(_, s)| s).collect();
        let fixed = Self {
            fixed_s: Moments::of(&seconds).mean,
            per_cell_s: 0.0,
        };
        Some(match LinearFit::of(walls) {
            Some(l) if l.slope > 0.0 => Self {
                fixed_s: l.intercept.max(0.0),
                per_cell_s: l.slope,
            },
            _ => fixed,
        })
    }
}

/// What the calibration names its two kinds of run in reproduce.json.
pub const DROPLET_POINT: &str = "droplet point";
pub const GRID_SEED: &str = "grid seed";

/// What one kind of run (a droplet point, a grid seed) cost at the sides the calibration
/// measured, and what that predicts of the others: by the line up to one side past the
/// largest measured, and only the most a run can cost beyond.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Ladder {
    /// (side, seconds), smallest side first.
    measured: Vec<(u32, f64)>,
    line: Option<Line>,
}

/// The side after `side` among the suite's sides, where there is one.
fn side_above(side: u32) -> Option<u32> {
    sizes().find(|&s| s > side)
}

fn cells(side: u32) -> f64 {
    Scale::at(side).cells()
}

impl Ladder {
    pub fn new(mut measured: Vec<(u32, f64)>) -> Self {
        measured.sort_by_key(|&(side, _)| side);
        let walls: Vec<(f64, f64)> = measured.iter().map(|&(s, t)| (cells(s), t)).collect();
        Self {
            line: Line::fit(&walls),
            measured,
        }
    }

    /// The line through the measured runs.
    pub fn line(&self) -> Option<Line> {
        self.line
    }

    /// The largest side measured, and its seconds.
    pub fn largest(&self) -> Option<(u32, f64)> {
        self.measured.last().copied()
    }

    /// The largest side it predicts: one side past the largest measured (that side
    /// itself at the top of the ladder); none before any run.
    pub fn reach(&self) -> Option<u32> {
        let (top, _) = self.largest()?;
        Some(side_above(top).unwrap_or(top))
    }

    /// Seconds of one run at `side`. Up to the largest side measured: the line. One
    /// side past it: the line there, but never less than the largest side measured took
    /// (nor its line); never more than 4 times that either, all of it per cell, the cells
    /// being 4 times as many, as a line of a fixed part and a part per cell, neither below
    /// zero, grows no faster. Where one side is measured, which cannot tell a fixed cost
    /// from one per cell, and further past: that most, every second per cell, as nothing
    /// measured says less. 0 before any run.
    pub fn predict(&self, side: u32) -> f64 {
        let (Some(line), Some((top, top_s))) = (self.line, self.largest()) else {
            return 0.0;
        };
        if side <= top {
            return line.at(cells(side));
        }
        let least = top_s.max(line.at(cells(top)));
        match self.measured.len() > 1 && side_above(top) == Some(side) {
            true => line.at(cells(side)).max(least),
            false => least * cells(side) / cells(top),
        }
    }
}

/// What one droplet point and one grid seed cost on this device: the lines fitted to
/// the calibration's runs, and the runs themselves.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Calibration {
    /// Wall seconds of one sweep point (its repetitions, counted run, reruns and the
    /// CPU's judgement) against cells.
    pub droplet_point: Line,
    /// Wall seconds of one seed of the grid claim (both strategies) against cells.
    pub grid_seed: Line,
    /// The timed runs: (kind, map side, wall seconds of one droplet point or grid seed).
    pub runs: Vec<(String, u32, f64)>,
    /// The repetitions the calibration's points ran with.
    pub reps: Reps,
    /// Why it measured no larger side (none in a bundle made before it was recorded).
    #[serde(default)]
    pub stopped: String,
}

impl Calibration {
    /// The calibration of `runs` (kind, side, seconds), its lines fitted to them.
    pub fn of_runs(runs: Vec<(String, u32, f64)>, reps: Reps, stopped: String) -> Self {
        let none = Line {
            fixed_s: 0.0,
            per_cell_s: 0.0,
        };
        let mut calibration = Self {
            droplet_point: none,
            grid_seed: none,
            runs,
            reps,
            stopped,
        };
        calibration.droplet_point = calibration.ladder(DROPLET_POINT).line().unwrap_or(none);
        calibration.grid_seed = calibration.ladder(GRID_SEED).line().unwrap_or(none);
        calibration
    }

    /// The runs of `kind` ([`DROPLET_POINT`], [`GRID_SEED`]).
    pub fn ladder(&self, kind: &str) -> Ladder {
        Ladder::new(
            self.runs
                .iter()
                .filter(|(k, _, _)| k == kind)
                .map(|&(_, side, seconds)| (side, seconds))
                .collect(),
        )
    }

    /// The sides measured of either kind, as "64² to 512²".
    pub fn sides_text(&self) -> String {
        let sides: BTreeSet<u32> = self.runs.iter().map(|&(_, side, _)| side).collect();
        match (sides.first(), sides.last()) {
            (Some(a), Some(b)) if a != b => format!("{a}² to {b}²"),
            (Some(a), _) => format!("{a}²"),
            _ => "no side".into(),
        }
    }
}

/// One unit of the suite: a step's runs over some droplet seeds at one scale.
#[derive(Clone, Debug, PartialEq)]
pub struct Unit {
    pub step: Step,
    pub seeds: Vec<u32>,
    pub scale: Scale,
    /// Seeds past the base ones: a sweep runs its extension axes.
    pub extra: bool,
}

impl Unit {
    /// Its folder's name among its step's, which sort in the order of their seeds:
    /// `seed-01`, `seeds-04-06`.
    pub fn folder(&self) -> String {
        match self.seeds.as_slice() {
            [one] => format!("seed-{one:02}"),
            seeds => format!(
                "seeds-{:02}-{:02}",
                seeds.first().copied().unwrap_or(0),
                seeds.last().copied().unwrap_or(0)
            ),
        }
    }
}

/// The predictions, and what the units run so far took against them.
pub struct Costs {
    pub calibration: Calibration,
    droplet_point: Ladder,
    grid_seed: Ladder,
    /// Per step: (seconds taken, seconds the ladders predicted), over all its units.
    observed: BTreeMap<&'static str, (f64, f64)>,
    /// Per step: the same of its latest unit alone.
    latest: BTreeMap<&'static str, (f64, f64)>,
}

impl Costs {
    pub fn new(calibration: Calibration) -> Self {
        Self {
            droplet_point: calibration.ladder(DROPLET_POINT),
            grid_seed: calibration.ladder(GRID_SEED),
            calibration,
            observed: BTreeMap::new(),
            latest: BTreeMap::new(),
        }
    }

    fn ladder(&self, step: Step) -> &Ladder {
        match step {
            Step::Sweep(_) => &self.droplet_point,
            Step::Grid => &self.grid_seed,
        }
    }

    /// The largest side the calibration predicts for every one of `steps`: one past the
    /// largest it measured of each kind (64² where it measured none).
    pub fn reach(&self, steps: &[Step]) -> u32 {
        let smallest = sizes().next().expect("the sizes are not empty");
        steps
            .iter()
            .map(|&s| self.ladder(s).reach().unwrap_or(smallest))
            .min()
            .unwrap_or(smallest)
    }

    /// What the ladders alone predict of `unit` with `reps`: a sweep point's time less
    /// the repetitions' time it no longer spends (at most half of it).
    fn lines(&self, unit: &Unit, reps: &Reps) -> f64 {
        let run = self.ladder(unit.step).predict(unit.scale.size);
        let per_seed = match unit.step {
            Step::Sweep(_) => {
                let saved = (self.calibration.reps.point_budget_s - reps.point_budget_s).max(0.0);
                unit.step.points_per_seed(unit.extra) as f64 * (run - saved).max(run / 2.0)
            }
            Step::Grid => run,
        };
        per_seed * unit.seeds.len() as f64
    }

    /// How far the lines have been off: the step's own units' ratio of taken to
    /// predicted where it has run, or its latest unit's where that is higher (a device
    /// that slows down, under other load, is followed at once); else every unit's.
    fn factor(&self, step: Step) -> f64 {
        let ratio = |(taken, predicted): (f64, f64)| (predicted > 0.0).then(|| taken / predicted);
        if let Some(own) = self.observed.get(step.name()).copied().and_then(ratio) {
            let latest = self.latest.get(step.name()).copied().and_then(ratio);
            return latest.map_or(own, |l| own.max(l));
        }
        let all = self
            .observed
            .values()
            .fold((0.0, 0.0), |(t, p), &(ti, pi)| (t + ti, p + pi));
        ratio(all).unwrap_or(1.0)
    }

    pub fn predict(&self, unit: &Unit, reps: &Reps) -> f64 {
        self.lines(unit, reps) * self.factor(unit.step)
    }

    /// Records that `unit` took `seconds`.
    pub fn observe(&mut self, unit: &Unit, reps: &Reps, seconds: f64) {
        let predicted = self.lines(unit, reps);
        let entry = self.observed.entry(unit.step.name()).or_default();
        *entry = (entry.0 + seconds, entry.1 + predicted);
        self.latest.insert(unit.step.name(), (seconds, predicted));
    }
}

/// The units left to run, the repetitions they run with, and what was cut.
#[derive(Clone)]
pub struct Plan {
    pub queue: VecDeque<Unit>,
    pub reps: Reps,
    /// What the budget cut, in order, as sentences.
    pub cuts: Vec<String>,
    /// A scale the user chose, which no cut changes.
    pub fixed_scale: bool,
}

impl Plan {
    /// Every step at `scale`: the base seeds of each, a seed a unit (so that the
    /// prediction learns from a step's first seed before its second runs), then the third
    /// seed of each.
    pub fn new(steps: &[Step], scale: Scale, reps: Reps, fixed_scale: bool) -> Self {
        let unit = |step: Step, seeds: Vec<u32>| Unit {
            step,
            seeds,
            scale,
            extra: false,
        };
        let queue = steps
            .iter()
            .flat_map(|&s| BASE_SEEDS.map(|seed| unit(s, vec![seed])))
            .chain(steps.iter().map(|&s| unit(s, vec![THIRD_SEED])))
            .collect();
        Self {
            queue,
            reps,
            cuts: Vec::new(),
            fixed_scale,
        }
    }

    pub fn predicted(&self, costs: &Costs) -> f64 {
        self.queue
            .iter()
            .map(|u| costs.predict(u, &self.reps))
            .sum()
    }

    /// What of the plan fits in `seconds`: a copy cut in order (fewer repetitions, then
    /// the third seed, the last step's first, then the next smaller scale for a step not
    /// in `begun`, the last first, then such a step whole), with its cuts. The plan
    /// itself keeps every unit, for the next prediction to decide again.
    pub fn trimmed(&self, costs: &Costs, seconds: f64, begun: &BTreeSet<&str>) -> Plan {
        let mut trimmed = self.clone();
        trimmed.cut_to(costs, seconds, begun);
        trimmed
    }

    /// Takes `unit` (a unit of [`Plan::trimmed`]) out of the plan; the rest of its step
    /// runs at its scale from now on.
    pub fn take(&mut self, unit: &Unit) {
        for u in self.queue.iter_mut().filter(|u| u.step == unit.step) {
            u.scale = unit.scale;
        }
        self.queue
            .retain(|u| !(u.step == unit.step && u.seeds == unit.seeds));
    }

    /// Cuts what is left until it fits in `seconds`; returns whether it does.
    fn cut_to(&mut self, costs: &Costs, seconds: f64, begun: &BTreeSet<&str>) -> bool {
        while self.predicted(costs) > seconds {
            if self.reps.can_shrink() {
                self.reps = self.reps.fewer();
                self.cuts.push(format!(
                    "fewer repetitions: {} s and {} at most a point",
                    readable_number(self.reps.point_budget_s),
                    self.reps.max_reps
                ));
                continue;
            }
            if let Some(at) = self.queue.iter().rposition(|u| u.seeds == [THIRD_SEED]) {
                let unit = self.queue.remove(at).expect("found above");
                self.cuts
                    .push(format!("seed {THIRD_SEED} of {}", unit.step.name()));
                continue;
            }
            let smaller = |size: u32| sizes().take_while(|&s| s < size).last();
            let shrinkable = (!self.fixed_scale)
                .then(|| {
                    self.queue
                        .iter()
                        .rev()
                        .find(|u| !begun.contains(u.step.name()) && smaller(u.scale.size).is_some())
                })
                .flatten()
                .map(|u| (u.step, u.scale.size));
            if let Some((step, size)) = shrinkable {
                let to = smaller(size).expect("checked above");
                for unit in self.queue.iter_mut().filter(|u| u.step == step) {
                    unit.scale = Scale::at(to);
                }
                self.cuts
                    .push(format!("{} at {to}² instead of {size}²", step.name()));
                continue;
            }
            let droppable = self
                .queue
                .iter()
                .rev()
                .find(|u| !begun.contains(u.step.name()))
                .map(|u| u.step);
            if let Some(step) = droppable {
                self.queue.retain(|u| u.step != step);
                self.cuts
                    .push(format!("{}: not run, the budget ran out", step.name()));
                continue;
            }
            // Last, what a begun step has left: its claims rest on the seeds it ran.
            match self.queue.pop_back() {
                Some(unit) => {
                    self.cuts
                        .push(format!("seeds {:?} of {}", unit.seeds, unit.step.name()))
                }
                None => return false,
            }
        }
        true
    }
}

/// How the suite's side was chosen, as reproduce.json records it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ScaleChoice {
    /// Seconds the suite had after the calibration, less what is kept for the end.
    pub left_s: f64,
    /// (side, seconds the whole suite was predicted to take there: three seeds, full
    /// repetitions), for each side considered, smallest first.
    pub predicted: Vec<(u32, f64)>,
    /// Why this side, as the console said it.
    pub why: String,
}

/// The largest scale whose whole plan (three seeds) fits in `seconds`, among the sides
/// the calibration predicts (those it measured and the one past them): on the ladder,
/// one the reference holds (`reference_sizes`) where one fits, else the largest; below
/// the ladder where none fits; the smallest where nothing does. With how it was chosen.
pub fn choose_scale(
    costs: &Costs,
    steps: &[Step],
    reps: Reps,
    seconds: f64,
    reference_sizes: &[u32],
) -> (Scale, ScaleChoice) {
    let reach = costs.reach(steps);
    let predicted: Vec<(u32, f64)> = sizes()
        .take_while(|&s| s <= reach)
        .map(|s| {
            let plan = Plan::new(steps, Scale::at(s), reps, false);
            (s, plan.predicted(costs))
        })
        .collect();
    let fitting: Vec<u32> = predicted
        .iter()
        .filter(|&&(_, p)| p <= seconds)
        .map(|&(s, _)| s)
        .collect();
    let on_ladder = |s: &u32| LADDER.contains(s);
    let size = fitting
        .iter()
        .rev()
        .find(|s| on_ladder(s) && reference_sizes.contains(s))
        .or_else(|| fitting.iter().rev().find(|s| on_ladder(s)))
        .or_else(|| fitting.last())
        .copied()
        .unwrap_or_else(|| sizes().next().expect("the sizes are not empty"));
    let at = |side: u32| {
        predicted
            .iter()
            .find(|&&(s, _)| s == side)
            .map_or(f64::INFINITY, |&(_, p)| p)
    };
    let here = format!(
        "the suite predicts {:.0} s at {size}², of the {:.0} s left",
        at(size),
        seconds.max(0.0)
    );
    let larger = fitting.last().copied().filter(|&s| s > size);
    let why = match (larger, side_above(size)) {
        _ if at(size) > seconds => {
            format!("nothing fits: {here}, and the budget cuts it as it runs")
        }
        (Some(larger), _) => {
            format!("{here}; {larger}² fits too, but the reference holds {size}² and not {larger}²")
        }
        (None, None) => format!("{here}; it is the ladder's largest side"),
        (None, Some(above)) if above > reach => {
            format!("{here}; {above}² lies more than one side past what the calibration measured")
        }
        (None, Some(above)) => format!(
            "{here}; {above}² would take {:.0} s, {:.0} s more",
            at(above),
            at(above) - seconds.max(0.0)
        ),
    };
    (
        Scale::at(size),
        ScaleChoice {
            left_s: seconds,
            predicted,
            why,
        },
    )
}

/// The calibration's run for each kind `steps` need, as a step of one seed: two droplet
/// points of one job (the paper's kernel at workgroups 64 and 128, which share the CPU
/// reference as the suite's points do) where a sweep runs, a grid seed where the grid does.
pub const CALIBRATION_SWEEP: SweepPlan = SweepPlan {
    name: "calibration",
    description: "The paper's kernel at workgroups 64 and 128, one seed.",
    axes: "workgroup = [64, 128]",
    extension_axes: None,
};

pub fn calibration_steps(steps: &[Step]) -> Vec<Step> {
    let sweeps = steps.iter().any(|s| matches!(s, Step::Sweep(_)));
    let grid = steps.contains(&Step::Grid);
    [
        (sweeps, Step::Sweep(&CALIBRATION_SWEEP)),
        (grid, Step::Grid),
    ]
    .into_iter()
    .filter_map(|(wanted, step)| wanted.then_some(step))
    .collect()
}

/// What the calibration does next.
#[derive(Clone, Debug, PartialEq)]
pub enum Climb {
    /// It measures the next side, predicted to take these seconds.
    Measure(f64),
    /// It measures no larger side, for this reason.
    Stop(String),
}

/// Whether the calibration, `spent_s` into a budget of `budget_s`, goes on to measure
/// `side`, the side past the largest it measured. It stops at the ladder's largest side (predicted from the one below),
/// past a side the user chose, where measuring `side` would take it past
/// [`CALIBRATION_SHARE`] of the budget, and where the suite at the largest side measured
/// would not fit what is left: then no side past `side` could, and `side` itself is
/// predicted without being measured.
pub fn climb_to(
    costs: &Costs,
    steps: &[Step],
    side: u32,
    spent_s: f64,
    budget_s: f64,
    chosen_size: Option<u32>,
) -> Climb {
    let below = sizes().take_while(|&s| s < side).last().unwrap_or(side);
    if side_above(side).is_none() {
        return Climb::Stop(format!(
            "the ladder's largest side, {side}², is predicted from {below}²"
        ));
    }
    if chosen_size.is_some_and(|chosen| chosen <= side) {
        return Climb::Stop(format!("--size needs no side past {below}²"));
    }
    let unit = |step: Step| Unit {
        step,
        seeds: vec![1],
        scale: Scale::at(side),
        extra: false,
    };
    let reps = costs.calibration.reps;
    let cost: f64 = calibration_steps(steps)
        .into_iter()
        .map(|step| costs.lines(&unit(step), &reps))
        .sum();
    let share = CALIBRATION_SHARE * budget_s;
    if spent_s + cost > share {
        return Climb::Stop(format!(
            "measuring {side}² would take about {cost:.0} s more, past its share of the budget ({:.0} s, {}%)",
            share,
            readable_number(CALIBRATION_SHARE * 100.0)
        ));
    }
    if chosen_size.is_none() {
        let suite = Plan::new(steps, Scale::at(below), reps, false).predicted(costs);
        let left = budget_s - reserve_s(budget_s) - spent_s - cost;
        if suite > left {
            return Climb::Stop(format!(
                "the suite would take {suite:.0} s at {below}² already, more than the {:.0} s measuring {side}² would leave",
                left.max(0.0)
            ));
        }
    }
    Climb::Measure(cost)
}

/// docs/reproduce.md's paragraphs on the budget and the scale, from the constants that
/// rule them.
pub fn budget_reference() -> String {
    let percent = |share: f64| readable_number(share * 100.0);
    let sides = |sizes: &[u32]| {
        let named: Vec<String> = sizes.iter().map(|s| format!("{s}²")).collect();
        named.join(", ")
    };
    let smallest = sizes().next().expect("the sizes are not empty");
    let top = LADDER[LADDER.len() - 1];
    format!(
        "**The budget.** At least {floor} s: a smaller budget is refused before any work, as \
         no budget below it can be kept: the calibration at {smallest}² alone takes most of it \
         on lavapipe. A calibration times two droplet points of one job (the paper's kernel at \
         workgroups 64 and 128, which share the CPU reference as the suite's points do) and \
         one seed of the grid claim at {smallest}², then at each next side while measuring it \
         keeps the calibration within {share}% of the budget and the suite at the largest side \
         measured would still fit what is left (else no larger side could); it never measures \
         {top}², which the side below predicts, and the grid's seed at the side the suite runs \
         is its first. Each kind's runs give a line of wall time against cells, neither part \
         below zero: least squares where the line rises; runs that do not rise with the map \
         (one run among them) are a fixed cost, their mean; a line that would start below zero \
         is all per cell. A side measured is predicted by its line; the side past the largest \
         measured by the line too, but no less than the largest measured took and no more than \
         4 times that, its cells being 4 times as many (a fixed cost and one per cell grow no \
         faster); where a single side is measured, which cannot tell a fixed cost from one per \
         cell, the side past it costs that most, all per cell, as does a side further still \
         (only with `--size`). The suite \
         then runs each step's seeds 1 and 2, then each step's seed 3. Before every unit it \
         predicts what is left, from the ladders corrected by what the step's units run so far \
         took against them (or its latest unit, where that ran slower: a device slowing under \
         other load is followed at once), and where that would overrun the budget (less \
         {finish}% of it, at least {least} s, kept for the verdicts and the files; a unit of \
         more seeds also keeps back what the last judgement of the evidence took) it cuts, in \
         this order: fewer repetitions (half the time and at most half the repetitions a \
         point, never under {MIN_SAMPLES}); the third seed, the last step's first; the next \
         smaller side for a step not yet begun; such a step whole (its claims \"not \
         measured\"). reproduce.json records the calibration's runs and lines and why it \
         stopped, the predictions the scale was chosen from, the time taken and every cut.\n\n\
         **The scale.** The ladder is {ladder}. The suite takes the largest side whose three \
         seeds the calibration predicts to fit, among the sides it measured and the one past \
         them, a side of the ladder the reference holds where one fits, else the ladder's \
         largest that fits; where none fits (a CPU device), the largest of {below} that does, \
         set beside no reference. The console and the summary say which side the budget buys \
         and why: what the suite predicts there, and what the next side would take, or that \
         it lies past what was measured. `--size` chooses one instead. Droplets are one per \
         four cells (the paper's density at 4096²), lifetime 30, on erosion-noise terrain.\n\n",
        floor = readable_number(BUDGET_FLOOR_S),
        share = percent(CALIBRATION_SHARE),
        finish = percent(FINISH_SHARE),
        least = readable_number(FINISH_LEAST_S),
        ladder = sides(&LADDER),
        below = sides(&BELOW_LADDER),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::studies::reproduce::suite::STEPS;

    /// Runs of each kind at `sides`, each taking what its line says.
    fn runs_on(sides: &[u32], droplet: Line, grid: Line) -> Vec<(String, u32, f64)> {
        sides
            .iter()
            .flat_map(|&s| {
                [(DROPLET_POINT, droplet), (GRID_SEED, grid)]
                    .map(|(kind, line)| (kind.to_string(), s, line.at(cells(s))))
            })
            .collect()
    }

    /// Costs measured at every side, each run taking what its line says.
    fn costs(droplet: Line, grid: Line) -> Costs {
        let every: Vec<u32> = sizes().collect();
        let runs = runs_on(&every, droplet, grid);
        Costs::new(Calibration::of_runs(
            runs,
            Reps::for_budget(60.0),
            String::new(),
        ))
    }

    /// A ladder of `seconds` measured from 64² up, a side each.
    fn ladder(seconds: &[f64]) -> Ladder {
        Ladder::new(sizes().zip(seconds.iter().copied()).collect())
    }

    #[track_caller]
    fn assert_close(seconds: f64, expected: f64, why: &str) {
        assert!(
            (seconds - expected).abs() < 1e-9,
            "{why}: {seconds} s, not {expected}"
        );
    }

    fn flat(fixed_s: f64) -> Line {
        Line {
            fixed_s,
            per_cell_s: 0.0,
        }
    }

    #[test]
    fn the_fit_is_a_line_through_the_points_and_never_falls() {
        let line = Line::fit(&[(100.0, 2.0), (200.0, 3.0), (400.0, 5.0)]).unwrap();
        assert!((line.fixed_s - 1.0).abs() < 1e-9 && (line.per_cell_s - 0.01).abs() < 1e-12);
        // Noise: the larger map ran faster. A cost that does not grow: all of it fixed.
        let falling = Line::fit(&[(100.0, 2.0), (400.0, 1.0)]).unwrap();
        assert_eq!((falling.fixed_s, falling.per_cell_s), (1.5, 0.0));
        // One point: a fixed cost, as far as it shows.
        let one = Line::fit(&[(100.0, 2.0)]).unwrap();
        assert_eq!((one.fixed_s, one.per_cell_s), (2.0, 0.0));
        // A line that would start below zero: all per cell, at its slope.
        let steep = Line::fit(&[(100.0, 0.5), (200.0, 2.0), (400.0, 5.0)]).unwrap();
        assert_eq!(steep.fixed_s, 0.0);
        assert!(
            steep.per_cell_s > 0.0 && steep.at(400.0) >= 5.0,
            "{steep:?}"
        );
        assert_eq!(Line::fit(&[]), None);
    }

    #[test]
    fn a_flat_series_is_a_fixed_cost_and_not_a_cost_per_cell() {
        // Issue 55, an H100: a droplet point took 1.12, 0.94 and 0.98 s at 64², 128² and
        // 256². Read as all per cell (15 µs a cell) it predicted 16 s at 1024².
        let h100 = ladder(&[1.12, 0.94, 0.98]);
        let line = h100.line().unwrap();
        assert_eq!(line.per_cell_s, 0.0, "{line:?}");
        assert!((line.fixed_s - (1.12 + 0.94 + 0.98) / 3.0).abs() < 1e-12);
        // One side past: at least the largest measured, and no more than its line.
        assert_eq!(h100.predict(512), line.fixed_s);
        assert!(h100.predict(512) < 1.1, "{}", h100.predict(512));
        // A growing series: a fixed part and one per cell (the H200's bundle at 4096²).
        let h200 = ladder(&[0.953, 0.963, 0.960, 1.056, 1.445]);
        let line = h200.line().unwrap();
        assert!(line.fixed_s > 0.9 && line.fixed_s < 1.0, "{line:?}");
        assert!(line.per_cell_s > 3e-7 && line.per_cell_s < 6e-7, "{line:?}");
        let next = h200.predict(2048);
        assert!(
            (next - line.at(cells(2048))).abs() < 1e-12,
            "the line, one side past"
        );
        assert!(next > 2.0 && next < 4.0, "{next}");
        // One side measured tells no fixed cost from one per cell: the next costs at most
        // 4 times as much, and is taken to.
        let one = ladder(&[2.0]);
        assert_eq!((one.predict(64), one.predict(128)), (2.0, 8.0));
        // One side past, never less than the largest side measured took.
        let last_slow = ladder(&[1.2, 1.0, 1.0, 1.1]);
        assert!(last_slow.line().unwrap().at(cells(1024)) < 1.1);
        assert_eq!(last_slow.predict(1024), 1.1);
        // All per cell: the fixed part is 0, and one side past costs 4 times the last.
        let per_cell = ladder(&[0.1, 0.4, 1.6]);
        assert!(per_cell.line().unwrap().fixed_s < 1e-3);
        assert!(
            (per_cell.predict(512) - 6.4).abs() < 1e-9,
            "{}",
            per_cell.predict(512)
        );
    }

    #[test]
    fn noise_at_small_sides_gives_no_falling_nor_runaway_prediction() {
        // A 1 s cost with 0.1 s of jitter, in every order.
        for seconds in [
            [1.1, 0.9, 1.0],
            [0.9, 1.0, 1.1],
            [1.0, 1.1, 0.9],
            [0.9, 1.1, 1.0],
            [1.0, 0.9, 1.1],
        ] {
            let l = ladder(&seconds);
            let line = l.line().unwrap();
            assert!(line.per_cell_s >= 0.0 && line.fixed_s >= 0.0, "{line:?}");
            // One side past: no less than the largest took, and within twice the most
            // any run took, where all per cell would be 4 times.
            let next = l.predict(512);
            assert!(
                next >= seconds[2] && next < 2.0 * 1.1,
                "{seconds:?}: {next}"
            );
        }
    }

    #[test]
    fn nothing_is_predicted_more_than_one_side_past_the_largest_measured() {
        let l = ladder(&[1.0, 1.0, 1.0]);
        assert_eq!(l.reach(), Some(512));
        // Past that, every second per cell: nothing measured says less.
        assert_eq!(l.predict(1024), 16.0);
        assert_eq!(l.predict(4096), 256.0);
        assert_eq!(Ladder::default().reach(), None);
        // With any budget, the suite chooses at most one side past 256².
        let runs = runs_on(&[64, 128, 256], flat(0.01), flat(0.01));
        let c = Costs::new(Calibration::of_runs(
            runs,
            Reps::for_budget(60.0),
            String::new(),
        ));
        let (scale, choice) = choose_scale(&c, &STEPS, Reps::for_budget(60.0), 1e9, &[]);
        assert_eq!(scale.size, 512);
        let considered: Vec<u32> = choice.predicted.iter().map(|&(s, _)| s).collect();
        assert_eq!(considered, [64, 128, 256, 512]);
        assert!(
            choice.why.contains("1024² lies more than one side past"),
            "{}",
            choice.why
        );
        // Measured at 2048²: 4096², the top, is within reach.
        let runs = runs_on(&[64, 128, 256, 512, 1024, 2048], flat(0.01), flat(0.01));
        let c = Costs::new(Calibration::of_runs(
            runs,
            Reps::for_budget(60.0),
            String::new(),
        ));
        let (scale, choice) = choose_scale(&c, &STEPS, Reps::for_budget(60.0), 1e9, &[]);
        assert_eq!(scale.size, 4096);
        assert!(
            choice.why.contains("the ladder's largest side"),
            "{}",
            choice.why
        );
        // The grid measured less far than the droplets: the lesser reach.
        let mut runs = runs_on(&[64, 128, 256, 512], flat(0.01), flat(0.01));
        runs.retain(|(kind, side, _)| kind == DROPLET_POINT || *side <= 128);
        let c = Costs::new(Calibration::of_runs(
            runs,
            Reps::for_budget(60.0),
            String::new(),
        ));
        assert_eq!(c.reach(&STEPS), 256);
        assert_eq!(c.reach(&STEPS[..4]), 1024, "the sweeps alone");
    }

    #[test]
    fn predictions_grow_with_the_side() {
        for seconds in [
            vec![1.12, 0.94, 0.98],
            vec![0.953, 0.963, 0.960, 1.056, 1.445],
            vec![0.1, 0.4, 1.6],
            vec![1.0, 1.0, 0.1],
            vec![3.0, 1.0],
            vec![2.0],
        ] {
            let l = ladder(&seconds);
            let predicted: Vec<f64> = sizes().map(|s| l.predict(s)).collect();
            // One side past costs at most 4 times the largest side measured.
            let (top, top_s) = l.largest().unwrap();
            let least = top_s.max(l.line().unwrap().at(cells(top)));
            assert!(l.predict(top * 2) <= 4.0 * least + 1e-12, "{seconds:?}");
            assert!(
                predicted.windows(2).all(|w| w[0] <= w[1]),
                "{seconds:?}: {predicted:?}"
            );
        }
    }

    #[track_caller]
    fn stopped(climb: Climb) -> String {
        match climb {
            Climb::Stop(why) => why,
            Climb::Measure(s) => panic!("it measures on, for {s} s"),
        }
    }

    #[test]
    fn the_calibration_climbs_while_a_larger_suite_may_fit() {
        let reps = Reps::for_budget(600.0);
        let measured = |sides: &[u32], seconds: f64| {
            Costs::new(Calibration::of_runs(
                runs_on(sides, flat(seconds), flat(seconds)),
                reps,
                String::new(),
            ))
        };
        // Cheap runs, a large budget: on to 2048², never to the top, 4096², which 2048²
        // predicts.
        let cheap = measured(&[64, 128, 256, 512, 1024], 0.5);
        let cost = climb_to(&cheap, &STEPS, 2048, 10.0, 600.0, None);
        assert_eq!(
            cost,
            Climb::Measure(0.5 * 3.0),
            "two droplet points and a grid seed"
        );
        let cheap = measured(&[64, 128, 256, 512, 1024, 2048], 0.5);
        let top = stopped(climb_to(&cheap, &STEPS, 4096, 10.0, 600.0, None));
        assert!(top.contains("4096², is predicted from 2048²"), "{top}");
        // Past the calibration's share of the budget (12 s of 60 s): 1.5 s at 64², so at
        // most 6 s at 128² (one side measured tells no fixed cost from one per cell).
        let at_64 = measured(&[64], 0.5);
        let share = stopped(climb_to(&at_64, &STEPS, 128, 7.0, 60.0, None));
        assert!(share.contains("past its share"), "{share}");
        assert_eq!(
            climb_to(&at_64, &STEPS, 128, 5.0, 60.0, None),
            Climb::Measure(6.0)
        );
        // The suite does not fit at 128² already (16 points and a grid seed a seed, 3 s
        // each): no larger side can, whatever the share allows.
        let dear = measured(&[64, 128], 3.0);
        let why = stopped(climb_to(&dear, &STEPS, 256, 3.0, 100.0, None));
        assert!(
            why.contains("the suite would take 153 s at 128² already"),
            "{why}"
        );
        assert_eq!(
            climb_to(&dear, &STEPS, 256, 3.0, 200.0, None),
            Climb::Measure(9.0)
        );
        // A side the user chose needs no side past the one below it.
        let chosen = stopped(climb_to(&cheap, &STEPS, 256, 1.0, 600.0, Some(256)));
        assert!(chosen.contains("--size"), "{chosen}");
        let measured_on = climb_to(&cheap, &STEPS, 256, 1.0, 600.0, Some(512));
        assert!(matches!(measured_on, Climb::Measure(_)), "{measured_on:?}");
    }

    #[test]
    fn the_scale_is_the_largest_that_fits_and_the_references_where_one_fits() {
        // 1 µs a cell per point, grid free: a 2048² plan costs 3 x 16 points x 4.2 s.
        let c = costs(
            Line {
                fixed_s: 0.0,
                per_cell_s: 1e-6,
            },
            Line {
                fixed_s: 0.0,
                per_cell_s: 0.0,
            },
        );
        let reps = Reps::for_budget(60.0);
        let at = |size: u32| Plan::new(&STEPS, Scale::at(size), reps, false).predicted(&c);
        let between = (at(2048) + at(4096)) / 2.0;
        assert_eq!(choose_scale(&c, &STEPS, reps, between, &[]).0.size, 2048);
        // The reference lacks 2048²: its 1024² is preferred to a scale it cannot judge.
        assert_eq!(
            choose_scale(&c, &STEPS, reps, between, &[1024]).0.size,
            1024
        );
        // Nothing on the ladder fits: below it.
        assert_eq!(choose_scale(&c, &STEPS, reps, at(512), &[]).0.size, 512);
        assert_eq!(choose_scale(&c, &STEPS, reps, 0.0, &[]).0.size, 64);
    }

    #[test]
    fn cuts_come_in_order_and_spare_the_steps_begun() {
        let c = costs(
            Line {
                fixed_s: 1.0,
                per_cell_s: 0.0,
            },
            Line {
                fixed_s: 10.0,
                per_cell_s: 0.0,
            },
        );
        let mut plan = Plan::new(&STEPS, Scale::at(256), Reps::for_budget(60.0), false);
        let full = plan.predicted(&c);
        // A little less: the repetitions go first, then the grid's third seed.
        let begun = BTreeSet::from(["workgroup"]);
        assert!(plan.cut_to(&c, full - 5.0, &begun));
        assert!(
            plan.cuts[0].starts_with("fewer repetitions"),
            "{:?}",
            plan.cuts
        );
        assert!(
            plan.cuts.iter().any(|c| c == "seed 3 of grid"),
            "{:?}",
            plan.cuts
        );
        assert!(plan.predicted(&c) <= full - 5.0);
        // Far less: every third seed, then smaller scales and whole steps, never the
        // one begun.
        assert!(plan.cut_to(&c, 20.0, &begun));
        assert!(plan.queue.iter().all(|u| u.seeds != [THIRD_SEED]));
        assert!(plan.queue.iter().any(|u| u.step.name() == "workgroup"));
        assert!(plan
            .cuts
            .iter()
            .any(|c| c.ends_with("not run, the budget ran out")));
        let first_smaller = plan.cuts.iter().position(|c| c.contains(" instead of "));
        let first_dropped = plan.cuts.iter().position(|c| c.ends_with("budget ran out"));
        assert!(
            first_smaller < first_dropped,
            "a smaller side first: {:?}",
            plan.cuts
        );
        // At the last, a begun step's own seeds go too: nothing is left that would not fit.
        assert!(plan.cut_to(&c, 0.0, &begun));
        assert!(plan.queue.is_empty(), "{:?}", plan.queue);
    }

    #[test]
    fn a_smaller_side_for_the_steps_not_begun_is_cut_before_any_step() {
        // A point's cost all per cell: a step at 128² costs a quarter of it at 256².
        let c = costs(
            Line {
                fixed_s: 0.0,
                per_cell_s: 1e-4,
            },
            Line {
                fixed_s: 0.0,
                per_cell_s: 1e-4,
            },
        );
        let mut plan = Plan::new(&STEPS, Scale::at(256), Reps::for_budget(60.0), false);
        let full = plan.predicted(&c);
        let begun = BTreeSet::from(["workgroup"]);
        assert!(plan.cut_to(&c, full * 0.6, &begun));
        assert!(
            plan.cuts
                .iter()
                .any(|c| c.contains("at 128² instead of 256²")),
            "{:?}",
            plan.cuts
        );
        assert!(
            !plan.cuts.iter().any(|c| c.ends_with("budget ran out")),
            "{:?}",
            plan.cuts
        );
        // The step begun keeps its side.
        let mut workgroup = plan.queue.iter().filter(|u| u.step.name() == "workgroup");
        assert!(workgroup.clone().count() > 0 && workgroup.all(|u| u.scale.size == 256));
    }

    #[test]
    fn a_cut_on_too_high_a_prediction_is_undone_once_the_units_run_faster() {
        let mut c = costs(
            Line {
                fixed_s: 10.0,
                per_cell_s: 0.0,
            },
            Line {
                fixed_s: 10.0,
                per_cell_s: 0.0,
            },
        );
        let reps = Reps::for_budget(60.0);
        let mut plan = Plan::new(&STEPS, Scale::at(256), reps, false);
        let begun = BTreeSet::new();
        // Predicted far too slow (510 s): third seeds are cut.
        let trimmed = plan.trimmed(&c, 400.0, &begun);
        assert!(trimmed.queue.len() < plan.queue.len());
        assert!(
            trimmed.cuts.iter().any(|c| c.starts_with("seed 3")),
            "{:?}",
            trimmed.cuts
        );
        // The first unit runs in a tenth of its prediction: everything fits again.
        let first = trimmed.queue[0].clone();
        c.observe(
            &first,
            &trimmed.reps,
            c.predict(&first, &trimmed.reps) / 10.0,
        );
        plan.take(&first);
        let begun = BTreeSet::from([first.step.name()]);
        let again = plan.trimmed(&c, 400.0, &begun);
        assert_eq!(again.queue.len(), plan.queue.len(), "{:?}", again.cuts);
        assert!(again.cuts.is_empty());
        assert_eq!(again.reps, reps);
    }

    #[test]
    fn the_prediction_learns_from_what_each_step_took() {
        let mut c = costs(
            Line {
                fixed_s: 1.0,
                per_cell_s: 0.0,
            },
            Line {
                fixed_s: 2.0,
                per_cell_s: 0.0,
            },
        );
        let reps = Reps::for_budget(60.0);
        let unit = |step| Unit {
            step,
            seeds: vec![1, 2],
            scale: Scale::at(64),
            extra: false,
        };
        let (workgroup, grid) = (unit(STEPS[0]), unit(STEPS[4]));
        let first: Vec<Vec<u32>> = Plan::new(&STEPS, Scale::at(64), reps, false)
            .queue
            .iter()
            .take(2)
            .map(|u| u.seeds.clone())
            .collect();
        assert_eq!(first, [[1], [2]], "a seed a unit");
        assert_close(c.predict(&workgroup, &reps), 12.0, "the ladders alone");
        c.observe(&workgroup, &reps, 24.0);
        assert_close(c.predict(&workgroup, &reps), 24.0, "its own ratio");
        assert_close(c.predict(&grid, &reps), 8.0, "every unit's ratio");
        c.observe(&grid, &reps, 4.0);
        assert_close(c.predict(&grid, &reps), 4.0, "its own ratio");
        // The pooled ratio is 36/24, but the latest unit ran at 2: a device slowing
        // down is followed at once, and one speeding up is trusted only as it pools.
        c.observe(&workgroup, &reps, 12.0);
        assert_close(c.predict(&workgroup, &reps), 18.0, "the pooled ratio");
        let mut slower = c;
        slower.observe(&workgroup, &reps, 36.0);
        assert_close(slower.predict(&workgroup, &reps), 36.0, "the latest unit's");
        assert_eq!(workgroup.folder(), "seeds-01-02");
    }
}
