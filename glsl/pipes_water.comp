#version 450 core
// Pass 3: water depth from the net flux, and velocity from the water passing through.
#extension GL_GOOGLE_include_directive : require
#include "include/pipes_common.glsl"

vec4 fluxAt(ivec2 c) {
    return outside(c) ? vec4(0.0) : fluxB[cellIndex(c)];
}

void main() {
    int i = thisCell();
    if (i < 0) return;
    ivec2 c = ivec2(gl_GlobalInvocationID.xy);
    vec4 out_ = fluxB[i];
    vec4 left = fluxAt(c + ivec2(-1, 0));
    vec4 right = fluxAt(c + ivec2(1, 0));
    vec4 top = fluxAt(c + ivec2(0, -1));
    vec4 bottom = fluxAt(c + ivec2(0, 1));
    float inflow = left.y + right.x + top.w + bottom.z;
    float outflow = out_.x + out_.y + out_.z + out_.w;
    float area = CELL_LENGTH * CELL_LENGTH;
    float depth = max(0.0, waterA[i] + DT * (inflow - outflow) / area);
    float mean = 0.5 * (waterA[i] + depth);
    vec2 passing = 0.5 * vec2(left.y - out_.x + out_.y - right.x, top.w - out_.z + out_.w - bottom.z);
    waterB[i] = depth;
    velocity[i] = mean > 1e-4 ? passing / (CELL_LENGTH * mean) : vec2(0.0);
    fluxA[i] = out_;
}
