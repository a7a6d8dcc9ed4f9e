#version 450 core
// Plain pass 4 of 5: erosion and deposition (terrainA, sedimentA to terrainB,
// sedimentB).
//! axis packing: half=PACK_HALF
//! axis build: counted=COUNT_BALANCE
#extension GL_GOOGLE_include_directive : require
#include "include/pipes_model.glsl"

float terrainAt(ivec2 c, float here) {
    return outside(c) ? here : terrainA.v[cellIndex(c)];
}

void main() {
    ivec2 c = ivec2(gl_GlobalInvocationID.xy);
    if (outside(c)) return;
    int i = cellIndex(c);
    float b = terrainA.v[i];
    vec2 bs = erodeCell(b, terrainAt(c + ivec2(-1, 0), b), terrainAt(c + ivec2(1, 0), b),
                        terrainAt(c + ivec2(0, -1), b), terrainAt(c + ivec2(0, 1), b),
                        readVelocity(velocity, i), waterB.v[i], sedimentA.v[i]);
    terrainB.v[i] = bs.x;
    sedimentB.v[i] = bs.y;
}
