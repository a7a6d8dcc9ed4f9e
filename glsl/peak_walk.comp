#version 450 core
// The droplet-shaped atomic ceiling: straight random walks that atomicAdd the 2x2
// cells under the walker at every step, with no erosion arithmetic. Each walker starts
// where droplet i of the paper's kernel would, heads in a random direction and bounces
// off the map's border.
#extension GL_GOOGLE_include_directive : require

#include "include/pcg_hash.glsl"

layout(local_size_x = 64, local_size_x_id = 1, local_size_y = 1, local_size_z = 1) in;

layout(std430, binding = 0) buffer Cells {
    int cells[];
};

// src/erosion/peak.rs holds the matching Rust struct.
layout(push_constant) uniform WalkParams {
    int MAP_WIDTH;
    int MAP_HEIGHT;
    int STEPS;
    uint WALKERS;
    uint SEED;
};

void main() {
    uint id = gl_GlobalInvocationID.x;
    if (id >= WALKERS) {
        return;
    }
    uint a = pcgHash(id ^ (SEED * 0x9E3779B9u));
    uint b = pcgHash(a);
    uint c = pcgHash(b);
    const float inv2pow32 = 1.0 / 4294967296.0;
    vec2 lo = vec2(1.0);
    vec2 hi = vec2(float(MAP_WIDTH - 3), float(MAP_HEIGHT - 3));
    vec2 pos = lo + vec2(float(a), float(b)) * inv2pow32 * (hi - lo);
    float angle = float(c) * inv2pow32 * 6.2831853;
    vec2 dir = vec2(cos(angle), sin(angle));
    for (int step = 0; step < STEPS; ++step) {
        ivec2 cell = ivec2(pos);
        int index = cell.y * MAP_WIDTH + cell.x;
        atomicAdd(cells[index], 1);
        atomicAdd(cells[index + 1], 1);
        atomicAdd(cells[index + MAP_WIDTH], 1);
        atomicAdd(cells[index + MAP_WIDTH + 1], 1);
        vec2 next = pos + dir;
        if (next.x < lo.x || next.x >= hi.x) dir.x = -dir.x;
        if (next.y < lo.y || next.y >= hi.y) dir.y = -dir.y;
        pos = clamp(pos + dir, lo, hi - 0.001);
    }
}
