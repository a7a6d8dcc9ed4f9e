//! Thermal erosion as the grid plumbing runs it: its names and settings, its kernels
//! and fields, its counted run and CPU reference.

use std::sync::Arc;
use std::time::Instant;

use super::cpu::{run_thermal_on_cpu, steepness};
use super::figures::{check_mass, MassBalance, ThermalColumns, ThermalFigures, REPORT_FIELDS};
use super::kernel;
use super::params::{rounding_bound, ThermalParams};
use super::runner::{mass_of, ThermalBuffers};
use super::settings::ThermalSettings;
use super::variant::{ThermalVariant, KERNELS};
use super::{Thermal, ThermalKernel, ThermalRunner};
use crate::erosion::grid::{GridModel, GridNames, GridPipelines, GridSettings};
use crate::erosion::steps::{cell_steps, float_cells, float_state};
use crate::erosion::{
    Algorithm, CountedRun, CpuEngine, CpuRun, ErosionError, SettingError,
};
use crate::gpu::{Context, DeviceInfo};
use crate::table::{Column, Section};
use crate::terrain::Cells;

impl GridModel for Thermal {
    const NAMES: GridNames = GridNames {
        algorithm: Algorithm::Thermal,
        kernels: KERNELS,
        smoke_args: &["--algorithm", "thermal", "--thermal-steps", "8"],
        steps_key: "thermal_steps",
        units: ThermalSettings::UNITS,
        gpu_only: ThermalSettings::GPU_ONLY,
        comparison_keys: &[],
        report_fields: REPORT_FIELDS,
    };

    type Settings = ThermalSettings;
    type Variant = ThermalVariant;
    type Params = ThermalParams;
    type Fields = ThermalBuffers;

    fn check_variant(
        variant: ThermalVariant,
        _params: &ThermalParams,
        device: Option<&DeviceInfo>,
    ) -> Result<(), SettingError> {
        variant.check(device)
    }

    fn bytes_per_cell_step(variant: ThermalVariant, params: &ThermalParams) -> u64 {
        variant.bytes_per_cell_step(params.neighbours)
    }

    fn pipelines(
        ctx: &Arc<Context>,
        variant: ThermalVariant,
        params: &ThermalParams,
    ) -> Result<GridPipelines, ErosionError> {
        kernel::pipelines(ctx, variant, params)
    }

    fn prepare(
        kernel: ThermalKernel,
        width: usize,
        height: usize,
        heights: &[f32],
    ) -> Result<ThermalRunner, ErosionError> {
        kernel.prepare(width, height, heights)
    }

    /// The counted build, its mass checked every `thermal_check_every` steps (once, at
    /// the end, for 0); a drift past float rounding's bound is an error.
    fn run_counted(
        runner: &mut ThermalRunner,
        steps: u32,
        check_every: u32,
    ) -> Result<CountedRun, ErosionError> {
        let every = if check_every == 0 { steps } else { check_every };
        let checks = runner.run_checked(steps, every)?;
        check_mass(&checks)?;
        let heights = runner.read_heights()?;
        let sent = runner.read_sent()?;
        let (w, h) = (runner.width(), runner.height());
        let kernel = runner.kernel();
        let params = *kernel.params();
        let before = runner.start_mass();
        let balance = match checks.last() {
            Some(c) => MassBalance::new(before, c.mass, c.bound),
            None => MassBalance::new(before, before, 0.0),
        };
        let figures = ThermalFigures {
            mass: balance,
            material_moved: total(&sent),
            steepness: steepness(&heights, w, h, &params),
            mass_checks: checks,
            ..ThermalFigures::new(params, kernel.variant(), steps)
        };
        Ok(CountedRun {
            cells: float_state(w, h, heights)?,
            work: cell_steps(w * h, steps),
            figures: Box::new(figures),
        })
    }

    fn run_on_cpu(
        engine: CpuEngine,
        t: &ThermalSettings,
        initial: &Cells,
    ) -> Result<CpuRun, ErosionError> {
        let params = t.params();
        params.check()?;
        let (w, h) = (initial.width(), initial.height());
        let mut heights = float_cells(initial, KERNELS)?.to_vec();
        let before = mass_of(&heights);
        let started = Instant::now();
        let sent = run_thermal_on_cpu(&mut heights, w, h, &params, t.thermal_steps, engine);
        let wall_time = started.elapsed();
        let after = mass_of(&heights);
        let bound = rounding_bound(
            u64::from(t.thermal_steps),
            (w * h) as u64,
            2.0 * before.1.max(after.1),
        );
        let figures = ThermalFigures {
            mass: MassBalance::new(before.0, after.0, bound),
            material_moved: total(&sent),
            steepness: steepness(&heights, w, h, &params),
            ..ThermalFigures::new(params, t.variant(), t.thermal_steps)
        };
        let threads = match engine {
            CpuEngine::Sequential => 1,
            CpuEngine::Parallel => rayon::current_num_threads(),
        };
        Ok(CpuRun {
            cells: float_state(w, h, heights)?,
            work: cell_steps(w * h, t.thermal_steps),
            wall_time,
            threads,
            figures: Box::new(figures),
        })
    }

    fn plan(t: &ThermalSettings) -> String {
        format!(
            "{} steps of thermal erosion (talus {} degrees, rate {}, {} neighbours, {}), heights reached by address",
            t.thermal_steps,
            t.thermal_talus,
            t.thermal_rate,
            t.thermal_neighbours,
            t.variant()
        )
    }

    fn figures_columns() -> Vec<Column> {
        ThermalColumns::columns()
    }
}

fn total(values: &[f32]) -> f64 {
    values.iter().map(|&v| f64::from(v)).sum()
}

