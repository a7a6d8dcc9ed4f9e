#version 450 core
// vkerode's fast variant of the paper's droplet kernel. The per-droplet algorithm and
// its arithmetic are the paper's (glsl/droplet.comp); what changes is memory traffic:
//  - a change that truncates to zero fixed-point units issues no atomicAdd;
//  - the four corner heights loaded for a step's second sample are the next step's
//    first sample, patched with the droplet's own changes, instead of a second load.
// A lone droplet gives the paper kernel's heights bit for bit (tests/fast_kernel.rs).
// Variants: optimised SPIR-V (opt); one idea at a time (skiponly, reuseonly), to
// measure each, or both with the corners read as aligned 16-byte quads (quads);
// the L1 levers of glsl/droplet.comp; the instrumented build.
//! axis spirv: opt=@O
//! axis ideas: skiponly=NO_CORNER_REUSE reuseonly=NO_ZERO_SKIP quads=QUAD_LOADS
//! axis loads: noshared=NO_SHARED_MEMORY readonly=LOADS_READONLY texel=LOADS_TEXEL imageatomic=ATOMICS_IMAGE image=LOADS_IMAGE vmm=VULKAN_MEMORY_MODEL wide=WIDE_INDEX
//! axis build: counted=COUNT_WORK
#extension GL_GOOGLE_include_directive : require

#include "include/droplet_bindings.glsl"
#include "include/droplet_functions.glsl"

#if defined(QUAD_LOADS) && !defined(LOADS_READONLY) && !defined(WIDE_INDEX)
#define QUAD_PAIRS
// Cells i and i + 1: one aligned 16-byte load, or two where they straddle quads.
ivec2 cellPair(int i) {
    int q = i >> 2;
    int r = i & 3;
    ivec4 quad = heightQuads[q];
    if (r == 3) {
        return ivec2(quad.w, heightQuads[q + 1].x);
    }
    return r == 0 ? quad.xy : (r == 1 ? quad.yz : quad.zw);
}
#endif

// Fixed-point heights of the 2x2 corners NW, NE, SW, SE of `cell`.
ivec4 loadCorners(ivec2 cell) {
    CellIndex i = cellIndex(cell);
#ifdef QUAD_PAIRS
    return ivec4(cellPair(i), cellPair(i + MAP_WIDTH));
#else
    return ivec4(storedHeight(i), storedHeight(i + 1), storedHeight(i + MAP_WIDTH), storedHeight(i + MAP_WIDTH + 1));
#endif
}

vec3 surfaceFromCorners(ivec4 corners, vec2 pos) {
    vec4 h = vec4(corners) / FIXED_POINT_SCALE;
    return bilinearSurface(h.x, h.y, h.z, h.w, pos);
}

// modifyHeight without the atomic when the change truncates to nothing; returns the
// fixed-point change made.
int addHeight(ivec2 coord, float deltaH) {
    int fixedDelta = toFixed(deltaH * FIXED_POINT_SCALE);
    CellIndex index = cellIndex(coord);
#ifndef NO_ZERO_SKIP
    if (fixedDelta != 0)
#endif
    {
#if defined(ADDS_THROUGH_IMAGE)
        imageAtomicAdd(heightImage, index, fixedDelta);
#else
        atomicAdd(HEIGHT_AT(index), fixedDelta);
#endif
    }
    recordModification(index, deltaH, fixedDelta);
#ifdef NO_ZERO_SKIP
    recordAdd(index, true);
#else
    recordAdd(index, fixedDelta != 0);
#endif
    return fixedDelta;
}

// Adds the changes made at the corners of `changed` to those corners of `cached` that
// are the same cells.
ivec4 patchCorners(ivec4 cached, ivec2 cachedCell, ivec4 changes, ivec2 changed) {
    ivec2 offset = changed - cachedCell;
    for (int c = 0; c < 4; ++c) {
        ivec2 at = ivec2(c & 1, c >> 1) + offset;
        if (at.x >= 0 && at.x <= 1 && at.y >= 0 && at.y <= 1) {
            cached[at.y * 2 + at.x] += changes[c];
        }
    }
    return cached;
}

void main() {
    uint id = gl_GlobalInvocationID.x;
    vec2 pos = getRandomPosition(id);
    vec2 dir = vec2(0.0);

    float water = 1.0;
    float sediment = 0.0;
    float speed = 1.0;

    ivec4 corners = ivec4(0);
    bool cached = false;
    for (int step = 0; step < MAX_LIFETIME; ++step) {
        ivec2 iPos = ivec2(pos);
        if (iPos.x < 1 || iPos.x >= MAP_WIDTH - 2 ||
            iPos.y < 1 || iPos.y >= MAP_HEIGHT - 2) {
            break;
        }
        if (!cached) {
            corners = loadCorners(iPos);
            recordSample(uint(step), 0u, cellIndex(iPos));
            cached = true;
        }

        vec3 surfaceData = surfaceFromCorners(corners, pos);
        vec2 grad = surfaceData.xy;
        float hOld = surfaceData.z;

        dir = (dir * INERTIA) - (grad * (1.0 - INERTIA));
        float len = length(dir);
        if (len == 0.0) break;
        dir /= len;

        vec2 newPos = pos + dir;
        ivec2 newCell = ivec2(newPos);
        ivec4 next = loadCorners(newCell);
        recordSample(uint(step), 1u, cellIndex(newCell));
        float hNew = surfaceFromCorners(next, newPos).z;
        float deltaH = hNew - hOld;

        float capacity = max(-deltaH, 0.01) * speed * water * CAPACITY_FACTOR;

        vec2 f = fract(pos);
        ivec4 changes;
        if (sediment > capacity || deltaH > 0.0) {
            float depositAmount = (deltaH > 0.0) ? min(deltaH, sediment) : (sediment - capacity) * DEPOSITION_RATE;
            sediment -= depositAmount;

            changes.x = addHeight(iPos, depositAmount * (1.0 - f.x) * (1.0 - f.y));
            changes.y = addHeight(iPos + ivec2(1, 0), depositAmount * f.x * (1.0 - f.y));
            changes.z = addHeight(iPos + ivec2(0, 1), depositAmount * (1.0 - f.x) * f.y);
            changes.w = addHeight(iPos + ivec2(1, 1), depositAmount * f.x * f.y);
        } else {
            float erodeAmount = min((capacity - sediment) * EROSION_RATE, -deltaH);
            sediment += erodeAmount;

            changes.x = addHeight(iPos, -erodeAmount * (1.0 - f.x) * (1.0 - f.y));
            changes.y = addHeight(iPos + ivec2(1, 0), -erodeAmount * f.x * (1.0 - f.y));
            changes.z = addHeight(iPos + ivec2(0, 1), -erodeAmount * (1.0 - f.x) * f.y);
            changes.w = addHeight(iPos + ivec2(1, 1), -erodeAmount * f.x * f.y);
        }
#ifdef NO_CORNER_REUSE
        cached = false;
#else
        corners = patchCorners(next, newCell, changes, iPos);
#endif

        speed = sqrt(max(0.0, speed * speed + PHYSICS_SIGN * deltaH * 9.81));
        water *= (1.0 - EVAPORATION_RATE);
        pos = newPos;

        if (water < 0.01) break;
    }
    recordDeath(pos, sediment);
}
