#version 450 core
// The paper's droplet algorithm split into staggered dispatch passes. Each droplet's
// state lives in dropletState between passes; each pass advances every live droplet by
// up to STEPS_PER_PASS steps of the paper's loop (include/droplet_step.glsl). With
// STAGGER, droplet i starts its life in pass i mod PASS_COUNT, so droplets of every age
// are in flight together; a batch then takes 2 * PASS_COUNT - 1 passes.
//! axis atomics: racy=ATOMICS_RACY float=ATOMICS_FLOAT deterministic=DETERMINISTIC
//! axis build: counted=COUNT_WORK
#extension GL_GOOGLE_include_directive : require

#include "include/droplet_bindings.glsl"
#include "include/droplet_functions.glsl"
#include "include/droplet_step.glsl"

void main() {
    uint id = gl_GlobalInvocationID.x;
    if (id >= BATCH_SIZE) {
        return;
    }
    uint startPass = (STAGGER != 0u) ? (BATCH_BASE_ID + id) % PASS_COUNT : 0u;
    if (PASS < startPass || PASS - startPass >= PASS_COUNT) {
        return;
    }
    uint firstStep = (PASS - startPass) * STEPS_PER_PASS;
    uint endStep = min(firstStep + STEPS_PER_PASS, uint(MAX_LIFETIME));

    DropletState s;
    if (PASS == startPass) {
        s = DropletState(getRandomPosition(id), vec2(0.0), 1.0, 0.0, 1.0, 1u);
    } else {
        s = dropletState[id];
    }
    if (s.alive == 0u) {
        return;
    }
    // Four rounding calls per step: stochastic rounding draws what one pass would.
    roundingCalls = firstStep * 4u;
    recordedSamples = firstStep * 2u;
    recordedAdds = firstStep * 4u;
    for (uint step = firstStep; step < endStep; ++step) {
        if (!dropletStep(s.pos, s.dir, s.speed, s.water, s.sediment)) {
            s.alive = 0u;
            break;
        }
    }
    if (s.alive == 0u || endStep == uint(MAX_LIFETIME)) {
        recordDeath(s.pos, s.sediment);
    }
    dropletState[id] = s;
}
