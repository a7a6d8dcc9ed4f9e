#!/usr/bin/env bash
# The session of this folder's README, on the GPU machine, from the repository root, the
# loader set up (`. tools/use-gpu-loader.sh`). Everything lands in OUT and in
# OUT/state-and-compare.tar, whose nesting survives transfers that drop deep folders.
set -euo pipefail
out=${1:?usage: run.sh OUT}
bin=${VKERODE:-./target/release/vkerode}
mkdir -p "$out"
nvidia-smi -q -d CLOCK > "$out/clocks.txt" 2>&1 || true
{ nvidia-smi -lgc 1980; echo "rc=$?"; nvidia-smi -rgc; echo "rc=$?"; } > "$out/lock-test.txt" 2>&1 || true
"$bin" sweep experiments/workgroup.toml --out "$out/fresh/{experiment}/{device}" --quiet \
    --markdown "$out/workgroup-summary.md" > "$out/sweep.txt" 2>&1
"$bin" compare results/workgroup/nvidia-h200 "$out/fresh/workgroup/nvidia-h200" \
    --out "$out/compare.md" > "$out/compare.txt" 2>&1
"$bin" sweep experiments/demo-workgroup.toml --out "$out/locked/{experiment}/{device}" --quiet \
    --lock-sm-clock 1980 > "$out/locked.txt" 2>&1
tar -C "$out" -cf "$out/state-and-compare.tar" fresh locked
