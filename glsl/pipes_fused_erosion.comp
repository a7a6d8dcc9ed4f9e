#version 450 core
// Fused pass 2 of 2: with UPWIND, the sediment's transport along this step's flux;
// then water depth (waterA to waterB, before evaporation) and velocity from the net
// flux, then erosion and deposition (terrainA, sedimentA to terrainB, sedimentB). The
// driver swaps the terrain and water buffers after each step (and the sediment's, with
// UPWIND).
//! axis packing: half=PACK_HALF
//! axis tiles: shared=SHARED_TILES
//! axis advection: upwind=UPWIND
//! axis build: counted=COUNT_BALANCE
#extension GL_GOOGLE_include_directive : require
#include "include/pipes_fused.glsl"

vec4 fluxOf(ivec2 c) {
    return outside(c) ? vec4(0.0) : readFlux(fluxA, cellIndex(c));
}

// Sediment per volume of the water a cell holds this step (0 past the map or dry).
float concentrationOf(ivec2 c) {
    if (outside(c)) return 0.0;
    int j = cellIndex(c);
    return sedimentConcentration(sedimentA.v[j], rained(stateWater(waterA.v[j])));
}

#ifdef SHARED_TILES
shared vec4 tileFlux[TILE_CELLS];
shared float tileTerrain[TILE_CELLS];
#ifdef UPWIND
shared float tileConcentration[TILE_CELLS];
float concentrationAt(ivec2 c) { return tileConcentration[tileIndex(c)]; }
#endif

vec4 fluxAt(ivec2 c) { return tileFlux[tileIndex(c)]; }
float terrainAt(ivec2 c, float here) { return outside(c) ? here : tileTerrain[tileIndex(c)]; }
#else
vec4 fluxAt(ivec2 c) { return fluxOf(c); }
float concentrationAt(ivec2 c) { return concentrationOf(c); }
float terrainAt(ivec2 c, float here) { return outside(c) ? here : terrainA.v[cellIndex(c)]; }
#endif

void main() {
    ivec2 c = ivec2(gl_GlobalInvocationID.xy);
#ifdef SHARED_TILES
    for (uint k = gl_LocalInvocationIndex; k < TILE_CELLS; k += gl_WorkGroupSize.x * gl_WorkGroupSize.y) {
        ivec2 cell = tileCell(k);
        tileFlux[k] = fluxOf(cell);
        tileTerrain[k] = terrainA.v[cellIndex(clampToMap(cell))];
#ifdef UPWIND
        tileConcentration[k] = concentrationOf(cell);
#endif
    }
    barrier();
#endif
    if (outside(c)) return;
    int i = cellIndex(c);
    float stored = waterA.v[i];
    float water = stateWater(stored);
    if (!firstStep()) countEvaporation(i, stored, water);
    vec4 out_ = fluxAt(c);
    vec4 left = fluxAt(c + ivec2(-1, 0));
    vec4 right = fluxAt(c + ivec2(1, 0));
    vec4 top = fluxAt(c + ivec2(0, -1));
    vec4 bottom = fluxAt(c + ivec2(0, 1));
#ifdef UPWIND
    countOutflow(i, c, out_, concentrationAt(c));
    float s = transported(sedimentA.v[i], concentrationAt(c), out_,
                          concentrationAt(c + ivec2(-1, 0)) * left.y,
                          concentrationAt(c + ivec2(1, 0)) * right.x,
                          concentrationAt(c + ivec2(0, -1)) * top.w,
                          concentrationAt(c + ivec2(0, 1)) * bottom.z);
#else
    countOutflow(i, c, out_, 0.0);
    float s = sedimentA.v[i];
#endif
    vec2 v;
    float depth = newDepth(rained(water), out_, left, right, top, bottom, v);
    waterB.v[i] = depth;
    writeVelocity(velocity, i, v);
    float b = terrainA.v[i];
    vec2 bs = erodeCell(b, terrainAt(c + ivec2(-1, 0), b), terrainAt(c + ivec2(1, 0), b),
                        terrainAt(c + ivec2(0, -1), b), terrainAt(c + ivec2(0, 1), b),
                        v, depth, s);
    terrainB.v[i] = bs.x;
    sedimentB.v[i] = bs.y;
}
