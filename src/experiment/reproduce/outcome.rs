//! The outcome of a run, as reproduce.json holds it and a reference bundle is read.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::judge::ClaimResult;
use super::suite::Scale;
use crate::experiment::ExperimentError;

/// The verdicts and everything they rest on.
pub const JSON_FILE: &str = "reproduce.json";

/// What one run's cost per point came to in the calibration: seconds of wall time,
/// `fixed_s` plus `per_cell_s` for each cell of the map.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Calibration {
    pub fixed_s: f64,
    pub per_cell_s: f64,
}

/// reproduce.json: the device, the scale, the threshold and every claim's outcome.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Reproduction {
    pub device: String,
    pub driver: String,
    pub vulkan: String,
    pub commit: String,
    /// Seconds the suite was given.
    pub budget_s: f64,
    /// Seconds it took, calibration included.
    pub elapsed_s: f64,
    pub calibration: Calibration,
    pub scale: Scale,
    /// The noise threshold of the speed verdicts, in percent, and where it came from.
    pub threshold_percent: f64,
    pub threshold_source: String,
    pub claims: Vec<ClaimResult>,
}

impl Reproduction {
    /// The reference bundle's reproduce.json in `dir`, if there is one.
    pub fn read_reference(dir: &Path) -> Result<Option<Self>, ExperimentError> {
        let path = dir.join(JSON_FILE);
        if !path.exists() {
            return Ok(None);
        }
        let io = |source| ExperimentError::Io {
            path: path.clone(),
            source,
        };
        let text = std::fs::read_to_string(&path).map_err(io)?;
        serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| io(std::io::Error::other(e)))
    }
}
