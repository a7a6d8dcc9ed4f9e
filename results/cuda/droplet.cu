// A CUDA build of the paper's droplet kernel, for the yardstick in yardstick.py: the
// same spawn hash, the same arithmetic in the same order (compiled with -fmad=false,
// as vkerode's GLSL marks its sums `precise`), the same int32 fixed point and
// atomicAdd on the four bilinear corners. It is an independent port of
// glsl/droplet.comp and glsl/include/droplet_functions.glsl, not generated from them.
//
// Macros: COUNT_STEPS counts the steps that reach the four adds (as vkerode's counted
// build does); SKIP_ZERO issues no atomicAdd for a change that truncates to zero (as
// vkerode's fast-skip-only); LOAD_CG reads the heightfield with ld.global.cg, which
// bypasses the L1; WIDE addresses cells with 64-bit indices ((long long)y * width + x),
// for maps past 2^31 cells (65536^2 is 2^32: 16 GiB of int32), as vkerode's wide build
// does (glsl/include/cell_index.glsl). Without WIDE the index is the int it always was.

__device__ __forceinline__ unsigned pcgHash(unsigned v) {
    unsigned state = v * 747796405u + 2891336453u;
    unsigned word = ((state >> ((state >> 28u) + 4u)) ^ state) * 277803737u;
    return (word >> 22u) ^ word;
}

struct Params {
    int width;
    int height;
    int lifetime;
    float inertia;
    float capacity;
    float erosion;
    float deposition;
    float evaporation;
    float scale;
    unsigned seed;
    unsigned droplets;
};

#ifdef WIDE
typedef long long CellIndex;
#else
typedef int CellIndex;
#endif

// The index of cell (x, y) in the row-major heightfield.
__device__ __forceinline__ CellIndex cellIndex(const Params& p, int x, int y) {
#ifdef WIDE
    return (long long)y * p.width + x;
#else
    return y * p.width + x;
#endif
}

__device__ __forceinline__ int loadCell(const int* heights, CellIndex index) {
#ifdef LOAD_CG
    return __ldcg(heights + index);
#else
    return heights[index];
#endif
}

__device__ __forceinline__ float cellHeight(const int* heights, const Params& p, int x, int y) {
    return (float)loadCell(heights, cellIndex(p, x, y)) / p.scale;
}

// Bilinear height and gradient at pos: .x = dh/dx, .y = dh/dy, .z = h.
__device__ float3 surface(const int* heights, const Params& p, float px, float py) {
    int cx = (int)px;
    int cy = (int)py;
    float hNW = cellHeight(heights, p, cx, cy);
    float hNE = cellHeight(heights, p, cx + 1, cy);
    float hSW = cellHeight(heights, p, cx, cy + 1);
    float hSE = cellHeight(heights, p, cx + 1, cy + 1);
    float u = px - floorf(px);
    float v = py - floorf(py);
    float gx = (hNE - hNW) * (1.0f - v) + (hSE - hSW) * v;
    float gy = (hSW - hNW) * (1.0f - u) + (hSE - hNE) * u;
    float h = hNW * (1.0f - u) * (1.0f - v) + hNE * u * (1.0f - v) + hSW * (1.0f - u) * v
        + hSE * u * v;
    return make_float3(gx, gy, h);
}

__device__ __forceinline__ void modifyHeight(int* heights, const Params& p, int x, int y, float deltaH) {
    int fixedDelta = (int)(deltaH * p.scale);
#ifdef SKIP_ZERO
    if (fixedDelta == 0) {
        return;
    }
#endif
    atomicAdd(heights + cellIndex(p, x, y), fixedDelta);
}

extern "C" __global__ void droplet(int* heights, int width, int height, int lifetime,
    float inertia, float capacityFactor, float erosion, float deposition, float evaporation,
    float scale, unsigned seed, unsigned droplets, unsigned long long* steps) {
    const Params p = {width, height, lifetime, inertia, capacityFactor, erosion, deposition,
        evaporation, scale, seed, droplets};
    unsigned id = blockIdx.x * blockDim.x + threadIdx.x;
    if (id >= p.droplets) {
        return;
    }
    const float inv2pow32 = 1.0f / 4294967296.0f;
    unsigned a = pcgHash(id ^ (p.seed * 0x9E3779B9u));
    unsigned b = pcgHash(a);
    float posx = 1.0f + (float)a * inv2pow32 * (float)(p.width - 3);
    float posy = 1.0f + (float)b * inv2pow32 * (float)(p.height - 3);
    float dirx = 0.0f;
    float diry = 0.0f;
    float water = 1.0f;
    float sediment = 0.0f;
    float speed = 1.0f;
#ifdef COUNT_STEPS
    unsigned long long taken = 0;
#endif

    for (int step = 0; step < p.lifetime; ++step) {
        int ix = (int)posx;
        int iy = (int)posy;
        if (ix < 1 || ix >= p.width - 2 || iy < 1 || iy >= p.height - 2) {
            break;
        }
        float3 s = surface(heights, p, posx, posy);
        float hOld = s.z;
        dirx = dirx * p.inertia - s.x * (1.0f - p.inertia);
        diry = diry * p.inertia - s.y * (1.0f - p.inertia);
        float len = sqrtf(dirx * dirx + diry * diry);
        if (len == 0.0f) {
            break;
        }
        dirx /= len;
        diry /= len;
        float nx = posx + dirx;
        float ny = posy + diry;
        float hNew = surface(heights, p, nx, ny).z;
        float deltaH = hNew - hOld;
        float capacity = fmaxf(-deltaH, 0.01f) * speed * water * p.capacity;
        float fx = posx - floorf(posx);
        float fy = posy - floorf(posy);
        if (sediment > capacity || deltaH > 0.0f) {
            float depositAmount = (deltaH > 0.0f) ? fminf(deltaH, sediment) : (sediment - capacity) * p.deposition;
            sediment -= depositAmount;
            modifyHeight(heights, p, ix, iy, depositAmount * (1.0f - fx) * (1.0f - fy));
            modifyHeight(heights, p, ix + 1, iy, depositAmount * fx * (1.0f - fy));
            modifyHeight(heights, p, ix, iy + 1, depositAmount * (1.0f - fx) * fy);
            modifyHeight(heights, p, ix + 1, iy + 1, depositAmount * fx * fy);
        } else {
            float erodeAmount = fminf((capacity - sediment) * p.erosion, -deltaH);
            sediment += erodeAmount;
            modifyHeight(heights, p, ix, iy, -erodeAmount * (1.0f - fx) * (1.0f - fy));
            modifyHeight(heights, p, ix + 1, iy, -erodeAmount * fx * (1.0f - fy));
            modifyHeight(heights, p, ix, iy + 1, -erodeAmount * (1.0f - fx) * fy);
            modifyHeight(heights, p, ix + 1, iy + 1, -erodeAmount * fx * fy);
        }
#ifdef COUNT_STEPS
        ++taken;
#endif
        speed = sqrtf(fmaxf(0.0f, speed * speed + deltaH * 9.81f));
        water *= (1.0f - p.evaporation);
        posx = nx;
        posy = ny;
        if (water < 0.01f) {
            break;
        }
    }
#ifdef COUNT_STEPS
    atomicAdd(steps + (id & 63u), taken);
#endif
}

// The cache microbenchmark's chase, as glsl/cache_chase.comp: one thread follows the
// chain; READONLY loads through the read-only (non-coherent) path, as a readonly SSBO;
// EXEC_ATOMIC adds an atomicAdd to another buffer at every step, as the chase's
// `atomic` build.
extern "C" __global__ void chase(const unsigned* next, unsigned warmSteps, unsigned steps, unsigned* sink) {
    unsigned i = 0;
    for (unsigned k = 0; k < warmSteps + steps; ++k) {
#ifdef READONLY
        i = __ldg(next + i);
#else
        i = next[i];
#endif
#ifdef EXEC_ATOMIC
        atomicAdd(sink + 1, 1u);
#endif
    }
    sink[0] = i;
}

// Streams the chain once with one block, to bring it into the L2 before a chase, as
// vkerode does with glsl/cache_stream.comp.
extern "C" __global__ void touch(const uint4* data, unsigned quads, unsigned* sink) {
    uint4 sum = make_uint4(0, 0, 0, 0);
    for (unsigned k = threadIdx.x; k < quads; k += blockDim.x) {
        uint4 d = data[k];
        sum.x += d.x;
        sum.y += d.y;
        sum.z += d.z;
        sum.w += d.w;
    }
    if ((sum.x ^ sum.y ^ sum.z ^ sum.w) == 0x5eed1234u) {
        sink[0] = sum.x;
    }
}
