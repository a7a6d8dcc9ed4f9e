#version 450 core
// Plain pass 3 of 5: water depth (waterB) and velocity from the net flux; the new flux
// is copied back to fluxA for the next step.
//! axis packing: half=PACK_HALF
//! axis build: counted=COUNT_BALANCE
#extension GL_GOOGLE_include_directive : require
#include "include/pipes_model.glsl"

vec4 fluxAt(ivec2 c) {
    return outside(c) ? vec4(0.0) : readFlux(fluxB, cellIndex(c));
}

void main() {
    ivec2 c = ivec2(gl_GlobalInvocationID.xy);
    if (outside(c)) return;
    int i = cellIndex(c);
    vec4 out_ = readFlux(fluxB, i);
    vec2 v;
    waterB.v[i] = newDepth(waterA.v[i], out_, fluxAt(c + ivec2(-1, 0)), fluxAt(c + ivec2(1, 0)),
                           fluxAt(c + ivec2(0, -1)), fluxAt(c + ivec2(0, 1)), v);
    writeVelocity(velocity, i, v);
    writeFlux(fluxA, i, out_);
    // The semi-Lagrangian advection keeps the sediment on the map.
    countOutflow(i, c, out_, 0.0);
}
