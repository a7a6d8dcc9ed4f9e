#version 450 core
// The paper's main() (glsl/droplet.comp) with the body of its loop replaced by a call
// of dropletStep() (include/droplet_step.glsl), the same statements but for a speed
// update that takes PHYSICS_SIGN: the kernel that runs the corrected physics, so that
// droplet.comp can stay the paper's text. With the paper's physics it draws the same
// rounding calls and leaves the same heights as droplet.comp, bit for bit
// (tests/shader_sources.rs). droplet.comp's axes, so that every atomic mode, spawning,
// lever and the counted build run with either physics.
//! axis spirv: opt=@O
//! axis atomics: racy=ATOMICS_RACY float=ATOMICS_FLOAT deterministic=DETERMINISTIC
//! axis loads: noshared=NO_SHARED_MEMORY readonly=LOADS_READONLY texel=LOADS_TEXEL imageatomic=ATOMICS_IMAGE image=LOADS_IMAGE vmm=VULKAN_MEMORY_MODEL wide=WIDE_INDEX
//! axis build: counted=COUNT_WORK
#extension GL_GOOGLE_include_directive : require

#include "include/droplet_bindings.glsl"
#include "include/droplet_functions.glsl"
#include "include/droplet_step.glsl"

void main() {
    uint id = gl_GlobalInvocationID.x;
    vec2 pos = getRandomPosition(id);
    vec2 dir = vec2(0.0);

    float water = 1.0;
    float sediment = 0.0;
    float speed = 1.0;

    for (int step = 0; step < MAX_LIFETIME; ++step) {
        if (!dropletStep(pos, dir, speed, water, sediment)) break;
    }
    recordDeath(pos, sediment);
}
