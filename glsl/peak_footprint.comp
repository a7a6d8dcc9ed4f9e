#version 450 core
// `vkerode peak`'s footprint probe: random-address int atomicAdd over a map of up to
// the device's memory, reached by address with 64-bit indices, so that one buffer may
// pass maxStorageBufferRange. Each invocation adds 1 to ADDS hashed cells among
// FOOTPRINT_MASK + 1 (a power of two); src/probes/atomic.rs allocates the map two ways
// (pooled and dedicated) and times both: what falls off with size is the allocation's,
// not the memory's (docs/findings/allocation.md).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require

#include "include/pcg_hash.glsl"

layout(local_size_x = 256, local_size_x_id = 1, local_size_y = 1, local_size_z = 1) in;

layout(buffer_reference, std430, buffer_reference_align = 4) buffer Cell {
    int v;
};

// src/probes/atomic.rs holds the matching Rust struct (after the address).
layout(push_constant) uniform FootprintParams {
    Cell cells;
    uint64_t FOOTPRINT_MASK;
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
        uint low = pcgHash(state);
        state = pcgHash(low);
        uint64_t index = ((uint64_t(state) << 32) | uint64_t(low)) & FOOTPRINT_MASK;
        atomicAdd(Cell(uint64_t(cells) + index * 4ul).v, 1);
    }
}
