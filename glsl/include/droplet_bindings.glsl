// Resources of the droplet kernel. The paper's loose uniforms are not legal in Vulkan
// GLSL, so they are members of an anonymous push-constant block and keep their names.
// src/erosion/gpu.rs holds the matching Rust struct (DropletPushConstants).
#ifndef VKERODE_DROPLET_BINDINGS_GLSL
#define VKERODE_DROPLET_BINDINGS_GLSL

#ifdef ATOMICS_FLOAT
#extension GL_EXT_shader_atomic_float : require
#endif
#ifdef VULKAN_MEMORY_MODEL
// The vulkan-memory-model lever: the SPIR-V declares the Vulkan memory model, under
// which plain loads are private to the invocation unless made visible.
#pragma use_vulkan_memory_model
#extension GL_KHR_memory_scope_semantics : require
#endif
#ifdef COUNT_WORK
#extension GL_KHR_shader_subgroup_ballot : require
#extension GL_KHR_shader_subgroup_shuffle : require
#endif

// The paper's local_size_x = 64, as a specialization constant. ID 1, not 0: ID 0 is
// reported to break on NVIDIA drivers.
layout(local_size_x = 64, local_size_x_id = 1, local_size_y = 1, local_size_z = 1) in;

// Heights are stored as int(h * FIXED_POINT_SCALE); the paper's scale is 1000.
layout(constant_id = 2) const float FIXED_POINT_SCALE = 1000.0;

// The model's two choices beyond the paper's (src/erosion/droplets/params.rs).
// PHYSICS_SIGN multiplies deltaH in the speed update of dropletStep()
// (include/droplet_step.glsl) and of the fast kernel: 1.0 is the paper's
// `speed^2 + deltaH * g`, which slows droplets going downhill; -1.0 is the corrected
// physics, which speeds them up. glsl/droplet.comp keeps the paper's update and
// ignores it: corrected runs take droplet_stepped.comp. ROUNDING picks how
// modifyHeight turns a change into fixed point.
layout(constant_id = 4) const float PHYSICS_SIGN = 1.0;
layout(constant_id = 5) const uint ROUNDING = 0u;
const uint ROUNDING_TRUNC = 0u;
const uint ROUNDING_NEAREST = 1u;
const uint ROUNDING_STOCHASTIC = 2u;

// Shared memory each workgroup reserves and never uses, so that an SM holds fewer
// workgroups: the occupancy experiments' knob. One word by default; none at all with
// NO_SHARED_MEMORY, a lever of the L1 experiments (the driver may size the L1 by it).
#ifndef NO_SHARED_MEMORY
layout(constant_id = 3) const uint RESERVED_SHARED_WORDS = 1u;
shared uint reservedShared[RESERVED_SHARED_WORDS];
#endif

#ifdef WIDE_INDEX
// The wide build (the `wide` lever, chosen by itself where a map passes 2^31 cells or
// maxStorageBufferRange): the heightfield, and the counted build's cellHits, reached
// by buffer device address (their addresses lead the push constants) with 64-bit cell
// indices, as the grid strategy reaches its fields. Bindings 0 and 2 are then tokens.
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#ifdef ATOMICS_FLOAT
layout(buffer_reference, std430, buffer_reference_align = 4) buffer WideHeights { float v[]; };
#else
layout(buffer_reference, std430, buffer_reference_align = 4) buffer WideHeights { int v[]; };
#endif
layout(buffer_reference, std430, buffer_reference_align = 4) buffer WideHits { uint v[]; };
#define HEIGHT_AT(i) WideHeights(cellAddress(uint64_t(heightAddress), i)).v[0]
#define CELL_HIT_AT(i) WideHits(cellAddress(uint64_t(cellHitsAddress), i)).v[0]
#else
#define HEIGHT_AT(i) heightData[i]
#define CELL_HIT_AT(i) cellHits[i]
#endif

#ifdef ATOMICS_FLOAT
// Float mode: heights in height units, added with float atomics.
layout(std430, binding = 0) buffer Heightfield {
    float heightData[];
};
#else
layout(std430, binding = 0) buffer Heightfield {
    int heightData[]; // Scaled fixed-point integers
};
#endif

// The heightfield's access paths, the L1 experiments' levers: loads from the same
// buffer through a second, readonly restrict binding (LOADS_READONLY), or through a
// uniform texel buffer view, the texture path (LOADS_TEXEL); or the adds through a
// storage texel view (ATOMICS_IMAGE), or loads and adds both (LOADS_IMAGE). The fast
// kernel's QUAD_LOADS reads it as aligned 16-byte quads. Other writes (racy, counted,
// deterministic) go through their SSBOs.
#if defined(LOADS_READONLY)
layout(std430, binding = 7) readonly restrict buffer HeightRead {
    int heightRead[];
};
#elif defined(QUAD_LOADS)
layout(std430, binding = 7) buffer HeightQuads {
    ivec4 heightQuads[];
};
#endif
#ifdef LOADS_TEXEL
layout(binding = 9) uniform isamplerBuffer heightTexels;
#elif defined(ATOMICS_IMAGE) || defined(LOADS_IMAGE)
// The image-atomics lever: the adds go through a storage texel view of the
// heightfield, so that the shader has no SSBO atomics; its loads stay SSBO loads. The
// image lever loads through the same view too.
layout(binding = 9, r32i) uniform iimageBuffer heightImage;
#define ADDS_THROUGH_IMAGE
#endif

// The COUNT_WORK variant's instrumentation. workCounters: [0] droplets started,
// [1 + i] modifyHeight calls, [1 + 64 + i] those of them that another active lane of
// the subgroup aimed at the same cell, and [1 + 128 + i] those that added zero, each
// spread over 64 slots so that the instrumented build does not serialise on one address.
layout(std430, binding = 1) buffer WorkCounters {
    uint workCounters[];
};
const uint COUNTER_SHARDS = 64u;
const uint ATOMICS_SLOT = 1u;
const uint CONFLICTS_SLOT = 1u + COUNTER_SHARDS;
const uint ZERO_ADDS_SLOT = 1u + 2u * COUNTER_SHARDS;

// Atomics each cell received.
layout(std430, binding = 2) buffer CellHits {
    uint cellHits[];
};

// Per droplet: x, the height change its modifyHeight calls asked for; y, the sediment
// it still carried when it died, negative if it died off the map's interior (lost off
// the edge). And (int modes) x, the fixed-point change it added; y, the deposits alone.
layout(std430, binding = 3) buffer IntendedChange {
    vec2 intendedChange[];
};
layout(std430, binding = 4) buffer AppliedChange {
    ivec2 appliedFixed[];
};

// The counted build's record of the addresses each droplet touched, where
// RECORDS_ADDRESSES is set (src/erosion/droplets/replay.rs replays it): per dispatch,
// step and droplet (recordSlot), x and y the cells whose 2x2 corners the step's two samples loaded, z the cell
// whose 2x2 corners it added to, w which of them it did: bit 0 and 1 the samples, bits
// 4 to 7 the adds at NW, NE, SW, SE. A step never taken is all zero.
layout(constant_id = 6) const bool RECORDS_ADDRESSES = false;
layout(std430, binding = 8) buffer AddressRecord {
    uvec4 addressRecord[];
};
const uint RECORD_ADDS_SHIFT = 4u;

// Deterministic mode: this dispatch's fixed-point changes, applied to heightData by
// glsl/apply_delta.comp after the dispatch, so that every droplet reads frozen heights.
layout(std430, binding = 5) buffer DeltaField {
    int deltaData[];
};

// Staggered passes (glsl/droplet_passes.comp): each droplet of the batch between passes.
struct DropletState {
    vec2 pos;
    vec2 dir;
    float water;
    float sediment;
    float speed;
    uint alive;
};
layout(std430, binding = 6) buffer DropletStates {
    DropletState dropletState[];
};

layout(push_constant) uniform DropletParams {
#ifdef WIDE_INDEX
    WideHeights heightAddress; // vkerode, wide build only: heightData's address
    WideHits cellHitsAddress;  // and cellHits'
#endif
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
    // vkerode, tiled spawning only (SPAWN_TILED, below):
    uint TILE_SIZE;     // side of a spawn tile, in cells
    uint TILE_ORDER;    // workgroup-to-tile order: 0 linear, 1 morton, 2 scattered, 3 sweep
    uint PHASE_STRIDE;  // checkerboard period in tiles: 1 (no phases), 2 or 3
    uint PHASE;         // this dispatch's colour, 0 .. PHASE_STRIDE^2 - 1
    uint GROUP_BASE;    // workgroups of this colour dispatched before this one
    // vkerode, staggered passes only (glsl/droplet_passes.comp):
    uint PASS;          // this dispatch's pass, 0 .. passes in the batch - 1
    uint PASS_COUNT;    // P: passes each droplet lives through
    uint STEPS_PER_PASS; // ceil(MAX_LIFETIME / P)
    uint STAGGER;       // 1: droplet i starts in pass i mod P; 0: all start in pass 0
    uint COLOUR_GROUPS; // workgroups of this colour in all dispatches (sweep order)
};

// vkerode: each workgroup spawns in its tile (true) or over the whole map. A
// specialization constant rather than a macro: the untaken branch costs nothing once
// specialised, and it halves the modules build.rs compiles.
layout(constant_id = 9) const bool SPAWN_TILED = false;

#include "cell_index.glsl"

#endif
