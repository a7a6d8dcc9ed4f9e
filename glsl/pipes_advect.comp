#version 450 core
// Pass 5: semi-Lagrangian advection of the sediment (bilinear, from where the water
// came, at most one cell back), evaporation, and the new state into the A buffers.
#extension GL_GOOGLE_include_directive : require
#include "include/pipes_common.glsl"

float sedimentAt(ivec2 c) {
    c = clamp(c, ivec2(0), ivec2(WIDTH - 1, HEIGHT - 1));
    return sedimentB[cellIndex(c)];
}

void main() {
    int i = thisCell();
    if (i < 0) return;
    ivec2 c = ivec2(gl_GlobalInvocationID.xy);
    // At most one cell back: farther, thin fast water on ridges would carry sediment
    // from cells it never crossed (the advection's CFL limit).
    vec2 from = vec2(c) - clamp(velocity[i] * DT / CELL_LENGTH, vec2(-1.0), vec2(1.0));
    from = clamp(from, vec2(0.0), vec2(float(WIDTH - 1), float(HEIGHT - 1)));
    ivec2 base = ivec2(floor(from));
    vec2 f = from - vec2(base);
    float s = mix(
        mix(sedimentAt(base), sedimentAt(base + ivec2(1, 0)), f.x),
        mix(sedimentAt(base + ivec2(0, 1)), sedimentAt(base + ivec2(1, 1)), f.x),
        f.y);
    sedimentA[i] = s;
    waterA[i] = waterB[i] * (1.0 - EVAPORATION * DT);
    terrainA[i] = terrainB[i];
}
