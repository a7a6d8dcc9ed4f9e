//! The address record of a recording run: what every droplet-step loaded and added
//! to, as glsl/include/droplet_bindings.glsl's `AddressRecord` lays it out. The counted
//! build writes it, the CPU reference can walk it, and replay.rs replays it.

use super::batches::Batch;

/// One step of one droplet in the address record (glsl/include/droplet_bindings.glsl's
/// `AddressRecord`): the cells under its two samples, the cell of its adds, and which of
/// them it made.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct StepAddresses {
    pub samples: [u32; 2],
    pub adds: u32,
    pub made: u32,
}

impl StepAddresses {
    pub const SAMPLED_AT_POS: u32 = 1;
    pub const SAMPLED_AT_NEW_POS: u32 = 2;
    /// Bits 4 to 7: the adds at NW, NE, SW, SE.
    pub const ADDS_SHIFT: u32 = 4;

    /// Whether the droplet took this step.
    pub fn taken(&self) -> bool {
        self.made != 0
    }

    /// The cells whose corners it loaded, and those it added to, on a map `width` wide.
    pub fn cells(&self, width: u32) -> (Vec<u32>, Vec<u32>) {
        let corners = |cell: u32| [cell, cell + 1, cell + width, cell + width + 1];
        let loads = (0..2)
            .filter(|&i| self.made & (1 << i) != 0)
            .flat_map(|i| corners(self.samples[i]))
            .collect();
        let adds = corners(self.adds)
            .into_iter()
            .enumerate()
            .filter(|&(c, _)| self.made & (1 << (Self::ADDS_SHIFT + c as u32)) != 0)
            .map(|(_, cell)| cell)
            .collect();
        (loads, adds)
    }
}

/// Where droplet `id`'s step `step` lies in a record of these dispatches: each
/// dispatch's steps one after another, its droplets side by side in each (the shaders'
/// `recordSlot`).
pub fn record_slot(batches: &[Batch], lifetime: u32, id: u32, step: u32) -> Option<usize> {
    let b = batches
        .iter()
        .find(|b| (b.base_id..b.base_id + b.size).contains(&id))?;
    let slot = u64::from(b.base_id) * u64::from(lifetime)
        + u64::from(step) * u64::from(b.size)
        + u64::from(id - b.base_id);
    Some(slot as usize)
}
