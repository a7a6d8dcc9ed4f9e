#!/usr/bin/env bash
# The physics study of results/README.md ("Physics and rounding") on the GPU machine,
# from the repository root with the loader set up (`. tools/use-gpu-loader.sh`):
#   results/physics/run.sh OUT [physics|landscape]...
# physics: experiments/physics.toml at 4096², erode pictures of paper and corrected
# physics at 1024² and their change maps side by side (erosion-paper-vs-corrected.png), and experiments/stability.toml re-judged against its baseline.
# landscape: atomics, batching and stagger again, with the landform and mass columns.
# Everything lands in OUT and OUT/physics.tar.gz (only erosion.png and run.json of
# the erode runs).
set -euo pipefail
out=${1:?usage: run.sh OUT [physics|landscape]...}
shift
parts=("${@:-physics landscape}")
bin=${VKERODE:-./target/release/vkerode}
mkdir -p "$out"
for part in ${parts[@]}; do
    case $part in
    physics)
        "$bin" sweep experiments/physics.toml --out "$out/sweeps/{experiment}/{device}" --quiet > "$out/physics.txt" 2>&1
        for physics in paper corrected; do
            "$bin" erode --size 1024 --droplets 1000000 --physics "$physics" \
                --out "$out/erode-$physics" --force > "$out/erode-$physics.txt" 2>&1
            rm -f "$out/erode-$physics"/b*.tif "$out/erode-$physics"/a*.tif "$out/erode-$physics"/*relief.png "$out/erode-$physics"/before_after.png
        done
        "$bin" maps "$out/erode-paper" "$out/erode-corrected" "$out/erosion-paper-vs-corrected.png" \
            --label "paper's physics" --label "corrected physics" --force > "$out/maps.txt" 2>&1
        rm -f "$out"/erode-*/erosion.tif
        "$bin" sweep experiments/stability.toml --out "$out/sweeps/{experiment}/{device}" --quiet > "$out/stability.txt" 2>&1
        ;;
    landscape)
        for e in atomics batching stagger; do
            "$bin" sweep "experiments/$e.toml" --out "$out/landscape/{experiment}/{device}" --quiet > "$out/$e.txt" 2>&1
        done
        ;;
    esac
done
tar -C "$out" -czf "$out/physics.tar.gz" $(cd "$out" && ls -d sweeps landscape erode-*/ 2>/dev/null)
