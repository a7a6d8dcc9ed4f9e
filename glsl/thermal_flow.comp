#version 450 core
// Two-pass step, pass 1: each cell's outflows toward its neighbours, from heightsA into
// axialOut and diagonalOut.
//! axis neighbours: four=FOUR_NEIGHBOURS
#extension GL_GOOGLE_include_directive : require
#include "include/thermal_common.glsl"

void main() {
    ivec2 c = ivec2(gl_GlobalInvocationID.xy);
    if (outside(c)) return;
    int i = cellIndex(c);
    float h = heightsA.v[i];
    float s = shareOf(c, h);
    float out_[8];
    for (int k = 0; k < NEIGHBOURS; ++k) {
        out_[k] = outflowOf(c, h, s, k);
    }
    axialOut.v[i] = vec4(out_[0], out_[1], out_[2], out_[3]);
#ifndef FOUR_NEIGHBOURS
    diagonalOut.v[i] = vec4(out_[4], out_[5], out_[6], out_[7]);
#endif
}
