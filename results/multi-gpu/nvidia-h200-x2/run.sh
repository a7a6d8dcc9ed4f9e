#!/usr/bin/env bash
# The two-GPU runs of results/multi-gpu/nvidia-h200-x2/ (issue 17), on a node with two
# H200s (the loader of ../shared/GPU.md first): workgroup.toml and fast.toml over both
# GPUs, then workgroup.toml with --replicate. Each folder's compare-one-gpu.md is
#   vkerode compare results/<experiment>/nvidia-h200 results/multi-gpu/nvidia-h200-x2/<experiment>
set -euo pipefail
bin=${VKERODE:-./target/release/vkerode}
root=${1:?results root}
for exp in workgroup fast; do
    time "$bin" sweep "experiments/$exp.toml" --devices all --out "$root/two/{experiment}/{device}" --quiet
done
time "$bin" sweep experiments/workgroup.toml --devices all --replicate --out "$root/replicate/{experiment}/{device}" --quiet
