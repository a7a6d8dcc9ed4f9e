//! `vkerode kernels`: the driver's compiler statistics of droplet kernel variants at
//! given workgroup sizes, without running them.

use std::path::Path;
use std::sync::Arc;

use serde::Serialize;

use super::ProbeError;
use crate::erosion::droplets::{
    DropletKernel, DropletSettings, DropletShader, KernelVariant, Lever,
};
use crate::gpu::{CompilerStatistic, Context};
use crate::terrain::files::write_atomically;

/// The statistics of one variant's timed pipeline at one workgroup size.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct KernelStatistics {
    /// Invocations per workgroup.
    pub workgroup: u32,
    /// The build: shader, atomics, spawning, SPIR-V, reserved shared memory and lever.
    pub variant: KernelVariant,
    /// The driver's statistics, each under its own name and in its own unit; empty where
    /// it reports none.
    pub statistics: Vec<CompilerStatistic>,
}

/// The builds of each shader with each lever, on top of `base` (its atomics, spawning
/// and SPIR-V), and a note for each pair that has no build.
pub fn kernel_variants(
    shaders: &[DropletShader],
    levers: &[Lever],
    base: &DropletSettings,
) -> (Vec<KernelVariant>, Vec<String>) {
    let mut variants = Vec::new();
    let mut notes = Vec::new();
    for &variant in shaders {
        for &lever in levers {
            let settings = DropletSettings {
                variant,
                lever,
                ..base.clone()
            };
            let built = settings.kernel_variant();
            match built.unsupported() {
                Some(reason) => notes.push(format!(
                    "{} with lever {}: no build ({reason})",
                    built.module_name(),
                    lever.as_str()
                )),
                None => variants.push(built),
            }
        }
    }
    (variants, notes)
}

/// Builds each variant at each workgroup size and reads its statistics. Variants with
/// no build (`KernelVariant::unsupported`) are an error naming the reason.
pub fn kernel_statistics(
    ctx: &Arc<Context>,
    variants: &[KernelVariant],
    workgroups: &[u32],
    fixed_point_scale: f32,
) -> Result<Vec<KernelStatistics>, ProbeError> {
    let mut rows = Vec::new();
    for &variant in variants {
        for &workgroup in workgroups {
            let kernel = DropletKernel::new(ctx, workgroup, fixed_point_scale, variant)?;
            rows.push(KernelStatistics {
                workgroup,
                variant,
                statistics: kernel.statistics().to_vec(),
            });
        }
    }
    Ok(rows)
}

/// One row per statistic: module, workgroup, lever, executable, name, value,
/// description. A variant with no statistics has no rows.
pub fn write_statistics_csv(path: &Path, rows: &[KernelStatistics]) -> Result<(), ProbeError> {
    write_atomically(path, |out| {
        let mut csv = csv::Writer::from_writer(out);
        csv.write_record([
            "module",
            "workgroup",
            "lever",
            "executable",
            "statistic",
            "value",
            "description",
        ])
        .map_err(std::io::Error::other)?;
        for row in rows {
            let module = row.variant.module_name();
            for stat in &row.statistics {
                csv.write_record([
                    module.as_str(),
                    &row.workgroup.to_string(),
                    row.variant.lever.as_str(),
                    &stat.executable,
                    &stat.name,
                    &stat.value.to_string(),
                    &stat.description,
                ])
                .map_err(std::io::Error::other)?;
            }
        }
        csv.flush()
    })?;
    Ok(())
}
