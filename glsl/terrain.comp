#version 450 core
// Erosion-noise terrain: one invocation per cell writes RELIEF * heightmap(uv).x.
// The noise itself, with its attribution and licence (MIT, and CC BY-NC-SA 3.0 for
// the erosion function), is in include/erosion_noise.glsl.
#extension GL_GOOGLE_include_directive : require

#include "include/erosion_noise.glsl"

layout(local_size_x = 8, local_size_y = 8, local_size_z = 1) in;

layout(std430, binding = 0) writeonly buffer Terrain {
    float terrainHeights[];
};

// src/terrain/generate.rs holds the matching Rust struct.
layout(push_constant) uniform TerrainParams {
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
    terrainHeights[cell.y * WIDTH + cell.x] = heightmap(uv).x * RELIEF;
}
