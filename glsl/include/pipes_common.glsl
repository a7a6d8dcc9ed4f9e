// The grid-centric strategy: the virtual-pipe shallow-water model of Mei, Decaudin and
// Hu (2007), "Fast Hydraulic Erosion Simulation and Visualization on GPU". Per cell:
// terrain b, water depth d, suspended sediment s, outflow flux f to the left, right,
// top and bottom neighbours, velocity v. The fields are float32 buffers reached by
// address (no descriptor, so no 4 GiB maxStorageBufferRange: maps past 32768^2 fit).
// src/erosion/pipes/runner.rs drives the passes and says which buffer is which in each;
// src/erosion/pipes/cpu.rs mirrors the model; include/pipes_model.glsl is its
// arithmetic, shared by the plain and the fused passes.
#ifndef VKERODE_PIPES_COMMON_GLSL
#define VKERODE_PIPES_COMMON_GLSL

#extension GL_EXT_buffer_reference : require

// The workgroup's shape, as specialization constants 1 and 2 (ID 0 is reported to
// break on NVIDIA drivers).
layout(local_size_x = 16, local_size_x_id = 1, local_size_y = 16, local_size_y_id = 2, local_size_z = 1) in;

layout(buffer_reference, std430, buffer_reference_align = 4) buffer Floats { float v[]; };
layout(buffer_reference, std430, buffer_reference_align = 8) buffer Pairs { vec2 v[]; };

#ifdef PACK_HALF
// The packed fields: flux as four halves (8 bytes, not 16), velocity as two (4, not 8).
layout(buffer_reference, std430, buffer_reference_align = 8) buffer Fluxes { uvec2 v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Velocities { uint v[]; };
vec4 readFlux(Fluxes f, int i) {
    uvec2 p = f.v[i];
    return vec4(unpackHalf2x16(p.x), unpackHalf2x16(p.y));
}
void writeFlux(Fluxes f, int i, vec4 value) {
    f.v[i] = uvec2(packHalf2x16(value.xy), packHalf2x16(value.zw));
}
vec2 readVelocity(Velocities f, int i) { return unpackHalf2x16(f.v[i]); }
void writeVelocity(Velocities f, int i, vec2 value) { f.v[i] = packHalf2x16(value); }
// Rounding a flux to half precision may raise it by 2^-11 of itself; scaling the
// outflow limit down by 2^-10 keeps a cell from sending more water than it holds.
const float OUTFLOW_MARGIN = 1.0 - 1.0 / 1024.0;
#else
layout(buffer_reference, std430, buffer_reference_align = 16) buffer Fluxes { vec4 v[]; };
layout(buffer_reference, std430, buffer_reference_align = 8) buffer Velocities { vec2 v[]; };
vec4 readFlux(Fluxes f, int i) { return f.v[i]; }
void writeFlux(Fluxes f, int i, vec4 value) { f.v[i] = value; }
vec2 readVelocity(Velocities f, int i) { return f.v[i]; }
void writeVelocity(Velocities f, int i, vec2 value) { f.v[i] = value; }
const float OUTFLOW_MARGIN = 1.0;
#endif

// The model's parameters, fixed for a kernel: specialization constants 3 to 18, set by
// src/erosion/pipes/kernel.rs (the defaults here are PipesParams::DEFAULT's).
layout(constant_id = 3) const float DT = 0.02;              // time step
layout(constant_id = 4) const float RAIN = 0.012;           // water depth added per unit time
layout(constant_id = 5) const float PIPE_AREA = 20.0;       // cross-section of each virtual pipe
layout(constant_id = 6) const float GRAVITY = 9.81;
layout(constant_id = 7) const float CELL_LENGTH = 1.0;      // pipe length and cell side
layout(constant_id = 8) const float CAPACITY = 1.0;         // Kc
layout(constant_id = 9) const float DISSOLVING = 0.5;       // Ks
layout(constant_id = 10) const float DEPOSITION = 1.0;      // Kd
layout(constant_id = 11) const float EVAPORATION = 0.015;   // Ke
layout(constant_id = 12) const float MIN_TILT = 0.05;       // lower bound of sin(tilt), so flat cells still carry
layout(constant_id = 13) const float MAX_EROSION_DEPTH = 0.1; // water depth from which the capacity is whole
layout(constant_id = 14) const float FLUX_KEPT = 1.0;       // share of the flux a step keeps: 1 - friction dt
layout(constant_id = 15) const bool OPEN_EDGES = false;     // edge cells drain into a sea at BASE_LEVEL
layout(constant_id = 16) const float BASE_LEVEL = 0.0;      // the sea's surface past open edges
layout(constant_id = 17) const bool CAPPED = false;         // suspended sediment capped at SEDIMENT_CAP
layout(constant_id = 18) const float SEDIMENT_CAP = 1.0;    // sediment per volume of water at most

// The matching Rust struct is PipesPushConstants (src/erosion/pipes/kernel.rs), after
// the eleven field addresses.
layout(push_constant) uniform PipesFields {
    Floats terrainA;
    Floats terrainB;
    Floats waterA;
    Floats waterB;
    Floats sedimentA;
    Floats sedimentB;
    Fluxes fluxA;          // x left, y right, z top, w bottom
    Fluxes fluxB;
    Velocities velocity;
    Floats evaporated;     // the counted build's running sum of evaporation per cell
    Pairs drained;         // the counted build's: water and sediment out past open edges, per cell
    int WIDTH;
    int HEIGHT;
    int FLAGS;             // the fused passes' STEP_* bits
};

bool outside(ivec2 c) {
    return c.x < 0 || c.y < 0 || c.x >= WIDTH || c.y >= HEIGHT;
}

int cellIndex(ivec2 c) {
    return c.y * WIDTH + c.x;
}

ivec2 clampToMap(ivec2 c) {
    return clamp(c, ivec2(0), ivec2(WIDTH - 1, HEIGHT - 1));
}

// The counted build's record of what evaporation took from cell i, once per step.
void countEvaporation(int i, float before, float after) {
#ifdef COUNT_BALANCE
    evaporated.v[i] += before - after;
#endif
}

// What cell c's outflows `out_` send off the map (only open edges have pipes there).
float offMap(ivec2 c, vec4 out_) {
    return (c.x == 0 ? out_.x : 0.0) + (c.x == WIDTH - 1 ? out_.y : 0.0)
         + (c.y == 0 ? out_.z : 0.0) + (c.y == HEIGHT - 1 ? out_.w : 0.0);
}

// The counted build's record of the water (a depth over the cell) and sediment that
// cell c's outflows carry past the open edges in a step; `concentration` is the
// sediment per volume of the water they carry (0 where the sediment stays on the map).
void countOutflow(int i, ivec2 c, vec4 out_, float concentration) {
#ifdef COUNT_BALANCE
    if (OPEN_EDGES) {
        float off = offMap(c, out_);
        if (off > 0.0) {
            drained.v[i] += vec2(DT * off / (CELL_LENGTH * CELL_LENGTH), DT * concentration * off);
        }
    }
#endif
}

#endif
