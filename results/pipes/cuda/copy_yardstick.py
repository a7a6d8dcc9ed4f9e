"""The CUDA yardstick of vkerode peak's streaming copy: the same traffic (two 1 GiB
buffers, bytes read plus written over GPU time) with CuPy's device-to-device copy and a
plain float4 copy kernel, median of 20 after a warm-up. Prints one JSON object."""
import json

import cupy as cp

N = 1 << 30
a = cp.ones(N // 4, dtype=cp.float32)
b = cp.empty_like(a)
kernel = cp.RawKernel(r'''
extern "C" __global__ void copy(const float4* __restrict__ s, float4* __restrict__ t, unsigned n) {
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        t[i] = s[i];
}''', 'copy')


def median_ms(run, reps=20):
    run()
    times = []
    for _ in range(reps):
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        run()
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop))
    return sorted(times)[len(times) // 2]


quads = N // 16
results = {
    "buffer_bytes": N,
    "memcpy_bytes_per_s": 2 * N / (median_ms(lambda: cp.copyto(b, a)) / 1e3),
    "kernel_bytes_per_s": 2 * N
    / (median_ms(lambda: kernel((8192,), (256,), (a, b, cp.uint32(quads)))) / 1e3),
}
print(json.dumps(results, indent=2))
