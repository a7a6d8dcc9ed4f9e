#version 450 core
// Pass 2: outflow flux through the four pipes, from the difference of water surfaces,
// scaled so that no cell sends more water than it holds. No flow leaves the map.
#extension GL_GOOGLE_include_directive : require
#include "include/pipes_common.glsl"

float outflow(float previous, float surface, ivec2 neighbour) {
    if (outside(neighbour)) return 0.0;
    int j = cellIndex(neighbour);
    float drop = surface - (terrainA[j] + waterA[j]);
    return max(0.0, previous + DT * PIPE_AREA * GRAVITY * drop / CELL_LENGTH);
}

void main() {
    int i = thisCell();
    if (i < 0) return;
    ivec2 c = ivec2(gl_GlobalInvocationID.xy);
    float surface = terrainA[i] + waterA[i];
    vec4 f = fluxA[i];
    vec4 next = vec4(
        outflow(f.x, surface, c + ivec2(-1, 0)),
        outflow(f.y, surface, c + ivec2(1, 0)),
        outflow(f.z, surface, c + ivec2(0, -1)),
        outflow(f.w, surface, c + ivec2(0, 1)));
    float total = next.x + next.y + next.z + next.w;
    float volume = waterA[i] * CELL_LENGTH * CELL_LENGTH;
    float k = total > 0.0 ? min(1.0, volume / (total * DT)) : 1.0;
    fluxB[i] = next * k;
}
