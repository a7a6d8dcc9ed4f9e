#!/usr/bin/env bash
# The L1 study on a real GPU, in one go: the device and its compiler statistics for
# every kernel variant, the atomic peaks and the cache microbenchmark, the lever and
# locality sweeps, and the CUDA yardstick (results/cuda/yardstick.py, which needs CuPy).
# From the repository root, with a release build:
#   results/l1/run.sh [RESULTS_ROOT]        (default: results)
# Each step goes on if an earlier one failed; the log says which did.
set -uo pipefail
root=${1:-results}
bin=${VKERODE:-./target/release/vkerode}
slug=$("$bin" devices | head -1 | sed 's/^\[[0-9]*\] //' | tr 'A-Z' 'a-z' | sed 's/[^a-z0-9]\{1,\}/-/g; s/^-//; s/-$//')
dest=$root/l1/$slug
mkdir -p "$dest"

step() { # name, command...
    local name=$1; shift
    echo "== $name: $*"
    local started=$SECONDS
    "$@" || echo "!! $name failed with status $?"
    echo "== $name took $((SECONDS - started)) s"
}

step gpu-state sh -c "nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv > '$dest/gpu-state-before.csv' 2>&1 || true"
step devices sh -c "'$bin' devices > '$dest/devices.txt'"
step kernels "$bin" kernels --variant paper,fast-skip-only,fast,fast-quads --workgroup 8,16,64,256 \
    --lever none,no-shared,readonly,texel,image-atomics,vulkan-memory-model,robustness-off \
    --out "$dest/kernel-statistics.csv"
step peak "$bin" peak --out "$root/peak/$slug"
step levers "$bin" sweep experiments/levers.toml --results "$root" --quiet
step yardstick python3 results/cuda/yardstick.py --vkerode "$bin" --out "$root/cuda/$slug" \
    --vkerode-peak "$root/peak/$slug"
step locality "$bin" sweep experiments/locality.toml --results "$root" --quiet
step locality-tiled "$bin" sweep experiments/locality-tiled.toml --results "$root" --quiet
step gpu-state sh -c "nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv > '$dest/gpu-state-after.csv' 2>&1 || true"
