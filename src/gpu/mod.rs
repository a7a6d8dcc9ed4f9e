//! The only home of `unsafe` and raw ash: device, buffers, pipelines, commands,
//! barriers and timing.
//!
//! Its safe API cannot make the device touch freed memory: descriptor sets borrow the
//! buffers they bind, recorded commands borrow what they use past the submission,
//! barriers come only from named [`Hazard`]s, and misrecorded commands are errors.
#![deny(clippy::undocumented_unsafe_blocks)]

mod barriers;
mod buffer;
mod commands;
mod context;
mod device_info;
mod error;
mod faults;
mod pipeline;
mod pipeline_cache;
mod reflect;
mod statistics;
mod timing;
mod transfer;
mod validation;

pub use barriers::Hazard;
pub use buffer::{
    Buffer, BufferKind, MemoryScheme, TexelFormat, TexelKind, TexelView, DEDICATED_FROM_BYTES,
};
pub use commands::{CommandStream, Recorder, SUBMISSION_TIMEOUT};
pub use context::{
    list_devices, Context, ContextOptions, SubmissionDone, SubmissionObserver,
    DEFAULT_MAX_SUBMISSION_MS,
};
pub use device_info::{DeviceInfo, REQUIRED_API_VERSION};
pub use error::{GpuError, GpuResult};
pub use pipeline::{
    ComputePipeline, DescriptorSet, PipelineDesc, ShaderModule, SpecConstant, SpecValue, Spirv,
};
pub use reflect::push_constant_members;
pub use statistics::{statistics_summary, CompilerStatistic, StatisticValue};
pub use timing::TimestampQueries;
pub use transfer::{download, upload, STAGING_BYTES};
pub use validation::ValidationLog;

/// The SPIR-V modules build.rs compiled from `glsl/`.
pub mod shaders {
    include!(concat!(env!("OUT_DIR"), "/shaders.rs"));
}
