//! Compiler statistics of a pipeline, as the driver reports them through
//! VK_KHR_pipeline_executable_properties: register count, binary size, stack, local
//! and shared memory on NVIDIA; whatever the driver chooses elsewhere; nothing where
//! the extension is missing.

use std::fmt;

use ash::vk;
use serde::Serialize;

use super::context::Context;
use super::device_info::c_str_lossy;
use super::error::{GpuResult, VkResultExt};

/// One statistic of one executable (a compiled shader stage) of a pipeline, under the
/// driver's own name.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct CompilerStatistic {
    /// The executable's name, as the driver gives it ("Compute Shader" or similar).
    pub executable: String,
    /// The statistic, under the driver's name (registers, binary size, ...).
    pub name: String,
    /// The driver's description of it, which says its unit.
    pub description: String,
    /// Its value, in the unit the description gives.
    pub value: StatisticValue,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum StatisticValue {
    Bool(bool),
    Int(i64),
    Uint(u64),
    Float(f64),
}

impl fmt::Display for StatisticValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StatisticValue::Bool(v) => write!(f, "{v}"),
            StatisticValue::Int(v) => write!(f, "{v}"),
            StatisticValue::Uint(v) => write!(f, "{v}"),
            StatisticValue::Float(v) => write!(f, "{v}"),
        }
    }
}

/// `Name=value; Name=value`, one entry per statistic, for a CSV cell or a log line.
pub fn statistics_summary(statistics: &[CompilerStatistic]) -> String {
    statistics
        .iter()
        .map(|s| format!("{}={}", s.name, s.value))
        .collect::<Vec<_>>()
        .join("; ")
}

/// Every statistic of every executable of `pipeline`; empty where the device does not
/// report them.
pub(crate) fn query(ctx: &Context, pipeline: vk::Pipeline) -> GpuResult<Vec<CompilerStatistic>> {
    let Some(executables) = ctx.executables() else {
        return Ok(Vec::new());
    };
    let info = vk::PipelineInfoKHR::default().pipeline(pipeline);
    // SAFETY: the pipeline was created with CAPTURE_STATISTICS on a device that enabled
    // pipelineExecutableInfo; the loader's two-call idiom sizes the outputs.
    let properties = unsafe { executables.get_pipeline_executable_properties(&info) }
        .during("vkGetPipelineExecutablePropertiesKHR")?;
    let mut statistics = Vec::new();
    for (index, property) in properties.iter().enumerate() {
        let executable = c_str_lossy(property.name_as_c_str());
        let which = vk::PipelineExecutableInfoKHR::default()
            .pipeline(pipeline)
            .executable_index(index as u32);
        // SAFETY: as above; `index` is below the count just returned.
        let raw = unsafe { executables.get_pipeline_executable_statistics(&which) }
            .during("vkGetPipelineExecutableStatisticsKHR")?;
        for stat in &raw {
            // SAFETY: `format` says which member of the union the driver wrote.
            let value = unsafe {
                match stat.format {
                    vk::PipelineExecutableStatisticFormatKHR::BOOL32 => {
                        StatisticValue::Bool(stat.value.b32 == vk::TRUE)
                    }
                    vk::PipelineExecutableStatisticFormatKHR::INT64 => {
                        StatisticValue::Int(stat.value.i64)
                    }
                    vk::PipelineExecutableStatisticFormatKHR::FLOAT64 => {
                        StatisticValue::Float(stat.value.f64)
                    }
                    _ => StatisticValue::Uint(stat.value.u64),
                }
            };
            statistics.push(CompilerStatistic {
                executable: executable.clone(),
                name: c_str_lossy(stat.name_as_c_str()),
                description: c_str_lossy(stat.description_as_c_str()),
                value,
            });
        }
    }
    Ok(statistics)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_summary_names_every_statistic_with_its_value() {
        let stat = |name: &str, value| CompilerStatistic {
            executable: "Compute Shader".into(),
            name: name.into(),
            description: String::new(),
            value,
        };
        let stats = [
            stat("Register Count", StatisticValue::Uint(32)),
            stat("Binary Size", StatisticValue::Uint(6144)),
            stat("Spills", StatisticValue::Bool(false)),
        ];
        assert_eq!(
            statistics_summary(&stats),
            "Register Count=32; Binary Size=6144; Spills=false"
        );
        assert_eq!(statistics_summary(&[]), "");
    }
}
