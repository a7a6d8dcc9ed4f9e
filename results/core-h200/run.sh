#!/usr/bin/env bash
# The core issue's checks on a real GPU: the paper's kernel at 4096^2 with 4M droplets,
# and the batch-size stability check at 1024^2 with 1M droplets. Run from the repo root
# with a release build; writes run.json per case under $1 (default out/core-h200).
set -euo pipefail
dest=${1:-out/core-h200}
bin=${VKERODE:-./target/release/vkerode}
mkdir -p "$dest"
"$bin" devices > "$dest/devices.txt"
cat "$dest/devices.txt"

erode() { # name, args...
    local name=$1; shift
    echo "== $name: $*"
    "$bin" erode "$@" --out "$dest/$name" | tee "$dest/$name.txt"
    # Keep the reports and, for small maps, the eroded relief; not the heightmaps.
    rm -f "$dest/$name"/{before,after}.tif "$dest/$name"/{before_relief,erosion,before_after}.png
    if [ "$(stat -c %s "$dest/$name/after_relief.png")" -gt 8000000 ]; then
        rm -f "$dest/$name/after_relief.png"
    fi
}

# Headline: 4096^2 erosion-noise terrain, 4M droplets, lifetime 30, workgroup 64,
# default batch (one droplet per 64 cells: 262,144 per dispatch).
for rep in 1 2; do
    erode "paper-4096-4M-default-batch-$rep" --size 4096 --droplets 4000000
done
erode paper-4096-4M-one-dispatch --size 4096 --droplets 4000000 --batch 4000000

# Stability against droplets per dispatch: 1M droplets on 1024^2.
for batch in 1000000 262144 65536 16384 4096; do
    erode "stability-1024-1M-batch-$batch" --size 1024 --droplets 1000000 --batch "$batch"
done

# The multi-threaded CPU reference on the same host, same terrain and droplets.
erode cpu-4096-4M --size 4096 --droplets 4000000 --engine cpu
