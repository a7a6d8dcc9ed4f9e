//! From a DEM's metres on a grid of metres to the kernel's height units, where one
//! unit is one cell, and back.

use super::formats::Geodesic;
use super::image::CellSize;

/// Where a DEM's cell size came from.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CellSizeSource {
    /// `--cell-size`, over whatever the file says.
    Flag,
    /// The file: GeoTIFF tags or the sidecar, in a linear unit.
    File,
    /// The file's geographic CRS: degrees turned into metres on its ellipsoid.
    Geodesic(Geodesic),
    /// Neither: the user assumed one by name (`--assume-cell-size`).
    Assumed,
}

#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct GridUnits {
    /// Grid spacing in the DEM's horizontal units (metres).
    pub cell_size: CellSize,
    /// Multiplies elevations before the conversion (vertical exaggeration).
    pub vertical_scale: f32,
}

impl Default for GridUnits {
    /// Heights already in cells: the identity.
    fn default() -> Self {
        Self {
            cell_size: CellSize::default(),
            vertical_scale: 1.0,
        }
    }
}

impl GridUnits {
    /// The kernel steps one cell along x at a time, so the x spacing is its unit of
    /// length; it treats cells as square.
    pub fn to_kernel(&self, elevation: f32) -> f32 {
        elevation * self.vertical_scale / self.cell_size.x
    }

    pub fn from_kernel(&self, height: f32) -> f32 {
        height * self.cell_size.x / self.vertical_scale
    }

    /// The grid spacing in kernel units of length (the x spacing): 1 across, dy / dx
    /// down.
    pub fn kernel_spacing(&self) -> CellSize {
        CellSize {
            x: 1.0,
            y: self.cell_size.y / self.cell_size.x,
        }
    }

    pub fn is_identity(&self) -> bool {
        *self == Self::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metres_survive_the_trip_to_cells_and_back() {
        let units = GridUnits {
            cell_size: CellSize { x: 74.5, y: 92.6 },
            vertical_scale: 2.0,
        };
        for elevation in [-10_911.0f32, 0.0, 236.25, 1076.0, 8848.86] {
            let cells = units.to_kernel(elevation);
            assert!((cells - elevation * 2.0 / 74.5).abs() <= 1e-4 * cells.abs().max(1.0));
            let back = units.from_kernel(cells);
            assert!(
                (back - elevation).abs() <= 1e-6 * elevation.abs().max(1.0),
                "{elevation} -> {back}"
            );
        }
    }
}
