#!/usr/bin/env bash
# Every sweep of experiments/ on one device, its atomic peak rates, and the charts:
#   results/sweeps.sh [RESULTS_ROOT] [--set ... overrides passed to every sweep]
# On the NVIDIA H200 (see results/core-h200/README.md for reaching it) run it as is.
# On lavapipe, shrink the sweeps to what a CPU can take:
#   results/sweeps.sh results --set fixed.droplets=1000000 --set fixed.size=1024 \
#       --set 'axes.size=[256,512,1024,2048]' --set measure.min_reps=5

set -euo pipefail
bin=${VKERODE:-./target/release/vkerode}
root=${1:-results}
shift || true
slug=$("$bin" devices | head -1 | sed 's/^\[[0-9]*\] //' | tr 'A-Z' 'a-z' | sed 's/[^a-z0-9]\{1,\}/-/g; s/^-//; s/-$//')
"$bin" peak --out "$root/peak/$slug"
for exp in workgroup mapsize; do
    # Overrides of axes this experiment does not sweep are dropped.
    sets=()
    for arg in "$@"; do
        case "$arg" in
            --set) ;;
            axes.size=*) [ "$exp" = mapsize ] && sets+=(--set "$arg") ;;
            fixed.size=*) [ "$exp" = mapsize ] || sets+=(--set "$arg") ;;
            *) sets+=(--set "$arg") ;;
        esac
    done
    "$bin" sweep "experiments/$exp.toml" --results "$root" --quiet "${sets[@]}"
done
"$bin" plot "$root/workgroup/$slug/points.csv" --x workgroup --out "$root/workgroup/$slug/chart"
"$bin" plot "$root/mapsize/$slug/points.csv" --x size --out "$root/mapsize/$slug/chart"
"$bin" plot "$root/mapsize/$slug/points.csv" --x size --y percent_of_peak --out "$root/mapsize/$slug/percent-of-peak"
