// The row-major index of a droplet kernel's cell, and in the wide build its address:
// 32-bit as the paper computes it, 64-bit in the wide build (a 65536-wide map passes
// 2^31 at row 32768). The includer declares MAP_WIDTH (and, for the wide build, the
// int64 extension). glsl/cell_index_probe.comp runs these same lines for tests/wide.rs,
// which checks them past 2^31 cells, where no map on lavapipe can go.
#ifndef VKERODE_CELL_INDEX_GLSL
#define VKERODE_CELL_INDEX_GLSL

#ifdef WIDE_INDEX
#define CellIndex int64_t
CellIndex cellIndex(ivec2 coord) {
    return int64_t(coord.y) * int64_t(MAP_WIDTH) + int64_t(coord.x);
}
// glslang takes no 64-bit array index: a cell is reached by its own address.
uint64_t cellAddress(uint64_t base, CellIndex index) {
    return base + uint64_t(index) * 4ul;
}
#else
#define CellIndex int
CellIndex cellIndex(ivec2 coord) {
    return coord.y * MAP_WIDTH + coord.x;
}
#endif

#endif
