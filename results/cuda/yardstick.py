#!/usr/bin/env python3
"""The CUDA yardstick: the paper's droplet kernel built from CUDA (droplet.cu), on the
same GPU, terrain and droplets as vkerode, with the L1/shared-memory carveout as a
switch, and the cache microbenchmark's pointer chase at each carveout. It runs
vkerode's side of every comparison too and prints both, side by side.

Run from the repository root on a machine with an NVIDIA GPU, CuPy and numpy, with a
release build of vkerode that can open the GPU through Vulkan:

    python3 results/cuda/yardstick.py [--vkerode target/release/vkerode] [--out DIR]

It writes yardstick.json and CSVs into DIR (default results/cuda/<gpu>), and prints
the tables. Nothing here is a pass/fail check: these are measurements.
"""

import argparse
import csv
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import cupy as cp
import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
# The paper's parameters, as vkerode's defaults (src/erosion/params.rs).
PARAMS = dict(lifetime=30, inertia=0.05, capacity=4.0, erosion=0.3, deposition=0.3,
              evaporation=0.01, scale=1000.0)
SEED = 1
BLOCKS = [8, 16, 64, 256]
# cudaFuncAttributePreferredSharedMemoryCarveout: -1 leaves it to the driver; 0 asks
# for the most L1, 100 for the most shared memory (the least L1). The driver rounds a
# percentage up to the next shared-memory size the chip offers (on Hopper 0, 8, 16, 32,
# 64, 100, 132, 164, 196 or 228 KiB of 256), so the steps between give the throughput
# against L1 size, which the chase measures at each.
CARVEOUTS = [("default", -1), ("0%", 0), ("25%", 25), ("50%", 50), ("60%", 60), ("75%", 75),
             ("100%", 100)]
KERNELS = {
    "paper": (),
    "paper, ld.cg (no L1)": ("-DLOAD_CG",),
    "skip-zero": ("-DSKIP_ZERO",),
}
NODE_BYTES = 128
WARM_NODES = 4096
CHASE_STEPS = 16384


def droplet_rate(row):
    """A points.csv row's droplet-steps/s: `droplet_steps_per_s`, or `steps_per_s` in files
    from before vkerode's schema 2."""
    return float(row.get("droplet_steps_per_s") or row["steps_per_s"])


def log(*args):
    print(*args, flush=True)


def run(cmd):
    log("$", " ".join(str(c) for c in cmd))
    done = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{cmd[0]} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return done.stdout


def kernel(name, defines=()):
    source = (HERE / "droplet.cu").read_text()
    return cp.RawKernel(source, name, options=("-fmad=false",) + tuple(defines))


def median_ms(launch, reset=lambda: None, warmup=3, reps=15):
    start, end = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for rep in range(warmup + reps):
        reset()
        start.record()
        launch()
        end.record()
        end.synchronize()
        if rep >= warmup:
            times.append(cp.cuda.get_elapsed_time(start, end))
    return float(np.median(times)), times


def droplet_args(heights, size, droplets, counter):
    p = PARAMS
    return (heights, np.int32(size), np.int32(size), np.int32(p["lifetime"]),
            np.float32(p["inertia"]), np.float32(p["capacity"]), np.float32(p["erosion"]),
            np.float32(p["deposition"]), np.float32(p["evaporation"]), np.float32(p["scale"]),
            np.uint32(SEED), np.uint32(droplets), counter)


def kernel_stats(kernel):
    return dict(registers=kernel.num_regs, local_bytes=kernel.local_size_bytes,
                shared_bytes=kernel.shared_size_bytes)


def cuda_throughput(initial, size, droplets):
    """G droplet-steps/s of each CUDA kernel at each block size and carveout."""
    heights = cp.empty_like(initial)
    counter = cp.zeros(64, dtype=cp.uint64)
    counted = kernel("droplet", ("-DCOUNT_STEPS",))
    rows = []
    for name, defines in KERNELS.items():
        timed = kernel("droplet", defines)
        for block in BLOCKS:
            grid = (droplets + block - 1) // block
            counter.fill(0)
            heights[...] = initial
            counted((grid,), (block,), droplet_args(heights, size, droplets, counter))
            cp.cuda.Device().synchronize()
            steps = int(counter.sum())
            for label, carveout in CARVEOUTS:
                timed.preferred_shared_memory_carveout = carveout
                ms, samples = median_ms(
                    lambda: timed((grid,), (block,), droplet_args(heights, size, droplets, counter)),
                    reset=lambda: heights.__setitem__(Ellipsis, initial))
                rows.append(dict(kernel=name, block=block, carveout=label, steps=steps,
                                 gpu_ms=ms, g_steps_per_s=steps / (ms * 1e-3) / 1e9,
                                 **erosion_figures(heights, initial), samples_ms=samples,
                                 **kernel_stats(timed)))
                log(f"  CUDA {name:22} block {block:4} carveout {label:8} "
                    f"{rows[-1]['g_steps_per_s']:6.2f} G steps/s ({timed.num_regs} registers), "
                    f"total change {rows[-1]['total_height_change']:.0f}, "
                    f"largest cell change {rows[-1]['max_cell_change']:.0f}")
    return rows


def erosion_figures(heights, initial):
    """What the last run did to the terrain, in height units, as vkerode's points.csv
    reports it: the total change and the largest change of one cell."""
    change = heights.astype(cp.int64) - initial.astype(cp.int64)
    return dict(total_height_change=float(change.sum()) / PARAMS["scale"],
                max_cell_change=float(cp.abs(change).max()) / PARAMS["scale"])


def chain(nodes, rng):
    words = np.zeros(nodes * (NODE_BYTES // 4), dtype=np.uint32)
    order = rng.permutation(nodes).astype(np.uint32)
    words[order * (NODE_BYTES // 4)] = np.roll(order, -1) * (NODE_BYTES // 4)
    return words


def cuda_chase(max_bytes):
    """ns per dependent load against working set, at each carveout, plus __ldg."""
    plain = kernel("chase")
    readonly = kernel("chase", ("-DREADONLY",))
    touch = kernel("touch")
    sink = cp.zeros(4, dtype=cp.uint32)
    rng = np.random.default_rng(1)
    paths = [(f"carveout {label}", plain, carveout) for label, carveout in CARVEOUTS]
    paths.append(("__ldg, carveout default", readonly, -1))
    paths.append(("atomicAdd each step, carveout default", kernel("chase", ("-DEXEC_ATOMIC",)), -1))
    rows = []
    for size in working_sets(max_bytes):
        nodes = size // NODE_BYTES
        data = cp.asarray(chain(nodes, rng))
        warm = np.uint32(min(nodes, WARM_NODES))
        for label, chaser, carveout in paths:
            chaser.preferred_shared_memory_carveout = carveout

            def timed(steps):
                def reset():
                    touch((1,), (256,), (data, np.uint32(size // 16), sink))
                return median_ms(lambda: chaser((1,), (1,), (data, warm, np.uint32(steps), sink)),
                                 reset=reset, warmup=1, reps=5)[0]

            extra = timed(2 * CHASE_STEPS) - timed(CHASE_STEPS)
            rows.append(dict(path=label, working_set_bytes=size,
                             latency_ns=extra * 1e6 / CHASE_STEPS))
        log(f"  CUDA chase {size >> 10:8} KiB: " + ", ".join(
            f"{r['path']} {r['latency_ns']:.0f} ns" for r in rows[-len(paths):]))
    return rows


def working_sets(max_bytes):
    """vkerode's working sets (CacheProbeSize::working_sets): 4 KiB doubling, plus
    32 KiB steps from 64 to 512 KiB."""
    sets = {4096 << k for k in range(20) if 4096 << k <= max_bytes}
    sets |= {k * (32 << 10) for k in range(2, 17) if k * (32 << 10) <= max_bytes}
    return sorted(sets)


def read_raw(path, size):
    return np.fromfile(path, dtype=np.float32).reshape(size, size)


def one_droplet_agreement(vkerode, initial, size, out):
    """The cells where one CUDA droplet and one vkerode droplet leave different heights."""
    run([vkerode, "erode", "--size", size, "--seed", SEED, "--droplets", 1, "--format", "raw",
         "--no-images", "--out", out / "one-droplet"])
    vk_after = read_raw(out / "one-droplet" / "after.raw", size)
    heights = initial.copy()
    counter = cp.zeros(64, dtype=cp.uint64)
    kernel("droplet")((1,), (64,), droplet_args(heights, size, 1, counter))
    # vkerode exports c as f32 / scale; the same division here gives the same bits.
    scale = np.float32(PARAMS["scale"])
    cuda_after = cp.asnumpy(heights).astype(np.float32) / scale
    before = cp.asnumpy(initial).astype(np.float32) / scale
    changed = int(np.count_nonzero(cuda_after != before))
    differing = int(np.count_nonzero(cuda_after.view(np.uint32) != vk_after.view(np.uint32)))
    largest = float(np.max(np.abs(cuda_after - vk_after))) * PARAMS["scale"]
    return dict(cells_changed_by_cuda=changed, cells_differing=differing,
                largest_difference_fixed_units=largest)


def vkerode_side(vkerode, size, droplets, out, peak):
    """vkerode's sweep of the same job, and its cache microbenchmark (from `peak`, a
    `vkerode peak --out` folder, if given; else measured now)."""
    run([vkerode, "sweep", REPO / "experiments" / "cuda-yardstick.toml", "--out",
         out / "vkerode" / "sweep", "--quiet", "--set", f"fixed.size={size}",
         "--set", f"fixed.droplets={droplets}", "--set", f"fixed.batch={droplets}"])
    with open(out / "vkerode" / "sweep" / "points.csv") as f:
        sweep = list(csv.DictReader(f))
    if peak is None:
        peak = out / "vkerode-peak"
        run([vkerode, "peak", "--cache-only", "--out", peak])
    with open(peak / "cache_latency.csv") as f:
        chase = list(csv.DictReader(f))
    return sweep, chase


def stat(summary, name):
    match = re.search(re.escape(name) + r"=([^;]+)", summary or "")
    return match.group(1) if match else "-"


def print_tables(cuda, vk_sweep, cuda_chase_rows, vk_chase, agreement):
    log("\nG droplet-steps/s, one launch (CUDA) or dispatch (vkerode), "
        f"{vk_sweep[0]['droplets']} droplets on {vk_sweep[0]['size']}², lifetime 30:")
    def label(r):
        return r["variant"] if r["lever"] == "none" else f"{r['variant']}, {r['lever']}"

    variants = list(dict.fromkeys(label(r) for r in vk_sweep))
    head = ["block"] + [f"CUDA {k} [{c}]" for k in KERNELS for c, _ in CARVEOUTS] + \
        [f"vkerode {v}" for v in variants]

    def table(cuda_cell, vk_cell):
        log(" | ".join(head))
        for block in BLOCKS:
            cells = [str(block)]
            for k in KERNELS:
                for c, _ in CARVEOUTS:
                    cells.append(cuda_cell(next(r for r in cuda if r["kernel"] == k
                                                and r["block"] == block and r["carveout"] == c)))
            for v in variants:
                r = next((r for r in vk_sweep if label(r) == v and int(r["workgroup"]) == block), None)
                cells.append("-" if r is None else vk_cell(r))
            log(" | ".join(cells))

    table(lambda r: f"{r['g_steps_per_s']:.2f} ({r['registers']} reg)",
          lambda r: f"{droplet_rate(r) / 1e9:.2f} ({stat(r['compiler_stats'], 'Register Count')} reg)")
    log("\nWhat the same runs did to the terrain: total height change / largest change of one cell:")
    table(lambda r: f"{r['total_height_change']:.0f} / {r['max_cell_change']:.0f}",
          lambda r: f"{float(r['total_height_change']):.0f} / {float(r['max_cell_change']):.0f}")

    log("\nDependent-load latency, ns per load, against working set (one thread):")
    cuda_paths = list(dict.fromkeys(r["path"] for r in cuda_chase_rows))
    vk_paths = list(dict.fromkeys(r["path"] for r in vk_chase))
    log(" | ".join(["working set"] + [f"CUDA {p}" for p in cuda_paths] + [f"vkerode {p}" for p in vk_paths]))
    for size in sorted({r["working_set_bytes"] for r in cuda_chase_rows}):
        cells = [f"{size >> 10} KiB"]
        for p in cuda_paths:
            r = next(r for r in cuda_chase_rows if r["path"] == p and r["working_set_bytes"] == size)
            cells.append(f"{r['latency_ns']:.0f}")
        for p in vk_paths:
            r = next((r for r in vk_chase if r["path"] == p and int(r["working_set_bytes"]) == size), None)
            cells.append("-" if r is None else f"{float(r['latency_ns']):.0f}")
        log(" | ".join(cells))
    log(f"\nOne droplet, CUDA against vkerode: {agreement}")


def write_csv(path, rows, skip=()):
    keys = [k for k in rows[0] if k not in skip]
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=keys, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vkerode", default=str(REPO / "target" / "release" / "vkerode"))
    parser.add_argument("--size", type=int, default=4096)
    parser.add_argument("--droplets", type=int, default=4194304)
    parser.add_argument("--chase-max-bytes", type=int, default=256 << 20)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--vkerode-peak", type=Path,
                        help="a `vkerode peak --out` folder to take vkerode's chase from")
    args = parser.parse_args()

    props = cp.cuda.runtime.getDeviceProperties(0)
    gpu = props["name"].decode()
    out = args.out or HERE / re.sub(r"[^a-z0-9]+", "-", gpu.lower()).strip("-")
    out.mkdir(parents=True, exist_ok=True)
    device = dict(name=gpu, driver=cp.cuda.runtime.driverGetVersion(),
                  runtime=cp.cuda.runtime.runtimeGetVersion(),
                  sms=props["multiProcessorCount"], l2_bytes=props["l2CacheSize"],
                  shared_per_sm_bytes=props["sharedMemPerMultiprocessor"],
                  cupy=cp.__version__, started_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    log(f"device: {device}")

    terrain = out / "terrain.raw"
    run([args.vkerode, "terrain", "--size", args.size, "--seed", SEED, terrain])
    # int(h * scale) in float32, truncated toward zero: vkerode's Heightmap::to_fixed.
    fixed = (read_raw(terrain, args.size) * np.float32(PARAMS["scale"])).astype(np.int32)
    initial = cp.asarray(fixed)

    agreement = one_droplet_agreement(args.vkerode, initial, args.size, out)
    log(f"one droplet: {agreement}")
    cuda = cuda_throughput(initial, args.size, args.droplets)
    chase_rows = cuda_chase(args.chase_max_bytes)
    vk_sweep, vk_chase = vkerode_side(args.vkerode, args.size, args.droplets, out,
                                      args.vkerode_peak)

    print_tables(cuda, vk_sweep, chase_rows, vk_chase, agreement)
    write_csv(out / "cuda_throughput.csv", cuda, skip=("samples_ms",))
    write_csv(out / "cuda_chase.csv", chase_rows)
    with open(out / "yardstick.json", "w") as f:
        json.dump(dict(device=device, params=PARAMS, seed=SEED, size=args.size,
                       droplets=args.droplets, one_droplet=agreement, cuda_throughput=cuda,
                       cuda_chase=chase_rows), f, indent=1)
    for name in ("terrain.raw", "terrain.raw.json"):
        (out / name).unlink(missing_ok=True)
    os.system(f"rm -rf '{out / 'one-droplet'}'")


if __name__ == "__main__":
    main()
