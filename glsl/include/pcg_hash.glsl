// PCG-style integer hash (Jarkko & Olano, "Hash Functions for GPU Rendering", 2020).
// src/erosion/hash.rs mirrors it bit for bit.
#ifndef VKERODE_PCG_HASH_GLSL
#define VKERODE_PCG_HASH_GLSL

uint pcgHash(uint v) {
    uint state = v * 747796405u + 2891336453u;
    uint word = ((state >> ((state >> 28u) + 4u)) ^ state) * 277803737u;
    return (word >> 22u) ^ word;
}

#endif
