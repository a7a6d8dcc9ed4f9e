/*
Erosion noise, ported to Rust for vkerode from the C# (Unity.Mathematics) port by the
"Erosion noise implementation in C#" seed, itself ported one-to-one from the Shadertoy
shaders by Fewes (https://www.shadertoy.com/view/7ljcRW) and clayjohn
(https://www.shadertoy.com/view/MtGcWh). glsl/include/erosion_noise.glsl is the GPU twin
of this file; tests check that the two agree.

While the majority of the code is provided under the MIT license, the `erosion`
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

use std::f32::consts::PI;
use std::ops::{Add, Mul, Sub};

// Erosion parameters.
const EROSION_TILES: f32 = 4.0;
const EROSION_OCTAVES: usize = 5;
const EROSION_GAIN: f32 = 0.5;
const EROSION_LACUNARITY: f32 = 2.0;
// Scale the input slope, leading to more erosion.
const EROSION_SLOPE_STRENGTH: f32 = 3.0;
// Continuously modify the noise direction based on the previous fractal sample.
// This is what gives the slopes an interesting "branching" structure.
const EROSION_BRANCH_STRENGTH: f32 = 3.0;
// Maximum amount the erosion will modify the base height map.
const EROSION_STRENGTH: f32 = 0.04;

// Base height noise parameters.
const HEIGHT_TILES: f32 = 3.0;
const HEIGHT_OCTAVES: usize = 3;
const HEIGHT_AMP: f32 = 0.25;
const HEIGHT_GAIN: f32 = 0.1;
const HEIGHT_LACUNARITY: f32 = 2.0;

const WATER_HEIGHT: f32 = 0.45;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct V2(pub f32, pub f32);

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct V3(pub f32, pub f32, pub f32);

impl Add for V2 {
    type Output = V2;
    fn add(self, o: V2) -> V2 {
        V2(self.0 + o.0, self.1 + o.1)
    }
}
impl Sub for V2 {
    type Output = V2;
    fn sub(self, o: V2) -> V2 {
        V2(self.0 - o.0, self.1 - o.1)
    }
}
impl Mul for V2 {
    type Output = V2;
    fn mul(self, o: V2) -> V2 {
        V2(self.0 * o.0, self.1 * o.1)
    }
}
impl Mul<f32> for V2 {
    type Output = V2;
    fn mul(self, s: f32) -> V2 {
        V2(self.0 * s, self.1 * s)
    }
}
impl Add for V3 {
    type Output = V3;
    fn add(self, o: V3) -> V3 {
        V3(self.0 + o.0, self.1 + o.1, self.2 + o.2)
    }
}
impl Mul for V3 {
    type Output = V3;
    fn mul(self, o: V3) -> V3 {
        V3(self.0 * o.0, self.1 * o.1, self.2 * o.2)
    }
}
impl Mul<f32> for V3 {
    type Output = V3;
    fn mul(self, s: f32) -> V3 {
        V3(self.0 * s, self.1 * s, self.2 * s)
    }
}

impl V2 {
    fn splat(s: f32) -> V2 {
        V2(s, s)
    }
    fn yx(self) -> V2 {
        V2(self.1, self.0)
    }
    fn floor(self) -> V2 {
        V2(self.0.floor(), self.1.floor())
    }
    fn fract(self) -> V2 {
        V2(fract(self.0), fract(self.1))
    }
    fn dot(self, o: V2) -> f32 {
        self.0 * o.0 + self.1 * o.1
    }
}

impl V3 {
    fn zy(self) -> V2 {
        V2(self.2, self.1)
    }
}

/// GLSL's `fract`: x - floor(x).
fn fract(x: f32) -> f32 {
    x - x.floor()
}

fn smoothstep(edge0: f32, edge1: f32, x: f32) -> f32 {
    let t = ((x - edge0) / (edge1 - edge0)).clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

// The seed's literals, kept as written: the hash depends on their exact rounding.
#[allow(clippy::approx_constant)]
fn hash(x_in: V2) -> V2 {
    let k = V2(0.3183099, 0.3678794);
    let x = x_in * k + k.yx();
    let r = fract(x.0 * x.1 * (x.0 + x.1));
    V2::splat(-1.0) + (k * 16.0 * r).fract() * 2.0
}

// from: https://www.shadertoy.com/view/XdXBRH
// name: Noise - Gradient - 2D - Deriv
// author: iq
// license: MIT
// return gradient noise (in x) and its derivatives (in yz)
fn noised(p: V2) -> V3 {
    let i = p.floor();
    let f = p.fract();

    let u = f * f * f * (f * (f * 6.0 - V2::splat(15.0)) + V2::splat(10.0));
    let du = V2::splat(30.0) * f * f * (f * (f - V2::splat(2.0)) + V2::splat(1.0));

    let ga = hash(i + V2(0.0, 0.0));
    let gb = hash(i + V2(1.0, 0.0));
    let gc = hash(i + V2(0.0, 1.0));
    let gd = hash(i + V2(1.0, 1.0));

    let va = ga.dot(f - V2(0.0, 0.0));
    let vb = gb.dot(f - V2(1.0, 0.0));
    let vc = gc.dot(f - V2(0.0, 1.0));
    let vd = gd.dot(f - V2(1.0, 1.0));

    let value = va + u.0 * (vb - va) + u.1 * (vc - va) + u.0 * u.1 * (va - vb - vc + vd);
    let deriv = ga
        + (gb - ga) * u.0
        + (gc - ga) * u.1
        + (ga - gb - gc + gd) * (u.0 * u.1)
        + du * (u.yx() * (va - vb - vc + vd) + V2(vb, vc) - V2::splat(va));
    V3(value, deriv.0, deriv.1)
}

// code adapted from https://www.shadertoy.com/view/llsGWl
// name: Gavoronoise
// author: guil
// license: Creative Commons Attribution-NonCommercial-ShareAlike 3.0 Unported License
// Code has been modified to return analytic derivatives and to favour
// direction quite a bit.
fn erosion(p: V2, dir: V2) -> V3 {
    let ip = p.floor();
    let fp = p.fract();
    let f = 2.0 * PI;
    let mut va = V3(0.0, 0.0, 0.0);
    let mut wt = 0.0f32;
    for i in -2..=1 {
        for j in -2..=1 {
            let o = V2(i as f32, j as f32);
            let h = hash(ip - o) * 0.5;
            let pp = fp + o - h;
            let d = pp.dot(pp);
            let w = (-d * 2.0).exp();
            wt += w;
            let mag = pp.dot(dir);
            // Multiplying pp by zero is a modification in Fewes' version compared to clayjohn's.
            let s = -(mag * f).sin();
            va = va + V3((mag * f).cos(), s * dir.0, s * dir.1) * w;
        }
    }
    V3(va.0 / wt, va.1 / wt, va.2 / wt)
}

/// Height (about [0, 1]) in `.0`, and the erosion octaves' own value in `.1`.
pub fn heightmap(uv: V2) -> V2 {
    let p = uv * HEIGHT_TILES;

    // FBM terrain
    let mut n = V3(0.0, 0.0, 0.0);
    let mut nf = 1.0f32;
    let mut na = HEIGHT_AMP;
    for _ in 0..HEIGHT_OCTAVES {
        n = n + noised(p * nf) * na * V3(1.0, nf, nf);
        na *= HEIGHT_GAIN;
        nf *= HEIGHT_LACUNARITY;
    }

    // [-1, 1] -> [0, 1]
    n.0 = n.0 * 0.5 + 0.5;

    // Take the curl of the normal to get the gradient facing down the slope
    let dir = n.zy() * V2(1.0, -1.0) * EROSION_SLOPE_STRENGTH;

    // Another fbm type noise with a strong directionality, steered by the slope; each
    // layer's slope is added to a running total so later layers branch off earlier ones.
    let mut h = V3(0.0, 0.0, 0.0);
    let mut a = 0.5f32;
    let mut f = 1.0f32;

    a *= smoothstep(WATER_HEIGHT - 0.1, WATER_HEIGHT + 0.2, n.0);

    for _ in 0..EROSION_OCTAVES {
        let steer = dir + h.zy() * V2(1.0, -1.0) * EROSION_BRANCH_STRENGTH;
        h = h + erosion(p * EROSION_TILES * f, steer) * a * V3(1.0, f, f);
        a *= EROSION_GAIN;
        f *= EROSION_LACUNARITY;
    }

    V2(n.0 + (h.0 - 0.5) * EROSION_STRENGTH, h.0)
}
