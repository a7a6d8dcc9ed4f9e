#!/usr/bin/env bash
# The map-size comparison of issue 55, in one script for one call on the GPU machine:
# the CUDA yardstick (results/cuda/mapsize.py: droplet.cu with 64-bit cell indices on
# terrain.cu's copy of vkerode's terrain) and vkerode's paper kernel
# (experiments/mapsize-cuda.toml), on the same card, then OUT/ratio.csv.
#
#   results/mapsize-cuda/run.sh [--small] [--force | --resume] [--only PART]... [--time-limit S] OUT
#
# Run from the repository root, after the Vulkan loader set-up (docs/gpu-machine.md).
# VKERODE names the binary (default ./target/release/vkerode).
#
#   --small         a few seconds' job for lavapipe: 256^2 and 512^2, 20,000 droplets
#   --force         replace OUT's earlier results (vkerode's sweep refuses them otherwise)
#   --resume        continue OUT/vkerode's sweep where an earlier call stopped
#   --only PART     cuda, vkerode or combine (repeatable); default all three, in that order
#   --time-limit S  finish within S seconds of wall time: vkerode's sweep is stopped in
#                   time for the combining step (the points it finished are kept)
#
# Writes OUT/cuda/ (cuda_mapsize.csv, cuda_mapsize.json) and OUT/cuda.log,
# OUT/vkerode/ (points.csv, samples.csv, meta.json) and OUT/sweep.log (its --verbose
# output), OUT/ratio.csv (size,vkerode_g,cuda_g,ratio: G droplet-steps/s and their
# ratio), OUT/comparison.csv (both sides' times, steps and net changes) and OUT/run.txt
# (the command, commit, host and times). The chart is drawn elsewhere:
# python3 results/mapsize-cuda/chart.py draw OUT.
#
# The CUDA side runs first: it takes a minute or two, and vkerode's 65536^2 point
# (9 s a repetition on the H200 in results/mapsize-wide) is what may run out of time.

set -uo pipefail

usage() {
    sed -n '2,/^$/p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

command="$0 $*"
small=0
force=0
resume=0
time_limit=0
parts=()
out=""
while [ $# -gt 0 ]; do
    case "$1" in
        --small) small=1 ;;
        --force) force=1 ;;
        --resume) resume=1 ;;
        --only)
            [ $# -ge 2 ] || usage
            case "$2" in cuda | vkerode | combine) parts+=("$2") ;; *) echo "--only takes cuda, vkerode or combine, not '$2'" >&2; exit 2 ;; esac
            shift ;;
        --time-limit)
            [ $# -ge 2 ] && [[ "$2" =~ ^[0-9]+$ ]] || { echo "--time-limit takes whole seconds" >&2; exit 2; }
            time_limit=$2
            shift ;;
        -h | --help) usage ;;
        -*) echo "unknown option '$1'" >&2; usage ;;
        *) [ -z "$out" ] || { echo "one OUT folder, not '$out' and '$1'" >&2; exit 2; }; out=$1 ;;
    esac
    shift
done
[ -n "$out" ] || usage
[ "$force" = 1 ] && [ "$resume" = 1 ] && { echo "--force and --resume exclude each other" >&2; exit 2; }
[ ${#parts[@]} -gt 0 ] || parts=(cuda vkerode combine)
wants() { [[ " ${parts[*]} " == *" $1 "* ]]; }

config=experiments/mapsize-cuda.toml
[ -f "$config" ] && [ -f results/cuda/mapsize.py ] || {
    echo "run this from the repository root (no $config here: $(pwd))" >&2
    exit 2
}
VKERODE=${VKERODE:-./target/release/vkerode}
started=$(date +%s)
mkdir -p "$out" || exit 1

# The job, from the config (one source for both sides); --small overrides it for both.
read -r sizes droplets seed block < <(python3 - "$config" <<'EOF'
import sys, tomllib
with open(sys.argv[1], "rb") as f:
    c = tomllib.load(f)
fixed, axes = c["fixed"], c["axes"]
print(",".join(str(s) for s in axes["size"]), fixed["droplets"], fixed["seed"], fixed["workgroup"])
EOF
) || { echo "could not read $config" >&2; exit 1; }
check_size=1024
if [ "$small" = 1 ]; then
    sizes=256,512
    droplets=20000
    check_size=256
fi

{
    echo "command: $command"
    echo "started: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "host: $(hostname)"
    echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo -dirty)"
    echo "vkerode: $VKERODE"
    echo "job: sizes $sizes, $droplets droplets in one dispatch/launch, seed $seed, workgroup/block $block"
} >"$out/run.txt"
failed=()

if wants cuda; then
    if python3 -c 'import cupy' 2>/dev/null; then
        echo "== CUDA: results/cuda/mapsize.py -> $out/cuda"
        check=()
        [ -x "$VKERODE" ] && check=(--vkerode "$VKERODE" --check-size "$check_size")
        [ -x "$VKERODE" ] || echo "no vkerode at $VKERODE: the terrain check is skipped"
        PYTHONUNBUFFERED=1 python3 results/cuda/mapsize.py --out "$out/cuda" \
            --sizes ${sizes//,/ } --droplets "$droplets" --seed "$seed" --block "$block" \
            "${check[@]}" 2>&1 | tee "$out/cuda.log"
        [ "${PIPESTATUS[0]}" = 0 ] || failed+=(cuda)
    else
        echo "== CUDA: skipped: python3 cannot import cupy here" | tee "$out/cuda.log"
    fi
fi

if wants vkerode; then
    [ -x "$VKERODE" ] || { echo "no vkerode binary at $VKERODE (set VKERODE)" >&2; exit 1; }
    args=(sweep "$config" --out "$out/vkerode" --verbose)
    [ "$small" = 1 ] && args+=(--set "axes.size=[$sizes]" --set "fixed.droplets=$droplets" --set "fixed.batch=$droplets")
    [ "$force" = 1 ] && args+=(--force)
    [ "$resume" = 1 ] && args+=(--resume)
    limit=()
    if [ "$time_limit" -gt 0 ]; then
        # What is left, less a minute for the combining step and the files' return.
        left=$((time_limit - ($(date +%s) - started) - 60))
        [ "$left" -gt 30 ] || { echo "--time-limit $time_limit leaves no time for vkerode's sweep" >&2; exit 1; }
        limit=(timeout --signal=INT --kill-after=20 "$left")
        echo "vkerode's sweep gets ${left} s (--time-limit $time_limit)"
    fi
    echo "== vkerode: $VKERODE ${args[*]} -> $out/sweep.log"
    "${limit[@]}" "$VKERODE" "${args[@]}" 2>&1 | tee "$out/sweep.log"
    status=${PIPESTATUS[0]}
    if [ "$status" = 124 ] || [ "$status" = 130 ] || [ "$status" = 137 ]; then
        echo "vkerode's sweep was stopped by --time-limit ($status): its finished points are kept; --resume continues it"
        failed+=(vkerode-time-limit)
    elif [ "$status" != 0 ]; then
        failed+=(vkerode)
    fi
fi

if wants combine; then
    echo "== combine -> $out/ratio.csv, $out/comparison.csv"
    python3 results/mapsize-cuda/chart.py combine "$out" || failed+=(combine)
fi

echo "finished: $(date -u +%Y-%m-%dT%H:%M:%SZ), $(($(date +%s) - started)) s; failed: ${failed[*]:-none}" | tee -a "$out/run.txt"
[ ${#failed[@]} = 0 ]
