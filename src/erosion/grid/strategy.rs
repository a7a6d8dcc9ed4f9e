//! The [`Strategy`] of every grid model, from what its [`GridModel`] says of it, and
//! its kernels prepared over one map.

use std::sync::Arc;

use super::model::{GridKernel, GridModel, GridRunner, GridSettings, GridVariant};
use crate::erosion::keys::columns_of;
use crate::erosion::settings::StrategySettings;
use crate::erosion::steps::{float_cells, float_state};
use crate::erosion::{
    Algorithm, Ceiling, CountedRun, CpuEngine, CpuRun, ErosionError, Prepared, RunSettings,
    SettingError, Strategy, TimedRun, WorkUnit,
};
use crate::gpu::{CompilerStatistic, Context, DeviceInfo};
use crate::table::{values_of, Column};
use crate::terrain::{Arithmetic, Cells, MapInfo};

impl<M: GridModel> Strategy for M {
    fn algorithm(&self) -> Algorithm {
        M::NAMES.algorithm
    }

    fn smoke_args(&self) -> &'static [&'static str] {
        M::NAMES.smoke_args
    }

    fn unit(&self) -> WorkUnit {
        WorkUnit::CellSteps
    }

    fn settings_units(&self) -> &'static [(&'static str, &'static str)] {
        M::NAMES.units
    }

    fn gpu_only_keys(&self) -> &'static [&'static str] {
        M::NAMES.gpu_only
    }

    fn dose_key(&self) -> &'static str {
        M::NAMES.steps_key
    }

    fn dose(&self, settings: &RunSettings) -> u64 {
        u64::from(M::Settings::of(settings).steps())
    }

    fn with_dose(&self, settings: &RunSettings, dose: u64) -> RunSettings {
        let mut s = settings.clone();
        *M::Settings::of_mut(&mut s).steps_mut() = u32::try_from(dose).unwrap_or(u32::MAX);
        s
    }

    fn work_bound(&self, settings: &RunSettings, map: MapInfo) -> u64 {
        map.cells().saturating_mul(self.dose(settings))
    }

    fn water_per_dose(&self, settings: &RunSettings, _map: MapInfo) -> Option<f64> {
        M::water_per_step(M::Settings::of(settings))
    }

    fn raining_within(
        &self,
        settings: &RunSettings,
        water_per_cell: f64,
        duration: f64,
    ) -> Option<RunSettings> {
        M::raining_within(settings, water_per_cell, duration)
    }

    fn in_comparison(&self, settings: &RunSettings, sea: f32) -> RunSettings {
        M::in_comparison(settings, sea)
    }

    fn comparison_keys(&self) -> &'static [&'static str] {
        M::NAMES.comparison_keys
    }

    fn check(
        &self,
        settings: &RunSettings,
        map: Option<MapInfo>,
        device: Option<&DeviceInfo>,
    ) -> Result<(), SettingError> {
        M::Settings::of(settings).check(map, device)
    }

    fn missing_feature(
        &self,
        settings: &RunSettings,
        _map: MapInfo,
        device: &DeviceInfo,
    ) -> Option<String> {
        let s = M::Settings::of(settings);
        M::check_variant(s.variant(), &s.params(), Some(device))
            .err()
            .map(|e| e.reason)
    }

    fn arithmetic(&self, _settings: &RunSettings) -> Arithmetic {
        Arithmetic::Float
    }

    fn prepare<'a>(
        &self,
        ctx: &Arc<Context>,
        settings: &RunSettings,
        initial: &'a Cells,
    ) -> Result<Box<dyn Prepared + 'a>, ErosionError> {
        let s = M::Settings::of(settings);
        let heights = float_cells(initial, M::NAMES.kernels)?;
        let kernel = GridKernel::<M>::new(ctx, s.variant(), &s.params())?;
        let runner = M::prepare(kernel, initial.width(), initial.height(), heights)?;
        Ok(Box::new(GridPrepared {
            runner,
            steps: s.steps(),
            check_every: s.check_every(),
        }))
    }

    fn run_on_cpu(
        &self,
        engine: CpuEngine,
        settings: &RunSettings,
        initial: &Cells,
    ) -> Result<CpuRun, ErosionError> {
        M::run_on_cpu(engine, M::Settings::of(settings), initial)
    }

    fn ceiling(&self, settings: &RunSettings, _map: MapInfo) -> Ceiling {
        let s = M::Settings::of(settings);
        Ceiling::Bandwidth {
            bytes_per_step: M::bytes_per_cell_step(s.variant(), &s.params()),
        }
    }

    fn plan(&self, settings: &RunSettings, _map: MapInfo, _device: &DeviceInfo) -> String {
        M::plan(M::Settings::of(settings))
    }

    fn settings_columns(&self) -> Vec<Column> {
        columns_of::<M::Settings>(M::NAMES.units)
    }

    fn settings_values(&self, settings: &RunSettings, _map: MapInfo) -> Vec<String> {
        values_of(M::Settings::of(settings))
    }

    fn figures_columns(&self) -> Vec<Column> {
        M::figures_columns()
    }

    fn report_fields(&self) -> &'static [(&'static str, &'static str, &'static str)] {
        M::NAMES.report_fields
    }
}

/// A grid model's kernels with one map's fields.
struct GridPrepared<M: GridModel> {
    runner: GridRunner<M>,
    steps: u32,
    check_every: u32,
}

impl<M: GridModel> Prepared for GridPrepared<M> {
    fn kernel(&self) -> String {
        self.runner.kernel().module_name()
    }

    fn statistics(&self) -> &[CompilerStatistic] {
        self.runner.kernel().statistics()
    }

    fn dispatches(&self) -> usize {
        self.runner.kernel().variant().dispatches(self.steps)
    }

    fn run_timed(&mut self, read_back: bool) -> Result<TimedRun, ErosionError> {
        let (gpu_time, wall_time) = self.runner.run(self.steps)?;
        let cells = if read_back {
            let (w, h) = (self.runner.width(), self.runner.height());
            Some(float_state(w, h, self.runner.read_heights()?)?)
        } else {
            None
        };
        Ok(TimedRun {
            gpu_time,
            wall_time,
            submissions: self.runner.submissions(),
            cells,
        })
    }

    fn run_counted(&mut self) -> Result<CountedRun, ErosionError> {
        M::run_counted(&mut self.runner, self.steps, self.check_every)
    }
}
