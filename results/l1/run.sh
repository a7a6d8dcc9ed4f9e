#!/usr/bin/env bash
# The L1 study on a real GPU: the device and the compiler statistics of every kernel
# variant, the atomic peaks and the cache microbenchmark, the lever, image-lever and
# locality sweeps, the CUDA yardstick (results/cuda/yardstick.py, which needs CuPy), and
# whether a lone droplet leaves the same heights through every lever on this device.
# From the repository root, with a release build:
#   results/l1/run.sh [RESULTS_ROOT] [STEP...]     (default: results, every step)
# Steps: kernels peak levers image-lever yardstick locality lone-droplet. Each step goes
# on if an earlier one failed; the log says which did.
set -uo pipefail
root=${1:-results}
shift || true
only=("$@")
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
wanted() { [ ${#only[@]} -eq 0 ] || [[ " ${only[*]} " == *" $1 "* ]]; }
gpu_state() {
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw \
        --format=csv > "$dest/gpu-state-$1.csv" 2>&1 || true
}

# One droplet on a 1024^2 map (LONE_SIZE) through each lever (LONE_LEVERS) and kernel;
# "same" where its heights are those of the paper's kernel as built, bit for bit.
lone_droplet() {
    local out=$root/l1/tmp-lone
    "$bin" erode --size ${LONE_SIZE:-1024} --droplets 1 --format raw --no-images --out "$out/reference" > /dev/null
    echo "variant,lever,heights" > "$dest/lone-droplet.csv"
    for variant in paper fast-skip-only fast; do
        for lever in ${LONE_LEVERS:-none no-shared readonly texel image-atomics image vulkan-memory-model robustness-off}; do
            "$bin" erode --size ${LONE_SIZE:-1024} --droplets 1 --variant $variant --lever $lever --format raw \
                --no-images --out "$out/run" > /dev/null || continue
            if cmp -s "$out/run/after.raw" "$out/reference/after.raw"; then verdict=same; else verdict=different; fi
            echo "$variant,$lever,$verdict" | tee -a "$dest/lone-droplet.csv"
        done
    done
    rm -rf "$out"
}

gpu_state before
wanted kernels && step devices sh -c "'$bin' devices > '$dest/devices.txt'"
wanted kernels && step kernels "$bin" kernels --variant paper,fast-skip-only,fast,fast-quads \
    --workgroup 8,16,64,256 \
    --lever none,no-shared,readonly,texel,image-atomics,image,vulkan-memory-model,robustness-off \
    --out "$dest/kernel-statistics.csv"
wanted peak && step peak "$bin" peak --out "$root/peak/$slug"
wanted levers && step levers "$bin" sweep experiments/levers.toml --out "$root/{experiment}/{device}" --quiet
wanted image-lever && step image-lever "$bin" sweep experiments/image-lever.toml --out "$root/{experiment}/{device}" --quiet
wanted yardstick && step yardstick python3 results/cuda/yardstick.py --vkerode "$bin" \
    --out "$root/cuda/$slug" --vkerode-peak "$root/peak/$slug"
wanted locality && step locality "$bin" sweep experiments/locality.toml --out "$root/{experiment}/{device}" --quiet
wanted locality && step locality-tiled "$bin" sweep experiments/locality-tiled.toml --out "$root/{experiment}/{device}" --quiet
wanted lone-droplet && step lone-droplet lone_droplet
gpu_state after
