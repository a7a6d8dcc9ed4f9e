//! The axes of the thermal kernels: pass fusion, the neighbourhood (a build of its own,
//! so that the loops over neighbours have a fixed length) and the workgroup's shape.

use std::fmt;

use clap::ValueEnum as _;
use serde::Serialize;

use crate::erosion::choice::setting_choice;
use crate::erosion::grid::{check_addressed, GridVariant};
use crate::erosion::keys::SettingError;
use crate::erosion::workgroup::WorkgroupShape;
use crate::gpu::{shaders, DeviceInfo, ShaderModule, Spirv};

setting_choice! {
    /// How a time step is split into dispatches.
    pub enum Fusion {
        /// Two passes: each cell's outflows into a buffer, then each height from its own
        /// outflows and its neighbours' toward it (in place).
        #[default]
        None,
        /// One pass: each cell recomputes its neighbours' outflows toward it from a 5x5
        /// stencil of heights, which ping-pong between two buffers.
        Fused,
    }
}

/// One pass of a time step: its shader file, and whether its counted build sums what
/// each cell sent (the pass that subtracts it).
#[derive(Clone, Copy, Debug)]
pub struct Pass {
    pub stem: &'static str,
    pub counts: bool,
}

/// One build of the thermal kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ThermalVariant {
    pub fusion: Fusion,
    pub workgroup: WorkgroupShape,
}

/// The kernels, as errors name them.
pub(super) const KERNELS: &str = "the thermal kernels";

/// Bytes of one cell of a float field.
const FLOAT: u64 = 4;

impl ThermalVariant {
    /// The passes of one time step, in order.
    pub fn passes(&self) -> &'static [Pass] {
        match self.fusion {
            Fusion::None => &[
                Pass {
                    stem: "thermal_flow",
                    counts: false,
                },
                Pass {
                    stem: "thermal_apply",
                    counts: true,
                },
            ],
            Fusion::Fused => &[Pass {
                stem: "thermal_fused",
                counts: true,
            }],
        }
    }

    /// The module of `pass` for `neighbours` (4 or 8), with the counter of what each
    /// cell sent or without.
    pub(super) fn module(&self, pass: Pass, neighbours: u32, counted: bool) -> Option<Spirv> {
        let pick = |on: bool, option| if on { option } else { "" };
        ShaderModule::find(
            shaders::MODULES,
            pass.stem,
            &[
                ("neighbours", pick(neighbours == 4, "four")),
                ("build", pick(counted && pass.counts, "counted")),
            ],
        )
    }

    /// Bytes a time step must move per cell with `neighbours` neighbours, each field
    /// read or written once: the traffic of a perfect cache for the neighbour reads,
    /// which is what the bandwidth ceiling bounds.
    pub fn bytes_per_cell_step(&self, neighbours: u32) -> u64 {
        let outflows = u64::from(neighbours) * FLOAT;
        match self.fusion {
            // flow pass: height r, outflows w; apply pass: height r, outflows r,
            // height w.
            Fusion::None => 3 * FLOAT + 2 * outflows,
            // height r, the other height buffer w.
            Fusion::Fused => 2 * FLOAT,
        }
    }

    /// Why this variant cannot run on `device` (or on any device, without one), if it
    /// cannot: the setting's key and the reason.
    pub fn check(&self, device: Option<&DeviceInfo>) -> Result<(), SettingError> {
        let Some(device) = device else { return Ok(()) };
        self.workgroup.check("thermal_workgroup", device)?;
        check_addressed(device, KERNELS)
    }
}

impl GridVariant for ThermalVariant {
    fn workgroup(&self) -> WorkgroupShape {
        self.workgroup
    }

    fn dispatches(&self, steps: u32) -> usize {
        self.passes().len() * steps as usize
    }
}

impl fmt::Display for ThermalVariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let fusion = self
            .fusion
            .to_possible_value()
            .map_or_else(String::new, |v| v.get_name().to_string());
        write!(f, "fusion {fusion} workgroup {}", self.workgroup)
    }
}
