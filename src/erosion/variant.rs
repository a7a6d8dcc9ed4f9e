//! Which compiled droplet kernel a run needs: the shader file and its macro variant.

use serde::Serialize;

use super::params::{AtomicMode, DropletJob};
use super::spawn::SpawnMode;

/// The droplet shader file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DropletShader {
    /// glsl/droplet.comp: the paper's kernel, one dispatch per droplet's life.
    #[default]
    Paper,
    /// glsl/droplet_passes.comp: the same steps, state kept between passes.
    Passes,
    /// glsl/droplet_fast.comp: the paper's algorithm with less memory traffic (int
    /// atomics, one pass).
    Fast,
    /// The fast kernel with only its first idea: no atomics for zero changes.
    FastSkipOnly,
    /// The fast kernel with only its second idea: corner heights reused.
    FastReuseOnly,
}

impl DropletShader {
    fn is_fast(self) -> bool {
        matches!(
            self,
            DropletShader::Fast | DropletShader::FastSkipOnly | DropletShader::FastReuseOnly
        )
    }
}

/// How build.rs compiled the SPIR-V.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum SpirvBuild {
    /// The GLSL as written, no optimisation passes.
    #[default]
    Verbatim,
    /// Through shaderc's performance optimiser.
    Optimised,
}

/// Everything that selects a compiled droplet module.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct KernelVariant {
    pub shader: DropletShader,
    pub atomics: AtomicMode,
    pub spawn: SpawnMode,
    pub spirv: SpirvBuild,
    /// Shared memory each workgroup reserves without using it, to lower occupancy.
    pub reserved_shared_bytes: u32,
}

impl KernelVariant {
    /// The paper's shader with these atomics and spawning.
    pub fn paper(atomics: AtomicMode, spawn: SpawnMode) -> Self {
        Self {
            shader: DropletShader::Paper,
            atomics,
            spawn,
            spirv: SpirvBuild::Verbatim,
            reserved_shared_bytes: 0,
        }
    }

    /// The variant a job needs with these atomics: the stateful shader only where the
    /// job has several passes or staggers.
    pub fn for_job(job: &DropletJob, atomics: AtomicMode) -> Self {
        Self {
            shader: if job.passes.needs_state() {
                DropletShader::Passes
            } else {
                DropletShader::Paper
            },
            atomics,
            spawn: job.spawn.mode,
            spirv: SpirvBuild::Verbatim,
            reserved_shared_bytes: 0,
        }
    }

    /// The build.rs module name, e.g. `droplet_opt_racy_tiled` or
    /// `droplet_fast_skiponly`.
    pub fn module_name(&self) -> String {
        let mut name = String::from(match self.shader {
            DropletShader::Paper => "droplet",
            DropletShader::Passes => "droplet_passes",
            _ => "droplet_fast",
        });
        if self.spirv == SpirvBuild::Optimised {
            name += "_opt";
        }
        match self.shader {
            DropletShader::FastSkipOnly => name += "_skiponly",
            DropletShader::FastReuseOnly => name += "_reuseonly",
            _ => {}
        }
        if self.atomics != AtomicMode::Int {
            name += "_";
            name += self.atomics.as_str();
        }
        if self.spawn == SpawnMode::Tiled {
            name += "_tiled";
        }
        name
    }

    /// Whether a kernel of this variant can run `job`.
    pub fn runs(&self, job: &DropletJob) -> bool {
        self.spawn == job.spawn.mode
            && (self.shader == DropletShader::Passes || !job.passes.needs_state())
    }

    /// Why no module of this variant exists, if none does.
    pub fn unsupported(&self) -> Option<String> {
        if self.shader.is_fast() && self.atomics != AtomicMode::Int {
            return Some(format!(
                "the fast kernel runs int atomics only, not {}",
                self.atomics.as_str()
            ));
        }
        (self.shader == DropletShader::Passes && self.spirv == SpirvBuild::Optimised)
            .then(|| "the passes kernel is built verbatim only".to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::shaders;

    #[test]
    fn every_variant_has_a_compiled_module_and_its_counted_build() {
        let shaders_ = [
            DropletShader::Paper,
            DropletShader::Passes,
            DropletShader::Fast,
            DropletShader::FastSkipOnly,
            DropletShader::FastReuseOnly,
        ];
        let modes = [
            AtomicMode::Int,
            AtomicMode::Float,
            AtomicMode::Racy,
            AtomicMode::Deterministic,
        ];
        for shader in shaders_ {
            for atomics in modes {
                for (spawn, spirv) in [SpawnMode::Global, SpawnMode::Tiled]
                    .into_iter()
                    .flat_map(|s| [(s, SpirvBuild::Verbatim), (s, SpirvBuild::Optimised)])
                {
                    let variant = KernelVariant {
                        shader,
                        atomics,
                        spawn,
                        spirv,
                        reserved_shared_bytes: 0,
                    };
                    if variant.unsupported().is_some() {
                        continue;
                    }
                    let name = variant.module_name();
                    assert!(shaders::by_name(&name).is_some(), "{name}");
                    assert!(shaders::by_name(&format!("{name}_counted")).is_some());
                }
            }
        }
    }
}
