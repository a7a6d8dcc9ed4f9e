//! Contention and mass figures of an instrumented run: how the atomics spread over
//! cells, how often lanes of a subgroup collide on one cell, and where the height
//! change the droplets asked for went.

use serde::Serialize;

use crate::table::Section;

/// What the instrumented kernel recorded per droplet, and what the map received.
pub struct MassInputs<'a> {
    /// Per droplet: the height change its modifyHeight calls asked for; the sediment it
    /// carried when it died, negative if it died off the map's interior.
    pub intended: &'a [[f32; 2]],
    /// Per droplet (int modes): the fixed-point change it added; its deposits alone.
    pub applied_fixed: &'a [[i32; 2]],
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
    /// What the adds took from the terrain and gave it (int modes: fixed point, exact;
    /// float mode: the intended changes), in height units.
    pub mass_eroded: f64,
    pub mass_deposited: f64,
    /// Sediment droplets still carried when they died on the map, and when they died
    /// off its interior (the kernel lets them go there).
    pub mass_at_death: f64,
    pub mass_off_edge: f64,
    /// The terrain's balance: received - (deposited - eroded); 0 in int modes but racy.
    pub balance_terrain: f64,
    /// The sediment's balance: (eroded - deposited) - (at death + off edge +
    /// truncated); 0 up to float32 rounding of the droplets' sums.
    pub balance_sediment: f64,
    /// The tile-cache kernel's modifyHeight calls on cells outside its workgroup's
    /// cached window, which went to the global heightfield; `None` for other kernels.
    pub cache_escaped_adds: Option<u64>,
    /// Those calls over all modifyHeight calls.
    pub cache_escape_share: Option<f64>,
}

/// The contention figures that readers of points.csv judge by, as it names them.
pub const SUBGROUP_CONFLICTS_PER_1000: (&str, &str, &str) = (
            "subgroup_conflicts_per_1000",
            "per 1000 atomic adds",
            "adds whose cell another active lane of the same subgroup targeted at the same call",
        );
pub const MASS_INTENDED: (&str, &str, &str) = ("mass_intended", "height units x cells", "height change the droplets asked for (sum of deltaH)");
pub const MASS_TRUNCATED: (&str, &str, &str) = ("mass_truncated", "height units x cells", "intended - applied: lost to fixed-point rounding");
pub const MASS_LOST: (&str, &str, &str) = (
            "mass_lost",
            "height units x cells",
            "applied - received: lost updates (racy mode) or float rounding (float mode)",
        );

impl Section for Contention {
    const COLUMNS: &'static [(&'static str, &'static str, &'static str)] = &[
        ("hits_max", "atomic adds", "atomic adds the busiest cell received"),
        ("hits_p99", "atomic adds", "99th percentile of atomic adds per cell"),
        ("hottest_1pct_share", "share", "share of all atomic adds that landed on the hottest 1% of cells"),
        SUBGROUP_CONFLICTS_PER_1000,
        (
            "zero_add_share",
            "share",
            "modifyHeight calls whose change truncated to nothing (int modes) or was zero (float): adds that change no cell",
        ),
        MASS_INTENDED,
        ("mass_applied", "height units x cells", "what the adds carried, after fixed-point rounding"),
        ("mass_received", "height units x cells", "what the heightmap received: sum after minus sum before"),
        MASS_TRUNCATED,
        MASS_LOST,
        ("mass_eroded", "height units x cells", "what the adds took from the terrain"),
        ("mass_deposited", "height units x cells", "what the adds gave the terrain"),
        ("mass_at_death", "height units x cells", "sediment droplets still carried when they died on the map"),
        ("mass_off_edge", "height units x cells", "sediment droplets carried when they died off the map's interior"),
        (
            "balance_terrain",
            "height units x cells",
            "received - (deposited - eroded): 0 in int modes but racy",
        ),
        (
            "balance_sediment",
            "height units x cells",
            "(eroded - deposited) - (at death + off edge + truncated): 0 up to float32 rounding",
        ),
        (
            "cache_escaped_adds",
            "modifyHeight calls",
            "tile-cache kernel: calls on a cell outside the workgroup's cached window (tile and margin), which read and added to the global heightfield instead; empty for other kernels",
        ),
        (
            "cache_escape_share",
            "share",
            "cache_escaped_adds over all modifyHeight calls; empty for other kernels",
        ),
    ];
}

/// What the instrumented build counted over all modifyHeight calls.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AtomicCounts {
    pub atomics: u64,
    /// Calls whose cell another active lane of the subgroup targeted at the same time.
    pub conflicts: u64,
    /// Calls that added zero.
    pub zero_adds: u64,
    /// The tile-cache kernel's calls outside its window; `None` for other kernels.
    pub escapes: Option<u64>,
}

/// Hits per cell in rank order without sorting a copy: a 65536^2 map has 2^32 cells,
/// whose sort took minutes. Counts below `DENSE` by value, the rare higher ones sorted.
struct RankedHits {
    by_value: Vec<u64>,
    high: Vec<u32>,
    /// Hits over all cells.
    total: u64,
}

impl RankedHits {
    const DENSE: u32 = 1 << 16;

    fn of(hits: &[u32]) -> Self {
        let mut by_value = vec![0u64; Self::DENSE as usize];
        let mut high = Vec::new();
        let mut total = 0u64;
        for &h in hits {
            total += u64::from(h);
            match by_value.get_mut(h as usize) {
                Some(count) => *count += 1,
                None => high.push(h),
            }
        }
        high.sort_unstable();
        Self {
            by_value,
            high,
            total,
        }
    }

    /// The value of ascending rank `rank` (0 if there are no cells).
    fn at(&self, rank: usize) -> u32 {
        let mut below = 0u64;
        for (value, &count) in self.by_value.iter().enumerate() {
            below += count;
            if (rank as u64) < below {
                return value as u32;
            }
        }
        let rank_in_high = rank - below as usize;
        self.high.get(rank_in_high).copied().unwrap_or(0)
    }

    fn max(&self) -> u32 {
        match self.high.last() {
            Some(&h) => h,
            None => self.by_value.iter().rposition(|&c| c > 0).unwrap_or(0) as u32,
        }
    }

    /// The sum of the `k` highest values.
    fn top_sum(&self, k: usize) -> u64 {
        let from_high = k.min(self.high.len());
        let mut sum: u64 = self.high[self.high.len() - from_high..]
            .iter()
            .map(|&h| u64::from(h))
            .sum();
        let mut left = (k - from_high) as u64;
        for (value, &count) in self.by_value.iter().enumerate().rev() {
            let taken = count.min(left);
            sum += taken * value as u64;
            left -= taken;
            if left == 0 {
                break;
            }
        }
        sum
    }
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
        let ranked = RankedHits::of(hits);
        let p99 = ranked.at(((hits.len().max(1) - 1) as f64 * 0.99) as usize);
        let hottest_sum = ranked.top_sum(hits.len().div_ceil(100));

        let intended: f64 = mass.intended.iter().map(|d| f64::from(d[0])).sum();
        let sum_where = |keep: fn(f32) -> bool| -> f64 {
            mass.intended
                .iter()
                .filter(|d| keep(d[1]))
                .map(|d| f64::from(d[1].abs()))
                .sum()
        };
        let at_death = sum_where(|s| s > 0.0);
        let off_edge = sum_where(|s| s < 0.0);
        let fixed = |pick: fn(&[i32; 2]) -> i64| {
            mass.applied_fixed.iter().map(pick).sum::<i64>() as f64 / f64::from(mass.scale)
        };
        let (applied, deposited) = if mass.float_heights {
            let deposited = mass.intended.iter().map(|d| f64::from(d[0].max(0.0))).sum();
            (intended, deposited)
        } else {
            (fixed(|d| i64::from(d[0])), fixed(|d| i64::from(d[1])))
        };
        let eroded = deposited - applied;
        let truncated = intended - applied;
        Self {
            hits_max: ranked.max(),
            hits_p99: p99,
            hottest_1pct_share: if ranked.total > 0 {
                hottest_sum as f64 / ranked.total as f64
            } else {
                0.0
            },
            subgroup_conflicts_per_1000: 1000.0 * per_atomic(counts.conflicts),
            zero_add_share: per_atomic(counts.zero_adds),
            mass_intended: intended,
            mass_applied: applied,
            mass_received: mass.received,
            mass_truncated: truncated,
            mass_lost: applied - mass.received,
            mass_eroded: eroded,
            mass_deposited: deposited,
            mass_at_death: at_death,
            mass_off_edge: off_edge,
            balance_terrain: mass.received - (deposited - eroded),
            balance_sediment: (eroded - deposited) - (at_death + off_edge + truncated),
            cache_escaped_adds: counts.escapes,
            cache_escape_share: counts.escapes.map(per_atomic),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranked_hits_rank_as_a_sort_does() {
        let mut state = 12345u32;
        let mut next = || {
            state = crate::hash::pcg_hash(state);
            state
        };
        for cells in [0usize, 1, 7, 1000, 5000] {
            let hits: Vec<u32> = (0..cells)
                .map(|i| match i % 97 {
                    0 => 70_000 + next() % 1_000_000, // past the dense range
                    _ => next() % 300,
                })
                .collect();
            let ranked = RankedHits::of(&hits);
            let mut sorted = hits.clone();
            sorted.sort_unstable();
            for (rank, &value) in sorted.iter().enumerate() {
                assert_eq!(ranked.at(rank), value, "{cells} cells, rank {rank}");
            }
            assert_eq!(ranked.max(), sorted.last().copied().unwrap_or(0));
            for k in [0, 1, cells / 100, cells / 3, cells] {
                let top: u64 = sorted.iter().rev().take(k).map(|&h| u64::from(h)).sum();
                assert_eq!(ranked.top_sum(k), top, "{cells} cells, top {k}");
            }
            assert_eq!(
                ranked.total,
                sorted.iter().map(|&h| u64::from(h)).sum::<u64>()
            );
        }
    }

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
            escapes: Some(200),
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
        assert_eq!(c.cache_escaped_adds, Some(200));
        assert!((c.cache_escape_share.unwrap() - 200.0 / 798.0).abs() < 1e-12);
        let other = Contention::measure(
            &hits,
            AtomicCounts {
                escapes: None,
                ..counts
            },
            &mass,
        );
        assert_eq!(other.cache_escape_share, None);
    }

    #[test]
    fn mass_splits_into_truncation_lost_updates_and_the_sediment_droplets_kept() {
        // Droplet 0 died on the map carrying 0.25, droplet 1 off its edge carrying 0.1.
        let mass = MassInputs {
            intended: &[[1.2349, 0.25], [-0.5004, -0.1]],
            applied_fixed: &[[1234, 1500], [-500, 0]],
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
        assert!((c.mass_deposited - 1.5).abs() < 1e-9);
        assert!((c.mass_eroded - (1.5 - 0.734)).abs() < 1e-9);
        assert!((c.mass_at_death - 0.25).abs() < 1e-7);
        assert!((c.mass_off_edge - 0.1).abs() < 1e-7);
        // The racy 0.034 the map never received breaks the terrain's balance.
        assert!((c.balance_terrain + 0.034).abs() < 1e-9);
        let carried = c.mass_at_death + c.mass_off_edge;
        let sediment = (c.mass_eroded - c.mass_deposited) - (carried + c.mass_truncated);
        assert!((c.balance_sediment - sediment).abs() < 1e-9);
    }
}
