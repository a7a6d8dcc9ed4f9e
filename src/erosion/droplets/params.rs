//! The droplet kernel's parameters, with the defaults vkerode chose (the paper gives none).

use serde::Serialize;

use super::error::ParamError;
use super::spawn::Spawn;
use crate::erosion::choice::setting_choice;

setting_choice! {
    /// How `modifyHeight` adds to the heightfield.
    pub enum AtomicMode {
        /// The paper's: int32 fixed point, atomicAdd.
        #[default]
        Int,
        /// float32 heights, float atomicAdd (GL_EXT_shader_atomic_float).
        Float,
        /// int32 fixed point, a plain read-modify-write: races lose updates.
        Racy,
        /// int32 fixed point; droplets read frozen heights and atomicAdd into a delta
        /// buffer that a second kernel applies after each dispatch: bit-identical reruns.
        Deterministic,
    }
}

impl AtomicMode {
    pub fn as_str(self) -> &'static str {
        match self {
            AtomicMode::Int => "int",
            AtomicMode::Float => "float",
            AtomicMode::Racy => "racy",
            AtomicMode::Deterministic => "deterministic",
        }
    }
}

setting_choice! {
    /// How a droplet's speed follows the height it drops.
    pub enum Physics {
        /// The paper's `speed = sqrt(speed^2 + deltaH * g)`: with deltaH < 0 downhill, it
        /// slows droplets going down.
        #[default]
        Paper,
        /// `speed = sqrt(max(0, speed^2 - deltaH * g))`: droplets gain speed going down.
        Corrected,
    }
}

impl Physics {
    pub fn as_str(self) -> &'static str {
        match self {
            Physics::Paper => "paper",
            Physics::Corrected => "corrected",
        }
    }

    /// The factor of deltaH in the speed update (the shaders' PHYSICS_SIGN).
    pub fn sign(self) -> f32 {
        match self {
            Physics::Paper => 1.0,
            Physics::Corrected => -1.0,
        }
    }
}

setting_choice! {
    /// How `modifyHeight` turns a height change into fixed point.
    pub enum Rounding {
        /// The paper's `int()`: toward zero, which drops a share of every change.
        #[default]
        Trunc,
        /// Half away from zero.
        Nearest,
        /// Away from zero with probability equal to the fraction, drawn from a hash of the
        /// droplet's id and its rounding call (4 per step, one per corner): unbiased, and
        /// reproducible wherever the rest of the run is.
        Stochastic,
    }
}

impl Rounding {
    pub fn as_str(self) -> &'static str {
        match self {
            Rounding::Trunc => "trunc",
            Rounding::Nearest => "nearest",
            Rounding::Stochastic => "stochastic",
        }
    }

    /// The shaders' ROUNDING.
    pub fn code(self) -> u32 {
        match self {
            Rounding::Trunc => 0,
            Rounding::Nearest => 1,
            Rounding::Stochastic => 2,
        }
    }
}

/// The model choices a kernel is compiled for (specialization constants).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Model {
    pub physics: Physics,
    pub rounding: Rounding,
}

/// The water every droplet spawns with: the paper's `float water = 1.0;`, which each
/// kernel keeps as a literal (the staggered passes' in their DropletState; a test holds
/// them together).
pub const SPAWN_WATER: f32 = 1.0;

/// The paper's uniforms, plus the fixed-point scale of its `modifyHeight`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct KernelParams {
    /// INERTIA: share of the old direction kept each step.
    pub inertia: f32,
    /// CAPACITY_FACTOR: sediment a droplet can carry per unit slope, speed and water.
    pub capacity: f32,
    /// EROSION_RATE: share of the capacity deficit eroded per step.
    pub erosion: f32,
    /// DEPOSITION_RATE: share of the excess sediment deposited per step.
    pub deposition: f32,
    /// EVAPORATION_RATE: share of water lost per step.
    pub evaporation: f32,
    /// MAX_LIFETIME: steps per droplet at most.
    pub lifetime: u32,
    /// Fixed-point units per height unit; the paper's literal is 1000.
    pub fixed_point_scale: f32,
    pub physics: Physics,
    pub rounding: Rounding,
}

impl Default for KernelParams {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl KernelParams {
    pub const DEFAULT: KernelParams = KernelParams {
        inertia: 0.05,
        capacity: 4.0,
        erosion: 0.3,
        deposition: 0.3,
        evaporation: 0.01,
        lifetime: 30,
        fixed_point_scale: 1000.0,
        physics: Physics::Paper,
        rounding: Rounding::Trunc,
    };

    pub fn model(&self) -> Model {
        Model {
            physics: self.physics,
            rounding: self.rounding,
        }
    }

    pub fn validate(&self) -> Result<(), ParamError> {
        let unit = |name, v: f32| {
            check(
                name,
                v,
                "a finite number in [0, 1]",
                (0.0..=1.0).contains(&v),
            )
        };
        unit("inertia", self.inertia)?;
        unit("erosion", self.erosion)?;
        unit("deposition", self.deposition)?;
        check(
            "evaporation",
            self.evaporation,
            "a finite number in [0, 1)",
            (0.0..1.0).contains(&self.evaporation),
        )?;
        check(
            "capacity",
            self.capacity,
            "finite and >= 0",
            self.capacity >= 0.0,
        )?;
        check(
            "fixed-point scale",
            self.fixed_point_scale,
            "finite and > 0",
            self.fixed_point_scale > 0.0,
        )?;
        if self.lifetime == 0 || self.lifetime > i32::MAX as u32 {
            return Err(ParamError {
                name: "lifetime",
                expected: "from 1 to 2147483647 steps",
                value: self.lifetime.to_string(),
            });
        }
        Ok(())
    }
}

fn check(
    name: &'static str,
    value: f32,
    expected: &'static str,
    ok: bool,
) -> Result<(), ParamError> {
    if value.is_finite() && ok {
        Ok(())
    } else {
        Err(ParamError {
            name,
            expected,
            value: value.to_string(),
        })
    }
}

/// Staggered dispatch: each batch's droplets advance `count` times by
/// ceil(lifetime / count) steps, their state kept in a buffer between passes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Passes {
    pub count: u32,
    /// Droplet i starts in pass i mod count, so droplets of every age run together.
    pub stagger: bool,
}

impl Default for Passes {
    fn default() -> Self {
        Self {
            count: 1,
            stagger: false,
        }
    }
}

impl Passes {
    /// Whether the paper's single-dispatch kernel cannot run this: it needs the
    /// stateful kernel (glsl/droplet_passes.comp).
    pub fn needs_state(&self) -> bool {
        self.count > 1 || self.stagger
    }

    pub fn steps_per_pass(&self, lifetime: u32) -> u32 {
        lifetime.div_ceil(self.count)
    }

    /// Dispatches per batch: staggered droplets start up to count - 1 passes late.
    pub fn dispatches(&self) -> u32 {
        if self.stagger {
            2 * self.count - 1
        } else {
            self.count
        }
    }

    fn validate(&self, lifetime: u32) -> Result<(), ParamError> {
        if self.count == 0 || self.count > lifetime {
            return Err(ParamError {
                name: "passes",
                expected: "from 1 to the lifetime",
                value: self.count.to_string(),
            });
        }
        Ok(())
    }
}

/// A droplet run: how many droplets, their seed and the kernel's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct DropletJob {
    pub droplets: u32,
    pub seed: u32,
    pub params: KernelParams,
    /// Where droplets start. Tiled spawning needs a kernel built for it.
    pub spawn: Spawn,
    pub passes: Passes,
}

impl DropletJob {
    pub fn validate(&self) -> Result<(), ParamError> {
        if self.droplets == 0 {
            return Err(ParamError {
                name: "droplets",
                expected: "at least 1",
                value: "0".into(),
            });
        }
        self.spawn.validate()?;
        self.params.validate()?;
        self.passes.validate(self.params.lifetime)
    }
}

/// Bilinear splatting: every step of the paper's kernel issues four atomicAdds.
pub const ATOMICS_PER_STEP: u64 = 4;

/// Work a run did: droplets started, steps taken, atomics issued.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct WorkCount {
    pub droplets: u64,
    pub steps: u64,
    pub atomics: u64,
}

impl WorkCount {
    pub fn new(droplets: u64, steps: u64) -> Self {
        Self {
            droplets,
            steps,
            atomics: steps * ATOMICS_PER_STEP,
        }
    }

    /// From the instrumented kernel's counts: each step issues four atomics.
    pub fn from_atomics(droplets: u64, atomics: u64) -> Self {
        Self {
            droplets,
            steps: atomics / ATOMICS_PER_STEP,
            atomics,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_finite_and_out_of_range_parameters_are_refused_by_name() {
        let bad = |f: fn(&mut KernelParams)| {
            let mut p = KernelParams::default();
            f(&mut p);
            p.validate().unwrap_err().name
        };
        assert_eq!(bad(|p| p.inertia = f32::NAN), "inertia");
        assert_eq!(bad(|p| p.capacity = f32::INFINITY), "capacity");
        assert_eq!(bad(|p| p.erosion = 1.5), "erosion");
        assert_eq!(bad(|p| p.evaporation = 1.0), "evaporation");
        assert_eq!(bad(|p| p.lifetime = 0), "lifetime");
        assert_eq!(bad(|p| p.fixed_point_scale = 0.0), "fixed-point scale");
        assert!(KernelParams::default().validate().is_ok());
    }
}
