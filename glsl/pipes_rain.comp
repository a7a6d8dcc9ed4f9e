#version 450 core
// Plain pass 1 of 5 of the virtual-pipe model: rain, the same depth on every cell.
//! axis packing: half=PACK_HALF
//! axis build: counted=COUNT_BALANCE
#extension GL_GOOGLE_include_directive : require
#include "include/pipes_model.glsl"

void main() {
    ivec2 c = ivec2(gl_GlobalInvocationID.xy);
    if (outside(c)) return;
    int i = cellIndex(c);
    waterA.v[i] = rained(waterA.v[i]);
}
