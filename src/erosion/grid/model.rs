//! What a grid model gives the grid plumbing: its names and settings, its kernels'
//! build and parameters, its fields on the device and their roles in each pass, its
//! counted run and CPU reference, and its figures' columns; and the kernel and runner
//! built from it (`runner.rs` runs them). The rest of its strategy is `strategy.rs`'s,
//! the same for every grid model.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

use super::kernel::GridPipelines;
use crate::erosion::settings::StrategySettings;
use crate::erosion::steps::StepClock;
use crate::erosion::{
    Algorithm, CountedRun, CpuEngine, CpuRun, ErosionError, RunSettings, SettingError,
};
use crate::gpu::{Buffer, CompilerStatistic, ComputePipeline, Context, DeviceInfo, Recorder};
use crate::table::Column;
use crate::terrain::{Cells, MapInfo};

/// What the grid plumbing reads of a grid model's settings.
pub trait GridSettings: StrategySettings + Serialize + clap::Args {
    type Variant;
    type Params;
    /// Its time steps, and the steps between the counted run's checks.
    fn steps(&self) -> u32;
    fn steps_mut(&mut self) -> &mut u32;
    fn check_every(&self) -> u32;
    /// The build of its kernels, and their parameters.
    fn variant(&self) -> Self::Variant;
    fn params(&self) -> Self::Params;
    /// Every rule of the settings, with the map and the device where they are known.
    fn check(&self, map: Option<MapInfo>, device: Option<&DeviceInfo>) -> Result<(), SettingError>;
}

/// A grid model (pipes, thermal): its [`Strategy`](crate::erosion::Strategy) is the
/// grid's, built from what this trait says of it. Its dose is its time steps, its work
/// cell-steps, its heights float32, its ceiling the copy bandwidth.
pub trait GridModel: Sync + Sized + 'static {
    const NAMES: GridNames;

    /// Its settings, a field of [`RunSettings`].
    type Settings: GridSettings<Variant = Self::Variant, Params = Self::Params>;
    /// One build of its kernels.
    type Variant: GridVariant;
    /// Its parameters, which its kernels hold as specialization constants.
    type Params: Copy;
    /// One map's fields on the device.
    type Fields: GridFields<Self>;

    /// Why `variant` cannot run `params` on `device` (on any device, without one).
    fn check_variant(
        variant: Self::Variant,
        params: &Self::Params,
        device: Option<&DeviceInfo>,
    ) -> Result<(), SettingError>;
    /// Bytes a time step must move per cell: what the bandwidth ceiling bounds.
    fn bytes_per_cell_step(variant: Self::Variant, params: &Self::Params) -> u64;

    /// The pipelines of `variant` with `params`, their rules checked first.
    fn pipelines(
        ctx: &Arc<Context>,
        variant: Self::Variant,
        params: &Self::Params,
    ) -> Result<GridPipelines, ErosionError>;
    /// A runner of `kernel` over a `width` x `height` map of `heights`.
    fn prepare(
        kernel: GridKernel<Self>,
        width: usize,
        height: usize,
        heights: &[f32],
    ) -> Result<GridRunner<Self>, ErosionError>;
    /// The counted run of `steps` steps, checked every `check_every`, with its figures.
    fn run_counted(
        runner: &mut GridRunner<Self>,
        steps: u32,
        check_every: u32,
    ) -> Result<CountedRun, ErosionError>;
    /// Its CPU reference, where it has one for `engine`.
    fn run_on_cpu(
        engine: CpuEngine,
        settings: &Self::Settings,
        initial: &Cells,
    ) -> Result<CpuRun, ErosionError>;

    /// The water one time step rains on every cell; `None` for a model without water.
    fn water_per_step(_settings: &Self::Settings) -> Option<f64> {
        None
    }
    /// [`Strategy::raining_within`](crate::erosion::Strategy::raining_within).
    fn raining_within(
        _settings: &RunSettings,
        _water_per_cell: f64,
        _duration: f64,
    ) -> Option<RunSettings> {
        None
    }
    /// [`Strategy::in_comparison`](crate::erosion::Strategy::in_comparison).
    fn in_comparison(settings: &RunSettings, _sea: f32) -> RunSettings {
        settings.clone()
    }

    /// One line of what a run does, for `sweep --dry-run`.
    fn plan(settings: &Self::Settings) -> String;
    /// The columns of its figures in points.csv.
    fn figures_columns() -> Vec<Column>;
}

/// What a grid model's strategy is named by, and names.
pub struct GridNames {
    pub algorithm: Algorithm,
    /// Its kernels, as errors name them.
    pub kernels: &'static str,
    /// [`Strategy::smoke_args`](crate::erosion::Strategy::smoke_args).
    pub smoke_args: &'static [&'static str],
    /// The key of its time steps, its dose.
    pub steps_key: &'static str,
    /// Its settings' keys with their units, and those only its kernels use.
    pub units: &'static [(&'static str, &'static str)],
    pub gpu_only: &'static [&'static str],
    /// The keys [`GridModel::in_comparison`] sets.
    pub comparison_keys: &'static [&'static str],
    /// Its own fields of run.json: path, unit, meaning.
    pub report_fields: &'static [(&'static str, &'static str, &'static str)],
}

/// One build of a grid model's kernels.
pub trait GridVariant: Copy + fmt::Display + Sync {
    fn workgroup(&self) -> crate::erosion::WorkgroupShape;
    /// Dispatches of a run of `steps` steps.
    fn dispatches(&self, steps: u32) -> usize;
}

/// One map's fields of a grid model on the device, and their roles in its passes.
pub trait GridFields<M: GridModel>: Sized {
    /// Which buffer of each pair holds the state; its default, the prepared map's.
    type State: Copy + Default;
    /// The time of a step before one was timed, to split the first run into
    /// submissions: long enough that the first submissions are short.
    fn assumed_step(kernel: &GridKernel<M>, cells: u64) -> Duration;
    /// The buffer that holds the heights in `state`.
    fn heights(&self, state: Self::State) -> &Buffer;
    /// Copies the prepared map into the state's buffers and zeroes what must start at
    /// zero (the counted build's sums too, when `counted`).
    fn record_reset<'r>(&'r self, rec: &mut Recorder<'r>, counted: bool);
    /// Records `chunk`'s steps from `state`, and moves it on to where they leave it.
    fn record_steps<'r>(
        &'r self,
        rec: &mut Recorder<'r>,
        chunk: &Chunk<'r, M>,
        state: &mut Self::State,
    );
}

/// The pipelines of one variant of a grid model and one set of its parameters, timed and
/// counted. `GridRunner` runs them over a map.
pub struct GridKernel<M: GridModel> {
    ctx: Arc<Context>,
    variant: M::Variant,
    params: M::Params,
    pipelines: GridPipelines,
}

impl<M: GridModel> GridKernel<M> {
    pub fn new(
        ctx: &Arc<Context>,
        variant: M::Variant,
        params: &M::Params,
    ) -> Result<Self, ErosionError> {
        Ok(Self {
            ctx: Arc::clone(ctx),
            variant,
            params: *params,
            pipelines: M::pipelines(ctx, variant, params)?,
        })
    }

    pub fn variant(&self) -> M::Variant {
        self.variant
    }

    pub fn params(&self) -> &M::Params {
        &self.params
    }

    /// The timed modules of a step, in order, joined by `+`.
    pub fn module_name(&self) -> String {
        self.pipelines.module_name()
    }

    /// The compiler statistics of the step's last pass (in both models the largest, the
    /// one that writes the heights).
    pub fn statistics(&self) -> &[CompilerStatistic] {
        self.pipelines.statistics()
    }

    pub(crate) fn ctx(&self) -> &Arc<Context> {
        &self.ctx
    }

    pub(crate) fn pipelines(&self) -> &GridPipelines {
        &self.pipelines
    }
}

/// Which buffer of each of `M`'s pairs holds the state.
pub(super) type StateOf<M> = <<M as GridModel>::Fields as GridFields<M>>::State;

/// One map's fields on the device. Each run starts from the map it was prepared with.
pub struct GridRunner<M: GridModel> {
    pub(super) kernel: GridKernel<M>,
    pub(super) width: usize,
    pub(super) height: usize,
    pub(super) fields: M::Fields,
    /// Which buffer of each pair holds the state after the last run.
    pub(super) state: StateOf<M>,
    pub(super) clock: StepClock,
}

/// A chunk of steps to record: the passes of a step, dispatched over `groups`, on a
/// `width` x `height` map.
pub struct Chunk<'r, M: GridModel> {
    pub kernel: &'r GridKernel<M>,
    pub passes: &'r [ComputePipeline],
    pub steps: u32,
    /// Steps between the splits of the submission.
    pub per_submission: u32,
    pub groups: [u32; 2],
    pub width: usize,
    pub height: usize,
}

/// Refuses a device without bufferDeviceAddress, by which `kernels` reach their fields.
pub fn check_addressed(device: &DeviceInfo, kernels: &str) -> Result<(), SettingError> {
    if device.buffer_device_address {
        return Ok(());
    }
    Err(SettingError::new(
        "algorithm",
        format!(
            "{} does not offer bufferDeviceAddress, which {kernels} reach their fields by",
            device.name
        ),
    ))
}

/// A grid run's own rate over `seconds` of `steps` time steps: milliseconds a step.
pub fn ms_per_step(seconds: f64, steps: u32) -> Vec<(&'static str, f64)> {
    vec![("ms_per_step", seconds * 1e3 / f64::from(steps.max(1)))]
}
