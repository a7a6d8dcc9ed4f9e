// The virtual-pipe model's arithmetic per cell, one function per step of Mei et al.
// (2007), shared by the plain five passes and the fused two. Each takes what it needs
// as values, so each pass reads its neighbours from wherever it keeps them.
#ifndef VKERODE_PIPES_MODEL_GLSL
#define VKERODE_PIPES_MODEL_GLSL

#include "pipes_common.glsl"

float rained(float depth) {
    return depth + DT * RAIN;
}

float evaporate(float depth) {
    return depth * (1.0 - EVAPORATION * DT);
}

// Outflow through one pipe, from the difference of water surfaces: the previous flux,
// of which friction leaves FLUX_KEPT, plus the head's push. Past a closed edge there is
// no pipe; past an open one the pipe leads to a sea whose surface is BASE_LEVEL.
float pipeFlow(float previous, float surface, float neighbourSurface, bool inside) {
    if (!inside && !OPEN_EDGES) return 0.0;
    float other = inside ? neighbourSurface : BASE_LEVEL;
    return max(0.0, previous * FLUX_KEPT + DT * PIPE_AREA * GRAVITY * (surface - other) / CELL_LENGTH);
}

// The four outflows, scaled so that the cell sends no more water than it holds.
vec4 limitOutflow(vec4 next, float depth) {
    float total = next.x + next.y + next.z + next.w;
    float volume = depth * CELL_LENGTH * CELL_LENGTH;
    float k = total > 0.0 ? min(1.0, volume / (total * DT)) : 1.0;
    return next * (k * OUTFLOW_MARGIN);
}

#ifdef UPWIND
// The upwind transport moves sediment by the pipes' volumes, not by speed, so any
// water that moves has a speed: a depth floor of 1e-4 stopped thin sheets, more of
// them the smaller the time step (results/pipes-dt/).
const float MIN_SPEED_DEPTH = 0.0;
#else
// The semi-Lagrangian advection carries sediment by speed: thin water is still.
const float MIN_SPEED_DEPTH = 1e-4;
#endif

// Water depth from the net flux (`out_` this cell's outflows, the others its
// neighbours'; zero past the map), and velocity from the water passing through.
float newDepth(float depth, vec4 out_, vec4 left, vec4 right, vec4 top, vec4 bottom, out vec2 velocityOut) {
    float inflow = left.y + right.x + top.w + bottom.z;
    float outflow = out_.x + out_.y + out_.z + out_.w;
    float area = CELL_LENGTH * CELL_LENGTH;
    float next = max(0.0, depth + DT * (inflow - outflow) / area);
    float mean = 0.5 * (depth + next);
    vec2 passing = 0.5 * vec2(left.y - out_.x + out_.y - right.x, top.w - out_.z + out_.w - bottom.z);
    velocityOut = mean > MIN_SPEED_DEPTH ? passing / (CELL_LENGTH * mean) : vec2(0.0);
    return next;
}

// Erosion and deposition against the capacity Kc * sin(tilt) * |v|: the new terrain
// (x) and suspended sediment (y). `left` ... `bottom` are the neighbours' terrain (the
// cell's own past the map).
vec2 erodeCell(float b, float left, float right, float top, float bottom, vec2 v, float depth, float s) {
    float dx = 0.5 * (right - left) / CELL_LENGTH;
    float dy = 0.5 * (bottom - top) / CELL_LENGTH;
    float slope = sqrt(dx * dx + dy * dy);
    float tilt = max(MIN_TILT, slope / sqrt(1.0 + slope * slope));
    // Capacity fading in water shallower than MAX_EROSION_DEPTH, as open
    // implementations limit it: thin fast sheets of water would otherwise dissolve
    // without bound. The semi-Lagrangian advection carries sediment a cell per step at
    // most, so its capacity counts no faster speed; the upwind transport has no such
    // bound, and a bound of CELL_LENGTH / DT would make the answer depend on DT.
#ifdef UPWIND
    float speed = length(v);
#else
    float speed = min(length(v), CELL_LENGTH / DT);
#endif
    float depthShare = clamp(depth / MAX_EROSION_DEPTH, 0.0, 1.0);
    float capacity = CAPACITY * tilt * speed * depthShare;
    float change = capacity > s ? DISSOLVING * (capacity - s) : -DEPOSITION * (s - capacity);
    change *= DT;
    // Never more sediment deposited than is suspended.
    change = max(change, -s);
    // Past open edges the sea is the base level: no flow cuts below it.
    if (OPEN_EDGES && change > 0.0) {
        change = min(change, max(0.0, b - BASE_LEVEL));
    }
    float carried = s + change;
    // Never more suspended than the cap times the water that holds it after
    // evaporation: the excess is deposited here.
    if (CAPPED) {
        float held = SEDIMENT_CAP * evaporate(depth) * (CELL_LENGTH * CELL_LENGTH);
        if (carried > held) {
            change = held - s;
            carried = held;
        }
    }
    return vec2(b - change, carried);
}

// Semi-Lagrangian advection: where cell c's sediment comes from, at most one cell back
// (farther, thin fast water on ridges would carry sediment from cells it never
// crossed: the advection's CFL limit), kept on the map.
vec2 advectedFrom(ivec2 c, vec2 v) {
    vec2 from = vec2(c) - clamp(v * DT / CELL_LENGTH, vec2(-1.0), vec2(1.0));
    return clamp(from, vec2(0.0), vec2(float(WIDTH - 1), float(HEIGHT - 1)));
}

// Sediment per unit of water volume: what leaves with each unit of outflow.
float sedimentConcentration(float sediment, float depth) {
    return depth > 0.0 ? sediment / (depth * CELL_LENGTH * CELL_LENGTH) : 0.0;
}

// Upwind transport of the sediment along the pipes: each outflow carries its share of
// the cell's sediment (`concentration` times volume), each inflow its neighbour's
// (`fromLeft` ... : the neighbour's concentration times its flux into this cell). What
// one cell sends another receives, so the transport conserves sediment; the flux limit
// keeps a cell from sending more than it holds.
float transported(float s, float concentration, vec4 out_, float fromLeft, float fromRight, float fromTop, float fromBottom) {
    float sent = concentration * (out_.x + out_.y + out_.z + out_.w);
    float received = fromLeft + fromRight + fromTop + fromBottom;
    return max(0.0, s + DT * (received - sent));
}

float bilinear(float s00, float s10, float s01, float s11, vec2 f) {
    return mix(mix(s00, s10, f.x), mix(s01, s11, f.x), f.y);
}

#endif
