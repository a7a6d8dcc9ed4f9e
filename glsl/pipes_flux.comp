#version 450 core
// Plain pass 2 of 5: outflow flux through the four pipes (fluxA to fluxB).
//! axis packing: half=PACK_HALF
//! axis build: counted=COUNT_BALANCE
#extension GL_GOOGLE_include_directive : require
#include "include/pipes_model.glsl"

float surfaceAt(ivec2 c) {
    int j = cellIndex(clampToMap(c));
    return terrainA.v[j] + waterA.v[j];
}

void main() {
    ivec2 c = ivec2(gl_GlobalInvocationID.xy);
    if (outside(c)) return;
    int i = cellIndex(c);
    float surface = terrainA.v[i] + waterA.v[i];
    vec4 f = readFlux(fluxA, i);
    vec4 next = vec4(
        pipeFlow(f.x, surface, surfaceAt(c + ivec2(-1, 0)), c.x > 0),
        pipeFlow(f.y, surface, surfaceAt(c + ivec2(1, 0)), c.x < WIDTH - 1),
        pipeFlow(f.z, surface, surfaceAt(c + ivec2(0, -1)), c.y > 0),
        pipeFlow(f.w, surface, surfaceAt(c + ivec2(0, 1)), c.y < HEIGHT - 1));
    writeFlux(fluxB, i, limitOutflow(next, waterA.v[i]));
}
