#!/usr/bin/env bash
# The grid-centric strategy's results on the default device, into ROOT/<experiment>/<device>/:
#   results/pipes/run.sh ROOT [sweeps|upwind|largest|all]
# sweeps: experiments/pipes.toml, pipes-tiles.toml and pipes-mapsize.toml (Mei et al.'s
# semi-Lagrangian advection) and the bandwidth ceiling (the streaming copy, from the
# peak cache); upwind: pipes-upwind.toml and droplets against pipes
# (experiments/strategies.toml); largest: pipes-largest.toml, whose plain point at
# 46000^2 is expected to fail for memory (failed.csv keeps it).
# On the H200 run it with VKERODE_CACHE_DIR set and the loader of ../shared/GPU.md.
set -euo pipefail
bin=${VKERODE:-./target/release/vkerode}
root=${1:?results root}
part=${2:-all}
mkdir -p "$root"
sweep() { "$bin" sweep "experiments/$1.toml" --out "$root/{experiment}/{device}" --quiet; }
if [ "$part" = sweeps ] || [ "$part" = all ]; then
    for exp in pipes pipes-tiles pipes-mapsize; do sweep "$exp"; done
    slug=$(basename "$(ls -d "$root"/pipes/*/ | head -1)")
    # The ceiling every grid point was held against, as the sweeps cached it.
    python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["copy"], indent=2))' \
        "${VKERODE_CACHE_DIR:?}"/peak-*.json > "$root/pipes/$slug/copy.json"
fi
if [ "$part" = upwind ] || [ "$part" = all ]; then
    sweep pipes-upwind
    slug=$(basename "$(ls -d "$root"/pipes-upwind/*/ | head -1)")
    "$bin" strategies experiments/strategies.toml --out "$root/strategies/$slug" --force
fi
if [ "$part" = largest ] || [ "$part" = all ]; then
    sweep pipes-largest || true
fi
