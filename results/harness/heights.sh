#!/usr/bin/env bash
# Did issue 55 change an answer? The heights after, bit for bit, by this build and by
# BASE (the build before issue 55): the paper's kernel in deterministic mode at
# workgroups 8 and 64, global and tiled spawning, and the virtual pipes and thermal
# erosion; after.raw compared word by word into OUT/heights.csv.
#   results/harness/heights.sh OUT BASE_BINARY SIZE DROPLETS TILE
set -uo pipefail
out=$1 base=$2 size=$3 droplets=$4 tile=$5
bin=${VKERODE:-./target/release/vkerode}
mkdir -p "$out/h"
{ "$base" --version; "$bin" --version; } > "$out/versions.txt"
echo "case,base_vs_new,cells_differing,cells" > "$out/heights.csv"
pair() { # NAME ERODE-ARGS...
    local name=$1
    shift
    for which in base new; do
        local b=$bin
        [ "$which" = base ] && b=$base
        "$b" erode --size "$size" "$@" --no-images --format raw --quiet --force \
            --out "$out/h/$name-$which" > "$out/h/$name-$which.txt" 2>&1
    done
    python3 - "$out/h/$name" "$name" >> "$out/heights.csv" <<'PY'
import sys
from array import array
p, name = sys.argv[1], sys.argv[2]
try:
    read = lambda w: array("I", open(f"{p}-{w}/after.raw", "rb").read())
    a, b = read("base"), read("new")
    differing = sum(x != y for x, y in zip(a, b)) + abs(len(a) - len(b))
    print(f"{name},{'identical' if differing == 0 else 'DIFFERS'},{differing},{len(a)}")
except Exception as e:
    print(f"{name},error {e!r},,")
PY
    rm -rf "$out/h/$name-base" "$out/h/$name-new"
}
for wg in 8 64; do
    pair paper-det-global-wg$wg --droplets "$droplets" --deterministic --workgroup $wg
    pair paper-det-tiled-wg$wg --droplets "$droplets" --deterministic --workgroup $wg \
        --spawn tiled --tile "$tile"
done
pair pipes --algorithm pipes
pair thermal --algorithm thermal
cat "$out/heights.csv"
