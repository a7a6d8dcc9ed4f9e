#!/usr/bin/env python3
"""The CUDA side of the map-size comparison (results/mapsize-cuda/): the paper's droplet
kernel built from CUDA (droplet.cu with 64-bit cell indices, -DWIDE, at every size) on
vkerode's own erosion-noise terrain, generated on the GPU by terrain.cu, at each map
size, 4,194,304 droplets in one launch of blocks of 64.

Run from the repository root on a machine with an NVIDIA GPU, CuPy and numpy:

    python3 results/cuda/mapsize.py --out DIR [--sizes 1024 2048 ...] [--vkerode PATH]

For each size it generates the terrain on the GPU (seed 1 by default, as vkerode's
`size`, `seed` and default relief, 2 x size), turns it into int32 fixed point as vkerode
does (int(h * scale) in float32, scale 1000), runs the counted build once for the
droplet-steps (COUNT_STEPS), then warm-up and timed launches (CUDA events; the map is
reset from a device copy of the initial map before each launch, outside the timed
region), and reports G droplet-steps/s = steps / median GPU time. It writes
DIR/cuda_mapsize.csv and DIR/cuda_mapsize.json (every sample, the device, the settings)
after every size, so a run cut short keeps the sizes it finished.

With --vkerode (a vkerode binary that can open this GPU through Vulkan), it first
compares terrain.cu with `vkerode terrain` at --check-size (default 1024) on this GPU,
with CUDA's accurate exp/sin/cos and with the SFU's approximations (TERRAIN_APPROX), and
by default (--math auto) generates every map with the one whose fixed-point cells agree
with vkerode's more often. Nothing here is a pass/fail check: these are measurements.
"""

import argparse
import csv
import json
import re
import subprocess
import sys
import time
from pathlib import Path

import cupy as cp
import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import yardstick  # noqa: E402  (PARAMS, vkerode's defaults, and its build of droplet.cu)

PARAMS = yardstick.PARAMS
# FIXED_POINT_LIMIT of src/terrain/heightmap.rs: |h| * scale must stay below 2^30.
FIXED_POINT_LIMIT = float(1 << 30)
TERRAIN_BLOCK = (32, 8)
CSV_COLUMNS = ["size", "steps", "gpu_ms_median", "gpu_ms_q1", "gpu_ms_q3", "reps",
               "g_steps_per_s", "net_change"]


def log(*args):
    print(*args, flush=True)


def pcg_hash(v):
    """src/hash.rs's PCG hash, on Python ints masked to 32 bits."""
    state = (v * 747796405 + 2891336453) & 0xFFFFFFFF
    word = (((state >> ((state >> 28) + 4)) ^ state) * 277803737) & 0xFFFFFFFF
    return (word >> 22) ^ word


def terrain_spec(size, seed):
    """TerrainSpec::square(size, seed)'s float32 inputs of glsl/terrain.comp: relief
    (2 x size), uv per cell (1 / size) and the uv offset of the seed (exact in float32:
    a 24-bit integer over 2^24)."""
    relief = np.float32(2.0) * np.float32(size)
    uv_per_cell = np.float32(1.0) / np.float32(size)
    if seed == 0:
        offset = (np.float32(0.0), np.float32(0.0))
    else:
        a = pcg_hash(seed)
        b = pcg_hash(a)
        offset = (np.float32((a >> 8) / float(1 << 24)), np.float32((b >> 8) / float(1 << 24)))
    return relief, uv_per_cell, offset


def terrain_kernel(math):
    source = (HERE / "terrain.cu").read_text()
    defines = ("-DTERRAIN_APPROX",) if math == "approx" else ()
    kernel = cp.RawKernel(source, "terrain", options=("-fmad=false",) + defines)
    kernel.compile()  # now, not inside the first launch's timing
    return kernel


def generate(kernel, size, seed, heights=None, fixed=None):
    """Runs terrain.cu into `heights` (float32) and/or `fixed` (int32 at PARAMS' scale);
    returns its GPU time in ms. Refuses a map whose heights do not fit the fixed point."""
    relief, uv_per_cell, (ox, oy) = terrain_spec(size, seed)
    refused = cp.zeros(1, dtype=cp.uint64)
    grid = ((size + TERRAIN_BLOCK[0] - 1) // TERRAIN_BLOCK[0],
            (size + TERRAIN_BLOCK[1] - 1) // TERRAIN_BLOCK[1])
    null = np.uint64(0)
    start, end = cp.cuda.Event(), cp.cuda.Event()
    start.record()
    kernel(grid, TERRAIN_BLOCK,
           (null if heights is None else heights, null if fixed is None else fixed,
            np.int32(size), np.int32(size), relief, uv_per_cell, ox, oy,
            np.float32(PARAMS["scale"]), refused))
    end.record()
    end.synchronize()
    bad = int(refused.get()[0])
    if bad:
        raise RuntimeError(f"terrain {size}^2 seed {seed}: {bad} cells are not finite or "
                           f"reach 2^30 at scale {PARAMS['scale']} (vkerode refuses such a map)")
    return cp.cuda.get_elapsed_time(start, end)


def run(cmd):
    log("$", " ".join(str(c) for c in cmd))
    done = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{cmd[0]} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return done.stdout


def terrain_check(vkerode, size, seed, out):
    """terrain.cu against `vkerode terrain` of the same size and seed on this GPU, with
    each math mode: the share of cells whose float32 height is bit-identical, the largest
    difference (height units), and the same for the int32 fixed-point cells."""
    raw = out / f"vkerode-terrain-{size}.raw"
    run([vkerode, "terrain", "--size", size, "--seed", seed, "--format", "raw", "--force", raw])
    vk = np.fromfile(raw, dtype=np.float32)
    if vk.size != size * size:
        raise RuntimeError(f"{raw}: {vk.size} floats, expected {size * size}")
    for leftover in out.glob(f"vkerode-terrain-{size}.*"):  # the raw and its sidecars
        leftover.unlink()
    scale = np.float32(PARAMS["scale"])
    vk_fixed = (vk * scale).astype(np.int32)
    result = dict(size=size, seed=seed, vkerode=str(vkerode))
    for math in ("accurate", "approx"):
        heights = cp.empty(size * size, dtype=cp.float32)
        generate(terrain_kernel(math), size, seed, heights=heights)
        cu = cp.asnumpy(heights)
        cu_fixed = (cu * scale).astype(np.int32)
        result[math] = dict(
            identical_share=float(np.mean(cu.view(np.uint32) == vk.view(np.uint32))),
            max_difference=float(np.max(np.abs(cu.astype(np.float64) - vk.astype(np.float64)))),
            fixed_identical_share=float(np.mean(cu_fixed == vk_fixed)),
            fixed_max_difference=int(np.max(np.abs(cu_fixed.astype(np.int64) - vk_fixed))))
        log(f"  terrain check {size}^2 seed {seed}, {math} exp/sin/cos: "
            f"{100 * result[math]['identical_share']:.3f}% of heights bit-identical, largest "
            f"difference {result[math]['max_difference']:.3g} height units; fixed point "
            f"{100 * result[math]['fixed_identical_share']:.3f}% identical, largest "
            f"difference {result[math]['fixed_max_difference']} units of 1/{PARAMS['scale']:g}")
    return result


def change_kernel():
    """Sum of (after - before) and largest |after - before| over any number of int32
    cells, indexed in 64 bits (a 65536^2 map has 2^32 cells)."""
    source = r"""
extern "C" __global__ void change(const int* after, const int* before, long long cells,
                                  unsigned long long* sum, unsigned long long* largest) {
    long long net = 0;
    long long most = 0;
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < cells; i += stride) {
        long long d = (long long)after[i] - (long long)before[i];
        net += d;
        most = max(most, d < 0 ? -d : d);
    }
    atomicAdd(sum, (unsigned long long)net);
    atomicMax(largest, (unsigned long long)most);
}
"""
    return cp.RawKernel(source, "change")


def change(kernel, after, before):
    """(net change, largest cell change), in height units."""
    out = cp.zeros(2, dtype=cp.uint64)
    kernel((1024,), (256,), (after, before, np.int64(after.size), out[0:1], out[1:2]))
    net, largest = (int(v) for v in out.get())
    if net >= 1 << 63:
        net -= 1 << 64
    return net / PARAMS["scale"], largest / PARAMS["scale"]


def droplet_args(heights, size, droplets, seed, counter):
    p = PARAMS
    return (heights, np.int32(size), np.int32(size), np.int32(p["lifetime"]),
            np.float32(p["inertia"]), np.float32(p["capacity"]), np.float32(p["erosion"]),
            np.float32(p["deposition"]), np.float32(p["evaporation"]), np.float32(p["scale"]),
            np.uint32(seed), np.uint32(droplets), counter)


def quantile(sorted_values, q):
    """Linear interpolation between order statistics, as vkerode's stats::order::quantile."""
    pos = q * (len(sorted_values) - 1)
    lo, hi = int(np.floor(pos)), int(np.ceil(pos))
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def measure(size, args, kernels, terrain):
    """One size: terrain, counted run, warm-up and timed runs. Returns its row."""
    cells = size * size
    counted, timed, changes = kernels
    initial = cp.empty(cells, dtype=cp.int32)
    terrain_ms = generate(terrain, size, args.seed, fixed=initial)
    heights = cp.empty_like(initial)
    counter = cp.zeros(64, dtype=cp.uint64)
    grid = ((args.droplets + args.block - 1) // args.block,)
    block = (args.block,)
    nbytes = initial.nbytes

    def reset():
        heights.data.copy_from_device_async(initial.data, nbytes)

    reset()
    counted(grid, block, droplet_args(heights, size, args.droplets, args.seed, counter))
    cp.cuda.Device().synchronize()
    steps = int(counter.sum())
    net_counted, _ = change(changes, heights, initial)

    start, end = cp.cuda.Event(), cp.cuda.Event()
    samples = []
    for rep in range(args.warmup + args.reps):
        reset()
        start.record()
        timed(grid, block, droplet_args(heights, size, args.droplets, args.seed, counter))
        end.record()
        end.synchronize()
        if rep >= args.warmup:
            samples.append(cp.cuda.get_elapsed_time(start, end))
    net, largest = change(changes, heights, initial)
    ordered = sorted(samples)
    median = quantile(ordered, 0.5)
    row = dict(size=size, steps=steps, gpu_ms_median=median, gpu_ms_q1=quantile(ordered, 0.25),
               gpu_ms_q3=quantile(ordered, 0.75), reps=len(samples),
               g_steps_per_s=steps / (median * 1e-3) / 1e9, net_change=net,
               net_change_counted=net_counted, max_cell_change=largest,
               droplets=args.droplets, seed=args.seed, droplet_seed=args.seed, block=args.block,
               batch=args.droplets, lifetime=PARAMS["lifetime"], scale=PARAMS["scale"],
               terrain_ms=terrain_ms, heightmap_bytes=nbytes, samples_ms=samples)
    del initial, heights, counter
    cp.get_default_memory_pool().free_all_blocks()
    return row


def device_info():
    props = cp.cuda.runtime.getDeviceProperties(0)
    info = dict(name=props["name"].decode(), cuda_driver_api=cp.cuda.runtime.driverGetVersion(),
                cuda_runtime=cp.cuda.runtime.runtimeGetVersion(),
                nvrtc=".".join(str(v) for v in cp.cuda.nvrtc.getVersion()),
                sms=props["multiProcessorCount"], l2_bytes=props["l2CacheSize"],
                memory_bytes=props["totalGlobalMem"], cupy=cp.__version__, numpy=np.__version__)
    try:
        import pynvml
        pynvml.nvmlInit()
        driver = pynvml.nvmlSystemGetDriverVersion()
        info["driver"] = driver.decode() if isinstance(driver, bytes) else driver
        pynvml.nvmlShutdown()
    except Exception as error:  # the driver's version is provenance, not a requirement
        try:
            info["driver"] = subprocess.run(
                ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                capture_output=True, text=True, check=True).stdout.strip().splitlines()[0]
        except Exception:
            info["driver"] = f"unknown ({error})"
    return info


def write(out, rows, report):
    with open(out / "cuda_mapsize.csv", "w", newline="") as f:
        keys = list(CSV_COLUMNS)
        if rows:  # the settings and figures beside the columns, after them
            keys += [k for k in rows[0] if k not in CSV_COLUMNS and k != "samples_ms"]
        writer = csv.DictWriter(f, fieldnames=keys, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    with open(out / "cuda_mapsize.json", "w") as f:
        json.dump(report, f, indent=1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="folder for the CSV and JSON")
    parser.add_argument("--sizes", type=int, nargs="+",
                        default=[1024, 2048, 4096, 8192, 16384, 32768, 65536],
                        help="map sides, cells (default 1024 to 65536, doubling)")
    parser.add_argument("--droplets", type=int, default=4194304,
                        help="droplets, all in one launch (default 4,194,304)")
    parser.add_argument("--seed", type=int, default=1,
                        help="terrain seed and droplet seed, as vkerode's seed (default 1)")
    parser.add_argument("--block", type=int, default=64, help="threads per block (default 64)")
    parser.add_argument("--warmup", type=int, default=2, help="untimed launches (default 2)")
    parser.add_argument("--reps", type=int, default=5, help="timed launches (default 5)")
    parser.add_argument("--math", choices=["auto", "accurate", "approx"], default="auto",
                        help="terrain.cu's exp/sin/cos: auto takes the one the terrain check "
                             "found closer to vkerode's (accurate without a check)")
    parser.add_argument("--vkerode", type=Path,
                        help="a vkerode binary that opens this GPU: compare the terrains first")
    parser.add_argument("--check-size", type=int, default=1024,
                        help="map side of the terrain check (default 1024)")
    args = parser.parse_args()
    if args.block <= 0 or args.droplets <= 0 or args.reps <= 0 or args.warmup < 0:
        sys.exit("--block, --droplets and --reps must be positive, --warmup at least 0")
    for size in args.sizes:
        if size < 4 or size > 65536:
            sys.exit(f"size {size}: vkerode's noise maps are 4 to 65536 cells a side")
    args.out.mkdir(parents=True, exist_ok=True)

    device = dict(device_info(), started_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    log(f"device: {device}")
    report = dict(device=device, params=PARAMS, seed=args.seed, droplets=args.droplets,
                  block=args.block, warmup=args.warmup, reps=args.reps,
                  build="droplet.cu -fmad=false -DWIDE (timed); -DWIDE -DCOUNT_STEPS (counted)",
                  sizes=[], failed=[])

    check = None
    if args.vkerode is not None:
        try:
            check = terrain_check(args.vkerode, args.check_size, args.seed, args.out)
        except Exception as error:
            check = dict(error=str(error))
            log(f"  terrain check failed: {error}")
    report["terrain_check"] = check
    math = args.math
    if math == "auto":
        math = "accurate"
        if check and "error" not in check and \
                check["approx"]["fixed_identical_share"] > check["accurate"]["fixed_identical_share"]:
            math = "approx"
    report["terrain_math"] = math
    log(f"terrain: terrain.cu with {math} exp/sin/cos (-fmad=false)")

    terrain = terrain_kernel(math)
    kernels = (yardstick.kernel("droplet", ("-DWIDE", "-DCOUNT_STEPS")),
               yardstick.kernel("droplet", ("-DWIDE",)), change_kernel())
    rows = []
    for size in args.sizes:
        need = 2 * 4 * size * size
        free, total = cp.cuda.runtime.memGetInfo()
        if need > free:
            report["failed"].append(dict(size=size, error=f"needs {need / 2**30:.1f} GiB of GPU "
                                         f"memory, {free / 2**30:.1f} GiB free"))
            log(f"size {size}: skipped, {report['failed'][-1]['error']}")
            continue
        began = time.monotonic()
        try:
            row = measure(size, args, kernels, terrain)
        except (cp.cuda.memory.OutOfMemoryError, RuntimeError, cp.cuda.runtime.CUDARuntimeError) as error:
            report["failed"].append(dict(size=size, error=str(error)))
            log(f"size {size}: failed: {error}")
            cp.get_default_memory_pool().free_all_blocks()
            continue
        row["wall_s"] = time.monotonic() - began
        rows.append(row)
        report["sizes"].append(row)
        log(f"size {size}: {row['steps']} droplet-steps, median {row['gpu_ms_median']:.3f} ms "
            f"(q1 {row['gpu_ms_q1']:.3f}, q3 {row['gpu_ms_q3']:.3f}, {row['reps']} reps): "
            f"{row['g_steps_per_s']:.3f} G droplet-steps/s; net change {row['net_change']:.3f} "
            f"height units x cells (counted run {row['net_change_counted']:.3f}); terrain "
            f"{row['terrain_ms']:.1f} ms; {row['wall_s']:.1f} s in all")
        write(args.out, rows, report)
    registers = dict(counted=kernels[0].num_regs, timed=kernels[1].num_regs)
    report["registers"] = registers
    report["finished_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    write(args.out, rows, report)
    log(f"wrote {args.out / 'cuda_mapsize.csv'} and cuda_mapsize.json "
        f"({len(rows)} sizes, {len(report['failed'])} failed; registers {registers})")
    if not rows:
        sys.exit("no size was measured")


if __name__ == "__main__":
    main()
