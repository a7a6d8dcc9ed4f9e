// One step of the paper's droplet loop, as a function: the loop body of
// glsl/droplet_stepped.comp (the corrected physics) and of the kernels that keep a
// droplet's state between dispatches. The statements are the body of the loop in
// glsl/droplet.comp, in the same order, each `break` there `return false` here, but
// for one: the speed update multiplies deltaH by PHYSICS_SIGN (1.0, the paper's, or
// -1.0, the corrected physics). tests/shader_sources.rs pins that; with the paper's
// physics, tests/stagger.rs and tests/shader_sources.rs check that they leave the same
// heights, bit for bit.
#ifndef VKERODE_DROPLET_STEP_GLSL
#define VKERODE_DROPLET_STEP_GLSL

// Advances the droplet by one step; false once it has stopped.
bool dropletStep(inout vec2 pos, inout vec2 dir, inout float speed, inout float water, inout float sediment) {
    ivec2 iPos = ivec2(pos);
    if (iPos.x < 1 || iPos.x >= MAP_WIDTH - 2 ||
        iPos.y < 1 || iPos.y >= MAP_HEIGHT - 2) {
        return false;
    }

    vec3 surfaceData = getSurfaceNormalAndHeight(pos);
    vec2 grad = surfaceData.xy;
    float hOld = surfaceData.z;

    dir = (dir * INERTIA) - (grad * (1.0 - INERTIA));
    float len = length(dir);
    if (len == 0.0) return false;
    dir /= len;

    vec2 newPos = pos + dir;
    float hNew = getSurfaceNormalAndHeight(newPos).z;
    float deltaH = hNew - hOld;

    float capacity = max(-deltaH, 0.01) * speed * water * CAPACITY_FACTOR;

    if (sediment > capacity || deltaH > 0.0) {
        float depositAmount = (deltaH > 0.0) ? min(deltaH, sediment) : (sediment - capacity) * DEPOSITION_RATE;
        sediment -= depositAmount;

        vec2 f = fract(pos);
        modifyHeight(iPos, depositAmount * (1.0 - f.x) * (1.0 - f.y));
        modifyHeight(iPos + ivec2(1, 0), depositAmount * f.x * (1.0 - f.y));
        modifyHeight(iPos + ivec2(0, 1), depositAmount * (1.0 - f.x) * f.y);
        modifyHeight(iPos + ivec2(1, 1), depositAmount * f.x * f.y);
    } else {
        float erodeAmount = min((capacity - sediment) * EROSION_RATE, -deltaH);
        sediment += erodeAmount;

        vec2 f = fract(pos);
        modifyHeight(iPos, -erodeAmount * (1.0 - f.x) * (1.0 - f.y));
        modifyHeight(iPos + ivec2(1, 0), -erodeAmount * f.x * (1.0 - f.y));
        modifyHeight(iPos + ivec2(0, 1), -erodeAmount * (1.0 - f.x) * f.y);
        modifyHeight(iPos + ivec2(1, 1), -erodeAmount * f.x * f.y);
    }

    speed = sqrt(max(0.0, speed * speed + PHYSICS_SIGN * deltaH * 9.81));
    water *= (1.0 - EVAPORATION_RATE);
    pos = newPos;

    return !(water < 0.01);
}

#endif
