// Thermal erosion (Musgrave, Kolb and Mace 1989; Olsen 2004): material slides downhill
// wherever the drop to a neighbour exceeds the talus's. Heights are float32 in kernel
// units (one unit is one cell's width), in buffers reached by address. A step is
// Jacobi: every cell's outflows come from the previous heights. Each cell sends each
// receiver (a neighbour on the map past the talus) (RATE * largest / total) * excess,
// where total and largest are the sum and the largest of its receivers' excesses.
// src/erosion/thermal/runner.rs says which buffer is which; src/erosion/thermal/cpu.rs
// is the same arithmetic in the same order, and a flow taken from one cell is the same
// f32 value added to another, so the heights' sum changes only by rounding.
#ifndef VKERODE_THERMAL_COMMON_GLSL
#define VKERODE_THERMAL_COMMON_GLSL

#extension GL_EXT_buffer_reference : require

// The workgroup's shape, as specialization constants 1 and 2 (ID 0 is reported to
// break on NVIDIA drivers).
layout(local_size_x = 16, local_size_x_id = 1, local_size_y = 16, local_size_y_id = 2, local_size_z = 1) in;

// The model's numbers, set by src/erosion/thermal/kernel.rs (the defaults here are
// ThermalParams::DEFAULT's): the drops of a slope at the talus over one and sqrt(2)
// cells, rounded to f32 on the host so that the CPU reference uses the same ones.
layout(constant_id = 3) const float TALUS_AXIAL = 0.70020753;
layout(constant_id = 4) const float TALUS_DIAGONAL = 0.99024302;
layout(constant_id = 5) const float RATE = 0.25;

#ifdef FOUR_NEIGHBOURS
const int NEIGHBOURS = 4;
#else
const int NEIGHBOURS = 8;
#endif

// ThermalParams's OFFSETS and OPPOSITE: the axial neighbours, then the diagonal ones;
// a cell's neighbour k sends toward the cell along OPPOSITE[k].
const ivec2 OFFSETS[8] = ivec2[](ivec2(-1, 0), ivec2(1, 0), ivec2(0, -1), ivec2(0, 1),
                                 ivec2(-1, -1), ivec2(1, -1), ivec2(-1, 1), ivec2(1, 1));
const int OPPOSITE[8] = int[](1, 0, 3, 2, 7, 6, 5, 4);

layout(buffer_reference, std430, buffer_reference_align = 4) buffer Floats { float v[]; };
// A cell's outflows in OFFSETS's order: axial (x left, y right, z top, w bottom), then
// diagonal.
layout(buffer_reference, std430, buffer_reference_align = 16) buffer Outflows { vec4 v[]; };

// The matching Rust struct is ThermalPushConstants (src/erosion/thermal/kernel.rs),
// after the five field addresses.
layout(push_constant) uniform ThermalFields {
    Floats heightsA;        // the state the step reads
    Floats heightsB;        // the fused pass's new heights
    Outflows axialOut;      // the two-pass step's outflows
    Outflows diagonalOut;
    Floats sent;            // the counted build's running sum of what each cell sent
    int WIDTH;
    int HEIGHT;
};

bool outside(ivec2 c) {
    return c.x < 0 || c.y < 0 || c.x >= WIDTH || c.y >= HEIGHT;
}

int cellIndex(ivec2 c) {
    return c.y * WIDTH + c.x;
}

float heightAt(ivec2 c) {
    return heightsA.v[cellIndex(c)];
}

float dropToward(int k) {
    return k < 4 ? TALUS_AXIAL : TALUS_DIAGONAL;
}

// How far the drop from `from` to `to`, neighbour k of it, exceeds the talus's.
float excessToward(float from, float to, int k) {
    return (from - to) - dropToward(k);
}

// The factor RATE * largest / total of cell c (height h) that each excess is sent at;
// 0 where no neighbour lies past the talus.
float shareOf(ivec2 c, float h) {
    float total = 0.0;
    float largest = 0.0;
    for (int k = 0; k < NEIGHBOURS; ++k) {
        ivec2 n = c + OFFSETS[k];
        if (outside(n)) continue;
        float e = excessToward(h, heightAt(n), k);
        if (e > 0.0) {
            total += e;
            largest = max(largest, e);
        }
    }
    return total > 0.0 ? RATE * largest / total : 0.0;
}

// What cell c (height h, share s) sends its neighbour k, which lies on the map.
float outflowToward(float h, float s, float neighbourHeight, int k) {
    float e = excessToward(h, neighbourHeight, k);
    return e > 0.0 ? s * e : 0.0;
}

// What cell c sends its neighbour k: 0 off the map.
float outflowOf(ivec2 c, float h, float s, int k) {
    ivec2 n = c + OFFSETS[k];
    return outside(n) ? 0.0 : outflowToward(h, s, heightAt(n), k);
}

// The counted build's record of what cell i sent this step.
void countSent(int i, float amount) {
#ifdef COUNT_SENT
    sent.v[i] += amount;
#endif
}

#endif
