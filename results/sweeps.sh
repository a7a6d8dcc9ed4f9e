#!/usr/bin/env bash
# Every sweep of experiments/ on the default device, its atomic peak rates, and the
# charts, into RESULTS_ROOT/<experiment>/<device>/:
#   results/sweeps.sh [RESULTS_ROOT] [--small]
# On the NVIDIA H200 (results/core-h200/README.md says how to reach it) run it as is.
# --small shrinks every sweep to what lavapipe on two CPU cores can take; the
# overrides are recorded in each meta.json.
set -euo pipefail
bin=${VKERODE:-./target/release/vkerode}
root=${1:-results}
small=${2:-}
slug=$("$bin" devices | head -1 | sed 's/^\[[0-9]*\] //' | tr 'A-Z' 'a-z' | sed 's/[^a-z0-9]\{1,\}/-/g; s/^-//; s/-$//')

sweep() { # experiment, overrides for --small...
    local exp=$1; shift
    local sets=()
    if [ "$small" = --small ]; then
        sets=(--set measure.min_reps=5 --set measure.time_budget_s=5)
        for s in "$@"; do sets+=(--set "$s"); done
    fi
    "$bin" sweep "experiments/$exp.toml" --results "$root" --quiet "${sets[@]}"
}
plot() { # experiment, chart name, plot arguments...
    local exp=$1 name=$2; shift 2
    "$bin" plot "$root/$exp/$slug/points.csv" --out "$root/$exp/$slug/$name" "$@"
}

"$bin" peak --out "$root/peak/$slug"

sweep workgroup fixed.size=1024 fixed.droplets=1000000
plot workgroup chart --x workgroup

sweep mapsize fixed.droplets=1000000 'axes.size=[256,512,1024,2048]'
plot mapsize chart --x size
plot mapsize percent-of-peak --x size --y percent_of_peak

sweep atomics fixed.size=512 fixed.droplets=200000
plot atomics chart --x scale --series atomics
plot atomics truncated-mass --x scale --y mass_truncated --series atomics
plot atomics lost-mass --x scale --y mass_lost --series atomics

sweep batching fixed.size=512 fixed.droplets=200000
for phases in 1 4 9; do
    plot batching "chart-phases-$phases" --x tile --series tile_order --where "phases=$phases"
done
plot batching conflicts --x tile --y subgroup_conflicts_per_1000 --series tile_order --where phases=1

sweep droplets fixed.size=1024 'axes.droplets=[1024,4096,16384,65536,262144,1048576]'
plot droplets chart --x droplets
