#version 450 core
// Deterministic mode's second half: adds the fixed-point changes a droplet dispatch
// gathered in deltaData to the heights, and clears them for the next dispatch. Integer
// sums do not depend on the order of the atomics, so the result is the same every run.

layout(local_size_x = 256, local_size_y = 1, local_size_z = 1) in;

layout(std430, binding = 0) buffer Heightfield {
    int heightData[];
};
layout(std430, binding = 1) buffer DeltaField {
    int deltaData[];
};

// src/erosion/gpu.rs holds the matching Rust struct (ApplyPushConstants).
layout(push_constant) uniform ApplyParams {
    uint CELLS;
};

void main() {
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < CELLS; i += stride) {
        heightData[i] += deltaData[i];
        deltaData[i] = 0;
    }
}
