//! Figures of merit of one run, whatever its strategy: throughput in the strategy's
//! unit, its share of the strategy's ceiling, and what the erosion did to the terrain.

use std::time::Duration;

use rayon::prelude::*;

use serde::Serialize;

use crate::erosion::{Ceiling, ErosionError, Figures, Prepared, WorkUnit};
use crate::probes::ceilings::Ceilings;
use crate::probes::gpu_state::{GpmCounters, GpuMonitor};
use crate::probes::ProbeError;
use crate::table::Section;
use crate::terrain::drainage::{channel_incision, channel_mask, Drainage};
use crate::terrain::metrics::{Landform, INCISION_RADIUS, INCISION_SHARE};
use crate::terrain::units::HeightUnit;
use crate::terrain::{Cells, Change, Heightmap};

/// Which clock the throughput figures are divided by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum TimeSource {
    /// GPU timestamps around the dispatches.
    GpuTimestamps,
    /// Host time around the whole submission, upload and read-back included: the
    /// fallback on devices without timestamps.
    WallClock,
    /// Host time around the CPU reference.
    CpuWallClock,
}

/// A run's time and throughput.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct RunFigures {
    pub time_source: TimeSource,
    pub gpu_ms: Option<f64>,
    pub wall_ms: f64,
    /// What `steps` counts: droplet-steps or cell-steps.
    pub unit: WorkUnit,
    pub steps: u64,
    /// Steps per second of GPU time (of wall time without timestamps).
    pub steps_per_s: f64,
    /// The strategy's own rates over the same time (`Figures::rates`).
    #[serde(flatten)]
    pub rates: serde_json::Map<String, serde_json::Value>,
}

impl RunFigures {
    pub fn new(
        source: TimeSource,
        gpu: Option<Duration>,
        wall: Duration,
        unit: WorkUnit,
        steps: u64,
    ) -> Self {
        let seconds = gpu.unwrap_or(wall).as_secs_f64().max(f64::MIN_POSITIVE);
        Self {
            time_source: source,
            gpu_ms: gpu.map(|t| t.as_secs_f64() * 1e3),
            wall_ms: wall.as_secs_f64() * 1e3,
            unit,
            steps,
            steps_per_s: steps as f64 / seconds,
            rates: serde_json::Map::new(),
        }
    }

    /// The figures with the strategy's own rates over the same time.
    pub fn with_rates(mut self, figures: &dyn Figures) -> Self {
        let seconds = self.gpu_ms.unwrap_or(self.wall_ms) / 1e3;
        for (name, value) in figures.rates(seconds) {
            self.rates.insert(name.into(), value.into());
        }
        self
    }
}

/// A rate held against its strategy's ceiling (`vkerode peak`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct CeilingShare {
    /// Which ceiling: `droplet-walk` or `streaming-copy`.
    pub ceiling: Option<&'static str>,
    /// The droplet-shaped walk at this map size.
    pub peak_walk_steps_per_s: Option<f64>,
    /// Bytes one cell-step must move (each field read or written once).
    pub bytes_per_cell_step: Option<u64>,
    pub bandwidth_bytes_per_s: Option<f64>,
    /// The streaming copy: bytes read and written per second.
    pub peak_copy_bytes_per_s: Option<f64>,
    /// The ceiling in the strategy's own unit of work.
    pub peak_steps_per_s: Option<f64>,
    pub percent_of_peak: Option<f64>,
}

/// Which ceiling a row's rate is held against (points.csv's `ceiling` column).
pub const CEILING: (&str, &str, &str) = (
    "ceiling",
    "text",
    "the ceiling the rate is held against: droplet-walk (droplets) or streaming-copy (grids)",
);

impl Section for CeilingShare {
    const COLUMNS: &'static [(&'static str, &'static str, &'static str)] = &[
        CEILING,
        (
            "peak_walk_steps_per_s",
            "droplet-steps/s",
            "the droplet-shaped walk at this map size: 2x2 atomicAdd per step, no erosion arithmetic (vkerode peak)",
        ),
        (
            "bytes_per_cell_step",
            "bytes",
            "bytes one cell-step of this variant must move, each field read or written once",
        ),
        (
            "bandwidth_bytes_per_s",
            "bytes/s",
            "bytes_per_cell_step times the median cell-steps/s",
        ),
        (
            "peak_copy_bytes_per_s",
            "bytes/s",
            "the streaming copy's bytes read and written per second (vkerode peak)",
        ),
        (
            "peak_steps_per_s",
            "unit/s",
            "the ceiling in the strategy's own unit: the walk's rate, or the copy's bandwidth over bytes_per_cell_step",
        ),
        (
            "percent_of_peak",
            "%",
            "the median rate over the ceiling: droplet-steps/s over the walk's, or the bandwidth over the copy's",
        ),
    ];
}

impl CeilingShare {
    /// `steps_per_s` against `ceiling`, measured now where `ceilings` has no cached
    /// figure; `None` where the device cannot run the probe (a map past its SSBOs).
    pub fn of(
        ceiling: Ceiling,
        steps_per_s: f64,
        ceilings: &mut Ceilings,
    ) -> Result<Option<Self>, ProbeError> {
        let name = Some(ceiling.name());
        Ok(match ceiling {
            Ceiling::Walk { side } => ceilings.walk(side)?.map(|peak| Self {
                ceiling: name,
                peak_walk_steps_per_s: Some(peak),
                peak_steps_per_s: Some(peak),
                percent_of_peak: Some(100.0 * steps_per_s / peak),
                ..Self::default()
            }),
            Ceiling::Bandwidth { bytes_per_step } => {
                let copy = ceilings.copy()?;
                let bytes_per_s = steps_per_s * bytes_per_step as f64;
                Some(Self {
                    ceiling: name,
                    bytes_per_cell_step: Some(bytes_per_step),
                    bandwidth_bytes_per_s: Some(bytes_per_s),
                    peak_copy_bytes_per_s: Some(copy),
                    peak_steps_per_s: Some(copy / bytes_per_step as f64),
                    percent_of_peak: Some(100.0 * bytes_per_s / copy),
                    ..Self::default()
                })
            }
        })
    }
}

/// What erosion did, in the map's height units ([`HeightUnit`]).
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct ChangeFigures {
    /// Sum of (after - before) over all cells.
    pub total_change: f64,
    /// Sums of the lowering and of the raising of the cells.
    pub eroded: f64,
    pub deposited: f64,
    pub mean_abs_change: f64,
    pub changed_cells_share: f64,
    pub deepest_erosion: f64,
    pub highest_deposition: f64,
    /// Mean change over the channel cells of the initial terrain (D8 on the filled map,
    /// top 5% area); this and the three below need the maps' drainage, and are `None`
    /// past [`crate::terrain::metrics::LANDFORM_MAX_CELLS`], as the landform is.
    pub channel_mean_change: Option<f64>,
    /// Mean change over all other cells.
    pub hillslope_mean_change: Option<f64>,
    /// How far channels on dry ground lie below their 7x7 surroundings, before and
    /// after (each map's own channels; a filled depression's cells left out).
    pub channel_incision_before: Option<f64>,
    pub channel_incision_after: Option<f64>,
    pub min_after: f64,
    pub max_after: f64,
}

impl ChangeFigures {
    /// From `before` to `after` (kernel heights), one map in one arithmetic, its
    /// channels routed on a grid of `spacing` (in kernel units), in `unit`, over the
    /// cells not `missing` (empty: all); `None` otherwise.
    pub fn between(
        before: &Cells,
        after: &Cells,
        spacing: crate::terrain::image::CellSize,
        unit: &HeightUnit,
        missing: &[bool],
    ) -> Option<Self> {
        // The two maps' drainage side by side, on maps whose landform is computed.
        let routed = Landform::feasible(before.len() as u64).then(|| {
            let (before_map, after_map) = (before.heightmap(), after.heightmap());
            let (before_drainage, after_drainage) = rayon::join(
                || Drainage::of(&before_map, spacing),
                || Drainage::of(&after_map, spacing),
            );
            ((before_map, before_drainage), (after_map, after_drainage))
        });
        let channels = match &routed {
            Some(((_, before), _)) => channel_mask(&before.area, INCISION_SHARE),
            None => Vec::new(),
        };
        let [hillslopes, channel, all] = Change::split(before, after, &channels, missing)?;
        // Over the cells the map has: a DEM's missing cells were filled to erode it.
        let kept = |i: &usize| missing.get(*i) != Some(&true);
        let (min, max) = (0..after.len())
            .into_par_iter()
            .filter(kept)
            .map(|i| after.height_at(i))
            .fold(
                || (f32::INFINITY, f32::NEG_INFINITY),
                |(lo, hi), h| (lo.min(h), hi.max(h)),
            )
            .reduce(
                || (f32::INFINITY, f32::NEG_INFINITY),
                |(a, b), (c, d)| (a.min(c), b.max(d)),
            );
        let share = |n: usize| n as f64 / all.cells.max(1) as f64;
        let of = |kernel: f64| unit.of(kernel);
        let incision = |(map, drainage): &(Heightmap, Drainage)| {
            of(channel_incision(
                map,
                drainage,
                INCISION_SHARE,
                INCISION_RADIUS,
            ))
        };
        let routed = routed.as_ref();
        Some(Self {
            total_change: of(all.total),
            eroded: of(all.eroded),
            deposited: of(all.deposited),
            mean_abs_change: of(all.mean_abs),
            changed_cells_share: share(all.changed),
            deepest_erosion: of(all.deepest),
            highest_deposition: of(all.highest),
            channel_mean_change: routed.map(|_| of(channel.mean())),
            hillslope_mean_change: routed.map(|_| of(hillslopes.mean())),
            channel_incision_before: routed.map(|(before, _)| incision(before)),
            channel_incision_after: routed.map(|(_, after)| incision(after)),
            min_after: of(f64::from(min)),
            max_after: of(f64::from(max)),
        })
    }
}

/// GPM's counters over timed runs of `prepared` (no read-back), where `monitor` has GPM.
pub fn gpm_counters(
    monitor: &GpuMonitor,
    prepared: &mut dyn Prepared,
) -> Result<Option<GpmCounters>, ErosionError> {
    monitor.gpm_window(|| {
        let run = prepared.run_timed(false)?;
        Ok(run.gpu_time.unwrap_or(run.wall_time))
    })
}

#[cfg(test)]
mod tests {
    use crate::terrain::{Cells, Heightmap};

    #[test]
    fn a_dem_s_missing_cells_count_in_no_figure() {
        // A ramp eroded nowhere but in its one missing cell, filled and sunk to -100.
        let ramp: Vec<f32> = (0..64).map(|i| (i % 8) as f32).collect();
        let before = Cells::float_from(&Heightmap::new(8, 8, ramp.clone()).unwrap());
        let mut sunk = ramp;
        sunk[9] = -100.0;
        let after = Cells::float_from(&Heightmap::new(8, 8, sunk).unwrap());
        let mut missing = vec![false; 64];
        missing[9] = true;
        let unit = crate::terrain::units::HeightUnit::new("cells", &Default::default());
        let spacing = Default::default();
        let of = |missing: &[bool]| {
            super::ChangeFigures::between(&before, &after, spacing, &unit, missing).unwrap()
        };
        let counted = of(&missing);
        assert_eq!((counted.min_after, counted.max_after), (0.0, 7.0));
        assert_eq!((counted.total_change, counted.deepest_erosion), (0.0, 0.0));
        let all = of(&[]);
        assert_eq!((all.min_after, all.total_change), (-100.0, -101.0));
    }

    #[test]
    fn the_ceiling_columns_are_documented() {
        assert_eq!(crate::table::undocumented::<super::CeilingShare>(), None);
    }
}
