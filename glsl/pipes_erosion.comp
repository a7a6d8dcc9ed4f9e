#version 450 core
// Pass 4: erosion and deposition against the capacity Kc * sin(tilt) * |v|.
#extension GL_GOOGLE_include_directive : require
#include "include/pipes_common.glsl"

float terrainAt(ivec2 c, float here) {
    return outside(c) ? here : terrainA[cellIndex(c)];
}

void main() {
    int i = thisCell();
    if (i < 0) return;
    ivec2 c = ivec2(gl_GlobalInvocationID.xy);
    float b = terrainA[i];
    float dx = 0.5 * (terrainAt(c + ivec2(1, 0), b) - terrainAt(c + ivec2(-1, 0), b)) / CELL_LENGTH;
    float dy = 0.5 * (terrainAt(c + ivec2(0, 1), b) - terrainAt(c + ivec2(0, -1), b)) / CELL_LENGTH;
    float slope = sqrt(dx * dx + dy * dy);
    float tilt = max(MIN_TILT, slope / sqrt(1.0 + slope * slope));
    // The speed the advection can carry (one cell per step), and capacity fading in
    // water shallower than MAX_EROSION_DEPTH, as open implementations limit it: thin
    // fast sheets of water would otherwise dissolve without bound.
    float speed = min(length(velocity[i]), CELL_LENGTH / DT);
    float depthShare = clamp(waterB[i] / MAX_EROSION_DEPTH, 0.0, 1.0);
    float capacity = CAPACITY * tilt * speed * depthShare;
    float s = sedimentA[i];
    float change = capacity > s ? DISSOLVING * (capacity - s) : -DEPOSITION * (s - capacity);
    change *= DT;
    // Never more sediment deposited than is suspended.
    change = max(change, -s);
    terrainB[i] = b - change;
    sedimentB[i] = s + change;
}
