//! Contention and mass figures of an instrumented run: how the atomics spread over
//! cells, how often lanes of a subgroup collide on one cell, and where the height
//! change the droplets asked for went.

use serde::Serialize;

/// What the instrumented kernel recorded per droplet, and what the map received.
pub struct MassInputs<'a> {
    /// Height change each droplet's modifyHeight calls asked for.
    pub intended: &'a [f32],
    /// Fixed-point change each droplet added (int modes).
    pub applied_fixed: &'a [i32],
    /// Float mode adds `intended` itself, with no fixed point.
    pub float_heights: bool,
    pub scale: f32,
    /// Sum of the heights after, minus before, in height units.
    pub received: f64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Contention {
    /// Atomics the busiest cell received.
    pub hits_max: u32,
    /// 99th percentile of atomics per cell.
    pub hits_p99: u32,
    /// Share of all atomics that landed on the hottest 1% of cells.
    pub hottest_1pct_share: f64,
    /// Atomics whose cell another active lane of the same subgroup targeted at the same
    /// call, per 1000 atomics.
    pub subgroup_conflicts_per_1000: f64,
    /// Share of modifyHeight calls whose change truncated to nothing (int modes) or was
    /// zero (float mode): adds that change no cell.
    pub zero_add_share: f64,
    /// Height change the droplets asked for (sum of deltaH), in height units.
    pub mass_intended: f64,
    /// What the adds carried, after fixed-point truncation.
    pub mass_applied: f64,
    /// What the heightmap received: sum after minus sum before.
    pub mass_received: f64,
    /// intended - applied: lost to truncation toward zero.
    pub mass_truncated: f64,
    /// applied - received: lost updates (racy mode), or float rounding (float mode).
    pub mass_lost: f64,
}

/// What the instrumented build counted over all modifyHeight calls.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AtomicCounts {
    pub atomics: u64,
    /// Calls whose cell another active lane of the subgroup targeted at the same time.
    pub conflicts: u64,
    /// Calls that added zero.
    pub zero_adds: u64,
}

impl Contention {
    pub fn measure(hits: &[u32], counts: AtomicCounts, mass: &MassInputs) -> Self {
        let per_atomic = |n: u64| {
            if counts.atomics > 0 {
                n as f64 / counts.atomics as f64
            } else {
                0.0
            }
        };
        let mut sorted = hits.to_vec();
        sorted.sort_unstable();
        let total: u64 = sorted.iter().map(|&h| u64::from(h)).sum();
        let p99 = sorted
            .get(((sorted.len().max(1) - 1) as f64 * 0.99) as usize)
            .copied()
            .unwrap_or(0);
        let hottest = sorted.len().div_ceil(100);
        let hottest_sum: u64 = sorted
            .iter()
            .rev()
            .take(hottest)
            .map(|&h| u64::from(h))
            .sum();

        let intended: f64 = mass.intended.iter().map(|&d| f64::from(d)).sum();
        let applied = if mass.float_heights {
            intended
        } else {
            mass.applied_fixed
                .iter()
                .map(|&d| i64::from(d))
                .sum::<i64>() as f64
                / f64::from(mass.scale)
        };
        Self {
            hits_max: sorted.last().copied().unwrap_or(0),
            hits_p99: p99,
            hottest_1pct_share: if total > 0 {
                hottest_sum as f64 / total as f64
            } else {
                0.0
            },
            subgroup_conflicts_per_1000: 1000.0 * per_atomic(counts.conflicts),
            zero_add_share: per_atomic(counts.zero_adds),
            mass_intended: intended,
            mass_applied: applied,
            mass_received: mass.received,
            mass_truncated: intended - applied,
            mass_lost: applied - mass.received,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hit_statistics_find_the_hot_cells() {
        let mut hits = vec![1u32; 200];
        hits[7] = 500;
        hits[9] = 100;
        let mass = MassInputs {
            intended: &[],
            applied_fixed: &[],
            float_heights: false,
            scale: 1000.0,
            received: 0.0,
        };
        let counts = AtomicCounts {
            atomics: 798,
            conflicts: 40,
            zero_adds: 399,
        };
        let c = Contention::measure(&hits, counts, &mass);
        assert_eq!(c.hits_max, 500);
        assert_eq!(
            c.hits_p99, 1,
            "two hot cells of 200 lie above the 99th percentile"
        );
        // The hottest 1% (2 cells) took 600 of 798 atomics.
        assert!((c.hottest_1pct_share - 600.0 / 798.0).abs() < 1e-12);
        assert!((c.subgroup_conflicts_per_1000 - 1000.0 * 40.0 / 798.0).abs() < 1e-9);
        assert_eq!(c.zero_add_share, 0.5);
    }

    #[test]
    fn mass_splits_into_truncation_and_lost_updates() {
        let mass = MassInputs {
            intended: &[1.2349, -0.5004],
            applied_fixed: &[1234, -500],
            float_heights: false,
            scale: 1000.0,
            received: 0.700,
        };
        let c = Contention::measure(&[], AtomicCounts::default(), &mass);
        assert!((c.mass_applied - 0.734).abs() < 1e-9);
        assert!((c.mass_truncated - (0.7345 - 0.734)).abs() < 1e-6);
        assert!((c.mass_lost - 0.034).abs() < 1e-9);
        let sum = c.mass_received + c.mass_truncated + c.mass_lost;
        assert!((c.mass_intended - sum).abs() < 1e-9);
    }
}
