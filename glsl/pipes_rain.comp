#version 450 core
// Pass 1 of the virtual-pipe model: rain, the same depth on every cell.
#extension GL_GOOGLE_include_directive : require
#include "include/pipes_common.glsl"

void main() {
    int i = thisCell();
    if (i < 0) return;
    waterA[i] += DT * RAIN;
}
