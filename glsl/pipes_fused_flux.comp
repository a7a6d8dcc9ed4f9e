#version 450 core
// Fused pass 1 of 2: the previous step's semi-Lagrangian advection of the sediment
// (sedimentB to sedimentA; the upwind transport is the erosion pass's instead) and
// evaporation, then this step's rain and outflow flux (fluxA in place). With
// STEP_FINISH it only advects and evaporates, storing the state's water.
//! axis packing: half=PACK_HALF
//! axis tiles: shared=SHARED_TILES
//! axis advection: upwind=UPWIND
//! axis build: counted=COUNT_BALANCE
#extension GL_GOOGLE_include_directive : require
#include "include/pipes_fused.glsl"

float surfaceOf(int j) {
    return terrainA.v[j] + rained(stateWater(waterA.v[j]));
}

#ifdef SHARED_TILES
shared float tileSurface[TILE_CELLS];
shared float tileSediment[TILE_CELLS];

float surfaceAt(ivec2 c) { return tileSurface[tileIndex(c)]; }
// Up to c + 1: a sample farther right or down has weight 0 (see main).
float sedimentAt(ivec2 p, ivec2 c) { return tileSediment[tileIndex(min(p, c + 1))]; }
#else
float surfaceAt(ivec2 c) { return surfaceOf(cellIndex(clampToMap(c))); }
float sedimentAt(ivec2 p, ivec2 c) { return sedimentB.v[cellIndex(clampToMap(p))]; }
#endif

void main() {
    ivec2 c = ivec2(gl_GlobalInvocationID.xy);
#ifdef SHARED_TILES
    for (uint k = gl_LocalInvocationIndex; k < TILE_CELLS; k += gl_WorkGroupSize.x * gl_WorkGroupSize.y) {
        int j = cellIndex(clampToMap(tileCell(k)));
        tileSurface[k] = surfaceOf(j);
#ifndef UPWIND
        tileSediment[k] = sedimentB.v[j];
#endif
    }
    barrier();
#endif
    if (outside(c)) return;
    int i = cellIndex(c);
#ifndef UPWIND
    // advectedFrom keeps the source within one cell, so base lies in [c - 1, c + 1]; a
    // base of c + 1 comes with a fraction of 0, which weighs base + 1 by nothing.
    vec2 from = advectedFrom(c, firstStep() ? vec2(0.0) : readVelocity(velocity, i));
    ivec2 base = ivec2(floor(from));
    sedimentA.v[i] = bilinear(sedimentAt(base, c), sedimentAt(base + ivec2(1, 0), c),
                              sedimentAt(base + ivec2(0, 1), c), sedimentAt(base + ivec2(1, 1), c),
                              from - vec2(base));
#endif
    float stored = waterA.v[i];
    float water = stateWater(stored);
    if ((FLAGS & STEP_FINISH) != 0) {
        countEvaporation(i, stored, water);
        waterA.v[i] = water;
        return;
    }
    float depth = rained(water);
    float surface = terrainA.v[i] + depth;
    vec4 f = readFlux(fluxA, i);
    vec4 next = vec4(
        pipeFlow(f.x, surface, surfaceAt(c + ivec2(-1, 0)), c.x > 0),
        pipeFlow(f.y, surface, surfaceAt(c + ivec2(1, 0)), c.x < WIDTH - 1),
        pipeFlow(f.z, surface, surfaceAt(c + ivec2(0, -1)), c.y > 0),
        pipeFlow(f.w, surface, surfaceAt(c + ivec2(0, 1)), c.y < HEIGHT - 1));
    writeFlux(fluxA, i, limitOutflow(next, depth));
}
