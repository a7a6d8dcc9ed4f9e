#!/usr/bin/env bash
# Headline runs on a real GPU: the paper's kernel and the fast variant at 4096^2 with 4M
# droplets, the CPU reference on the same job, the batch-size stability check at 1024^2
# with 1M droplets, and pictures of a stable and an unstable run at 512^2. Run from the
# repo root with a release build; writes run.json per case under $1 (default
# out/core-h200).
set -euo pipefail
dest=${1:-out/core-h200}
bin=${VKERODE:-./target/release/vkerode}
mkdir -p "$dest"
"$bin" devices > "$dest/devices.txt"
cat "$dest/devices.txt"

erode() { # name, args...: keeps the report, not the heightmaps or pictures
    local name=$1; shift
    echo "== $name: $*"
    "$bin" erode "$@" --no-images --out "$dest/$name" | tee "$dest/$name.txt"
    rm -f "$dest/$name"/{before,after}.tif
}
erode_with_pictures() { # name, args...: also keeps the eroded relief and erosion map
    local name=$1; shift
    echo "== $name: $*"
    "$bin" erode "$@" --out "$dest/$name" | tee "$dest/$name.txt"
    rm -f "$dest/$name"/{before,after}.tif "$dest/$name"/{before_relief,before_after}.png
}

# Headline: 4096^2 erosion-noise terrain, 4M droplets, lifetime 30, workgroup 64,
# default batch (one droplet per 64 cells: 262,144 per dispatch).
for rep in 1 2; do
    erode "paper-4096-4M-default-batch-$rep" --size 4096 --droplets 4000000
done
erode paper-4096-4M-one-dispatch --size 4096 --droplets 4000000 --batch 4000000
erode paper-4096-4M-optimised-spirv --size 4096 --droplets 4000000 --spirv optimised

# The fast variant (experiments/ideas.toml picks its workgroup), same job.
for rep in 1 2; do
    erode "fast-4096-4M-workgroup-16-$rep" --size 4096 --droplets 4000000 --variant fast --workgroup 16
done
erode fast-4096-4M-workgroup-64 --size 4096 --droplets 4000000 --variant fast
erode paper-4096-4M-workgroup-16 --size 4096 --droplets 4000000 --workgroup 16

# Stability against droplets per dispatch: 1M droplets on 1024^2.
for batch in 1000000 262144 65536 16384 4096; do
    erode "stability-1024-1M-batch-$batch" --size 1024 --droplets 1000000 --batch "$batch"
done

# The stable baseline: the sequential CPU reference on the same job.
erode cpu-sequential-1024-1M --size 1024 --droplets 1000000 --engine cpu-sequential

# Pictures: 250k droplets on 512^2 at one droplet per 64 cells per dispatch (the
# default) and at one per 4 cells.
for batch in 4096 65536; do
    erode_with_pictures "pictures-512-250k-batch-$batch" --size 512 --droplets 250000 --batch "$batch"
done

# The multi-threaded CPU reference on the same host, same terrain and droplets.
erode cpu-4096-4M --size 4096 --droplets 4000000 --engine cpu
