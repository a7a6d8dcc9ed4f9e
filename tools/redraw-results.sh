#!/usr/bin/env bash
# Draws again, from the CSVs committed in results/, every committed chart that is drawn
# from a CSV: the sweeps' throughput and figure charts (results/sweeps.sh's `vkerode
# plot` calls, with PLOTS_ONLY=1, on each device folder there is), the other folders'
# charts (each with the x, series and --where it was made with) and the strategies'
# dose.png (from dose.csv). Nothing is measured; no GPU is needed. Run from the
# repository root after `cargo build --release --example redraw_dose`:
#   tools/redraw-results.sh
# Pictures that need an erosion run (erosion.png, before_after.png, relief maps) are
# made by results/lavapipe/run.sh, results/core-h200/run.sh and `vkerode strategies`.
set -euo pipefail
bin=${VKERODE:-./target/release/vkerode}
redraw_dose=${REDRAW_DOSE:-./target/release/examples/redraw_dose}
plot() { "$bin" plot "$@" --quiet; }

# The sweeps of results/sweeps.sh: the experiments each device folder holds.
lavapipe="workgroup mapsize atomics batching droplets stagger determinism stability fast terrain ideas occupancy"
h200="$lavapipe levers locality locality-tiled image-lever"
PLOTS_ONLY=1 SLUG=llvmpipe-llvm-15-0-6-256-bits results/sweeps.sh results $lavapipe >/dev/null
PLOTS_ONLY=1 SLUG=nvidia-h200 results/sweeps.sh results $h200 >/dev/null
# The stability sweeps of the physics findings, drawn as results/sweeps.sh draws them.
PLOTS_ONLY=1 SLUG=llvmpipe-llvm-15-0-6-256-bits results/sweeps.sh results/physics/sweeps stability >/dev/null

# Folders outside results/sweeps.sh, each with the arguments its chart was made with.
plot results/mapsize-wide/*/points.csv --x size --series kernel \
    --out results/mapsize-wide --name steps-by-size
plot results/pipes-mapsize/nvidia-h200/points.csv --x size --series pipes_fusion \
    --out results/pipes-mapsize/nvidia-h200 --name cell-steps
for y in steps_per_s:neighbours-fusion percent_of_peak:percent-of-bandwidth; do
    plot results/thermal/nvidia-h200/points.csv --x thermal_neighbours --y "${y%%:*}" \
        --series thermal_fusion --where thermal_workgroup=32x8 \
        --out results/thermal/nvidia-h200 --name "${y##*:}"
done
plot results/time-split/batching-nvidia-h200/points.csv --x tile \
    --y contention_surcharge_percent --series phases \
    --out results/time-split/batching-nvidia-h200 --name surcharge-by-tile
plot results/time-split/nvidia-h200/points.csv --x workgroup --y replay_percent_of_run \
    --series variant --where lever=none \
    --out results/time-split/nvidia-h200 --name replay-percent-of-run-by-workgroup

# The strategies' trajectories, from each dose.csv: only the dose.png committed beside
# it is kept (a folder of maps only has none).
for csv in results/strategies/*/dose.csv; do
    dir=$(dirname "$csv")
    # nvidia-h200-before-40's dose.csv is of an older schema and has no chart.
    compgen -G "$dir/*/dose.png" >/dev/null || continue
    scratch=$(mktemp -d)
    cp "$csv" "$scratch/dose.csv"
    "$redraw_dose" "$scratch/dose.csv" >/dev/null
    for png in "$scratch"/*/dose.png; do
        terrain=$(basename "$(dirname "$png")")
        if [ -f "$dir/$terrain/dose.png" ]; then
            cp "$png" "$dir/$terrain/dose.png"
        fi
    done
    rm -r "$scratch"
done
echo "redrawn; git status results/ shows what changed"
