#version 450 core
// Erosion-noise terrain: one invocation per cell writes RELIEF * heightmap(uv).x.
// The noise itself, with its attribution and licence (MIT, and CC BY-NC-SA 3.0 for
// the erosion function), is in include/erosion_noise.glsl.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require

#include "include/erosion_noise.glsl"

layout(local_size_x = 8, local_size_y = 8, local_size_z = 1) in;

// Reached by address: maps past 4 GiB (32768^2) need no descriptor range.
layout(buffer_reference, std430, buffer_reference_align = 4) writeonly buffer Heights {
    float v[];
};

// src/terrain/generate.rs holds the matching Rust struct (after the address).
layout(push_constant) uniform TerrainParams {
    Heights terrainHeights;
    int WIDTH;
    int HEIGHT;
    float RELIEF;         // cell units per unit of noise height
    float UV_PER_CELL;    // 1 / max(WIDTH, HEIGHT): square cells, one noise window
    vec2 UV_OFFSET;       // from the seed
};

void main() {
    ivec2 cell = ivec2(gl_GlobalInvocationID.xy);
    if (cell.x >= WIDTH || cell.y >= HEIGHT) {
        return;
    }
    precise vec2 uv = (vec2(cell) + 0.5) * UV_PER_CELL + UV_OFFSET;
    // 64-bit: a 65536^2 map's index passes 2^31 at row 32768.
    int64_t index = int64_t(cell.y) * int64_t(WIDTH) + int64_t(cell.x);
    // glslang takes no 64-bit array index: the cell's own address instead.
    Heights(uint64_t(terrainHeights) + uint64_t(index) * 4ul).v[0] = heightmap(uv).x * RELIEF;
}
