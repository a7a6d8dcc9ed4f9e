#!/usr/bin/env bash
# Issue 43 on a GPU: did the restructuring change an answer or a measured path?
#   results/redesign-43/run.sh OUT BASE_BINARY [PART...]
# PARTs: heights, ab, rerun, strategies (default: heights ab rerun).
# 1. heights: the heights after, against BASE_BINARY (the build before issue 43), for
#    - the paper's kernel in deterministic mode (bit-identical reruns), workgroups 8
#      and 64, global and tiled spawning, 4096^2 and 4M droplets;
#    - the fast kernel (int atomics only, so racy): 4,096 droplets on 4096^2 (few, but
#      their paths still meet in the channels: on an H100 two runs of one build differ
#      in 139 to 243 cells), and at 4M droplets the cells that differ between two runs
#      of one build and between the builds;
#    - the virtual pipes and thermal erosion (no atomics), 1024^2.
# 2. ab: results/redesign-43/ab.toml swept by BASE_BINARY then this binary, compared;
#    rerun: by BASE_BINARY again, compared with its first sweep (the rerun's spread).
# 3. strategies: experiments/strategies.toml's first seed at its most water, with this
#    binary: the erosion maps (erosion.png) that issue 42's pictures redraw, in
#    OUT/strategies/device (devices.txt names it).
set -uo pipefail
step() { "$@" || echo "failed ($?): $*" >> "$out/failed.txt"; }
out=$1
base=$2
shift 2
parts=${*:-heights ab rerun}
wants() { [[ " $parts " == *" $1 "* ]]; }
bin=./target/release/vkerode
mkdir -p "$out"
step "$bin" devices > "$out/devices.txt"
"$base" --version > "$out/versions.txt"; "$bin" --version >> "$out/versions.txt"

# erode_pair NAME ARGS...: the run by both builds (and by the base build again where
# RERUN is set), and whether after.raw is identical.
erode_pair() {
    local name=$1
    shift
    local runs="base new${RERUN:+ base2}"
    for which in $runs; do
        local b=$bin
        [[ $which == base* ]] && b=$base
        step "$b" erode "$@" --no-images --format raw --quiet --out "$out/h/$name-$which" \
            > "$out/h/$name-$which.txt" 2>&1
    done
    python3 - "$out/h/$name" >> "$out/heights.csv" <<'PY'
import os, sys, numpy as np
p = sys.argv[1]
name = p.rsplit("/", 1)[1]
try:
    read = lambda w: np.fromfile(f"{p}-{w}/after.raw", dtype=np.uint32)
    a, b = read("base"), read("new")
    same = "identical" if a.tobytes() == b.tobytes() else "DIFFERS"
    # Cells differing (the raw is one 4-byte word per cell).
    rerun = int((a != read("base2")).sum()) if os.path.exists(f"{p}-base2") else ""
    print(f"{name},{same},{int((a != b).sum())},{rerun},{a.size}")
except Exception as e:
    print(f"{name},error {e!r},,,")
PY
    for which in $runs; do
        cp "$out/h/$name-$which/run.json" "$out/h/$name-$which.json" 2>/dev/null
        rm -rf "$out/h/$name-$which"
    done
}

if wants heights; then
    mkdir -p "$out/h"
    echo "case,base_vs_new,cells_differing_base_vs_new,cells_differing_base_vs_base_rerun,cells" > "$out/heights.csv"
    # The cases run HEIGHTS_JOBS at a time (default 1): an erode at 4096^2 is mostly CPU
    # work (terrain, landform figures), and no height here depends on what runs beside it.
    pair() {
        while (($(jobs -rp | wc -l) >= ${HEIGHTS_JOBS:-1})); do wait -n; done
        erode_pair "$@" &
    }
    for wg in 8 64; do
        pair paper-det-global-wg$wg --size 4096 --droplets 4194304 --deterministic --workgroup $wg
        pair paper-det-tiled-wg$wg --size 4096 --droplets 4194304 --deterministic --workgroup $wg \
            --spawn tiled --tile 256
        pair fast-sparse-wg$wg --size 4096 --droplets 4096 --variant fast --workgroup $wg
        pair fast-sparse-tiled-wg$wg --size 4096 --droplets 4096 --variant fast --workgroup $wg \
            --spawn tiled --tile 256
        RERUN=1 pair fast-racy-wg$wg --size 4096 --droplets 4194304 --variant fast --workgroup $wg
    done
    pair pipes-1024 --algorithm pipes --size 1024
    pair thermal-1024 --algorithm thermal --size 1024
    wait
fi

# ab_sweep WHICH: results/redesign-43/ab.toml swept by the base build (base, base2) or
# this one (new), compared with the base build's first sweep.
ab_sweep() {
    local b=$bin
    [[ $1 == base* ]] && b=$base
    step "$b" sweep results/redesign-43/ab.toml --out "$out/ab-$1/{experiment}/{device}" --quiet \
        > "$out/ab-$1.txt" 2>&1
    [[ $1 == base ]] && return
    step "$bin" compare "$out"/ab-base/redesign-43-ab/*/ "$out"/ab-$1/redesign-43-ab/*/ \
        --markdown "$out/ab-base-vs-$1.md" > "$out/ab-base-vs-$1.txt" 2>&1
}

if wants ab; then
    ab_sweep base
    ab_sweep new
fi
if wants rerun; then
    ab_sweep base2
fi

if wants strategies; then
    step "$bin" strategies experiments/strategies.toml --set "seeds=[1]" --set "water_per_cell=[16]" \
        --out "$out/strategies/device" --quiet \
        > "$out/strategies.log" 2>&1
fi
