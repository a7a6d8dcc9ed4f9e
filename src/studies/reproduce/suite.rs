//! The suite: the paper's claims in its own words, what vkerode measures of each (its
//! effect, unit and the direction the claim favours), the sweeps that measure them, and
//! the scales they may run at.

use serde::{Deserialize, Serialize};

use crate::stats::bootstrap::MIN_SAMPLES;

/// Whether the paper makes a claim, or the suite sets a statement beside it as context.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ClaimKind {
    /// The paper states it: it holds, does not hold, or the evidence is inconclusive.
    Paper,
    /// The paper states nothing of it: its effect is shown, and no verdict.
    Context,
}

/// Which way of an effect a claim favours.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Better {
    Lower,
    Higher,
}

impl Better {
    pub fn as_str(self) -> &'static str {
        match self {
            Better::Lower => "lower is better",
            Better::Higher => "higher is better",
        }
    }
}

/// What a claim's effect is: its quantity, its unit, and the direction it favours.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EffectSpec {
    pub what: &'static str,
    pub unit: &'static str,
    pub better: Better,
}

/// The band of no effect a claim's interval is judged against.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BandRule {
    /// 1 ± the device's rerun noise threshold (a ratio of times).
    NoiseThreshold,
    /// 1 ± [`COUNT_MARGIN`] (a ratio of counts over seeds).
    CountMargin,
    /// Exactly 0 (a share that either is or is not lost).
    Zero,
    /// None: the claim is exact (a count that must be 0).
    Exact,
}

/// A cut in a count below this share is no cut: the margin of a ratio of counts over
/// seeds (the collisions), fixed before any run.
pub const COUNT_MARGIN: f64 = 0.05;

/// One claim of the paper, as the suite tests it.
#[derive(Clone, Copy, Debug)]
pub struct Claim {
    /// Its key in reproduce.json and the reference bundle.
    pub id: &'static str,
    pub topic: &'static str,
    /// The paper's words (`hydraulic-erosion-glsl-compute`), verbatim.
    pub paper: &'static str,
    /// The statement measured, as it holds or does not.
    pub tested: &'static str,
    pub kind: ClaimKind,
    pub effect: EffectSpec,
    pub band: BandRule,
    /// The step that measures it.
    pub step: Step,
    /// Whether seeds are added, up to [`SEED_CAP`], while its interval stays unclear.
    pub adds_seeds: bool,
}

/// What measures a claim: one of the suite's sweeps, or the strategies by dose.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    Sweep(&'static SweepPlan),
    Grid,
}

/// How the grid step measures, since issue 40 changed it: a bundle measured before
/// (the grid's sea at 0, no sediment cap, its water at its own rate, thin water still)
/// is not set beside it.
pub const GRID_METHOD: &str = "grid v2: one sea at the lowest edge, sediment cap 1, the grid's water within a droplet's lifetime, no erosion below the sea, any moving water's speed";

impl Step {
    /// How the step measures, where that changed since the first bundles: a claim is
    /// set beside a reference's only where the two agree ("" for the first way).
    pub fn method(self) -> &'static str {
        match self {
            Step::Sweep(_) => "",
            Step::Grid => GRID_METHOD,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Step::Sweep(plan) => plan.name,
            Step::Grid => "grid",
        }
    }

    pub fn description(self) -> &'static str {
        match self {
            Step::Sweep(plan) => plan.description,
            Step::Grid => "The droplets and the grid at matched water (vkerode strategies).",
        }
    }

    /// Its runs per droplet seed: a sweep's points, or the grid's two strategies. Seeds
    /// past the base ones run a sweep's extension axes where it has them.
    pub fn points_per_seed(self, extra: bool) -> usize {
        match self {
            Step::Sweep(plan) => plan.points_per_seed(extra),
            Step::Grid => GRID_STRATEGIES,
        }
    }
}

/// A sweep of the suite: its axes over the shared fixed settings and seeds.
#[derive(Debug, PartialEq, Eq)]
pub struct SweepPlan {
    /// The experiment's name, `reproduce-<name>`, and its folder.
    pub name: &'static str,
    pub description: &'static str,
    /// Axes in TOML, beside the droplet seeds; `{half}` and `{quarter}` stand for
    /// those shares of the map's side.
    pub axes: &'static str,
    /// The axes of the seeds added past the base ones, where they are fewer (the
    /// points the claims that add seeds read).
    pub extension_axes: Option<&'static str>,
}

pub const WORKGROUP: SweepPlan = SweepPlan {
    name: "workgroup",
    description: "The paper's kernel at workgroup sizes 8 to 256.",
    axes: "workgroup = [8, 16, 32, 64, 128, 256]",
    extension_axes: None,
};

pub const BATCHING: SweepPlan = SweepPlan {
    name: "batching",
    description: "The paper's kernel (workgroup 64) with global spawning and with each workgroup's droplets spawned in one tile of a half or a quarter of the map's side.",
    // Global spawning ignores the tile: its two points per seed are one setting, run
    // twice and pooled.
    axes: "spawn = [\"global\", \"tiled\"]\ntile = [{half}, {quarter}]",
    extension_axes: None,
};

pub const STAGGER: SweepPlan = SweepPlan {
    name: "stagger",
    description: "Each droplet's life in 2 passes, every droplet starting in the first (stagger off) or droplet i in pass i mod 2 (stagger on).",
    axes: "passes = [2]\nstagger = [\"off\", \"on\"]",
    extension_axes: None,
};

pub const ATOMICS: SweepPlan = SweepPlan {
    name: "atomics",
    description: "The paper's int fixed-point atomicAdd against float atomicAdd, a plain (racy) read-modify-write, and vkerode's deterministic mode (frozen heights, a delta buffer applied after each dispatch); each point reruns twice and counts the cells that differ.",
    axes: "atomics = [\"int\", \"float\", \"racy\", \"deterministic\"]",
    // The racy loss is held against int's: the seeds added for it run those two.
    extension_axes: Some("atomics = [\"int\", \"racy\"]"),
};

/// Every step, in the order they run.
pub const STEPS: [Step; 5] = [
    Step::Sweep(&WORKGROUP),
    Step::Sweep(&BATCHING),
    Step::Sweep(&STAGGER),
    Step::Sweep(&ATOMICS),
    Step::Grid,
];

/// The paper's claims, in the order the summary lists them.
pub const CLAIMS: &[Claim] = &[
    Claim {
        id: "workgroup",
        topic: "workgroup size and divergence",
        paper: "layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in; ... Random droplet movement creates high divergence in memory access.",
        tested: "The paper states no speed for its workgroup: the suite sets beside its choice of 64 the fastest stable size from 8 to 256.",
        kind: ClaimKind::Context,
        effect: EffectSpec {
            what: "GPU time at the fastest other workgroup (stable where one is) / at 64",
            unit: "ratio",
            better: Better::Lower,
        },
        band: BandRule::NoiseThreshold,
        step: Step::Sweep(&WORKGROUP),
        adds_seeds: false,
    },
    Claim {
        id: "batching",
        topic: "spatially localised spawning",
        paper: "Thread workgroups run more efficiently when spawned within spatially localized bounding boxes rather than across random disjoint intervals.",
        tested: "Spawning each workgroup's droplets in one tile (a half or a quarter of the map's side) runs faster than global spawning beyond the noise threshold, and stays stable.",
        kind: ClaimKind::Paper,
        effect: EffectSpec {
            what: "GPU time with tiled spawning (the fastest stable tile) / with global spawning",
            unit: "ratio",
            better: Better::Lower,
        },
        band: BandRule::NoiseThreshold,
        step: Step::Sweep(&BATCHING),
        adds_seeds: false,
    },
    Claim {
        id: "stagger-collisions",
        topic: "staggered dispatch: collisions",
        paper: "Splitting iteration steps into staggered dispatch passes reduces concurrent memory collisions on critical path height nodes.",
        tested: "With each life split into 2 passes, staggering the droplets' start passes lowers the subgroup conflicts per 1000 atomics (same-cell adds within a subgroup): the interval of the ratio over seeds lies below 1 - 5%.",
        kind: ClaimKind::Paper,
        effect: EffectSpec {
            what: "subgroup conflicts per 1000 atomics, staggered / unstaggered (mean over seeds)",
            unit: "ratio",
            better: Better::Lower,
        },
        band: BandRule::CountMargin,
        step: Step::Sweep(&STAGGER),
        adds_seeds: true,
    },
    Claim {
        id: "stagger-speed",
        topic: "staggered dispatch: speed",
        paper: "If hundreds of droplets converge into the same drainage channels, atomic serialization limits throughput. Splitting iteration steps into staggered dispatch passes reduces concurrent memory collisions ...",
        tested: "Staggered passes run faster than the same 2 passes unstaggered, beyond the noise threshold, and stay stable.",
        kind: ClaimKind::Paper,
        effect: EffectSpec {
            what: "GPU time of 2 passes, staggered / unstaggered",
            unit: "ratio",
            better: Better::Lower,
        },
        band: BandRule::NoiseThreshold,
        step: Step::Sweep(&STAGGER),
        adds_seeds: false,
    },
    Claim {
        id: "atomics-deterministic",
        topic: "fixed-point atomics: determinism",
        paper: "This enables deterministic read-modify-write cycles using atomicAdd",
        tested: "Each atomicAdd is order-independent, so the adds themselves are; the suite tests the whole run: with the paper's int fixed point, two reruns of the same droplets leave every cell the same, at every seed.",
        kind: ClaimKind::Paper,
        effect: EffectSpec {
            what: "cells differing between two reruns of int atomics (the most over seeds)",
            unit: "cells",
            better: Better::Lower,
        },
        band: BandRule::Exact,
        step: Step::Sweep(&ATOMICS),
        adds_seeds: false,
    },
    Claim {
        id: "atomics-races",
        topic: "fixed-point atomics against racy adds",
        paper: "Because multiple droplet threads can alter the same heightfield cells simultaneously, race conditions occur when modifying the elevation buffer.",
        tested: "A plain read-modify-write (racy) loses height updates that atomicAdd keeps: the interval of its lost mass over seeds lies above 0, and the int atomics lose none at any seed.",
        kind: ClaimKind::Paper,
        effect: EffectSpec {
            what: "mass racy adds lost / the net change intended (mean over seeds)",
            unit: "share of the intended net change",
            better: Better::Higher,
        },
        band: BandRule::Zero,
        step: Step::Sweep(&ATOMICS),
        adds_seeds: true,
    },
    Claim {
        id: "grid",
        topic: "the grid-centric strategy",
        paper: "Implementing this algorithm in GLSL compute shaders introduces two execution strategies: droplet-centric compute and grid-centric (shallow water) simulation.",
        tested: "The paper names the strategy and claims nothing of its cost: the suite sets beside it the grid's GPU time per unit of eroded depth against the droplets', at matched water (a quarter of a height unit per cell).",
        kind: ClaimKind::Context,
        effect: EffectSpec {
            what: "GPU time per eroded depth, grid / droplets (mean over seeds)",
            unit: "ratio",
            better: Better::Lower,
        },
        band: BandRule::NoiseThreshold,
        step: Step::Grid,
        adds_seeds: true,
    },
];

/// The claim `id`, if there is one.
pub fn claim(id: &str) -> Option<&'static Claim> {
    CLAIMS.iter().find(|c| c.id == id)
}

/// The scales the reference bundle holds, and a GPU's suite is chosen from: map sides,
/// smallest first.
pub const LADDER: [u32; 3] = [1024, 2048, 4096];
/// Sides below the ladder, for a device or a budget that no ladder scale fits (a CPU
/// device): their verdicts are set beside no reference.
pub const BELOW_LADDER: [u32; 4] = [64, 128, 256, 512];

/// Every side the suite may run at, smallest first: the calibration grows through them.
pub fn sizes() -> impl Iterator<Item = u32> {
    BELOW_LADDER.into_iter().chain(LADDER)
}

/// The droplet seeds every step runs first: the fewest that give an interval.
pub const BASE_SEEDS: [u32; 2] = [1, 2];
/// The seed each step adds next, where the budget allows.
pub const THIRD_SEED: u32 = 3;
/// The most seeds a claim that adds seeds runs.
pub const SEED_CAP: u32 = 12;
/// Seeds added at a time to a claim whose interval is unclear.
pub const SEED_BATCH: u32 = 3;

/// The matched water of the grid claim, per cell: the paper's density of droplets.
pub const GRID_WATER_PER_CELL: f64 = 0.25;

/// The strategies the grid claim runs: droplets and pipes.
const GRID_STRATEGIES: usize = 2;

/// The map a step runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Scale {
    /// The noise map's side, in cells.
    pub size: u32,
    /// Droplets per run: one per four cells, the paper's density at 4096².
    pub droplets: u32,
}

impl Scale {
    pub fn at(size: u32) -> Self {
        Self {
            size,
            droplets: (size * size / 4).max(1),
        }
    }

    pub fn cells(&self) -> f64 {
        f64::from(self.size) * f64::from(self.size)
    }

    /// Whether the reference bundle may hold it.
    pub fn on_ladder(&self) -> bool {
        LADDER.contains(&self.size)
    }
}

/// How a step's points are measured: the repetitions' time budget and cap. The budget
/// cuts them before it cuts a scale; never below [`MIN_SAMPLES`], which a speed verdict
/// needs.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Reps {
    /// Seconds of timed repetitions per point at most.
    pub point_budget_s: f64,
    pub max_reps: u32,
}

impl Reps {
    /// The suite's first rule: repetitions get a share of the budget, 0.1 to 1 s a
    /// point, at most 50.
    pub fn for_budget(budget_s: f64) -> Self {
        Self {
            point_budget_s: (budget_s / 600.0).clamp(0.1, 1.0),
            max_reps: 50,
        }
    }

    /// Fewer: half the time, at most half the repetitions, never under the minimum.
    pub fn fewer(self) -> Self {
        Self {
            point_budget_s: self.point_budget_s / 2.0,
            max_reps: (self.max_reps / 2).max(MIN_SAMPLES as u32),
        }
    }

    /// Whether [`Reps::fewer`] would change anything.
    pub fn can_shrink(self) -> bool {
        self.max_reps > MIN_SAMPLES as u32
    }

    fn measure_toml(&self, min_reps: u32) -> String {
        format!(
            "[measure]\nwarmup = 1\nmin_reps = {min_reps}\nmax_reps = {max}\ntarget_rel_iqr = 0.02\ntime_budget_s = {budget}\n",
            max = self.max_reps.max(min_reps),
            budget = self.point_budget_s,
        )
    }
}

/// Timed repetitions of a grid run at least: its cost is weighed over seeds, each run
/// long and quiet, so it needs fewer than a speed verdict.
const GRID_MIN_REPS: u32 = 3;

fn seeds_toml(seeds: &[u32]) -> String {
    let seeds: Vec<String> = seeds.iter().map(u32::to_string).collect();
    seeds.join(", ")
}

impl SweepPlan {
    /// Its experiment's name, which names its folder: `reproduce-<name>`.
    pub fn experiment(&self) -> String {
        format!("reproduce-{}", self.name)
    }

    /// The axes its seeds run: the extension's past the base seeds, where it has them.
    fn axes_for(&self, extra: bool) -> &'static str {
        match (extra, self.extension_axes) {
            (true, Some(axes)) => axes,
            _ => self.axes,
        }
    }

    /// Its points per droplet seed: the product of its axes' lengths.
    pub fn points_per_seed(&self, extra: bool) -> usize {
        let axes = Self::axes_at(self.axes_for(extra), 64);
        let table: toml::Table = toml::from_str(&axes).expect("the suite's axes parse");
        table
            .values()
            .map(|v| v.as_array().map_or(1, Vec::len))
            .product()
    }

    /// `axes` on a map of side `size`.
    fn axes_at(axes: &str, size: u32) -> String {
        axes.replace("{half}", &(size / 2).to_string())
            .replace("{quarter}", &(size / 4).to_string())
    }

    /// The experiment config of this sweep at `scale` over `seeds`, in TOML: judged
    /// against the CPU reference (stability, erosion), without the landform figures no
    /// claim reads.
    pub fn config_toml(&self, scale: &Scale, seeds: &[u32], reps: &Reps, extra: bool) -> String {
        format!(
            "name = \"{experiment}\"\ndescription = \"\"\"\n{description}\"\"\"\n\n[fixed]\nsize = {size}\ndroplets = {droplets}\n\n[axes]\n{axes}\ndroplet_seed = [{seeds}]\n\n{measure}judge = true\nlandform = false\n",
            experiment = self.experiment(),
            description = self.description,
            size = scale.size,
            droplets = scale.droplets,
            axes = Self::axes_at(self.axes_for(extra), scale.size),
            seeds = seeds_toml(seeds),
            measure = reps.measure_toml(MIN_SAMPLES as u32),
        )
    }
}

/// The strategies config of the grid claim at `scale` over `seeds`, in TOML: droplets
/// (corrected physics) against the pipes, as `experiments/strategies.toml` runs them.
pub fn grid_toml(scale: &Scale, seeds: &[u32], reps: &Reps) -> String {
    format!(
        "name = \"reproduce-grid\"\ndescription = \"The droplets and the grid at matched water.\"\nwater_per_cell = [{GRID_WATER_PER_CELL}]\nseeds = [{seeds}]\n\n{measure}\n[[terrain]]\nname = \"noise\"\nsize = {size}\n\n[droplets]\nphysics = \"corrected\"\n\n[pipes]\npipes_fusion = \"fused\"\npipes_advection = \"upwind\"\npipes_check_every = 0\n",
        seeds = seeds_toml(seeds),
        measure = reps.measure_toml(GRID_MIN_REPS),
        size = scale.size,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_claim_has_its_own_id_and_every_sweep_parses_as_an_experiment() {
        for (i, claim) in CLAIMS.iter().enumerate() {
            assert!(CLAIMS[..i].iter().all(|c| c.id != claim.id), "{}", claim.id);
        }
        let scale = Scale::at(128);
        for step in STEPS {
            let Step::Sweep(plan) = step else { continue };
            for extra in [false, true] {
                let text = plan.config_toml(&scale, &[1, 2], &Reps::for_budget(60.0), extra);
                let file = std::path::Path::new("reproduce.toml");
                let experiment =
                    crate::experiment::sweep::config::Experiment::parse(file, &text, None)
                        .unwrap_or_else(|e| panic!("{}: {e}\n{text}", plan.name));
                assert_eq!(
                    experiment.points.len(),
                    plan.points_per_seed(extra) * 2,
                    "{}",
                    plan.name
                );
                assert!(!experiment.config.measure.landform);
            }
        }
        assert_eq!(ATOMICS.points_per_seed(true), 2, "int and racy");
        // The collisions' statement names the margin the judge holds it to.
        let stated = format!("1 - {}%", crate::readable_number(COUNT_MARGIN * 100.0));
        assert!(claim("stagger-collisions")
            .unwrap()
            .tested
            .contains(&stated));
    }

    #[test]
    fn fewer_repetitions_never_go_below_what_a_verdict_needs() {
        let mut reps = Reps::for_budget(600.0);
        assert_eq!(reps.point_budget_s, 1.0);
        while reps.can_shrink() {
            reps = reps.fewer();
        }
        assert_eq!(reps.max_reps, MIN_SAMPLES as u32);
        assert!(reps
            .measure_toml(MIN_SAMPLES as u32)
            .contains("min_reps = 10"));
    }
}
