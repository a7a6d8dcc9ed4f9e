#version 450 core
// One-pass step: from heightsA into heightsB, each cell's own outflows and, recomputed
// from the neighbours' neighbours (a 5x5 stencil), what each neighbour sends it: the
// same f32 values the two-pass step stores and reads back.
//! axis neighbours: four=FOUR_NEIGHBOURS
//! axis build: counted=COUNT_SENT
#extension GL_GOOGLE_include_directive : require
#include "include/thermal_common.glsl"

void main() {
    ivec2 c = ivec2(gl_GlobalInvocationID.xy);
    if (outside(c)) return;
    int i = cellIndex(c);
    float h = heightsA.v[i];
    float s = shareOf(c, h);
    float sentHere = 0.0;
    for (int k = 0; k < NEIGHBOURS; ++k) {
        sentHere += outflowOf(c, h, s, k);
    }
    float received = 0.0;
    for (int k = 0; k < NEIGHBOURS; ++k) {
        ivec2 n = c + OFFSETS[k];
        if (outside(n)) continue;
        float hn = heightAt(n);
        received += outflowToward(hn, shareOf(n, hn), h, OPPOSITE[k]);
    }
    heightsB.v[i] = (h - sentHere) + received;
    countSent(i, sentHere);
}
