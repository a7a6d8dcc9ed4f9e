#version 450 core
// The droplet kernels' cell index (and, wide, a cell's address) for given coordinates,
// without a map: tests/wide.rs checks the arithmetic of the 65536^2 map's cells, which
// no lavapipe device can hold.
//! axis build: wide=WIDE_INDEX
#extension GL_GOOGLE_include_directive : require
#ifdef WIDE_INDEX
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#endif

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

layout(std430, binding = 0) readonly buffer Coordinates {
    ivec2 coordinates[];
};
// Per coordinate: the index's low and high words, then the address's (0 unless wide).
layout(std430, binding = 1) writeonly buffer Results {
    uvec4 results[];
};

layout(push_constant) uniform ProbeParams {
    int MAP_WIDTH;
    uint COUNT;
    uvec2 BASE_ADDRESS; // low, high word
};

#include "include/cell_index.glsl"

void main() {
    uint id = gl_GlobalInvocationID.x;
    if (id >= COUNT) {
        return;
    }
    CellIndex index = cellIndex(coordinates[id]);
#ifdef WIDE_INDEX
    uvec2 address = unpackUint2x32(cellAddress(packUint2x32(BASE_ADDRESS), index));
    results[id] = uvec4(unpackUint2x32(uint64_t(index)), address);
#else
    results[id] = uvec4(uint(index), index < 0 ? 0xFFFFFFFFu : 0u, 0u, 0u);
#endif
}
