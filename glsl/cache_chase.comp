#version 450 core
// The cache microbenchmark's latency probe: one invocation follows a chain of indices
// (a random cycle over nodes one cache line apart) through a working set. Each load's
// address depends on the previous load, so the time per step is the load latency of the
// level of the memory hierarchy that holds the working set.
//
// The chain is read the way the droplet kernel reads its heightfield (a read-write
// SSBO), or through one of the L1 levers: a readonly restrict binding, or a uniform
// texel buffer (the texture path). The `shared` build also declares shared memory, so
// that the driver's choice of L1 size against shared memory shows.
//! axis path: readonly=CHASE_READONLY texel=CHASE_TEXEL
//! axis shared: shared=DECLARE_SHARED

layout(local_size_x = 1, local_size_y = 1, local_size_z = 1) in;

#if defined(CHASE_TEXEL)
layout(binding = 2) uniform usamplerBuffer chainTexels;
#define NEXT(i) texelFetch(chainTexels, int(i)).x
#elif defined(CHASE_READONLY)
layout(std430, binding = 0) readonly restrict buffer Chain {
    uint next[];
};
#define NEXT(i) next[i]
#else
layout(std430, binding = 0) buffer Chain {
    uint next[];
};
#define NEXT(i) next[i]
#endif

layout(std430, binding = 1) buffer Sink {
    uint sink[];
};

#ifdef DECLARE_SHARED
// Shared memory declared and never used (specialization constant 3, as the droplet
// kernel's occupancy knob).
layout(constant_id = 3) const uint RESERVED_SHARED_WORDS = 1u;
shared uint reservedShared[RESERVED_SHARED_WORDS];
#endif

// src/erosion/cache.rs holds the matching Rust struct.
layout(push_constant) uniform ChaseParams {
    uint WARM_STEPS; // untimed in effect: the same in both runs of a difference
    uint STEPS;
};

void main() {
    uint i = 0u;
    for (uint k = 0u; k < WARM_STEPS + STEPS; ++k) {
        i = NEXT(i);
    }
#ifdef DECLARE_SHARED
    // Never true (the chain holds word indices, far below 2^32 - 1); keeps the shared
    // declaration alive.
    if (i == 0xFFFFFFFFu) {
        reservedShared[i % RESERVED_SHARED_WORDS] = i;
        i = reservedShared[STEPS % RESERVED_SHARED_WORDS];
    }
#endif
    sink[0] = i;
}
