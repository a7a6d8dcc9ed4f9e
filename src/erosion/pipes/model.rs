//! The virtual-pipe model as the grid plumbing runs it: its names and settings, its
//! kernels and fields, its counted run and CPU reference.

use std::sync::Arc;
use std::time::Instant;

use super::figures::{check_water, PipesColumns, PipesFigures, REPORT_FIELDS};
use super::kernel;
use super::params::{Boundary, Drained, PipesParams, PipesState};
use super::runner::PipesBuffers;
use super::settings::PipesSettings;
use super::variant::{PipesVariant, KERNELS};
use super::cpu::run_pipes_on_cpu;
use super::{Pipes, PipesKernel, PipesRunner, COMPARISON_SEDIMENT_CAP};
use crate::erosion::grid::{GridModel, GridNames, GridPipelines, GridSettings};
use crate::erosion::steps::{cell_steps, float_cells, float_state};
use crate::erosion::{
    Algorithm, CountedRun, CpuEngine, CpuRun, ErosionError, RunSettings, SettingError,
};
use crate::gpu::{Context, DeviceInfo};
use crate::table::{Column, Section};
use crate::terrain::Cells;

impl GridModel for Pipes {
    const NAMES: GridNames = GridNames {
        algorithm: Algorithm::Pipes,
        kernels: KERNELS,
        smoke_args: &["--algorithm", "pipes", "--pipes-steps", "8"],
        steps_key: "pipes_steps",
        units: PipesSettings::UNITS,
        gpu_only: PipesSettings::GPU_ONLY,
        comparison_keys: &["pipes_boundary", "pipes_base_level"],
        report_fields: REPORT_FIELDS,
    };

    type Settings = PipesSettings;
    type Variant = PipesVariant;
    type Params = PipesParams;
    type Fields = PipesBuffers;

    fn check_variant(
        variant: PipesVariant,
        params: &PipesParams,
        device: Option<&DeviceInfo>,
    ) -> Result<(), SettingError> {
        variant.check(params.advection, device)
    }

    fn bytes_per_cell_step(variant: PipesVariant, params: &PipesParams) -> u64 {
        variant.bytes_per_cell_step(params.advection)
    }

    fn pipelines(
        ctx: &Arc<Context>,
        variant: PipesVariant,
        params: &PipesParams,
    ) -> Result<GridPipelines, ErosionError> {
        kernel::pipelines(ctx, variant, params)
    }

    fn prepare(
        kernel: PipesKernel,
        width: usize,
        height: usize,
        terrain: &[f32],
    ) -> Result<PipesRunner, ErosionError> {
        kernel.prepare(width, height, terrain, None)
    }

    /// The counted build, its balance checked every `pipes_check_every` steps and at the
    /// end (water the flux lost or made is an error); for 0, a timed run, unchecked.
    fn run_counted(
        runner: &mut PipesRunner,
        steps: u32,
        check_every: u32,
    ) -> Result<CountedRun, ErosionError> {
        let start = runner.start();
        let checks = match check_every {
            // No counted run: the figures are a timed run's, unchecked.
            0 => {
                runner.run(steps)?;
                Vec::new()
            }
            every => {
                let checks = runner.run_checked(steps, every)?;
                check_water(&checks, start.water)?;
                checks
            }
        };
        let fields = runner.read()?;
        let kernel = runner.kernel();
        let cells = fields.width * fields.height;
        let settings = PipesSettings {
            pipes_steps: steps,
            pipes_check_every: check_every,
            ..settings_of(kernel.variant(), kernel.params())
        };
        let left = checks.last().map(|c| Drained {
            evaporated: c.evaporated,
            outflow: c.outflow,
            sediment_outflow: c.sediment_outflow,
        });
        let figures = PipesFigures::new(&settings, start, fields.totals(), left, checks, cells);
        Ok(CountedRun {
            cells: float_state(fields.width, fields.height, fields.terrain)?,
            work: cell_steps(cells, steps),
            figures: Box::new(figures),
        })
    }

    fn run_on_cpu(
        engine: CpuEngine,
        p: &PipesSettings,
        initial: &Cells,
    ) -> Result<CpuRun, ErosionError> {
        if engine != CpuEngine::Sequential {
            return Err(ErosionError::SequentialOnly {
                model: "the virtual-pipe model",
            });
        }
        let params = p.params();
        let (w, h) = (initial.width(), initial.height());
        let mut state = PipesState::dry(w, h, float_cells(initial, KERNELS)?.to_vec());
        let start = state.totals();
        let started = Instant::now();
        run_pipes_on_cpu(&mut state, &params, p.pipes_steps);
        let wall_time = started.elapsed();
        let after = state.totals();
        let figures = PipesFigures::new(p, start, after, Some(state.left), Vec::new(), w * h);
        Ok(CpuRun {
            cells: float_state(w, h, state.terrain)?,
            work: cell_steps(w * h, p.pipes_steps),
            wall_time,
            threads: 1,
            figures: Box::new(figures),
        })
    }

    /// A step rains pipes_rain x dt on every cell.
    fn water_per_step(p: &PipesSettings) -> Option<f64> {
        Some(f64::from(p.pipes_rain) * f64::from(p.pipes_dt))
    }

    fn raining_within(
        settings: &RunSettings,
        water_per_cell: f64,
        duration: f64,
    ) -> Option<RunSettings> {
        let mut s = settings.clone();
        let p = &mut s.pipes;
        let steps = (duration / f64::from(p.pipes_dt)).round().max(1.0);
        p.pipes_steps = steps as u32;
        p.pipes_rain = (water_per_cell / (steps * f64::from(p.pipes_dt))) as f32;
        Some(s)
    }

    fn in_comparison(settings: &RunSettings, sea: f32) -> RunSettings {
        let mut s = settings.clone();
        let p = &mut s.pipes;
        p.pipes_boundary = Boundary::Open;
        p.pipes_base_level = sea;
        p.pipes_sediment_cap = p.pipes_sediment_cap.or(Some(COMPARISON_SEDIMENT_CAP));
        s
    }

    fn plan(p: &PipesSettings) -> String {
        format!(
            "{} steps of the grid ({}), fields reached by address",
            p.pipes_steps,
            p.variant()
        )
    }

    fn figures_columns() -> Vec<Column> {
        PipesColumns::columns()
    }
}

/// The settings that built `variant` with `params`.
fn settings_of(variant: PipesVariant, params: &PipesParams) -> PipesSettings {
    PipesSettings {
        pipes_dt: params.dt,
        pipes_rain: params.rain,
        pipes_evaporation: params.evaporation,
        pipes_area: params.pipe_area,
        pipes_capacity: params.capacity,
        pipes_dissolving: params.dissolving,
        pipes_deposition: params.deposition,
        pipes_advection: params.advection,
        pipes_friction: params.friction,
        pipes_boundary: params.boundary,
        pipes_base_level: params.base_level,
        pipes_sediment_cap: params.sediment_cap,
        pipes_min_tilt: params.min_tilt,
        pipes_fusion: variant.fusion,
        pipes_packing: variant.packing,
        pipes_tiles: variant.tiles,
        pipes_workgroup: variant.workgroup,
        ..PipesSettings::DEFAULT
    }
}

