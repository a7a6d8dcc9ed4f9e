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
}

/// Everything that selects a compiled droplet module.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct KernelVariant {
    pub shader: DropletShader,
    pub atomics: AtomicMode,
    pub spawn: SpawnMode,
}

impl KernelVariant {
    /// The paper's shader with these atomics and spawning.
    pub fn paper(atomics: AtomicMode, spawn: SpawnMode) -> Self {
        Self {
            shader: DropletShader::Paper,
            atomics,
            spawn,
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
        }
    }

    /// The build.rs module name: `droplet[_passes][_racy|_float|_deterministic][_tiled]`.
    pub fn module_name(&self) -> String {
        let mut name = String::from(match self.shader {
            DropletShader::Paper => "droplet",
            DropletShader::Passes => "droplet_passes",
            DropletShader::Fast => "droplet_fast",
        });
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
        (self.shader == DropletShader::Fast && self.atomics != AtomicMode::Int).then(|| {
            format!(
                "the fast kernel runs int atomics only, not {}",
                self.atomics.as_str()
            )
        })
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
        ];
        let modes = [
            AtomicMode::Int,
            AtomicMode::Float,
            AtomicMode::Racy,
            AtomicMode::Deterministic,
        ];
        for shader in shaders_ {
            for atomics in modes {
                for spawn in [SpawnMode::Global, SpawnMode::Tiled] {
                    let variant = KernelVariant {
                        shader,
                        atomics,
                        spawn,
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
