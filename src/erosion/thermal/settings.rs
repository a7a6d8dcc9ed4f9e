//! The thermal strategy's settings (erode flags and config keys).

use serde::{Deserialize, Serialize};

use super::params::ThermalParams;
use super::variant::{Fusion, ThermalVariant};
use crate::erosion::grid::GridSettings;
use crate::erosion::keys::SettingError;
use crate::erosion::workgroup::WorkgroupShape;
use crate::gpu::DeviceInfo;
use crate::terrain::MapInfo;

/// The thermal kernels' settings. Every field is an `erode` flag and a config key.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, clap::Args)]
#[serde(default, deny_unknown_fields)]
pub struct ThermalSettings {
    /// Time steps of thermal erosion.
    #[arg(long, default_value_t = Self::DEFAULT.thermal_steps)]
    pub thermal_steps: u32,
    /// Talus angle in degrees, strictly between 0 and 90: material slides down slopes
    /// steeper than it (a slope is a height difference over a distance in cells).
    #[arg(long, default_value_t = Self::DEFAULT.thermal_talus)]
    pub thermal_talus: f32,
    /// Share of a cell's largest excess over the talus it sends per step, in
    /// (0, 1/(neighbours + 1)]: past it, a pit that several neighbours fill at once
    /// overshoots them.
    #[arg(long, default_value_t = Self::DEFAULT.thermal_rate)]
    pub thermal_rate: f32,
    /// Neighbours a cell sends to: 4 (axial) or 8 (and the diagonals).
    #[arg(long, default_value_t = Self::DEFAULT.thermal_neighbours)]
    pub thermal_neighbours: u32,
    /// The thermal kernels' passes: two per step (none) or one that recomputes the
    /// neighbours' outflows (fused).
    #[arg(long, value_enum, default_value_t = Self::DEFAULT.thermal_fusion)]
    pub thermal_fusion: Fusion,
    /// Workgroup shape of the thermal kernels, e.g. 16x16.
    #[arg(long, default_value_t = Self::DEFAULT.thermal_workgroup)]
    pub thermal_workgroup: WorkgroupShape,
    /// Steps between the mass checks of the counted run (the heights' sum against the
    /// start's, within float rounding); 0 checks once, at the end.
    #[arg(long, default_value_t = Self::DEFAULT.thermal_check_every)]
    pub thermal_check_every: u32,
}

impl Default for ThermalSettings {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl ThermalSettings {
    /// The heading of its flags in `erode --help`.
    pub const HEADING: &'static str = "Thermal erosion (algorithm = thermal)";
    /// What it is, in the help of the `algorithm` setting.
    pub const CHOICE: &'static str = "thermal erosion (its settings are the thermal_* ones)";

    pub const DEFAULT: ThermalSettings = ThermalSettings {
        thermal_steps: 200,
        thermal_talus: ThermalParams::DEFAULT.talus_degrees,
        thermal_rate: ThermalParams::DEFAULT.rate,
        thermal_neighbours: ThermalParams::DEFAULT.neighbours,
        // The fastest on the H200, for either neighbourhood (results/thermal/): two
        // passes at the copy bandwidth beat the fused pass's arithmetic.
        thermal_fusion: Fusion::None,
        thermal_workgroup: WorkgroupShape { x: 32, y: 8 },
        thermal_check_every: 100,
    };

    /// The unit of each key, for the config reference.
    pub const UNITS: &'static [(&'static str, &'static str)] = &[
        ("thermal_steps", "time steps"),
        ("thermal_talus", "degrees"),
        ("thermal_rate", "share per time step"),
        ("thermal_neighbours", "neighbours"),
        ("thermal_fusion", "choice"),
        ("thermal_workgroup", "invocations x invocations"),
        ("thermal_check_every", "time steps"),
    ];

    /// The keys only the kernels use: the CPU reference has no passes or workgroups,
    /// and no counted run to check.
    pub const GPU_ONLY: &'static [&'static str] =
        &["thermal_fusion", "thermal_workgroup", "thermal_check_every"];
}

impl GridSettings for ThermalSettings {
    type Variant = ThermalVariant;
    type Params = ThermalParams;

    fn steps(&self) -> u32 {
        self.thermal_steps
    }

    fn steps_mut(&mut self) -> &mut u32 {
        &mut self.thermal_steps
    }

    fn check_every(&self) -> u32 {
        self.thermal_check_every
    }

    fn params(&self) -> ThermalParams {
        ThermalParams {
            talus_degrees: self.thermal_talus,
            rate: self.thermal_rate,
            neighbours: self.thermal_neighbours,
        }
    }

    fn variant(&self) -> ThermalVariant {
        ThermalVariant {
            fusion: self.thermal_fusion,
            workgroup: self.thermal_workgroup,
        }
    }

    /// The model's rules, with the device's where there is one (none depends on the map).
    fn check(
        &self,
        _map: Option<MapInfo>,
        device: Option<&DeviceInfo>,
    ) -> Result<(), SettingError> {
        // As pipes_steps: no steps, no rate to record.
        if self.thermal_steps == 0 {
            return Err(SettingError::new("thermal_steps", "must be at least 1"));
        }
        self.params().check()?;
        self.variant().check(device)
    }
}

#[cfg(test)]
mod tests {
    use crate::erosion::grid::GridSettings;
    use crate::erosion::RunSettings;

    #[test]
    fn a_flag_and_its_key_set_the_same_thermal_job() {
        let flags = RunSettings::from_flags(&[
            "--algorithm",
            "thermal",
            "--thermal-talus",
            "30",
            "--thermal-neighbours",
            "4",
            "--thermal-fusion",
            "none",
            "--thermal-workgroup",
            "8x4",
        ]);
        let keys: RunSettings = toml::from_str(
            "algorithm = \"thermal\"\nthermal_talus = 30.0\nthermal_neighbours = 4\nthermal_fusion = \"none\"\nthermal_workgroup = \"8x4\"\n",
        )
        .unwrap();
        assert_eq!(flags, keys);
        assert_eq!(keys.thermal.params().neighbours, 4);
        assert!(keys.check(None).is_ok());
    }

    #[test]
    fn a_bad_value_and_a_broken_rule_are_refused_by_name() {
        let refused = |text: &str| toml::from_str::<RunSettings>(text).unwrap_err().to_string();
        assert!(refused("thermal_fusion = \"twice\"").contains("`thermal_fusion`"));
        assert!(refused("thermal_steps = -1").contains("`thermal_steps`"));
        assert!(refused("thermal_workgroup = \"big\"").contains("`thermal_workgroup`"));
        let broken = |text: &str| {
            let settings: RunSettings = toml::from_str(text).unwrap();
            settings.check(None).unwrap_err().key
        };
        assert_eq!(
            broken("algorithm = \"thermal\"\nthermal_talus = 95.0"),
            "thermal_talus"
        );
        assert_eq!(
            broken("algorithm = \"thermal\"\nthermal_rate = 0.75"),
            "thermal_rate"
        );
        assert_eq!(
            broken("algorithm = \"thermal\"\nthermal_neighbours = 6"),
            "thermal_neighbours"
        );
        assert_eq!(
            broken("algorithm = \"thermal\"\nthermal_steps = 0"),
            "thermal_steps"
        );
    }
}
