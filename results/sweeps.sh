#!/usr/bin/env bash
# Every sweep of experiments/ on the default device, its atomic peak rates, and the
# charts, into RESULTS_ROOT/<experiment>/<device>/:
#   results/sweeps.sh [RESULTS_ROOT] [--small] [EXPERIMENT...]
# With experiment names, only those run ("peak" is the atomic peak table and the cache
# microbenchmark). results/l1/run.sh runs the L1 study, CUDA yardstick included. With
# PLOTS_ONLY=1 nothing runs: the charts are redrawn from the points.csv files already
# there; SLUG=nvidia-h200 picks the device folder (default: the default device).
# On the NVIDIA H200 (results/core-h200/README.md says how to reach it) run it as is.
# --small shrinks every sweep to what lavapipe on two CPU cores can take; the
# overrides are recorded in each meta.json.
set -euo pipefail
bin=${VKERODE:-./target/release/vkerode}
root=${1:-results}
small=
if [ "${2:-}" = --small ]; then small=--small; shift; fi
shift || true
only=("$@")
slug=${SLUG:-$("$bin" devices | head -1 | sed 's/^\[[0-9]*\] //' | tr 'A-Z' 'a-z' | sed 's/[^a-z0-9]\{1,\}/-/g; s/^-//; s/-$//')}

sweep() { # experiment, overrides for --small...
    local exp=$1; shift
    if [ -n "${PLOTS_ONLY:-}" ]; then return; fi
    local sets=()
    if [ "$small" = --small ]; then
        sets=(--set measure.warmup=1 --set measure.min_reps=3 --set measure.max_reps=10 --set measure.time_budget_s=2)
        for s in "$@"; do sets+=(--set "$s"); done
    fi
    "$bin" sweep "experiments/$exp.toml" --out "$root/{experiment}/{device}" --quiet "${sets[@]}"
}
plot() { # experiment, chart name, plot arguments...
    local exp=$1 name=$2; shift 2
    "$bin" plot "$root/$exp/$slug/points.csv" --out "$root/$exp/$slug" --name "$name" "$@"
}

run_peak() {
    if [ -n "${PLOTS_ONLY:-}" ]; then return; fi
    "$bin" peak --out "$root/peak/$slug"
}

run_workgroup() {
    sweep workgroup fixed.size=512 fixed.droplets=200000 'axes.workgroup=[16,32,64,256]'
    plot workgroup chart --x workgroup --series variant
}

run_mapsize() {
    sweep mapsize fixed.droplets=200000 fixed.batch=16384 'axes.size=[256,512,1024]'
    plot mapsize chart --x size
    plot mapsize percent-of-peak --x size --y percent_of_peak
}

run_atomics() {
    sweep atomics fixed.size=512 fixed.droplets=200000
    plot atomics chart --x scale --series atomics
    plot atomics truncated-mass --x scale --y mass_truncated --series atomics
    plot atomics lost-mass --x scale --y mass_lost --series atomics
}

run_batching() {
    sweep batching fixed.size=512 fixed.droplets=200000
    for phases in 1 4 9; do
        plot batching "chart-phases-$phases" --x tile --series tile_order --where "phases=$phases"
    done
    plot batching conflicts --x tile --y subgroup_conflicts_per_1000 --series tile_order --where phases=1
}

run_droplets() {
    sweep droplets fixed.size=512 'axes.droplets=[1024,4096,16384,65536,262144]'
    plot droplets chart --x droplets
}

run_stagger() {
    sweep stagger fixed.size=512 fixed.droplets=200000 'axes.passes=[1,2,5,30]'
    for k in 16 64; do
        plot stagger "chart-batches-$k" --x passes --series stagger --where "batches=$k"
        plot stagger "conflicts-batches-$k" --x passes --y subgroup_conflicts_per_1000 --series stagger --where "batches=$k"
    done
    plot stagger hits-max --x passes --y hits_max --series stagger --where batches=16
}

run_determinism() {
    sweep determinism 'axes.size=[256,512]' fixed.droplets=50000
    plot determinism chart --x size --series atomics
    plot determinism rerun-cells --x size --y rerun_cells_differing --series atomics
}

run_stability() {
    sweep stability fixed.size=256 fixed.droplets=16384 'axes.batch=[16,64,256,1024,4096,16384]'
    for passes in 1 5; do
        plot stability "max-change-passes-$passes" --x in_flight_per_cell --y max_cell_change --series atomics --where "passes=$passes"
    done
}

run_fast() {
    sweep fast fixed.size=512 fixed.droplets=200000 'axes.tile=[512,128]'
    for wg in 8 16 64; do
        plot fast "chart-workgroup-$wg" --x tile --series variant --where "workgroup=$wg"
    done
}

run_terrain() {
    sweep terrain fixed.size=512 fixed.droplets=200000 'axes.relief=[1024.0,256.0,32.0]'
    plot terrain chart --x relief --series variant
    plot terrain hits-max --x relief --y hits_max --series variant
}

run_ideas() {
    sweep ideas fixed.size=512 fixed.droplets=200000 'axes.workgroup=[16,64]'
    for spirv in verbatim optimised; do
        plot ideas "chart-$spirv" --x workgroup --series variant --where "spirv=$spirv"
    done
}

run_occupancy() {
    sweep occupancy fixed.size=512 fixed.droplets=200000 'axes.shared_kib=[0,16,32]'
    plot occupancy chart --x shared_kib --series variant
}

run_levers() {
    sweep levers fixed.size=512 fixed.droplets=200000 'axes.workgroup=[16,64]'
    for variant in paper fast; do
        plot levers "chart-$variant" --x workgroup --series lever --where "variant=$variant"
        plot levers "max-change-$variant" --x workgroup --y max_cell_change --series lever --where "variant=$variant"
    done
}

run_locality() {
    sweep locality fixed.size=512 fixed.droplets=200000 'axes.workgroup=[16,64]'
    for lever in none image-atomics image; do
        plot locality "chart-$lever" --x workgroup --series variant --where shared_kib=0 --where "lever=$lever"
    done
    plot locality chart-shared-8 --x workgroup --series variant --where shared_kib=8 --where lever=none
}

run_locality_tiled() {
    sweep locality-tiled fixed.size=512 fixed.droplets=200000 'axes.tile=[512,128]'
    for wg in 8 16; do
        plot locality-tiled "chart-workgroup-$wg" --x tile --series variant --where "workgroup=$wg" --where lever=none
    done
}

run_image_lever() {
    sweep image-lever fixed.size=512 fixed.droplets=200000 'axes.workgroup=[16,64]'
    for batches in 16 1; do
        plot image-lever "chart-batches-$batches" --x workgroup --series variant --where shared_kib=0 --where "batches=$batches"
    done
    plot image-lever chart-occupancy --x shared_kib --series variant --where workgroup=64 --where batches=16
}

run_physics() { # no chart: its axes are not numbers; results/README.md has the table
    sweep physics fixed.size=256 fixed.droplets=65536
}

wanted() { [ ${#only[@]} -eq 0 ] || [[ " ${only[*]} " == *" $1 "* ]]; }
for experiment in peak workgroup mapsize atomics batching droplets stagger determinism stability fast terrain ideas occupancy levers locality locality-tiled image-lever physics; do
    if wanted "$experiment"; then
        echo "== $experiment"
        "run_${experiment//-/_}"
    fi
done
