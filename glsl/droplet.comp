#version 450 core
// The droplet-erosion kernel of "Hydraulic Erosion Algorithms in GLSL Compute", kept as
// printed: main() below is the paper's, statement for statement, with one addition
// after the loop, recordDeath() (empty outside the counted build). Its speed update is
// the paper's, so this kernel runs the paper's physics only; the corrected physics runs
// glsl/droplet_stepped.comp. What Vulkan and vkerode add lives in the included files:
// resources, and the functions main() calls. tests/shader_sources.rs pins main() to
// the paper's listing (tests/data/paper_main.glsl).
//
// Variants, one module per combination: SPIR-V through shaderc's optimiser (opt; the
// plain modules are verbatim), the atomic mode (racy, float, or deterministic: deltas
// into a separate buffer), the L1 levers (the `loads` axis:
// glsl/include/droplet_bindings.glsl says what each changes), and the instrumented
// build. Tiled spawning is a specialization constant (SPAWN_TILED), not a module.
//! axis spirv: opt=@O
//! axis atomics: racy=ATOMICS_RACY float=ATOMICS_FLOAT deterministic=DETERMINISTIC
//! axis loads: noshared=NO_SHARED_MEMORY readonly=LOADS_READONLY texel=LOADS_TEXEL imageatomic=ATOMICS_IMAGE image=LOADS_IMAGE vmm=VULKAN_MEMORY_MODEL wide=WIDE_INDEX
//! axis build: counted=COUNT_WORK
#extension GL_GOOGLE_include_directive : require

#include "include/droplet_bindings.glsl"
#include "include/droplet_functions.glsl"

// Pseudo-random position generation per invocation
vec2 getRandomPosition(uint id);

// Bilinear gradient and height extraction
vec3 getSurfaceNormalAndHeight(vec2 pos);

void main() {
    uint id = gl_GlobalInvocationID.x;
    vec2 pos = getRandomPosition(id);
    vec2 dir = vec2(0.0);
    
    float water = 1.0;
    float sediment = 0.0;
    float speed = 1.0;

    for (int step = 0; step < MAX_LIFETIME; ++step) {
        ivec2 iPos = ivec2(pos);
        if (iPos.x < 1 || iPos.x >= MAP_WIDTH - 2 || 
            iPos.y < 1 || iPos.y >= MAP_HEIGHT - 2) {
            break;
        }

        vec3 surfaceData = getSurfaceNormalAndHeight(pos);
        vec2 grad = surfaceData.xy;
        float hOld = surfaceData.z;

        dir = (dir * INERTIA) - (grad * (1.0 - INERTIA));
        float len = length(dir);
        if (len == 0.0) break;
        dir /= len;

        vec2 newPos = pos + dir;
        float hNew = getSurfaceNormalAndHeight(newPos).z;
        float deltaH = hNew - hOld;

        float capacity = max(-deltaH, 0.01) * speed * water * CAPACITY_FACTOR;

        if (sediment > capacity || deltaH > 0.0) {
            float depositAmount = (deltaH > 0.0) ? min(deltaH, sediment) : (sediment - capacity) * DEPOSITION_RATE;
            sediment -= depositAmount;

            // Distribute deposit over four neighbor cells via bilinear weights
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

        speed = sqrt(max(0.0, speed * speed + deltaH * 9.81));
        water *= (1.0 - EVAPORATION_RATE);
        pos = newPos;

        if (water < 0.01) break;
    }
    recordDeath(pos, sediment);
}
