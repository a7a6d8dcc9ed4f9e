#!/usr/bin/env bash
# Issue #22 on the H200: did the one interface change a measured path or an answer?
#   results/redesign-22/run.sh OUT BASE_BINARY [PART...]
# PARTs: sweeps, stepped, ab, deterministic, thermal, grids (default: all six).
# 1. The paper's kernel and the fast kernel at workgroups 8 and 64 (a subset of
#    experiments/workgroup.toml), and the grid's fused f32 16x16 variant (a point of
#    experiments/pipes.toml), swept with this binary and compared with the committed
#    sweeps (the verdicts weigh only within-session noise: between sessions small
#    workgroups move by several percent, docs/findings/workgroup-and-occupancy.md).
# 2. glsl/droplet.comp's main() is the paper's again and the corrected physics runs
#    droplet_stepped.comp: in deterministic mode (bit-identical reruns) the heights
#    after, paper and corrected physics, against BASE_BINARY (the build before #22).
# 3. A/B in one session: the same sweeps with BASE_BINARY and this binary (the
#    workgroup and pipes subsets, and results/redesign-22/physics-ab.toml), compared
#    point by point.
# 4. A/B of deterministic mode (results/redesign-22/deterministic-ab.toml), both builds
#    in one session: part 2's single erodes timed the stepped module's deterministic
#    kernel 26% slower than the build before #22's.
# 5. The thermal strategy's sweep (experiments/thermal.toml).
# 6. After the grid runners came to share their timing (src/erosion/steps.rs): the
#    pipes point of part 1 and thermal's two-pass variants at 32x8, against the
#    committed results/redesign-22/session-2 and results/thermal (another session).
set -uo pipefail
# A step that fails is logged in OUT/failed.txt and the others still run.
step() { "$@" || echo "failed ($?): $*" >> "$out/failed.txt"; }
out=$1
base=$2
shift 2
parts=${*:-sweeps stepped ab deterministic thermal grids}
wants() { [[ " $parts " == *" $1 "* ]]; }
bin=./target/release/vkerode
mkdir -p "$out"
step "$bin" devices > "$out/devices.txt"

if wants sweeps; then
step "$bin" sweep experiments/workgroup.toml --out "$out/sweeps/{experiment}/{device}" --quiet \
    --set 'axes.workgroup=[8,64]' > "$out/workgroup.txt" 2>&1
step "$bin" compare results/workgroup/nvidia-h200 "$out/sweeps/workgroup/nvidia-h200" \
    --out "$out/workgroup-compare.md" > /dev/null
step "$bin" sweep experiments/pipes.toml --out "$out/sweeps/{experiment}/{device}" --quiet \
    --set 'axes.pipes_fusion=["fused"]' --set 'axes.pipes_packing=["f32"]' \
    --set 'axes.pipes_workgroup=["16x16"]' > "$out/pipes.txt" 2>&1
step "$bin" compare results/pipes/nvidia-h200 "$out/sweeps/pipes/nvidia-h200" \
    --out "$out/pipes-compare.md" > /dev/null
fi

if wants stepped; then
    mkdir -p "$out/stepped"
    for physics in paper corrected; do
        for which in base new; do
            b=$bin
            [ "$which" = base ] && b=$base
            step "$b" erode --size 4096 --droplets 4194304 --deterministic --physics "$physics" \
                --no-images --format raw --out "$out/stepped/$physics-$which" --force \
                > "$out/stepped/$physics-$which.txt" 2>&1
        done
        if cmp -s "$out/stepped/$physics-base/after.raw" "$out/stepped/$physics-new/after.raw"; then
            echo "$physics: after.raw identical" >> "$out/stepped/verdict.txt"
        else
            echo "$physics: after.raw DIFFERS" >> "$out/stepped/verdict.txt"
        fi
        for which in base new; do
            cp "$out/stepped/$physics-$which/run.json" "$out/stepped/$physics-$which.json"
            rm -rf "$out/stepped/$physics-$which"
        done
    done
fi

if wants ab; then
    for which in base new; do
        b=$bin
        [ "$which" = base ] && b=$base
        step "$b" sweep experiments/workgroup.toml --out "$out/ab-$which/{experiment}/{device}" --quiet \
            --set 'axes.workgroup=[8,64]' > "$out/ab-$which-workgroup.txt" 2>&1
        step "$b" sweep experiments/pipes.toml --out "$out/ab-$which/{experiment}/{device}" --quiet \
            --set 'axes.pipes_fusion=["fused"]' --set 'axes.pipes_packing=["f32"]' \
            --set 'axes.pipes_workgroup=["16x16"]' > "$out/ab-$which-pipes.txt" 2>&1
        step "$b" sweep results/redesign-22/physics-ab.toml --out "$out/ab-$which/{experiment}/{device}" --quiet \
            > "$out/ab-$which-physics.txt" 2>&1
    done
    for exp in workgroup pipes physics-ab; do
        step "$bin" compare "$out/ab-base/$exp/nvidia-h200" "$out/ab-new/$exp/nvidia-h200" \
            --out "$out/ab-$exp.md" > /dev/null
    done
fi

if wants deterministic; then
    for which in base new; do
        b=$bin
        [ "$which" = base ] && b=$base
        step "$b" sweep results/redesign-22/deterministic-ab.toml --out "$out/ab-$which/{experiment}/{device}" --quiet \
            > "$out/ab-$which-deterministic.txt" 2>&1
    done
    step "$bin" compare "$out/ab-base/deterministic-ab/nvidia-h200" \
        "$out/ab-new/deterministic-ab/nvidia-h200" --out "$out/ab-deterministic-ab.md" > /dev/null
fi

if wants thermal; then
    step "$bin" sweep experiments/thermal.toml --out "$out/sweeps/{experiment}/{device}" --quiet > "$out/thermal.txt" 2>&1
fi

if wants grids; then
    step "$bin" sweep experiments/pipes.toml --out "$out/grids/{experiment}/{device}" --quiet \
        --set 'axes.pipes_fusion=["fused"]' --set 'axes.pipes_packing=["f32"]' \
        --set 'axes.pipes_workgroup=["16x16"]' > "$out/grids-pipes.txt" 2>&1
    step "$bin" compare results/redesign-22/session-2/ab-new/pipes/nvidia-h200 \
        "$out/grids/pipes/nvidia-h200" --out "$out/grids-pipes.md" > /dev/null
    step "$bin" sweep experiments/thermal.toml --out "$out/grids/{experiment}/{device}" --quiet \
        --set 'axes.thermal_fusion=["none"]' --set 'axes.thermal_workgroup=["32x8"]' \
        > "$out/grids-thermal.txt" 2>&1
    step "$bin" compare results/thermal/nvidia-h200 "$out/grids/thermal/nvidia-h200" \
        --out "$out/grids-thermal.md" > /dev/null
fi
