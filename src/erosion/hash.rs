//! The PCG hash of glsl/include/pcg_hash.glsl, bit for bit.

pub fn pcg_hash(v: u32) -> u32 {
    let state = v.wrapping_mul(747796405).wrapping_add(2891336453);
    let word = ((state >> ((state >> 28) + 4)) ^ state).wrapping_mul(277803737);
    (word >> 22) ^ word
}

/// Where droplet `id` starts on a `width` x `height` map: uniform over
/// [1, width-2) x [1, height-2), as `getRandomPosition` computes it.
pub fn droplet_start(id: u32, seed: u32, width: u32, height: u32) -> (f32, f32) {
    const INV_2_POW_32: f32 = 1.0 / 4294967296.0;
    let a = pcg_hash(id ^ seed.wrapping_mul(0x9E3779B9));
    let b = pcg_hash(a);
    (
        1.0 + a as f32 * INV_2_POW_32 * (width as i32 - 3) as f32,
        1.0 + b as f32 * INV_2_POW_32 * (height as i32 - 3) as f32,
    )
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

    #[test]
    fn droplets_start_inside_the_border() {
        for id in 0..10_000 {
            let (x, y) = droplet_start(id, 7, 16, 9);
            assert!(
                (1.0..=14.0).contains(&x) && (1.0..=7.0).contains(&y),
                "{x},{y}"
            );
        }
    }
}
