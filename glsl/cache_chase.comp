#version 450 core
// The cache microbenchmark's latency probe: one invocation follows a chain of indices
// (a random cycle over nodes one cache line apart) through a working set. Each load's
// address depends on the previous load, so the time per step is the load latency of the
// level of the memory hierarchy that holds the working set.
//
// The chain is read the way the droplet kernel reads its heightfield (a read-write
// SSBO), or through one of the L1 levers: a readonly restrict binding, or a uniform
// texel buffer (the texture path). The `shared` build also declares shared memory, so
// that the driver's choice of L1 size against shared memory shows. The `writes` builds
// add a write to each step: a branch that is never taken (the control), an atomicAdd to
// the chain in that branch (present but never executed), or, executed every step, an
// atomicAdd, an image atomic or a plain store to another buffer. They show whether
// writes change how the loads are cached. The `vmm` builds declare the Vulkan memory
// model.
//! axis path: readonly=CHASE_READONLY texel=CHASE_TEXEL
//! axis shared: shared=DECLARE_SHARED
//! axis writes: guard=CHASE_GUARD guardatomic=CHASE_GUARD_ATOMIC atomic=CHASE_EXEC_ATOMIC imageatomic=CHASE_EXEC_IMAGE_ATOMIC store=CHASE_EXEC_STORE
//! axis model: vmm=VULKAN_MEMORY_MODEL

#ifdef VULKAN_MEMORY_MODEL
#pragma use_vulkan_memory_model
#extension GL_KHR_memory_scope_semantics : require
#endif

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

#if defined(CHASE_EXEC_IMAGE_ATOMIC) && !defined(CHASE_TEXEL)
// A storage texel view of the sink.
layout(binding = 2, r32ui) uniform uimageBuffer sinkImage;
#endif

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
#if defined(CHASE_GUARD) || defined(CHASE_GUARD_ATOMIC)
        // Never true: the chain holds word indices far below 2^32 - 1.
        if (i == 0xFFFFFFFFu) {
#if defined(CHASE_GUARD_ATOMIC) && !defined(CHASE_READONLY) && !defined(CHASE_TEXEL)
            atomicAdd(next[k], 1u);
#endif
            i = k;
        }
#elif defined(CHASE_EXEC_ATOMIC)
        atomicAdd(sink[1], 1u);
#elif defined(CHASE_EXEC_IMAGE_ATOMIC) && !defined(CHASE_TEXEL)
        imageAtomicAdd(sinkImage, 1, 1u);
#elif defined(CHASE_EXEC_STORE)
        sink[1] = k;
#endif
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
