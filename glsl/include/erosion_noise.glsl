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
#ifndef VKERODE_EROSION_NOISE_GLSL
#define VKERODE_EROSION_NOISE_GLSL

// Erosion parameters.
const float EROSION_TILES = 4.0;
const int EROSION_OCTAVES = 5;
const float EROSION_GAIN = 0.5;
const float EROSION_LACUNARITY = 2.0;

// Scale the input slope, leading to more erosion.
const float EROSION_SLOPE_STRENGTH = 3.0;
// Continuously modify the noise direction based on the previous fractal sample.
// This is what gives the slopes an interesting "branching" structure.
// A higher value will give you more branches.
const float EROSION_BRANCH_STRENGTH = 3.0;
// Maximum amount the erosion will modify the base height map.
const float EROSION_STRENGTH = 0.04;

// Base height noise parameters.
const float HEIGHT_TILES = 3.0;
const int HEIGHT_OCTAVES = 3;
const float HEIGHT_AMP = 0.25;
const float HEIGHT_GAIN = 0.1;
const float HEIGHT_LACUNARITY = 2.0;

const float WATER_HEIGHT = 0.45;

const float PI = 3.14159274;

// vkerode: `precise` keeps the driver from fusing these multiply-adds, so the GPU
// hash matches the CPU port bit for bit; its large products amplify any rounding.
vec2 hash(vec2 xIn) {
    const vec2 k = vec2(0.3183099, 0.3678794);
    precise vec2 x = xIn * k + k.yx;
    precise vec2 r = -1.0 + 2.0 * fract(16.0 * k * fract(x.x * x.y * (x.x + x.y)));
    return r;
}

// from: https://www.shadertoy.com/view/XdXBRH
// name: Noise - Gradient - 2D - Deriv
// author: iq
// license: MIT
// return gradient noise (in x) and its derivatives (in yz)
vec3 noised(vec2 p) {
    vec2 i = floor(p);
    vec2 f = fract(p);

    vec2 u = f * f * f * (f * (f * 6.0 - 15.0) + 10.0);
    vec2 du = 30.0 * f * f * (f * (f - 2.0) + 1.0);

    vec2 ga = hash(i + vec2(0.0, 0.0));
    vec2 gb = hash(i + vec2(1.0, 0.0));
    vec2 gc = hash(i + vec2(0.0, 1.0));
    vec2 gd = hash(i + vec2(1.0, 1.0));

    float va = dot(ga, f - vec2(0.0, 0.0));
    float vb = dot(gb, f - vec2(1.0, 0.0));
    float vc = dot(gc, f - vec2(0.0, 1.0));
    float vd = dot(gd, f - vec2(1.0, 1.0));

    return vec3(va + u.x * (vb - va) + u.y * (vc - va) + u.x * u.y * (va - vb - vc + vd),
        ga + u.x * (gb - ga) + u.y * (gc - ga) + u.x * u.y * (ga - gb - gc + gd) +
        du * (u.yx * (va - vb - vc + vd) + vec2(vb, vc) - va));
}

// code adapted from https://www.shadertoy.com/view/llsGWl
// name: Gavoronoise
// author: guil
// license: Creative Commons Attribution-NonCommercial-ShareAlike 3.0 Unported License
// Code has been modified to return analytic derivatives and to favour
// direction quite a bit.
vec3 erosion(vec2 p, vec2 dir) {
    vec2 ip = floor(p);
    vec2 fp = fract(p);
    float f = 2.0 * PI;
    vec3 va = vec3(0.0);
    float wt = 0.0;
    for (int i = -2; i <= 1; i++) {
        for (int j = -2; j <= 1; j++) {
            vec2 o = vec2(i, j);
            vec2 h = hash(ip - o) * 0.5;
            vec2 pp = fp + o - h;
            float d = dot(pp, pp);
            float w = exp(-d * 2.0);
            wt += w;
            float mag = dot(pp, dir);
            // Multiplying pp by zero is a modification in Fewes' version compared to clayjohn's.
            va += vec3(cos(mag * f), -sin(mag * f) * (pp * 0.0 + dir)) * w;
        }
    }
    return va / wt;
}

// Height in .x (about [0, 1]) and the erosion octaves' own value in .y.
vec2 heightmap(vec2 uv) {
    vec2 p = uv * HEIGHT_TILES;

    // FBM terrain
    vec3 n = vec3(0.0);
    float nf = 1.0;
    float na = HEIGHT_AMP;
    for (int i = 0; i < HEIGHT_OCTAVES; i++) {
        n += noised(p * nf) * na * vec3(1.0, nf, nf);
        na *= HEIGHT_GAIN;
        nf *= HEIGHT_LACUNARITY;
    }

    // [-1, 1] -> [0, 1]
    n.x = n.x * 0.5 + 0.5;

    // Take the curl of the normal to get the gradient facing down the slope
    vec2 dir = n.zy * vec2(1.0, -1.0) * EROSION_SLOPE_STRENGTH;

    // Now we compute another fbm type noise
    // erosion is a type of noise with a strong directionality
    // we pass in the direction based on the slope of the terrain
    // erosion also returns the slope. we add that to a running total
    // so that the direction of successive layers are based on the
    // past layers
    vec3 h = vec3(0.0);

    float a = 0.5;
    float f = 1.0;

    a *= smoothstep(WATER_HEIGHT - 0.1, WATER_HEIGHT + 0.2, n.x);

    int octaves = EROSION_OCTAVES;

    for (int i = 0; i < octaves; i++) {
        h += erosion(p * EROSION_TILES * f, dir + h.zy * vec2(1.0, -1.0) * EROSION_BRANCH_STRENGTH) * a * vec3(1.0, f, f);
        a *= EROSION_GAIN;
        f *= EROSION_LACUNARITY;
    }

    return vec2(n.x + (h.x - 0.5) * EROSION_STRENGTH, h.x);
}

#endif
