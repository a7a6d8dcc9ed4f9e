//! The budget: what the calibration measured, what it predicts each unit of the suite
//! costs, and what the suite cuts, in order, when what is left would overrun: fewer
//! repetitions first, then the third seed, then a smaller scale for the steps not yet
//! begun, then those steps themselves. After every unit the prediction learns from
//! what the unit took, and the cuts are decided again from the whole plan: a cut made
//! on a prediction that proved too high is undone.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use serde::{Deserialize, Serialize};

use super::suite::{sizes, Reps, Scale, Step, BASE_SEEDS, LADDER, THIRD_SEED};
use crate::readable_number;
use crate::stats::LinearFit;

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

    /// The least-squares line of wall time against cells. Where there is one point, or
    /// noise makes the line fall or cross zero: no fixed part, and the steeper of the
    /// line and the largest point's time per cell, an overestimate of larger maps (a
    /// smaller scale, never a blown budget). `None` for no points.
    pub fn fit(walls: &[(f64, f64)]) -> Option<Self> {
        let &(c_last, w_last) = walls.last()?;
        let line = LinearFit::of(walls);
        if let Some(l) = line.filter(|l| l.slope > 0.0 && l.intercept >= 0.0) {
            return Some(Self {
                fixed_s: l.intercept,
                per_cell_s: l.slope,
            });
        }
        Some(Self {
            fixed_s: 0.0,
            per_cell_s: line.map_or(0.0, |l| l.slope).max(w_last / c_last),
        })
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
    /// Per step: (seconds taken, seconds the lines predicted), over all its units.
    observed: BTreeMap<&'static str, (f64, f64)>,
    /// Per step: the same of its latest unit alone.
    latest: BTreeMap<&'static str, (f64, f64)>,
}

impl Costs {
    pub fn new(calibration: Calibration) -> Self {
        Self {
            calibration,
            observed: BTreeMap::new(),
            latest: BTreeMap::new(),
        }
    }

    /// What the lines alone predict of `unit` with `reps`: a sweep point's time less the
    /// repetitions' time it no longer spends (at most half of it).
    fn lines(&self, unit: &Unit, reps: &Reps) -> f64 {
        let cells = unit.scale.cells();
        let per_seed = match unit.step {
            Step::Sweep(_) => {
                let point = self.calibration.droplet_point.at(cells);
                let saved = (self.calibration.reps.point_budget_s - reps.point_budget_s).max(0.0);
                unit.step.points_per_seed(unit.extra) as f64 * (point - saved).max(point / 2.0)
            }
            Step::Grid => self.calibration.grid_seed.at(cells),
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

/// The largest scale whose whole plan (three seeds) fits in `seconds`: on the ladder,
/// one the reference holds (`reference_sizes`) where one fits, else the largest; below
/// the ladder where none fits; the smallest where nothing does. With its prediction.
pub fn choose_scale(
    costs: &Costs,
    steps: &[Step],
    reps: Reps,
    seconds: f64,
    reference_sizes: &[u32],
) -> (Scale, f64) {
    let predicted = |size: u32| Plan::new(steps, Scale::at(size), reps, false).predicted(costs);
    let fitting: Vec<u32> = sizes().filter(|&s| predicted(s) <= seconds).collect();
    let on_ladder = |s: &u32| LADDER.contains(s);
    let size = fitting
        .iter()
        .rev()
        .find(|s| on_ladder(s) && reference_sizes.contains(s))
        .or_else(|| fitting.iter().rev().find(|s| on_ladder(s)))
        .or_else(|| fitting.last())
        .copied()
        .unwrap_or_else(|| sizes().next().expect("the sizes are not empty"));
    (Scale::at(size), predicted(size))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::studies::reproduce::suite::STEPS;

    fn costs(droplet: Line, grid: Line) -> Costs {
        Costs::new(Calibration {
            droplet_point: droplet,
            grid_seed: grid,
            runs: Vec::new(),
            reps: Reps::for_budget(60.0),
        })
    }

    #[test]
    fn the_fit_is_a_line_through_the_points_and_never_falls() {
        let line = Line::fit(&[(100.0, 2.0), (200.0, 3.0), (400.0, 5.0)]).unwrap();
        assert!((line.fixed_s - 1.0).abs() < 1e-9 && (line.per_cell_s - 0.01).abs() < 1e-12);
        // Noise: the larger map ran faster. All of its time counts per cell.
        let falling = Line::fit(&[(100.0, 2.0), (400.0, 1.0)]).unwrap();
        assert_eq!((falling.fixed_s, falling.per_cell_s), (0.0, 1.0 / 400.0));
        // One point: all of it per cell.
        let one = Line::fit(&[(100.0, 2.0)]).unwrap();
        assert_eq!((one.fixed_s, one.per_cell_s), (0.0, 0.02));
        assert_eq!(Line::fit(&[]), None);
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
        assert_eq!(c.predict(&workgroup, &reps), 12.0);
        c.observe(&workgroup, &reps, 24.0);
        assert_eq!(c.predict(&workgroup, &reps), 24.0, "its own ratio");
        assert_eq!(c.predict(&grid, &reps), 8.0, "every unit's ratio");
        c.observe(&grid, &reps, 4.0);
        assert_eq!(c.predict(&grid, &reps), 4.0);
        // The pooled ratio is 36/24, but the latest unit ran at 2: a device slowing
        // down is followed at once, and one speeding up is trusted only as it pools.
        c.observe(&workgroup, &reps, 12.0);
        assert_eq!(c.predict(&workgroup, &reps), 18.0, "the pooled ratio");
        let mut slower = c;
        slower.observe(&workgroup, &reps, 36.0);
        assert_eq!(slower.predict(&workgroup, &reps), 36.0, "the latest unit's");
        assert_eq!(workgroup.folder(), "seeds-01-02");
    }
}
