//! Splitting droplets into dispatches. Each dispatch carries its first droplet's id,
//! so droplet `i` spawns at the same place however the droplets are batched.

use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Batch {
    pub base_id: u32,
    pub size: u32,
    pub groups: u32,
    /// Checkerboard colour of this dispatch (0 without phases).
    pub phase: u32,
    /// Workgroups of this colour dispatched before this one.
    pub group_base: u32,
}

/// Droplets per dispatch when the user sets none: at most one droplet in flight per
/// DEFAULT_CELLS_PER_DROPLET cells, so that droplets racing over the same cells cannot
/// compound each other's erosion (see README, "Stability").
pub const DEFAULT_CELLS_PER_DROPLET: u64 = 64;

pub fn default_batch(cells: u64) -> u32 {
    (cells / DEFAULT_CELLS_PER_DROPLET).clamp(1, u64::from(u32::MAX)) as u32
}

/// Batches of at most `cap` droplets, never more than `max_groups` workgroups of
/// `workgroup` droplets each (the device's `maxComputeWorkGroupCount[0]`).
pub fn plan_batches(droplets: u32, cap: u32, workgroup: u32, max_groups: u32) -> Vec<Batch> {
    assert!(
        workgroup > 0 && max_groups > 0 && cap > 0,
        "batch limits are positive"
    );
    let per_dispatch = u64::from(cap).min(u64::from(max_groups) * u64::from(workgroup));
    let mut batches = Vec::new();
    let mut base = 0u64;
    while base < u64::from(droplets) {
        let size = per_dispatch.min(u64::from(droplets) - base);
        batches.push(Batch {
            base_id: base as u32,
            size: size as u32,
            groups: size.div_ceil(u64::from(workgroup)) as u32,
            phase: 0,
            group_base: 0,
        });
        base += size;
    }
    batches
}

/// Each batch split into `phases` dispatches, one per checkerboard colour, in colour
/// order; every droplet still runs once.
pub fn plan_phased(batches: &[Batch], phases: u32, workgroup: u32) -> Vec<Batch> {
    let mut group_base = vec![0u32; phases as usize];
    let mut dispatches = Vec::new();
    for batch in batches {
        let mut base = batch.base_id;
        for phase in 0..phases {
            let end = batch.base_id
                + (u64::from(batch.size) * u64::from(phase + 1) / u64::from(phases)) as u32;
            let size = end - base;
            if size > 0 {
                let groups = size.div_ceil(workgroup);
                dispatches.push(Batch {
                    base_id: base,
                    size,
                    groups,
                    phase,
                    group_base: group_base[phase as usize],
                });
                group_base[phase as usize] += groups;
            }
            base = end;
        }
    }
    dispatches
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_cover_every_droplet_once_within_the_group_limit() {
        let batches = plan_batches(200_001, 1_000_000, 1, 65_535);
        assert_eq!(batches.len(), 4);
        assert!(batches.iter().all(|b| b.groups <= 65_535));
        let mut next = 0;
        for b in &batches {
            assert_eq!(b.base_id, next);
            next += b.size;
        }
        assert_eq!(next, 200_001);
    }

    #[test]
    fn the_user_cap_splits_and_a_partial_group_is_rounded_up() {
        let batches = plan_batches(1000, 300, 64, 65_535);
        let sizes: Vec<u32> = batches.iter().map(|b| b.size).collect();
        assert_eq!(sizes, vec![300, 300, 300, 100]);
        assert_eq!(batches[0].groups, 5);
        assert_eq!(batches[3].groups, 2);
    }

    #[test]
    fn phases_split_every_batch_without_losing_a_droplet() {
        let batches = plan_batches(1000, 300, 64, 65_535);
        let phased = plan_phased(&batches, 9, 64);
        let total: u32 = phased.iter().map(|b| b.size).sum();
        assert_eq!(total, 1000);
        let mut next = 0;
        for b in &phased {
            assert_eq!(b.base_id, next);
            next += b.size;
        }
        let colour_4: Vec<u32> = phased
            .iter()
            .filter(|b| b.phase == 4)
            .map(|b| b.group_base)
            .collect();
        assert_eq!(colour_4.len(), 4);
        assert_eq!(colour_4[0], 0);
        assert!(colour_4.windows(2).all(|w| w[1] > w[0]), "{colour_4:?}");
    }

    #[test]
    fn huge_limits_do_not_overflow() {
        let batches = plan_batches(u32::MAX, u32::MAX, 1024, u32::MAX);
        assert_eq!(batches.len(), 1);
        assert_eq!(batches[0].groups, u32::MAX.div_ceil(1024));
    }
}
