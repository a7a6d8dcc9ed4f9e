#version 450 core
// Two-pass step, pass 2: each height (heightsA, in place: no cell reads another's
// height here) less what it sent, plus what its neighbours sent it.
//! axis neighbours: four=FOUR_NEIGHBOURS
//! axis build: counted=COUNT_SENT
#extension GL_GOOGLE_include_directive : require
#include "include/thermal_common.glsl"

float outflowAt(int i, int k) {
    return k < 4 ? axialOut.v[i][k] : diagonalOut.v[i][k - 4];
}

void main() {
    ivec2 c = ivec2(gl_GlobalInvocationID.xy);
    if (outside(c)) return;
    int i = cellIndex(c);
    float sentHere = 0.0;
    for (int k = 0; k < NEIGHBOURS; ++k) {
        sentHere += outflowAt(i, k);
    }
    float received = 0.0;
    for (int k = 0; k < NEIGHBOURS; ++k) {
        ivec2 n = c + OFFSETS[k];
        if (outside(n)) continue;
        received += outflowAt(cellIndex(n), OPPOSITE[k]);
    }
    heightsA.v[i] = (heightsA.v[i] - sentHere) + received;
    countSent(i, sentHere);
}
