//! Hashes every layer shares: the PCG hash of glsl/include/pcg_hash.glsl (terrain seeds,
//! droplet spawns, probe addresses) and FNV-1a (file checksums, config hashes).

/// The PCG hash of glsl/include/pcg_hash.glsl, bit for bit.
pub fn pcg_hash(v: u32) -> u32 {
    let state = v.wrapping_mul(747796405).wrapping_add(2891336453);
    let word = ((state >> ((state >> 28) + 4)) ^ state).wrapping_mul(277803737);
    (word >> 22) ^ word
}

// Kept (no blake3): committed meta.json config hashes and input hashes are FNV-1a, and --resume and merge match on them.
/// FNV-1a, 64 bits: a stable checksum for pairing files and hashing configs (not a
/// defence against tampering).
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pcg_hash_matches_an_independent_evaluation() {
        // Computed from the formula with Python's unbounded integers, masked to 32 bits.
        assert_eq!(pcg_hash(0), 129708002);
        assert_eq!(pcg_hash(1), 2831084092);
    }
}
