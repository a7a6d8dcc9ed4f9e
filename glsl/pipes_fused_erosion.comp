#version 450 core
// Fused pass 2 of 2: water depth (waterA in place, before evaporation) and velocity from
// the net flux, then erosion and deposition (terrainA, sedimentA to terrainB,
// sedimentB). The driver swaps the terrain buffers after each step.
//! axis packing: half=PACK_HALF
//! axis tiles: shared=SHARED_TILES
//! axis build: counted=COUNT_BALANCE
#extension GL_GOOGLE_include_directive : require
#include "include/pipes_fused.glsl"

vec4 fluxOf(ivec2 c) {
    return outside(c) ? vec4(0.0) : readFlux(fluxA, cellIndex(c));
}

#ifdef SHARED_TILES
shared vec4 tileFlux[TILE_CELLS];
shared float tileTerrain[TILE_CELLS];

vec4 fluxAt(ivec2 c) { return tileFlux[tileIndex(c)]; }
float terrainAt(ivec2 c, float here) { return outside(c) ? here : tileTerrain[tileIndex(c)]; }
#else
vec4 fluxAt(ivec2 c) { return fluxOf(c); }
float terrainAt(ivec2 c, float here) { return outside(c) ? here : terrainA.v[cellIndex(c)]; }
#endif

void main() {
    ivec2 c = ivec2(gl_GlobalInvocationID.xy);
#ifdef SHARED_TILES
    for (uint k = gl_LocalInvocationIndex; k < TILE_CELLS; k += gl_WorkGroupSize.x * gl_WorkGroupSize.y) {
        ivec2 cell = tileCell(k);
        tileFlux[k] = fluxOf(cell);
        tileTerrain[k] = terrainA.v[cellIndex(clampToMap(cell))];
    }
    barrier();
#endif
    if (outside(c)) return;
    int i = cellIndex(c);
    float stored = waterA.v[i];
    float water = stateWater(stored);
    if (!firstStep()) countEvaporation(i, stored, water);
    vec2 v;
    float depth = newDepth(rained(water), fluxAt(c), fluxAt(c + ivec2(-1, 0)), fluxAt(c + ivec2(1, 0)),
                           fluxAt(c + ivec2(0, -1)), fluxAt(c + ivec2(0, 1)), v);
    waterA.v[i] = depth;
    writeVelocity(velocity, i, v);
    float b = terrainA.v[i];
    vec2 bs = erodeCell(b, terrainAt(c + ivec2(-1, 0), b), terrainAt(c + ivec2(1, 0), b),
                        terrainAt(c + ivec2(0, -1), b), terrainAt(c + ivec2(0, 1), b),
                        v, depth, sedimentA.v[i]);
    terrainB.v[i] = bs.x;
    sedimentB.v[i] = bs.y;
}
