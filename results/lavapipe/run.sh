#!/usr/bin/env bash
# The pictures and reports in this folder, on the default device (lavapipe on a
# machine without a GPU): the demo terrain, and the Jacksboro fault DEM. Run from the
# repository root after `cargo build --release`.
set -euo pipefail
bin=${VKERODE:-./target/release/vkerode}
here=results/lavapipe
keep() { # from, to: the small artefacts only, not the heightmaps
    mkdir -p "$2"
    cp "$1"/{before_relief,after_relief,erosion,before_after}.png "$1"/run.json "$2"/
}
"$bin" erode --size 512 --droplets 300000 --out out/lavapipe/demo
keep out/lavapipe/demo "$here/demo"
"$bin" erode --input tests/data/jacksboro_fault_dem.tif --cell-size 74.5,92.6 \
    --droplets 200000 --out out/lavapipe/jacksboro
keep out/lavapipe/jacksboro "$here/jacksboro"
