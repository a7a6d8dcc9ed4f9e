//! The 2-D workgroup shape of the grid strategies' kernels, written `16x16`.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::keys::SettingError;
use crate::gpu::DeviceInfo;

/// A 2-D workgroup, written `16x16`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WorkgroupShape {
    pub x: u32,
    pub y: u32,
}

impl WorkgroupShape {
    pub const DEFAULT: WorkgroupShape = WorkgroupShape { x: 16, y: 16 };

    /// Refused, as the setting `key`, where it is past the device's limits.
    pub fn check(&self, key: &'static str, device: &DeviceInfo) -> Result<(), SettingError> {
        let invocations = u64::from(self.x) * u64::from(self.y);
        if self.x > device.max_workgroup_size_x
            || invocations > u64::from(device.max_workgroup_invocations)
        {
            return Err(SettingError::new(
                key,
                format!(
                    "workgroup {self} is past this device's limits ({} along x, {} invocations)",
                    device.max_workgroup_size_x, device.max_workgroup_invocations
                ),
            ));
        }
        Ok(())
    }

    /// Workgroups covering a `width` x `height` grid.
    pub fn groups(&self, width: usize, height: usize) -> [u32; 2] {
        [
            (width as u32).div_ceil(self.x),
            (height as u32).div_ceil(self.y),
        ]
    }
}

impl Default for WorkgroupShape {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl fmt::Display for WorkgroupShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}", self.x, self.y)
    }
}

/// Text that is no workgroup shape: the text as given.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a workgroup shape such as 16x16")]
pub struct WorkgroupShapeError(pub String);

impl FromStr for WorkgroupShape {
    type Err = WorkgroupShapeError;
    fn from_str(text: &str) -> Result<Self, WorkgroupShapeError> {
        let bad = || WorkgroupShapeError(text.to_string());
        let (x, y) = text.trim().split_once('x').ok_or_else(bad)?;
        let side = |s: &str| s.trim().parse::<u32>().ok().filter(|&n| n > 0);
        Ok(Self {
            x: side(x).ok_or_else(bad)?,
            y: side(y).ok_or_else(bad)?,
        })
    }
}

impl Serialize for WorkgroupShape {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for WorkgroupShape {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}
