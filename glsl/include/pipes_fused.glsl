// What the fused passes (pipes_fused_flux.comp, pipes_fused_erosion.comp) share. A fused
// step is two passes, not five: the flux pass also advects and evaporates the previous
// step's sediment and water, and the erosion pass also updates the water. Between the
// passes of a run the water buffer holds depths before evaporation, which each pass
// applies as it reads them; shared-memory tiles, where built, hold a workgroup's cells
// and a one-cell border for the neighbour reads.
#ifndef VKERODE_PIPES_FUSED_GLSL
#define VKERODE_PIPES_FUSED_GLSL

#include "pipes_model.glsl"

// FLAGS bits, set by src/erosion/pipes/runner.rs.
const int STEP_FIRST = 1;   // the water buffer holds the state's depths; nothing to advect
const int STEP_FINISH = 2;  // advect and evaporate into the state; no flux

bool firstStep() {
    return (FLAGS & STEP_FIRST) != 0;
}

// The state's water depth from what the water buffer holds.
float stateWater(float stored) {
    return firstStep() ? stored : evaporate(stored);
}

#ifdef SHARED_TILES
const uint TILE_WIDTH = gl_WorkGroupSize.x + 2u;
const uint TILE_CELLS = (gl_WorkGroupSize.x + 2u) * (gl_WorkGroupSize.y + 2u);

// The cell of tile entry k: the workgroup's cells and their one-cell border.
ivec2 tileCell(uint k) {
    ivec2 origin = ivec2(gl_WorkGroupID.xy * gl_WorkGroupSize.xy) - 1;
    return origin + ivec2(k % TILE_WIDTH, k / TILE_WIDTH);
}

// The tile entry of cell c, which must lie in the workgroup's cells or their border.
uint tileIndex(ivec2 c) {
    ivec2 t = c - (ivec2(gl_WorkGroupID.xy * gl_WorkGroupSize.xy) - 1);
    return uint(t.y) * TILE_WIDTH + uint(t.x);
}
#endif

#endif
