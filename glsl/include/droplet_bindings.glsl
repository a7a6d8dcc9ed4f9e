// Resources of the droplet kernel. The paper's loose uniforms are not legal in Vulkan
// GLSL, so they are members of an anonymous push-constant block and keep their names.
// src/erosion/gpu.rs holds the matching Rust struct (DropletPushConstants).
#ifndef VKERODE_DROPLET_BINDINGS_GLSL
#define VKERODE_DROPLET_BINDINGS_GLSL

// The paper's local_size_x = 64, as a specialization constant. ID 1, not 0: ID 0 is
// reported to break on NVIDIA drivers.
layout(local_size_x = 64, local_size_x_id = 1, local_size_y = 1, local_size_z = 1) in;

// Heights are stored as int(h * FIXED_POINT_SCALE); the paper's scale is 1000.
layout(constant_id = 2) const float FIXED_POINT_SCALE = 1000.0;

layout(std430, binding = 0) buffer Heightfield {
    int heightData[]; // Scaled fixed-point integers
};

// Work counters, written only by the COUNT_WORK variant: [0] droplets started,
// [1 + i] atomicAdds on the heightfield, spread over 64 slots to keep the
// instrumented build from serialising on one address.
layout(std430, binding = 1) buffer WorkCounters {
    uint workCounters[];
};
const uint ATOMIC_COUNTER_SLOTS = 64u;

layout(push_constant) uniform DropletParams {
    int MAP_WIDTH;
    int MAP_HEIGHT;
    int MAX_LIFETIME;
    float INERTIA;
    float CAPACITY_FACTOR;
    float EROSION_RATE;
    float DEPOSITION_RATE;
    float EVAPORATION_RATE;
    uint SEED;          // vkerode: droplet spawn seed
    uint BATCH_BASE_ID; // vkerode: id of this dispatch's first droplet
    uint BATCH_SIZE;    // vkerode: droplets in this dispatch
};

#endif
