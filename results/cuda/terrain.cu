/*
Erosion noise, ported to GLSL 450 for vkerode from the C# (Unity.Mathematics) port by
the "Erosion noise implementation in C#" seed, itself ported one-to-one from the
Shadertoy shaders by Fewes (https://www.shadertoy.com/view/7ljcRW) and clayjohn
(https://www.shadertoy.com/view/MtGcWh). src/terrain/noise.rs is the CPU twin of this file.

While the majority of the code is provided under the MIT license, the "erosion"
function is adapted from code shared under the Creative Commons
Attribution-NonCommercial-ShareAlike 3.0 Unported License (CC BY-NC-SA 3.0).

Credit to guil for "Gavoronoise" (https://www.shadertoy.com/view/llsGWl) and to iq for
"Noise - Gradient - 2D - Deriv" (https://www.shadertoy.com/view/XdXBRH).

Copyright 2020 Clay John

Permission is hereby granted, free of charge, to any person obtaining a copy of this
software and associated documentation files (the "Software"), to deal in the Software
without restriction, including without limitation the rights to use, copy, modify,
merge, publish, distribute, sublicense, and/or sell copies of the Software, and to
permit persons to whom the Software is furnished to do so, subject to the following
conditions:

The above copyright notice and this permission notice shall be included in all copies
or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED,
INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A
PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT
HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF
CONTRACT, TORT OR OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE OR
THE USE OR OTHER DEALINGS IN THE SOFTWARE.
*/
// results/cuda/terrain.cu: a CUDA port, for results/cuda/mapsize.py, of vkerode's
// erosion-noise terrain: the noise of glsl/include/erosion_noise.glsl (whose header,
// above, is kept as it stands there) and glsl/terrain.comp, which writes
// RELIEF * heightmap(uv).x per cell, with src/terrain/generate.rs's TerrainSpec (its
// uv per cell and the uv offset from the seed). An independent port, written from
// those files, not generated from them; the same operations in the same order.
//
// The noise functions are __host__ __device__ on small vector structs, so that the
// same code compiles as host C++ (g++ -x c++), where it was checked against
// `vkerode terrain` (results/mapsize-cuda/README.md gives the figures).
//
// Build the CUDA kernel with -fmad=false: vkerode marks the hash's sums `precise`, and
// its CPU twin (src/terrain/noise.rs, Rust) never contracts a multiply-add.
//
// Macros: TERRAIN_APPROX takes exp, sin and cos from the SFU's approximations
// (__expf, __sinf, __cosf), as a Vulkan driver may compile GLSL's exp, sin and cos;
// without it, CUDA's accurate expf, sinf and cosf (a few ulp at most), as the CPU
// twin's libm. The kernel's ints and the fixed point are those of vkerode: a cell is
// int(h * scale) in float32, truncated toward zero (src/terrain/heightmap.rs,
// Heightmap::to_fixed), and a height whose |h| * scale reaches 2^30
// (FIXED_POINT_LIMIT) or is not finite is refused.

#if defined(__CUDACC__)
#define NOISE_FN __host__ __device__ __forceinline__
#else
#include <math.h>
#define NOISE_FN static inline
#endif

#if defined(__CUDA_ARCH__) && defined(TERRAIN_APPROX)
#define NOISE_EXP __expf
#define NOISE_SIN __sinf
#define NOISE_COS __cosf
#else
#define NOISE_EXP expf
#define NOISE_SIN sinf
#define NOISE_COS cosf
#endif

namespace noise {

struct V2 {
    float x, y;
};

struct V3 {
    float x, y, z;
};

NOISE_FN V2 v2(float x, float y) {
    V2 r;
    r.x = x;
    r.y = y;
    return r;
}

NOISE_FN V2 splat2(float s) { return v2(s, s); }

NOISE_FN V3 v3(float x, float y, float z) {
    V3 r;
    r.x = x;
    r.y = y;
    r.z = z;
    return r;
}

// GLSL's component-wise arithmetic; a scalar operand applies to every component.
NOISE_FN V2 operator+(V2 a, V2 b) { return v2(a.x + b.x, a.y + b.y); }
NOISE_FN V2 operator-(V2 a, V2 b) { return v2(a.x - b.x, a.y - b.y); }
NOISE_FN V2 operator*(V2 a, V2 b) { return v2(a.x * b.x, a.y * b.y); }
NOISE_FN V2 operator*(V2 a, float s) { return v2(a.x * s, a.y * s); }
NOISE_FN V2 operator*(float s, V2 a) { return v2(s * a.x, s * a.y); }
NOISE_FN V2 operator+(V2 a, float s) { return v2(a.x + s, a.y + s); }
NOISE_FN V2 operator+(float s, V2 a) { return v2(s + a.x, s + a.y); }
NOISE_FN V2 operator-(V2 a, float s) { return v2(a.x - s, a.y - s); }
NOISE_FN V3 operator+(V3 a, V3 b) { return v3(a.x + b.x, a.y + b.y, a.z + b.z); }
NOISE_FN V3 operator*(V3 a, V3 b) { return v3(a.x * b.x, a.y * b.y, a.z * b.z); }
NOISE_FN V3 operator*(V3 a, float s) { return v3(a.x * s, a.y * s, a.z * s); }
NOISE_FN V3 operator/(V3 a, float s) { return v3(a.x / s, a.y / s, a.z / s); }

NOISE_FN V2 yx(V2 a) { return v2(a.y, a.x); }
NOISE_FN V2 zy(V3 a) { return v2(a.z, a.y); }
NOISE_FN float fract(float x) { return x - floorf(x); }
NOISE_FN V2 floor2(V2 a) { return v2(floorf(a.x), floorf(a.y)); }
NOISE_FN V2 fract2(V2 a) { return v2(fract(a.x), fract(a.y)); }
NOISE_FN float dot(V2 a, V2 b) { return a.x * b.x + a.y * b.y; }

NOISE_FN float smoothstep(float edge0, float edge1, float x) {
    float t = (x - edge0) / (edge1 - edge0);
    t = t < 0.0f ? 0.0f : (t > 1.0f ? 1.0f : t);
    return t * t * (3.0f - 2.0f * t);
}

// Erosion parameters.
#define EROSION_TILES 4.0f
#define EROSION_OCTAVES 5
#define EROSION_GAIN 0.5f
#define EROSION_LACUNARITY 2.0f

// Scale the input slope, leading to more erosion.
#define EROSION_SLOPE_STRENGTH 3.0f
// Continuously modify the noise direction based on the previous fractal sample.
// This is what gives the slopes an interesting "branching" structure.
// A higher value will give you more branches.
#define EROSION_BRANCH_STRENGTH 3.0f
// Maximum amount the erosion will modify the base height map.
#define EROSION_STRENGTH 0.04f

// Base height noise parameters.
#define HEIGHT_TILES 3.0f
#define HEIGHT_OCTAVES 3
#define HEIGHT_AMP 0.25f
#define HEIGHT_GAIN 0.1f
#define HEIGHT_LACUNARITY 2.0f

#define WATER_HEIGHT 0.45f

#define NOISE_PI 3.14159274f

// The seed's literals, kept as written: the hash depends on their exact rounding.
NOISE_FN V2 hash(V2 xIn) {
    const V2 k = v2(0.3183099f, 0.3678794f);
    V2 x = xIn * k + yx(k);
    V2 r = -1.0f + 2.0f * fract2((16.0f * k) * fract(x.x * x.y * (x.x + x.y)));
    return r;
}

// from: https://www.shadertoy.com/view/XdXBRH
// name: Noise - Gradient - 2D - Deriv
// author: iq
// license: MIT
// return gradient noise (in x) and its derivatives (in yz)
NOISE_FN V3 noised(V2 p) {
    V2 i = floor2(p);
    V2 f = fract2(p);

    V2 u = f * f * f * (f * (f * 6.0f - 15.0f) + 10.0f);
    V2 du = 30.0f * f * f * (f * (f - 2.0f) + 1.0f);

    V2 ga = hash(i + v2(0.0f, 0.0f));
    V2 gb = hash(i + v2(1.0f, 0.0f));
    V2 gc = hash(i + v2(0.0f, 1.0f));
    V2 gd = hash(i + v2(1.0f, 1.0f));

    float va = dot(ga, f - v2(0.0f, 0.0f));
    float vb = dot(gb, f - v2(1.0f, 0.0f));
    float vc = dot(gc, f - v2(0.0f, 1.0f));
    float vd = dot(gd, f - v2(1.0f, 1.0f));

    float value = va + u.x * (vb - va) + u.y * (vc - va) + u.x * u.y * (va - vb - vc + vd);
    V2 deriv = ga + u.x * (gb - ga) + u.y * (gc - ga) + u.x * u.y * (ga - gb - gc + gd) +
        du * (yx(u) * (va - vb - vc + vd) + v2(vb, vc) - va);
    return v3(value, deriv.x, deriv.y);
}

// code adapted from https://www.shadertoy.com/view/llsGWl
// name: Gavoronoise
// author: guil
// license: Creative Commons Attribution-NonCommercial-ShareAlike 3.0 Unported License
// Code has been modified to return analytic derivatives and to favour
// direction quite a bit.
NOISE_FN V3 erosion(V2 p, V2 dir) {
    V2 ip = floor2(p);
    V2 fp = fract2(p);
    float f = 2.0f * NOISE_PI;
    V3 va = v3(0.0f, 0.0f, 0.0f);
    float wt = 0.0f;
    for (int i = -2; i <= 1; i++) {
        for (int j = -2; j <= 1; j++) {
            V2 o = v2((float)i, (float)j);
            V2 h = hash(ip - o) * 0.5f;
            V2 pp = fp + o - h;
            float d = dot(pp, pp);
            float w = NOISE_EXP(-d * 2.0f);
            wt += w;
            float mag = dot(pp, dir);
            // Multiplying pp by zero is a modification in Fewes' version compared to clayjohn's.
            V2 side = -NOISE_SIN(mag * f) * (pp * 0.0f + dir);
            va = va + v3(NOISE_COS(mag * f), side.x, side.y) * w;
        }
    }
    return va / wt;
}

// Height in .x (about [0, 1]) and the erosion octaves' own value in .y.
NOISE_FN V2 heightmap(V2 uv) {
    V2 p = uv * HEIGHT_TILES;

    // FBM terrain
    V3 n = v3(0.0f, 0.0f, 0.0f);
    float nf = 1.0f;
    float na = HEIGHT_AMP;
    for (int i = 0; i < HEIGHT_OCTAVES; i++) {
        n = n + noised(p * nf) * na * v3(1.0f, nf, nf);
        na *= HEIGHT_GAIN;
        nf *= HEIGHT_LACUNARITY;
    }

    // [-1, 1] -> [0, 1]
    n.x = n.x * 0.5f + 0.5f;

    // Take the curl of the normal to get the gradient facing down the slope
    V2 dir = zy(n) * v2(1.0f, -1.0f) * EROSION_SLOPE_STRENGTH;

    // Another fbm type noise with a strong directionality, steered by the slope; each
    // layer's slope is added to a running total so later layers branch off earlier ones.
    V3 h = v3(0.0f, 0.0f, 0.0f);

    float a = 0.5f;
    float f = 1.0f;

    a *= smoothstep(WATER_HEIGHT - 0.1f, WATER_HEIGHT + 0.2f, n.x);

    for (int i = 0; i < EROSION_OCTAVES; i++) {
        h = h + erosion(p * EROSION_TILES * f,
                        dir + zy(h) * v2(1.0f, -1.0f) * EROSION_BRANCH_STRENGTH) *
                a * v3(1.0f, f, f);
        a *= EROSION_GAIN;
        f *= EROSION_LACUNARITY;
    }

    return v2(n.x + (h.x - 0.5f) * EROSION_STRENGTH, h.x);
}

// glsl/terrain.comp's height of cell (x, y): RELIEF * heightmap(uv).x, with
// uv = (cell + 0.5) * UV_PER_CELL + UV_OFFSET.
NOISE_FN float cellHeight(int x, int y, float relief, float uvPerCell, float uvOffsetX,
                          float uvOffsetY) {
    V2 uv = (v2((float)x, (float)y) + 0.5f) * uvPerCell + v2(uvOffsetX, uvOffsetY);
    return heightmap(uv).x * relief;
}

}  // namespace noise

// TerrainSpec's uv offset of a seed (src/terrain/generate.rs): seed 0 is the seed
// shader's own window; others shift it by (a >> 8) / 2^24, (b >> 8) / 2^24 with
// a = pcg(seed), b = pcg(a). src/hash.rs's PCG hash.
NOISE_FN unsigned terrainPcgHash(unsigned v) {
    unsigned state = v * 747796405u + 2891336453u;
    unsigned word = ((state >> ((state >> 28u) + 4u)) ^ state) * 277803737u;
    return (word >> 22u) ^ word;
}

NOISE_FN void terrainUvOffset(unsigned seed, float* x, float* y) {
    if (seed == 0u) {
        *x = 0.0f;
        *y = 0.0f;
        return;
    }
    unsigned a = terrainPcgHash(seed);
    unsigned b = terrainPcgHash(a);
    *x = (float)(a >> 8) / (float)(1u << 24);
    *y = (float)(b >> 8) / (float)(1u << 24);
}

#if defined(__CUDACC__)
// One thread per cell, blocks of 2D tiles. heights (float32 heights, or null) and
// fixedCells (int32 fixed point at `scale`, or null) are row-major width x height,
// indexed in 64 bits: a 65536^2 map's index passes 2^31 at row 32768. `refused`
// counts the cells that are not finite or do not fit the fixed point (their cell is
// written 0); the caller refuses the map if it is not 0.
extern "C" __global__ void terrain(float* heights, int* fixedCells, int width, int height,
                                   float relief, float uvPerCell, float uvOffsetX,
                                   float uvOffsetY, float scale,
                                   unsigned long long* refused) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) {
        return;
    }
    float h = noise::cellHeight(x, y, relief, uvPerCell, uvOffsetX, uvOffsetY);
    long long index = (long long)y * width + x;
    if (heights != 0) {
        heights[index] = h;
    }
    if (fixedCells != 0) {
        if (!isfinite(h) || (double)fabsf(h) * (double)scale >= 1073741824.0) {
            atomicAdd(refused, 1ull);
            fixedCells[index] = 0;
        } else {
            fixedCells[index] = (int)(h * scale);
        }
    }
}
#endif
