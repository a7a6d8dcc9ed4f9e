//! The suite: the paper's claims in its own words, what vkerode measures of each, the
//! sweeps that measure them at a scale, and the scale the budget buys.

use serde::{Deserialize, Serialize};

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
    /// The sweep or run that measures it.
    pub measured_by: Measurement,
}

/// What measures a claim: one of the suite's sweeps, or the strategies by dose.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Measurement {
    Sweep(&'static SweepPlan),
    Strategies,
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
}

pub const WORKGROUP: SweepPlan = SweepPlan {
    name: "workgroup",
    description: "The paper's kernel at workgroup sizes 8 to 256.",
    axes: "workgroup = [8, 16, 32, 64, 128, 256]",
};

pub const BATCHING: SweepPlan = SweepPlan {
    name: "batching",
    description: "The paper's kernel (workgroup 64) with global spawning and with each workgroup's droplets spawned in one tile of a half or a quarter of the map's side.",
    // Global spawning ignores the tile: its two points per seed are one setting, run
    // twice and pooled.
    axes: "spawn = [\"global\", \"tiled\"]\ntile = [{half}, {quarter}]",
};

pub const STAGGER: SweepPlan = SweepPlan {
    name: "stagger",
    description: "Each droplet's life in 2 passes, every droplet starting in the first (stagger off) or droplet i in pass i mod 2 (stagger on).",
    axes: "passes = [2]\nstagger = [\"off\", \"on\"]",
};

pub const ATOMICS: SweepPlan = SweepPlan {
    name: "atomics",
    description: "The paper's int fixed-point atomicAdd against float atomicAdd, a plain (racy) read-modify-write, and vkerode's deterministic mode (frozen heights, a delta buffer applied after each dispatch); each point reruns twice and counts the cells that differ.",
    axes: "atomics = [\"int\", \"float\", \"racy\", \"deterministic\"]",
};

/// Every sweep, in the order they run.
pub const SWEEPS: [&SweepPlan; 4] = [&WORKGROUP, &BATCHING, &STAGGER, &ATOMICS];

/// The paper's claims, in the order the summary lists them.
pub const CLAIMS: &[Claim] = &[
    Claim {
        id: "workgroup",
        topic: "workgroup size and divergence",
        paper: "layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in; ... Random droplet movement creates high divergence in memory access.",
        tested: "The paper states no speed for its workgroup; the suite tests its choice: 64 is as fast as any stable size from 8 to 256 (no workgroup's time below 64's beyond the noise threshold).",
        measured_by: Measurement::Sweep(&WORKGROUP),
    },
    Claim {
        id: "batching",
        topic: "spatially localised spawning",
        paper: "Thread workgroups run more efficiently when spawned within spatially localized bounding boxes rather than across random disjoint intervals.",
        tested: "Spawning each workgroup's droplets in one tile (a half or a quarter of the map's side) runs faster than global spawning beyond the noise threshold, and stays stable.",
        measured_by: Measurement::Sweep(&BATCHING),
    },
    Claim {
        id: "stagger-collisions",
        topic: "staggered dispatch: collisions",
        paper: "Splitting iteration steps into staggered dispatch passes reduces concurrent memory collisions on critical path height nodes.",
        tested: "With each life split into 2 passes, staggering the droplets' start passes lowers the subgroup conflicts per 1000 atomics (same-cell adds within a subgroup): the interval of the ratio over seeds lies below 1.",
        measured_by: Measurement::Sweep(&STAGGER),
    },
    Claim {
        id: "stagger-speed",
        topic: "staggered dispatch: speed",
        paper: "If hundreds of droplets converge into the same drainage channels, atomic serialization limits throughput. Splitting iteration steps into staggered dispatch passes reduces concurrent memory collisions ...",
        tested: "Staggered passes run faster than the same 2 passes unstaggered, beyond the noise threshold, and stay stable.",
        measured_by: Measurement::Sweep(&STAGGER),
    },
    Claim {
        id: "atomics-deterministic",
        topic: "fixed-point atomics: determinism",
        paper: "This enables deterministic read-modify-write cycles using atomicAdd",
        tested: "Each atomicAdd is order-independent, so the adds themselves are; the suite tests the whole run: with the paper's int fixed point, two reruns of the same droplets leave every cell the same, at every seed.",
        measured_by: Measurement::Sweep(&ATOMICS),
    },
    Claim {
        id: "atomics-races",
        topic: "fixed-point atomics against racy adds",
        paper: "Because multiple droplet threads can alter the same heightfield cells simultaneously, race conditions occur when modifying the elevation buffer.",
        tested: "A plain read-modify-write (racy) loses height updates that atomicAdd keeps: its lost mass lies above 0 at every seed, the int atomics' at 0.",
        measured_by: Measurement::Sweep(&ATOMICS),
    },
    Claim {
        id: "grid",
        topic: "the grid-centric strategy",
        paper: "Implementing this algorithm in GLSL compute shaders introduces two execution strategies: droplet-centric compute and grid-centric (shallow water) simulation.",
        tested: "The paper names the strategy and claims nothing of its cost; the suite tests the two as alternatives: at matched water (a quarter of a height unit per cell), the grid's GPU time per unit of eroded depth is no more than the droplets', beyond the noise threshold.",
        measured_by: Measurement::Strategies,
    },
];

/// The scale every sweep runs at.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Scale {
    /// The noise map's side, in cells.
    pub size: u32,
    /// Droplets per run: one per four cells, the paper's density at 4096².
    pub droplets: u32,
    /// Droplet seeds (1, 2, ...): each point runs once per seed.
    pub seeds: u32,
    /// Seconds of timed repetitions per point at most.
    pub point_budget_s: f64,
}

/// Map sides the suite may run at, smallest first: the first two calibrate.
pub const SIZES: [u32; 7] = [64, 128, 256, 512, 1024, 2048, 4096];

/// The matched water of the grid claim, per cell: the paper's density of droplets.
pub const GRID_WATER_PER_CELL: f64 = 0.25;

impl Scale {
    pub fn at(size: u32, seeds: u32, point_budget_s: f64) -> Self {
        Self {
            size,
            droplets: (size * size / 4).max(1),
            seeds,
            point_budget_s,
        }
    }

    fn seeds_toml(&self) -> String {
        let seeds: Vec<String> = (1..=self.seeds).map(|s| s.to_string()).collect();
        seeds.join(", ")
    }

    /// The points every sweep and the grid's runs make at this scale, for the estimate.
    pub fn runs(&self) -> usize {
        let per_seed: usize = SWEEPS.iter().map(|s| s.points_per_seed()).sum();
        (per_seed + GRID_STRATEGIES) * self.seeds as usize
    }
}

/// The strategies the grid claim runs: droplets and pipes.
const GRID_STRATEGIES: usize = 2;

impl SweepPlan {
    /// Its experiment's name, which names its folder: `reproduce-<name>`.
    pub fn experiment(&self) -> String {
        format!("reproduce-{}", self.name)
    }

    /// Its points per droplet seed: the product of its axes' lengths.
    pub fn points_per_seed(&self) -> usize {
        let axes = self.axes_at(SIZES[0]);
        let table: toml::Table = toml::from_str(&axes).expect("the suite's axes parse");
        table
            .values()
            .map(|v| v.as_array().map_or(1, Vec::len))
            .product()
    }

    /// Its axes on a map of side `size`.
    fn axes_at(&self, size: u32) -> String {
        self.axes
            .replace("{half}", &(size / 2).to_string())
            .replace("{quarter}", &(size / 4).to_string())
    }

    /// The experiment config of this sweep at `scale`, in TOML.
    pub fn config_toml(&self, scale: &Scale) -> String {
        format!(
            "name = \"{experiment}\"\ndescription = \"\"\"\n{description}\"\"\"\n\n[fixed]\nsize = {size}\ndroplets = {droplets}\n\n[axes]\n{axes}\ndroplet_seed = [{seeds}]\n\n[measure]\nwarmup = 1\nmin_reps = 5\nmax_reps = 50\ntarget_rel_iqr = 0.02\ntime_budget_s = {budget}\n",
            experiment = self.experiment(),
            description = self.description,
            size = scale.size,
            droplets = scale.droplets,
            axes = self.axes_at(scale.size),
            seeds = scale.seeds_toml(),
            budget = scale.point_budget_s,
        )
    }
}

/// The strategies config of the grid claim at `scale`, in TOML: droplets (corrected
/// physics) against the pipes, as `experiments/strategies.toml` runs them.
pub fn grid_toml(scale: &Scale) -> String {
    let seeds = scale.seeds_toml();
    format!(
        "name = \"reproduce-grid\"\ndescription = \"The droplets and the grid at matched water.\"\nwater_per_cell = [{GRID_WATER_PER_CELL}]\nseeds = [{seeds}]\n\n[measure]\nwarmup = 1\nmin_reps = 5\nmax_reps = 50\ntarget_rel_iqr = 0.02\ntime_budget_s = {budget}\n\n[[terrain]]\nname = \"noise\"\nsize = {size}\n\n[droplets]\nphysics = \"corrected\"\n\n[pipes]\npipes_fusion = \"fused\"\npipes_advection = \"upwind\"\npipes_check_every = 0\npipes_boundary = \"open\"\n",
        budget = scale.point_budget_s,
        size = scale.size,
    )
}

/// The largest size whose runs fit in `seconds`, by a per-run cost of `fixed_s` plus
/// `per_cell_s` per cell; the smallest where none fits.
pub fn largest_fitting(seconds: f64, seeds: u32, fixed_s: f64, per_cell_s: f64) -> u32 {
    let cost = |size: u32| {
        let scale = Scale::at(size, seeds, 0.0);
        scale.runs() as f64 * (fixed_s + per_cell_s * f64::from(size) * f64::from(size))
    };
    SIZES
        .iter()
        .copied()
        .take_while(|&size| cost(size) <= seconds)
        .last()
        .unwrap_or(SIZES[0])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_claim_has_its_own_id_and_every_sweep_parses_as_an_experiment() {
        for (i, claim) in CLAIMS.iter().enumerate() {
            assert!(CLAIMS[..i].iter().all(|c| c.id != claim.id), "{}", claim.id);
        }
        let scale = Scale::at(128, 2, 0.5);
        for plan in SWEEPS {
            let text = plan.config_toml(&scale);
            let file = std::path::Path::new("reproduce.toml");
            let experiment = crate::experiment::sweep::config::Experiment::parse(file, &text, None)
                .unwrap_or_else(|e| panic!("{}: {e}\n{text}", plan.name));
            assert_eq!(
                experiment.points.len(),
                plan.points_per_seed() * 2,
                "{}",
                plan.name
            );
        }
    }

    #[test]
    fn the_largest_size_that_fits_is_chosen() {
        // 2 seeds: runs() points of 1 s each and nothing per cell fit in runs() s.
        let runs = Scale::at(64, 2, 0.0).runs() as f64;
        assert_eq!(largest_fitting(runs, 2, 1.0, 0.0), 4096);
        assert_eq!(largest_fitting(runs - 1.0, 2, 1.0, 0.0), 64);
        // 1 µs a cell: 256² costs 0.066 s a run.
        let per_cell = 1e-6;
        let at = |size: f64| runs * (size * size * per_cell);
        assert_eq!(largest_fitting(at(256.0) + 0.01, 2, 0.0, per_cell), 256);
        assert_eq!(largest_fitting(at(256.0) - 0.01, 2, 0.0, per_cell), 128);
    }
}
