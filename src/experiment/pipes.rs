//! One run of the grid-centric strategy end to end: the terrain (generated or a file),
//! the virtual-pipe model on the GPU, and what run.json says of it.

use std::sync::Arc;

use serde::Serialize;

use super::erode::{prepare_terrain, ErodeOutcome, LandformChange, TerrainReport, TerrainSource};
use super::provenance::Provenance;
use super::ExperimentError;
use crate::erosion::pipes::{PipesKernel, PipesParams, PipesState};
use crate::gpu::Context;
use crate::terrain::metrics::Landform;
use crate::terrain::{Heightmap, TerrainSpec};

/// Where the model's mass went, in height units summed over cells (volumes of one
/// cell's area).
#[derive(Clone, Copy, Debug, Serialize)]
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

#[derive(Clone, Debug, Serialize)]
pub struct PipesReport {
    pub provenance: Provenance,
    pub algorithm: &'static str,
    pub terrain: TerrainReport,
    pub params: PipesParams,
    pub steps: u32,
    /// GPU time of the steps (timestamps), ms.
    pub gpu_ms: Option<f64>,
    /// Cells times steps per GPU second.
    pub cell_steps_per_s: Option<f64>,
    pub balance: PipesBalance,
    pub landform: LandformChange,
}

/// Erodes `source` (or the noise of `spec`) with `steps` steps of the model.
pub fn run_pipes(
    ctx: &Arc<Context>,
    source: &TerrainSource,
    spec: &TerrainSpec,
    params: &PipesParams,
    steps: u32,
) -> Result<ErodeOutcome<PipesReport>, ExperimentError> {
    params.check()?;
    let terrain = prepare_terrain(source, spec, Some(ctx))?;
    let (w, h) = (terrain.heights.width(), terrain.heights.height());
    let start = PipesState::dry(w, h, terrain.heights.data().to_vec());
    let run = PipesKernel::new(ctx)?.run(&start, params, steps)?;
    let (terrain_before, _, _) = start.totals();
    let (terrain_after, sediment_after, water_after) = run.state.totals();
    let after = Heightmap::new(w, h, run.state.terrain)?;
    let gpu_ms = run.gpu_time.map(|t| t.as_secs_f64() * 1e3);
    let cell_steps = (w * h) as f64 * f64::from(steps);
    let report = PipesReport {
        provenance: Provenance::collect(ctx.info()),
        algorithm: "pipes",
        terrain: terrain.report.clone(),
        params: *params,
        steps,
        gpu_ms,
        cell_steps_per_s: gpu_ms
            .filter(|&ms| ms > 0.0)
            .map(|ms| cell_steps / (ms / 1e3)),
        balance: PipesBalance {
            terrain_before,
            terrain_after,
            sediment_after,
            water_after,
            rain_added: f64::from(params.rain) * f64::from(params.dt) * cell_steps,
            advection_drift: terrain_after + sediment_after - terrain_before,
        },
        landform: LandformChange {
            before: Landform::of(&terrain.heights),
            after: Landform::of(&after),
        },
    };
    Ok(ErodeOutcome::of(terrain, after, report))
}
