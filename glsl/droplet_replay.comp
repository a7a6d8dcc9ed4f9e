#version 450 core
// The replay of a recorded droplet run (src/erosion/droplets/replay.rs): each droplet's
// steps load the 2x2 corners and atomicAdd to the 2x2 corners the run touched, read
// from the run's address record, in the run's dispatches and passes, with no erosion
// arithmetic and no dependence of one step's addresses on the last one's loads. Its time
// is the run's own ceiling: its memory traffic alone, at its concurrency.
// Variants: the adds alone (atomics) or the loads alone (loads); a shuffled record,
// whose steps are swapped between droplets, is the same kernel on other data.
//! axis traffic: atomics=REPLAY_ATOMICS_ONLY loads=REPLAY_LOADS_ONLY
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 64, local_size_x_id = 1, local_size_y = 1, local_size_z = 1) in;

// The run's reserved shared memory, so that the replay runs at the run's occupancy.
layout(constant_id = 3) const uint RESERVED_SHARED_WORDS = 1u;
shared uint reservedShared[RESERVED_SHARED_WORDS];

layout(std430, binding = 0) buffer Heightfield {
    int heightData[];
};
// As glsl/include/droplet_bindings.glsl's AddressRecord, laid out as its recordSlot():
// x, y the samples' cells, z the adds' cell, w bits 0-1 the samples made and 4-7 the
// adds made.
layout(std430, binding = 1) readonly buffer AddressRecord {
    uvec4 addressRecord[];
};
layout(std430, binding = 2) buffer Sink {
    int sink[];
};

layout(push_constant) uniform ReplayParams {
    uint MAP_WIDTH;
    uint MAX_LIFETIME;
    uint BATCH_BASE_ID;
    uint BATCH_SIZE;
    uint PASS;
    uint PASS_COUNT;
    uint STEPS_PER_PASS;
    uint STAGGER;
};

int cornerSum(uint cell) {
    return heightData[cell] + heightData[cell + 1u] + heightData[cell + MAP_WIDTH] + heightData[cell + MAP_WIDTH + 1u];
}

void main() {
    uint id = gl_GlobalInvocationID.x;
    if (id >= BATCH_SIZE) {
        // Never true for a dispatched thread; it keeps the reserved memory declared.
        if (id == 0xFFFFFFFFu) {
            reservedShared[id % RESERVED_SHARED_WORDS] = id;
            sink[0] = int(reservedShared[BATCH_SIZE % RESERVED_SHARED_WORDS]);
        }
        return;
    }
    uint droplet = BATCH_BASE_ID + id;
    // The steps this pass ran of this droplet, as glsl/droplet_passes.comp chooses them.
    uint startPass = (STAGGER != 0u) ? droplet % PASS_COUNT : 0u;
    if (PASS < startPass || PASS - startPass >= PASS_COUNT) {
        return;
    }
    uint firstStep = (PASS - startPass) * STEPS_PER_PASS;
    uint endStep = min(firstStep + STEPS_PER_PASS, MAX_LIFETIME);
    int loaded = 0;
    for (uint step = firstStep; step < endStep; ++step) {
        uvec4 r = addressRecord[BATCH_BASE_ID * MAX_LIFETIME + step * BATCH_SIZE + id];
        if (r.w == 0u) {
            break;
        }
#ifndef REPLAY_ATOMICS_ONLY
        if ((r.w & 1u) != 0u) {
            loaded += cornerSum(r.x);
        }
        if ((r.w & 2u) != 0u) {
            loaded += cornerSum(r.y);
        }
#endif
#ifndef REPLAY_LOADS_ONLY
        if ((r.w & 16u) != 0u) {
            atomicAdd(heightData[r.z], 1);
        }
        if ((r.w & 32u) != 0u) {
            atomicAdd(heightData[r.z + 1u], 1);
        }
        if ((r.w & 64u) != 0u) {
            atomicAdd(heightData[r.z + MAP_WIDTH], 1);
        }
        if ((r.w & 128u) != 0u) {
            atomicAdd(heightData[r.z + MAP_WIDTH + 1u], 1);
        }
#endif
    }
    // A store no run makes, of a value the compiler cannot know: the loads stay.
    if (loaded == 0x7fffffff) {
        sink[0] = loaded;
    }
}
