// The functions the paper's droplet kernel calls. The paper leaves
// getRandomPosition and getSurfaceNormalAndHeight undefined; these definitions are
// vkerode's, and src/erosion/cpu.rs mirrors them.
#ifndef VKERODE_DROPLET_FUNCTIONS_GLSL
#define VKERODE_DROPLET_FUNCTIONS_GLSL

#include "pcg_hash.glsl"

void countWork(uint slot) {
#ifdef COUNT_WORK
    atomicAdd(workCounters[slot], 1u);
#endif
}

#ifdef COUNT_WORK
// How many other active lanes of this subgroup aim at the same cell right now.
uint sameCellLanes(CellIndex index) {
    uvec4 activeLanes = subgroupBallot(true);
    uint matches = 0u;
    for (uint lane = 0u; lane < gl_SubgroupSize; ++lane) {
#ifdef WIDE_INDEX
        // Shuffled as two words: 64-bit shuffles need shaderSubgroupExtendedTypes.
        uvec2 words = unpackUint2x32(uint64_t(index));
        bool same = subgroupShuffle(words, lane) == words;
#else
        bool same = subgroupShuffle(index, lane) == index;
#endif
        if (lane != gl_SubgroupInvocationID && subgroupBallotBitExtract(activeLanes, lane) && same) {
            matches++;
        }
    }
    return matches;
}
#endif

// The instrumented build's record of one modifyHeight.
void recordModification(CellIndex index, float deltaH, int fixedDelta) {
#ifdef COUNT_WORK
    uint shard = gl_GlobalInvocationID.x % COUNTER_SHARDS;
    countWork(ATOMICS_SLOT + shard);
#ifdef ATOMICS_FLOAT
    bool addsNothing = deltaH == 0.0;
#else
    bool addsNothing = fixedDelta == 0;
#endif
    if (addsNothing) {
        countWork(ZERO_ADDS_SLOT + shard);
    }
    if (sameCellLanes(index) > 0u) {
        countWork(CONFLICTS_SLOT + shard);
    }
    atomicAdd(CELL_HIT_AT(index), 1u);
    uint droplet = BATCH_BASE_ID + gl_GlobalInvocationID.x;
    intendedChange[droplet].x += deltaH;
    appliedFixed[droplet] += ivec2(fixedDelta, max(fixedDelta, 0));
#endif
}

// The instrumented build's record of a droplet's death: the sediment it still carries,
// negative when it died off the map's interior, where the kernel lets it go.
void recordDeath(vec2 pos, float sediment) {
#ifdef COUNT_WORK
    // The last workgroup's invocations past the batch are no droplets.
    if (gl_GlobalInvocationID.x >= BATCH_SIZE) {
        return;
    }
    ivec2 iPos = ivec2(pos);
    bool inside = iPos.x >= 1 && iPos.x < MAP_WIDTH - 2 && iPos.y >= 1 && iPos.y < MAP_HEIGHT - 2;
    intendedChange[BATCH_BASE_ID + gl_GlobalInvocationID.x].y = inside ? sediment : -sediment;
#endif
}

// The address record's cursor: the paper's main() passes no step to the functions it
// calls, so they count their calls, two samples (pos, then newPos) and four adds per
// step. Kernels that start a droplet mid-life (passes) set them to its first step.
uint recordedSamples = 0u;
uint recordedAdds = 0u;

// Each dispatch's steps one after another, its droplets side by side in each: the
// replay's threads then read their steps coalesced.
uint recordSlot(uint step) {
    return BATCH_BASE_ID * uint(MAX_LIFETIME) + step * BATCH_SIZE + gl_GlobalInvocationID.x;
}

// Step `step`'s sample `which` (0 at pos, 1 at newPos) loaded the corners of `index`.
void recordSample(uint step, uint which, CellIndex index) {
#ifdef COUNT_WORK
    if (RECORDS_ADDRESSES && step < uint(MAX_LIFETIME)) {
        uint slot = recordSlot(step);
        addressRecord[slot][which] = uint(index);
        addressRecord[slot].w |= 1u << which;
    }
#endif
}

// The next add of this droplet, to corner index, made (`issued`) or skipped.
void recordAdd(CellIndex index, bool issued) {
#ifdef COUNT_WORK
    uint step = recordedAdds >> 2u;
    uint corner = recordedAdds & 3u;
    recordedAdds++;
    if (RECORDS_ADDRESSES && step < uint(MAX_LIFETIME)) {
        uint slot = recordSlot(step);
        if (corner == 0u) {
            addressRecord[slot].z = uint(index);
        }
        if (issued) {
            addressRecord[slot].w |= 1u << (RECORD_ADDS_SHIFT + corner);
        }
    }
#endif
}

// modifyHeight's rounding calls so far by this invocation: with the droplet's id, the
// key of stochastic rounding (4 per step, one per corner).
uint roundingCalls = 0u;

// A scaled height change in fixed point: truncated (the paper's int()), rounded half
// away from zero, or rounded up with probability equal to the fraction, so that the
// expected change is the intended one.
int toFixed(float scaled) {
    if (ROUNDING == ROUNDING_NEAREST) {
        return int(scaled + (scaled < 0.0 ? -0.5 : 0.5));
    }
    if (ROUNDING == ROUNDING_STOCHASTIC) {
        uint droplet = BATCH_BASE_ID + gl_GlobalInvocationID.x;
        uint draw = pcgHash(droplet ^ pcgHash(roundingCalls ^ 0x5bd1e995u));
        roundingCalls++;
        float whole = trunc(scaled);
        bool away = float(draw) * (1.0 / 4294967296.0) < abs(scaled - whole);
        return int(whole) + (away ? (scaled < 0.0 ? -1 : 1) : 0);
    }
    return int(scaled);
}

#ifdef DETERMINISTIC
// Deterministic mode: heightData stays frozen during a dispatch, so each droplet keeps
// its own changes and adds them to what it reads. Without them a droplet does not see
// its own erosion: rocking between two cells it digs the same drop again each step, and
// the overshoot runs away. 128 changes are 32 steps, a whole life at the default
// lifetime of 30; past that the oldest are forgotten.
const uint OWN_CHANGES = 128u;
CellIndex ownCell[OWN_CHANGES];
int ownChange[OWN_CHANGES];
uint ownCount = 0u;

void rememberChange(CellIndex index, int fixedDelta) {
    uint slot = ownCount % OWN_CHANGES;
    ownCell[slot] = index;
    ownChange[slot] = fixedDelta;
    ownCount++;
}

int ownChangeAt(CellIndex index) {
    int sum = 0;
    uint remembered = min(ownCount, OWN_CHANGES);
    for (uint i = 0u; i < remembered; ++i) {
        if (ownCell[i] == index) {
            sum += ownChange[i];
        }
    }
    return sum;
}
#endif

#if defined(ATOMICS_FLOAT)
// Float mode: the same call, with float heights and float atomicAdd.
void modifyHeight(ivec2 coord, float deltaH) {
    CellIndex index = cellIndex(coord);
    atomicAdd(HEIGHT_AT(index), deltaH);
    recordModification(index, deltaH, 0);
    recordAdd(index, true);
}
#else
// The paper's modifyHeight, with its literal 1000.0 as the FIXED_POINT_SCALE
// specialization constant. The paper names the buffer heightMapBuffer here and
// heightData in its declaration; it is one buffer. Racy mode swaps the atomicAdd for
// a plain read-modify-write, to measure what the atomics buy; deterministic mode adds
// into deltaData and leaves the heights the droplets read unchanged.
void modifyHeight(ivec2 coord, float deltaH) {
    int fixedDelta = toFixed(deltaH * FIXED_POINT_SCALE);
    CellIndex index = cellIndex(coord);
#if defined(ATOMICS_RACY)
    HEIGHT_AT(index) += fixedDelta;
#elif defined(ADDS_THROUGH_IMAGE)
    imageAtomicAdd(heightImage, index, fixedDelta);
#elif defined(DETERMINISTIC)
    // An SSBO within maxStorageBufferRange, so int32 reaches it (variant.rs refuses a
    // deterministic wide build).
    atomicAdd(deltaData[int(index)], fixedDelta);
    rememberChange(index, fixedDelta);
#else
    atomicAdd(HEIGHT_AT(index), fixedDelta);
#endif
    recordModification(index, deltaH, fixedDelta);
    recordAdd(index, true);
}
#endif

// Morton (Z-order) decoding: the even bits of v.
uint compactBits(uint v) {
    v &= 0x55555555u;
    v = (v | (v >> 1u)) & 0x33333333u;
    v = (v | (v >> 2u)) & 0x0F0F0F0Fu;
    v = (v | (v >> 4u)) & 0x00FF00FFu;
    v = (v | (v >> 8u)) & 0x0000FFFFu;
    return v;
}

// The tile (in tile coordinates) that workgroup `group` of this colour spawns in.
// src/erosion/spawn.rs mirrors it.
uvec2 tileOf(uint group) {
    uint tilesX = (uint(MAP_WIDTH) + TILE_SIZE - 1u) / TILE_SIZE;
    uint tilesY = (uint(MAP_HEIGHT) + TILE_SIZE - 1u) / TILE_SIZE;
    uvec2 colour = uvec2(PHASE % PHASE_STRIDE, PHASE / PHASE_STRIDE);
    uint cx = (tilesX - colour.x + PHASE_STRIDE - 1u) / PHASE_STRIDE;
    uint cy = (tilesY - colour.y + PHASE_STRIDE - 1u) / PHASE_STRIDE;
    uint count = cx * cy;
    uint k = group % count;
    uvec2 t;
    if (TILE_ORDER == 1u) {
        t = uvec2(compactBits(k) % cx, compactBits(k >> 1u) % cy);
    } else if (TILE_ORDER == 2u) {
        uint s = pcgHash(k) % count;
        t = uvec2(s % cx, s / cx);
    } else if (TILE_ORDER == 3u) {
        precise float share = (float(group) + 0.5) / float(COLOUR_GROUPS);
        uint s = min(uint(share * float(count)), count - 1u);
        t = uvec2(s % cx, s / cx);
    } else {
        t = uvec2(k % cx, k / cx);
    }
    return colour + t * PHASE_STRIDE;
}

// A droplet's start: PCG hash of its global id and the seed, uniform over
// [1, W-2) x [1, H-2) (or, tiled, over its workgroup's tile). Invocations past the
// end of the batch get a position outside the map, so the paper's bounds check ends
// them before any work.
vec2 getRandomPosition(uint id) {
    if (id >= BATCH_SIZE) {
#ifndef NO_SHARED_MEMORY
        // Never true for a dispatched thread (BATCH_SIZE < 2^32); it keeps the reserved
        // shared memory from being compiled away.
        if (id == 0xFFFFFFFFu) {
            reservedShared[id % RESERVED_SHARED_WORDS] = id;
            return vec2(float(reservedShared[BATCH_SIZE % RESERVED_SHARED_WORDS]));
        }
#endif
        return vec2(-1.0);
    }
    countWork(0u);
    uint dropletId = BATCH_BASE_ID + id;
    uint a = pcgHash(dropletId ^ (SEED * 0x9E3779B9u));
    uint b = pcgHash(a);
    const float inv2pow32 = 1.0 / 4294967296.0;
    if (SPAWN_TILED) {
        uvec2 tile = tileOf(GROUP_BASE + gl_WorkGroupID.x);
        vec2 lo = max(vec2(tile * TILE_SIZE), vec2(1.0));
        vec2 hi = min(vec2((tile + 1u) * TILE_SIZE), vec2(float(MAP_WIDTH - 2), float(MAP_HEIGHT - 2)));
        return lo + vec2(float(a), float(b)) * inv2pow32 * max(hi - lo, vec2(0.0));
    }
    precise float x = 1.0 + float(a) * inv2pow32 * float(MAP_WIDTH - 3);
    precise float y = 1.0 + float(b) * inv2pow32 * float(MAP_HEIGHT - 3);
    return vec2(x, y);
}

// Cell `index` as stored (fixed point, or float in float mode), through the variant's
// read path.
#if defined(ATOMICS_FLOAT)
float storedHeight(CellIndex index) {
#if defined(LOADS_TEXEL)
    return intBitsToFloat(texelFetch(heightTexels, index).x);
#elif defined(LOADS_IMAGE)
    return intBitsToFloat(imageLoad(heightImage, index).x);
#elif defined(LOADS_READONLY)
    return intBitsToFloat(heightRead[index]);
#else
    return HEIGHT_AT(index);
#endif
}
#else
int storedHeight(CellIndex index) {
#if defined(LOADS_TEXEL)
    return texelFetch(heightTexels, index).x;
#elif defined(LOADS_IMAGE)
    return imageLoad(heightImage, index).x;
#elif defined(LOADS_READONLY)
    return heightRead[index];
#else
    return HEIGHT_AT(index);
#endif
}
#endif

float cellHeight(ivec2 cell) {
    CellIndex index = cellIndex(cell);
#if defined(ATOMICS_FLOAT)
    return storedHeight(index);
#elif defined(DETERMINISTIC)
    return float(storedHeight(index) + ownChangeAt(index)) / FIXED_POINT_SCALE;
#else
    return float(storedHeight(index)) / FIXED_POINT_SCALE;
#endif
}

// Bilinear height and gradient from the four corners of the cell under pos:
// .xy = (dh/dx, dh/dy), .z = h.
vec3 bilinearSurface(float hNW, float hNE, float hSW, float hSE, vec2 pos) {
    vec2 f = fract(pos);
    float u = f.x;
    float v = f.y;
    precise float gx = (hNE - hNW) * (1.0 - v) + (hSE - hSW) * v;
    precise float gy = (hSW - hNW) * (1.0 - u) + (hSE - hNE) * u;
    precise float h = hNW * (1.0 - u) * (1.0 - v) + hNE * u * (1.0 - v) + hSW * (1.0 - u) * v + hSE * u * v;
    return vec3(gx, gy, h);
}

vec3 getSurfaceNormalAndHeight(vec2 pos) {
    ivec2 cell = ivec2(pos);
#ifdef COUNT_WORK
    recordSample(recordedSamples >> 1u, recordedSamples & 1u, cellIndex(cell));
    recordedSamples++;
#endif
    return bilinearSurface(cellHeight(cell), cellHeight(cell + ivec2(1, 0)),
                           cellHeight(cell + ivec2(0, 1)), cellHeight(cell + ivec2(1, 1)), pos);
}

#endif
