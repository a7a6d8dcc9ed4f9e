//! The grid-centric strategy end to end: the terrain (generated or a file), the
//! virtual-pipe model on the GPU, its balance and its share of the bandwidth ceiling,
//! for `erode --algorithm pipes` and for sweep points.

use std::sync::Arc;

use serde::Serialize;

use super::erode::{prepare_terrain, ErodeOutcome, LandformChange, TerrainReport, TerrainSource};
use super::peak::Ceilings;
use super::provenance::Provenance;
use super::settings::RunSettings;
use super::ExperimentError;
use crate::erosion::pipes::{
    Advection, BalanceCheck, PipesKernel, PipesParams, PipesVariant, Totals,
};
use crate::gpu::Context;
use crate::terrain::metrics::Landform;
use crate::terrain::{Heightmap, TerrainSpec};

/// Where the model's mass went, in height units summed over cells (volumes of one
/// cell's area).
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct PipesBalance {
    pub terrain_before: f64,
    pub terrain_after: f64,
    /// Still suspended at the end.
    pub sediment_after: f64,
    pub water_after: f64,
    /// Rain added over the run; evaporation took the rest of it beyond `water_after`.
    pub rain_added: f64,
    /// (terrain + sediment) after minus terrain before: the semi-Lagrangian advection's
    /// drift, the only term that breaks the balance of terrain and sediment.
    pub advection_drift: f64,
}

impl PipesBalance {
    fn between(before: &Totals, after: &Totals, rain_added: f64) -> Self {
        Self {
            terrain_before: before.terrain,
            terrain_after: after.terrain,
            sediment_after: after.sediment,
            water_after: after.water,
            rain_added,
            advection_drift: after.terrain + after.sediment - before.terrain - before.sediment,
        }
    }
}

/// A grid run's speed against the memory bandwidth ceiling.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct BandwidthShare {
    /// Bytes a step must move per cell in this variant (`bytes_per_cell_step`).
    pub bytes_per_cell_step: u64,
    /// Those bytes times cell-steps per second.
    pub bytes_per_s: f64,
    /// `vkerode peak`'s streaming copy, bytes read and written per second.
    pub ceiling_bytes_per_s: f64,
    pub percent_of_ceiling: f64,
    /// The cell-steps per second the ceiling allows this variant.
    pub ceiling_cell_steps_per_s: f64,
}

impl BandwidthShare {
    pub fn of(
        variant: &PipesVariant,
        advection: Advection,
        cell_steps_per_s: f64,
        ceiling_bytes_per_s: f64,
    ) -> Self {
        let bytes = variant.bytes_per_cell_step(advection);
        let bytes_per_s = cell_steps_per_s * bytes as f64;
        Self {
            bytes_per_cell_step: bytes,
            bytes_per_s,
            ceiling_bytes_per_s,
            percent_of_ceiling: 100.0 * bytes_per_s / ceiling_bytes_per_s,
            ceiling_cell_steps_per_s: ceiling_bytes_per_s / bytes as f64,
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct PipesReport {
    pub provenance: Provenance,
    pub algorithm: &'static str,
    pub terrain: TerrainReport,
    pub params: PipesParams,
    pub variant: PipesVariant,
    pub steps: u32,
    /// GPU time of the steps (timestamps), ms.
    pub gpu_ms: Option<f64>,
    pub ms_per_step: Option<f64>,
    /// Cells times steps per GPU second.
    pub cell_steps_per_s: Option<f64>,
    pub bandwidth: Option<BandwidthShare>,
    pub balance: PipesBalance,
    /// The counted run's checks, every `pipes_check_every` steps (none when 0).
    pub balance_checks: Vec<BalanceCheck>,
    pub landform: LandformChange,
    /// Why a figure is missing or a cache was not written, if one is or was not.
    pub warnings: Vec<String>,
}

/// Water beyond this share of what fell and stood can only come from a bug in the flux:
/// float rounding over a run stays orders below it.
const WATER_TOLERANCE: f64 = 1e-3;

/// The checked balance's worst water error, refused past [`WATER_TOLERANCE`].
pub fn check_water(checks: &[BalanceCheck], start_water: f64) -> Result<(), ExperimentError> {
    for c in checks {
        let scale = start_water + c.rain;
        if c.water_error.abs() > WATER_TOLERANCE * scale.max(f64::MIN_POSITIVE) {
            return Err(ExperimentError::Balance(format!(
                "after {} steps the water is {:.6e}, not initial + rain - evaporation ({:.6e}): the flux lost or made water",
                c.step,
                c.totals.water,
                c.totals.water - c.water_error
            )));
        }
    }
    Ok(())
}

/// Erodes `source` (or the noise of `spec`) with the settings' virtual-pipe model: the
/// counted run with its balance checks first (unless `pipes_check_every` is 0), then
/// the timed run whose state is the outcome.
pub fn run_pipes(
    ctx: &Arc<Context>,
    source: &TerrainSource,
    spec: &TerrainSpec,
    settings: &RunSettings,
) -> Result<ErodeOutcome<PipesReport>, ExperimentError> {
    let params = settings.pipes_params();
    let variant = settings.pipes_variant();
    let steps = settings.pipes_steps;
    let kernel = PipesKernel::new(ctx, variant, &params)?;
    let terrain = prepare_terrain(source, spec, Some(ctx))?;
    let (w, h) = (terrain.heights.width(), terrain.heights.height());
    let mut runner = kernel.prepare(w, h, terrain.heights.data(), None)?;
    let start = Totals::of(terrain.heights.data(), &[], &[]);
    let balance_checks = match settings.pipes_check_every {
        0 => Vec::new(),
        every => runner.run_checked(steps, every)?,
    };
    check_water(&balance_checks, start.water)?;
    let (gpu_time, _) = runner.run(steps)?;
    let fields = runner.read()?;
    let after_totals = fields.totals();
    let after = Heightmap::new(w, h, fields.terrain)?;
    let mut warnings = Vec::new();
    let gpu_ms = gpu_time.map(|t| t.as_secs_f64() * 1e3);
    let cell_steps = (w * h) as f64 * f64::from(steps);
    let cell_steps_per_s = gpu_ms
        .filter(|&ms| ms > 0.0)
        .map(|ms| cell_steps / (ms / 1e3));
    let bandwidth = match cell_steps_per_s {
        Some(rate) => {
            let mut ceilings = Ceilings::new(ctx);
            let ceiling = ceilings.copy()?;
            warnings.extend(ceilings.warning);
            Some(BandwidthShare::of(
                &variant,
                params.advection,
                rate,
                ceiling,
            ))
        }
        None => {
            warnings.push("no GPU timestamps: no rates".into());
            None
        }
    };
    let report = PipesReport {
        provenance: Provenance::collect(ctx.info()),
        algorithm: "pipes",
        terrain: terrain.report.clone(),
        params,
        variant,
        steps,
        gpu_ms,
        ms_per_step: gpu_ms.filter(|_| steps > 0).map(|ms| ms / f64::from(steps)),
        cell_steps_per_s,
        bandwidth,
        balance: PipesBalance::between(
            &start,
            &after_totals,
            f64::from(params.rain) * f64::from(params.dt) * cell_steps,
        ),
        balance_checks,
        landform: LandformChange {
            before: Landform::of(&terrain.heights),
            after: Landform::of(&after),
        },
        warnings,
    };
    Ok(ErodeOutcome::of(terrain, after, report))
}
