#version 450 core
// The cache microbenchmark's bandwidth probe: every workgroup streams the whole
// working set, LAPS times, in coalesced 16-byte loads, each starting at its own offset
// so that concurrent workgroups spread over the set. The set is reread every lap, so
// the level that holds it (per-SM L1, L2 or memory) sets the rate. Declared as the
// droplet kernel declares its heightfield: a read-write SSBO.

layout(local_size_x = 256, local_size_x_id = 1, local_size_y = 1, local_size_z = 1) in;

layout(std430, binding = 0) buffer Data {
    uvec4 data[];
};

layout(std430, binding = 1) buffer Sink {
    uint sink[];
};

// src/erosion/cache.rs holds the matching Rust struct.
layout(push_constant) uniform StreamParams {
    uint QUADS;  // 16-byte elements in the working set
    uint LAPS;
    uint GROUPS; // workgroups dispatched
    uint SEED;   // never equal to the sum in practice: keeps the loads alive
};

void main() {
    uint start = min(uint(float(gl_WorkGroupID.x) / float(GROUPS) * float(QUADS)), QUADS - 1u);
    uvec4 sum = uvec4(0u);
    for (uint lap = 0u; lap < LAPS; ++lap) {
        for (uint k = gl_LocalInvocationID.x; k < QUADS; k += gl_WorkGroupSize.x) {
            uint at = start + k;
            at = at >= QUADS ? at - QUADS : at;
            sum += data[at];
        }
    }
    uint folded = sum.x ^ sum.y ^ sum.z ^ sum.w;
    if (folded == SEED) {
        sink[0] = folded;
    }
}
