// The grid-centric strategy: the virtual-pipe shallow-water model of Mei, Decaudin and
// Hu (2007), "Fast Hydraulic Erosion Simulation and Visualization on GPU". Per cell:
// terrain b, water depth d, suspended sediment s, outflow flux f to the left, right,
// top and bottom neighbours, velocity v. State lives in the *A buffers between steps;
// the *B buffers hold what a pass writes while others still read the A values.
// src/erosion/pipes.rs drives the five passes; src/erosion/pipes_cpu.rs mirrors them.
#ifndef VKERODE_PIPES_COMMON_GLSL
#define VKERODE_PIPES_COMMON_GLSL

layout(local_size_x = 16, local_size_y = 16, local_size_z = 1) in;

layout(std430, binding = 0) buffer TerrainA { float terrainA[]; };
layout(std430, binding = 1) buffer TerrainB { float terrainB[]; };
layout(std430, binding = 2) buffer WaterA { float waterA[]; };
layout(std430, binding = 3) buffer WaterB { float waterB[]; };
layout(std430, binding = 4) buffer SedimentA { float sedimentA[]; };
layout(std430, binding = 5) buffer SedimentB { float sedimentB[]; };
layout(std430, binding = 6) buffer FluxA { vec4 fluxA[]; };   // x left, y right, z top, w bottom
layout(std430, binding = 7) buffer FluxB { vec4 fluxB[]; };
layout(std430, binding = 8) buffer Velocity { vec2 velocity[]; };

// src/erosion/pipes.rs holds the matching Rust struct (PipesPushConstants).
layout(push_constant) uniform PipesParams {
    int WIDTH;
    int HEIGHT;
    float DT;              // time step
    float RAIN;            // water depth added per unit time
    float PIPE_AREA;       // cross-section of each virtual pipe
    float GRAVITY;
    float CELL_LENGTH;     // pipe length and cell side
    float CAPACITY;        // Kc
    float DISSOLVING;      // Ks
    float DEPOSITION;      // Kd
    float EVAPORATION;     // Ke
    float MIN_TILT;        // lower bound of sin(tilt), so flat cells still carry
    float MAX_EROSION_DEPTH; // water depth from which the capacity is whole
};

bool outside(ivec2 c) {
    return c.x < 0 || c.y < 0 || c.x >= WIDTH || c.y >= HEIGHT;
}

int cellIndex(ivec2 c) {
    return c.y * WIDTH + c.x;
}

// The cell's index, or -1 past the map (the last workgroups' spare invocations).
int thisCell() {
    ivec2 c = ivec2(gl_GlobalInvocationID.xy);
    return outside(c) ? -1 : cellIndex(c);
}

#endif
