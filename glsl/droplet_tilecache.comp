#version 450 core
// vkerode's tile-cache variant of the fast droplet kernel (glsl/droplet_fast.comp): the
// paper's per-droplet algorithm and arithmetic, the fast kernel's two ideas (no atomic
// for a change that truncates to zero, the second sample's corners reused), and less
// heightfield traffic to L2:
//  - each workgroup copies its spawn tile and CACHE_MARGIN cells around it (plus the
//    one column and row a cell's SE corner needs) from the heightfield into shared
//    memory, twice: the heights its droplets read and add to, and the initial ones;
//  - a corner inside that window is read and atomicAdd-ed there; a corner outside it
//    goes to the global heightfield (loads and atomics), so a droplet that leaves the
//    window keeps the paper's physics (the counted build counts those adds);
//  - after a barrier the workgroup adds (final - initial) of each changed cell of its
//    window to the heightfield with one atomicAdd, so that whatever others added there
//    meanwhile (escaped droplets, a second workgroup of the same tile) stays, and the
//    mass is exact.
// Reads inside a workgroup stay fresh: its droplets add to the window with shared
// atomics, and Workgroup storage is coherent among the workgroup's invocations, so a
// load sees every add that completed before it, as a load of the global heightfield
// does in the paper's kernel. Another workgroup's adds to the same cells are seen only
// at the end of the dispatch; the checkerboard phases keep windows of different tiles
// apart (src/erosion/droplets/variant.rs, `window_rule`).
// A lone droplet gives the paper kernel's heights bit for bit (tests/tile_cache.rs).
// The window's side is a specialization constant pair, so the kernel is built for
// one tile and margin. Variants: optimised SPIR-V; the image lever (loads and adds
// through a storage texel view); the instrumented build.
//! axis spirv: opt=@O
//! axis loads: image=LOADS_IMAGE
//! axis build: counted=COUNT_WORK
#extension GL_GOOGLE_include_directive : require

#include "include/droplet_bindings.glsl"
#include "include/droplet_functions.glsl"

// The tile side the kernel was built for (the job's TILE_SIZE: the runner checks), and
// the margin, in cells.
layout(constant_id = 7) const uint CACHE_TILE = 32u;
layout(constant_id = 8) const uint CACHE_MARGIN = 8u;
const uint CACHE_SIDE = CACHE_TILE + 2u * CACHE_MARGIN + 1u;
shared int cachedHeight[CACHE_SIDE * CACHE_SIDE];
shared int initialHeight[CACHE_SIDE * CACHE_SIDE];

// workCounters' slots after droplet_bindings.glsl's three: adds that left the window.
const uint ESCAPES_SLOT = 1u + 3u * COUNTER_SHARDS;

// The map cell of the window's first entry.
ivec2 windowOrigin;

// The window's entry of map cell `cell`, or -1 where the cell is outside the window.
int windowEntry(ivec2 cell) {
    ivec2 at = cell - windowOrigin;
    if (uint(at.x) < CACHE_SIDE && uint(at.y) < CACHE_SIDE) {
        return at.y * int(CACHE_SIDE) + at.x;
    }
    return -1;
}

int heightAt(ivec2 cell) {
    int entry = windowEntry(cell);
    if (entry >= 0) {
        return cachedHeight[entry];
    }
    return storedHeight(cell.y * MAP_WIDTH + cell.x);
}

void addGlobal(int index, int fixedDelta) {
#if defined(ADDS_THROUGH_IMAGE)
    imageAtomicAdd(heightImage, index, fixedDelta);
#else
    atomicAdd(heightData[index], fixedDelta);
#endif
}

// Fixed-point heights of the 2x2 corners NW, NE, SW, SE of `cell`.
ivec4 loadCorners(ivec2 cell) {
    return ivec4(heightAt(cell), heightAt(cell + ivec2(1, 0)), heightAt(cell + ivec2(0, 1)),
                 heightAt(cell + ivec2(1, 1)));
}

vec3 surfaceFromCorners(ivec4 corners, vec2 pos) {
    vec4 h = vec4(corners) / FIXED_POINT_SCALE;
    return bilinearSurface(h.x, h.y, h.z, h.w, pos);
}

// The fast kernel's addHeight, into the window where the cell is in it; returns the
// fixed-point change made.
int addHeight(ivec2 coord, float deltaH) {
    int fixedDelta = toFixed(deltaH * FIXED_POINT_SCALE);
    int index = coord.y * MAP_WIDTH + coord.x;
    int entry = windowEntry(coord);
    if (fixedDelta != 0) {
        if (entry >= 0) {
            atomicAdd(cachedHeight[entry], fixedDelta);
        } else {
            addGlobal(index, fixedDelta);
        }
    }
#ifdef COUNT_WORK
    if (entry < 0) {
        countWork(ESCAPES_SLOT + gl_GlobalInvocationID.x % COUNTER_SHARDS);
    }
#endif
    recordModification(index, deltaH, fixedDelta);
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

bool onMap(ivec2 cell) {
    return cell.x >= 0 && cell.x < MAP_WIDTH && cell.y >= 0 && cell.y < MAP_HEIGHT;
}

void main() {
    uvec2 tile = tileOf(GROUP_BASE + gl_WorkGroupID.x);
    windowOrigin = ivec2(tile * CACHE_TILE) - int(CACHE_MARGIN);
    const uint windowCells = CACHE_SIDE * CACHE_SIDE;
    for (uint e = gl_LocalInvocationID.x; e < windowCells; e += gl_WorkGroupSize.x) {
        ivec2 cell = windowOrigin + ivec2(e % CACHE_SIDE, e / CACHE_SIDE);
        int h = onMap(cell) ? storedHeight(cell.y * MAP_WIDTH + cell.x) : 0;
        cachedHeight[e] = h;
        initialHeight[e] = h;
    }
    barrier();

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
        corners = patchCorners(next, newCell, changes, iPos);

        speed = sqrt(max(0.0, speed * speed + PHYSICS_SIGN * deltaH * 9.81));
        water *= (1.0 - EVAPORATION_RATE);
        pos = newPos;

        if (water < 0.01) break;
    }
    recordDeath(pos, sediment);

    barrier();
    for (uint e = gl_LocalInvocationID.x; e < windowCells; e += gl_WorkGroupSize.x) {
        int change = cachedHeight[e] - initialHeight[e];
        ivec2 cell = windowOrigin + ivec2(e % CACHE_SIDE, e / CACHE_SIDE);
        if (change != 0 && onMap(cell)) {
            addGlobal(cell.y * MAP_WIDTH + cell.x, change);
        }
    }
}
