#version 450 core
// The cache microbenchmark's bandwidth probe, in coalesced 16-byte loads of a
// read-write SSBO (as the droplet kernel declares its heightfield), in one of two
// modes:
//  - PER_SM = 1: every workgroup streams the whole working set, LAPS times, each from
//    its own offset. Each SM rereads the set, so this shows the L1 (per-SM working set);
//    past the L1, workgroups that run in step share lines in the L2, so it is used
//    only for small sets.
//  - PER_SM = 0: each lap the workgroups split the set into GROUPS disjoint chunks and
//    read it once between them, each lap a chunk going to another workgroup. The whole
//    device rereads the set, so this shows the L2 and memory (device working set).

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
    uint GROUPS; // workgroups dispatched, a power of two
    uint SEED;   // never equal to the sum in practice: keeps the loads alive
    uint PER_SM;
};

void main() {
    uvec4 sum = uvec4(0u);
    if (PER_SM == 1u) {
        uint start = min(uint(float(gl_WorkGroupID.x) / float(GROUPS) * float(QUADS)), QUADS - 1u);
        for (uint lap = 0u; lap < LAPS; ++lap) {
            for (uint k = gl_LocalInvocationID.x; k < QUADS; k += gl_WorkGroupSize.x) {
                uint at = start + k;
                at = at >= QUADS ? at - QUADS : at;
                sum += data[at];
            }
        }
    } else {
        uint chunk = QUADS / GROUPS;
        for (uint lap = 0u; lap < LAPS; ++lap) {
            // An odd shift is coprime with the power-of-two GROUPS: every chunk is read
            // once per lap, by a different workgroup each lap.
            uint owner = (gl_WorkGroupID.x + lap * (GROUPS / 2u + 1u)) % GROUPS;
            for (uint k = gl_LocalInvocationID.x; k < chunk; k += gl_WorkGroupSize.x) {
                sum += data[owner * chunk + k];
            }
        }
    }
    uint folded = sum.x ^ sum.y ^ sum.z ^ sum.w;
    if (folded == SEED) {
        sink[0] = folded;
    }
}
