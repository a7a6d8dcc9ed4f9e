#version 450 core
// Plain pass 5 of 5: semi-Lagrangian advection of the sediment (sedimentB to
// sedimentA), evaporation (waterB to waterA), and the new terrain back into terrainA.
//! axis packing: half=PACK_HALF
//! axis build: counted=COUNT_BALANCE
#extension GL_GOOGLE_include_directive : require
#include "include/pipes_model.glsl"

float sedimentAt(ivec2 c) {
    return sedimentB.v[cellIndex(clampToMap(c))];
}

void main() {
    ivec2 c = ivec2(gl_GlobalInvocationID.xy);
    if (outside(c)) return;
    int i = cellIndex(c);
    vec2 from = advectedFrom(c, readVelocity(velocity, i));
    ivec2 base = ivec2(floor(from));
    sedimentA.v[i] = bilinear(sedimentAt(base), sedimentAt(base + ivec2(1, 0)),
                              sedimentAt(base + ivec2(0, 1)), sedimentAt(base + ivec2(1, 1)),
                              from - vec2(base));
    float depth = waterB.v[i];
    float kept = evaporate(depth);
    countEvaporation(i, depth, kept);
    waterA.v[i] = kept;
    terrainA.v[i] = terrainB.v[i];
}
