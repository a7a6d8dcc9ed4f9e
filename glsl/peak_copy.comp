#version 450 core
// `vkerode peak`'s bandwidth line: a streaming copy, 16-byte elements from one buffer
// to another, coalesced, each invocation striding over the whole buffer. Bytes read
// plus bytes written over the time is the memory bandwidth the grid kernels (which
// stream their fields the same way) are held against. Each invocation has UNROLL loads
// in flight before it stores: with one, the H200 copied at a third of its bandwidth
// (latency, not bandwidth, bound; results/README.md).
#extension GL_EXT_buffer_reference : require

layout(local_size_x = 256, local_size_x_id = 1, local_size_y = 1, local_size_z = 1) in;

layout(buffer_reference, std430, buffer_reference_align = 16) buffer Quads { vec4 v[]; };

// src/erosion/peak.rs holds the matching Rust struct (after the two addresses).
layout(push_constant) uniform CopyParams {
    Quads source;
    Quads target;
    uint QUADS;    // 16-byte elements in each buffer
    uint THREADS;  // invocations dispatched
};

const uint UNROLL = 8;

void main() {
    for (uint i = gl_GlobalInvocationID.x; i < QUADS; i += THREADS * UNROLL) {
        vec4 quads[UNROLL];
        for (uint k = 0; k < UNROLL; k++) {
            uint j = i + k * THREADS;
            if (j < QUADS) quads[k] = source.v[j];
        }
        for (uint k = 0; k < UNROLL; k++) {
            uint j = i + k * THREADS;
            if (j < QUADS) target.v[j] = quads[k];
        }
    }
}
