//! Figures of merit of one run: throughput, and what the erosion did to the terrain.

use serde::Serialize;

use std::time::Duration;

use crate::erosion::WorkCount;
use crate::terrain::drainage::{channel_incision, channel_mask};
use crate::terrain::Heightmap;

/// Share of cells with the largest upstream area that count as channels.
const CHANNEL_SHARE: f64 = 0.05;

/// Which clock the throughput figures are divided by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TimeSource {
    /// GPU timestamps around the dispatches.
    GpuTimestamps,
    /// Host time around the whole submission, upload and read-back included: the
    /// fallback on devices without timestamps.
    WallClock,
    /// Host time around the CPU reference's droplets.
    CpuWallClock,
}

#[derive(Clone, Debug, Serialize)]
pub struct RunFigures {
    pub time_source: TimeSource,
    pub gpu_ms: Option<f64>,
    pub wall_ms: f64,
    pub droplets_per_s: f64,
    pub steps_per_s: f64,
    pub atomics_per_s: f64,
}

impl RunFigures {
    pub fn new(
        source: TimeSource,
        gpu: Option<Duration>,
        wall: Duration,
        work: &WorkCount,
    ) -> Self {
        let seconds = gpu.unwrap_or(wall).as_secs_f64().max(f64::MIN_POSITIVE);
        Self {
            time_source: source,
            gpu_ms: gpu.map(|t| t.as_secs_f64() * 1e3),
            wall_ms: wall.as_secs_f64() * 1e3,
            droplets_per_s: work.droplets as f64 / seconds,
            steps_per_s: work.steps as f64 / seconds,
            atomics_per_s: work.atomics as f64 / seconds,
        }
    }
}

/// What erosion did, in height units (cells).
#[derive(Clone, Debug, Serialize)]
pub struct ChangeFigures {
    /// Sum of (after - before) over all cells.
    pub total_change: f64,
    pub mean_abs_change: f64,
    pub changed_cells_share: f64,
    pub deepest_erosion: f32,
    pub highest_deposition: f32,
    /// Mean change over the channel cells of the initial terrain (D8, top 5% area).
    pub channel_mean_change: f64,
    /// Mean change over all other cells.
    pub hillslope_mean_change: f64,
    /// How far channels lie below their 7x7 surroundings, before and after (each
    /// map's own channels).
    pub channel_incision_before: f64,
    pub channel_incision_after: f64,
    pub min_after: f32,
    pub max_after: f32,
}

impl ChangeFigures {
    pub fn between(
        before: &Heightmap,
        after: &Heightmap,
        fixed_before: &[i32],
        fixed_after: &[i32],
    ) -> Self {
        let channels = channel_mask(before, CHANNEL_SHARE);
        let mut total = 0.0f64;
        let mut abs_total = 0.0f64;
        let mut changed = 0usize;
        let (mut deepest, mut highest) = (0.0f32, 0.0f32);
        let mut sums = [(0.0f64, 0usize); 2];
        for (i, (&b, &a)) in before.data().iter().zip(after.data()).enumerate() {
            let d = a - b;
            total += f64::from(d);
            abs_total += f64::from(d.abs());
            changed += usize::from(fixed_before[i] != fixed_after[i]);
            deepest = deepest.min(d);
            highest = highest.max(d);
            let group = &mut sums[usize::from(channels[i])];
            group.0 += f64::from(d);
            group.1 += 1;
        }
        let n = before.data().len() as f64;
        let mean = |(sum, count): (f64, usize)| if count > 0 { sum / count as f64 } else { 0.0 };
        let stats = after.stats();
        Self {
            total_change: total,
            mean_abs_change: abs_total / n,
            changed_cells_share: changed as f64 / n,
            deepest_erosion: deepest,
            highest_deposition: highest,
            channel_mean_change: mean(sums[1]),
            hillslope_mean_change: mean(sums[0]),
            channel_incision_before: channel_incision(before, CHANNEL_SHARE, 3),
            channel_incision_after: channel_incision(after, CHANNEL_SHARE, 3),
            min_after: stats.min,
            max_after: stats.max,
        }
    }
}
