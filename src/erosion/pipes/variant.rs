//! The axes of the grid kernels: pass fusion, field packing, shared-memory tiles and
//! workgroup shape. Every combination the shaders build is a variant; a sweep measures
//! each, whether it pays or not.

use std::fmt;

use serde::Serialize;

use super::params::Advection;
use crate::erosion::choice::setting_choice;
use crate::erosion::grid::{check_addressed, GridVariant};
use crate::erosion::keys::SettingError;
use crate::erosion::workgroup::WorkgroupShape;
use crate::gpu::{shaders, DeviceInfo, ShaderModule, Spirv};

setting_choice! {
    /// How a time step is split into dispatches.
    pub enum Fusion {
        /// The model's five passes: rain, flux, water, erosion, advection.
        #[default]
        None,
        /// Two passes: advection and evaporation of the previous step with rain and flux,
        /// then water with erosion.
        Fused,
    }
}

setting_choice! {
    /// How the flux and velocity fields are stored.
    pub enum Packing {
        /// float32 throughout.
        #[default]
        F32,
        /// Flux and velocity as half floats (8 and 4 bytes a cell, not 16 and 8).
        Half,
    }
}

setting_choice! {
    /// Where the fused passes read their neighbours' fields from.
    pub enum Tiles {
        /// Straight from the buffers, through whatever caches the driver gives them.
        #[default]
        None,
        /// From a shared-memory tile of the workgroup's cells and a one-cell border.
        Shared,
    }
}

/// One build of the grid kernels.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PipesVariant {
    pub fusion: Fusion,
    pub packing: Packing,
    pub tiles: Tiles,
    pub workgroup: WorkgroupShape,
}

/// The kernels, as errors name them.
pub(super) const KERNELS: &str = "the grid kernels";

/// Bytes of one cell of a float field.
const FLOAT: u64 = 4;

impl PipesVariant {
    /// The shader files of one time step, in order.
    pub fn stems(&self) -> &'static [&'static str] {
        match self.fusion {
            Fusion::None => &[
                "pipes_rain",
                "pipes_flux",
                "pipes_water",
                "pipes_erosion",
                "pipes_advect",
            ],
            Fusion::Fused => &["pipes_fused_flux", "pipes_fused_erosion"],
        }
    }

    /// The module of `stem` in this variant moving sediment by `advection`, with the
    /// balance counters or without.
    pub(super) fn module(&self, stem: &str, advection: Advection, counted: bool) -> Option<Spirv> {
        let pick = |on: bool, option| if on { option } else { "" };
        ShaderModule::find(
            shaders::MODULES,
            stem,
            &[
                ("packing", pick(self.packing == Packing::Half, "half")),
                ("tiles", pick(self.tiles == Tiles::Shared, "shared")),
                ("advection", pick(advection == Advection::Upwind, "upwind")),
                ("build", pick(counted, "counted")),
            ],
        )
    }

    /// Bytes a time step must move per cell, each field read or written once: the
    /// traffic of a perfect cache for the neighbour reads, which is what the bandwidth
    /// ceiling bounds.
    pub fn bytes_per_cell_step(&self, advection: Advection) -> u64 {
        let (flux, velocity) = match self.packing {
            Packing::F32 => (16, 8),
            Packing::Half => (8, 4),
        };
        match (self.fusion, advection) {
            // rain: water r/w; flux: terrain, water, flux r, flux w; water: flux r,
            // water r/w, velocity w, flux copy w; erosion: terrain, velocity, water,
            // sediment r, terrain, sediment w; advection: velocity, sediment, water,
            // terrain r, sediment, water, terrain w.
            (Fusion::None, _) => 17 * FLOAT + 4 * flux + 3 * velocity,
            // flux pass: velocity, sediment, terrain, water, flux r, sediment, flux w;
            // erosion pass: flux, water, terrain, sediment r, water, velocity, terrain,
            // sediment w.
            (Fusion::Fused, Advection::SemiLagrangian) => 10 * FLOAT + 3 * flux + 2 * velocity,
            // The upwind transport is the erosion pass's: the flux pass leaves the
            // sediment and velocity alone.
            (Fusion::Fused, Advection::Upwind) => 8 * FLOAT + 3 * flux + velocity,
        }
    }

    /// Why this variant cannot run `advection` on `device` (or on any device, without
    /// one), if it cannot: the setting's key and the reason.
    pub fn check(
        &self,
        advection: Advection,
        device: Option<&DeviceInfo>,
    ) -> Result<(), SettingError> {
        if advection == Advection::Upwind && self.fusion == Fusion::None {
            return Err(SettingError::new(
                "pipes_advection",
                "the upwind transport exists in the fused passes only: set pipes_fusion = fused",
            ));
        }
        if self.tiles == Tiles::Shared && self.fusion == Fusion::None {
            return Err(SettingError::new(
                "pipes_tiles",
                "shared-memory tiles exist for the fused passes only: set pipes_fusion = fused",
            ));
        }
        let Some(device) = device else { return Ok(()) };
        self.workgroup.check("pipes_workgroup", device)?;
        let WorkgroupShape { x, y } = self.workgroup;
        // The erosion pass's tiles: a flux vec4 and a terrain float per entry.
        let tile_bytes = u64::from(x + 2) * u64::from(y + 2) * (16 + FLOAT);
        if self.tiles == Tiles::Shared && tile_bytes > u64::from(device.max_shared_memory_bytes) {
            return Err(SettingError::new(
                "pipes_workgroup",
                format!(
                    "workgroup {}'s tiles need {tile_bytes} bytes of shared memory, past this device's {}",
                    self.workgroup, device.max_shared_memory_bytes
                ),
            ));
        }
        check_addressed(device, KERNELS)
    }
}

impl GridVariant for PipesVariant {
    fn workgroup(&self) -> WorkgroupShape {
        self.workgroup
    }

    /// The fused runs end with a finishing pass.
    fn dispatches(&self, steps: u32) -> usize {
        let finish = usize::from(self.fusion == Fusion::Fused && steps > 0);
        self.stems().len() * steps as usize + finish
    }
}

impl fmt::Display for PipesVariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "fusion {} packing {} tiles {} workgroup {}",
            config_name(&self.fusion),
            config_name(&self.packing),
            config_name(&self.tiles),
            self.workgroup
        )
    }
}

/// How configs and flags spell an axis value.
fn config_name<T: clap::ValueEnum>(value: &T) -> String {
    value
        .to_possible_value()
        .map_or_else(String::new, |v| v.get_name().to_string())
}
