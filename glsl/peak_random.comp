#version 450 core
// Random-address atomicAdd: each invocation adds 1 to ADDS hashed addresses within a
// footprint of FOOTPRINT ints (a power of two). A footprint of one address is the most
// contended case; past the L2 cache, memory bounds the rate.
#extension GL_GOOGLE_include_directive : require

#include "include/pcg_hash.glsl"

layout(local_size_x = 256, local_size_x_id = 1, local_size_y = 1, local_size_z = 1) in;

layout(std430, binding = 0) buffer Cells {
    int cells[];
};

// src/erosion/peak.rs holds the matching Rust struct.
layout(push_constant) uniform RandomParams {
    uint FOOTPRINT_MASK;
    uint ADDS;
    uint INVOCATIONS;
    uint SEED;
};

void main() {
    uint id = gl_GlobalInvocationID.x;
    if (id >= INVOCATIONS) {
        return;
    }
    uint state = pcgHash(id ^ (SEED * 0x9E3779B9u));
    for (uint k = 0u; k < ADDS; ++k) {
        state = pcgHash(state);
        atomicAdd(cells[state & FOOTPRINT_MASK], 1);
    }
}
