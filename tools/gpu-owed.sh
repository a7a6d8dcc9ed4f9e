#!/usr/bin/env bash
# The GPU runs issues 55 and 56 still owe, in one call, most needed first, each part
# under its own time limit so that a call cut short still brings back what finished:
#   1. experiments/image-lever-answer.toml: which load and add path gives a wrong
#      answer (docs/findings/image-lever.md, "Owed");
#   2. results/harness/run.sh: the harness's cost after the lock fix and the terrain cut;
#   3. results/harness/heights.sh against BASE, where given: the heights bit for bit.
# On the GPU machine, from the repository root, after `. tools/use-gpu-loader.sh`:
#   tools/gpu-owed.sh "$OUT/owed" [BASE_BINARY]
# then `tar czf` the folder. --small as the third argument runs every part at lavapipe's
# sizes, to try the script. PARTS (default "answer harness heights") picks parts: one
# call holds at most 10 minutes, so on a GPU run PARTS="answer heights" (about 5
# minutes), then PARTS=harness (up to 9) while the machine is still warm.
set -uo pipefail
out=$1
base=${2:-}
small=${3:-}
bin=${VKERODE:-./target/release/vkerode}
mkdir -p "$out"
{
    date -u +%FT%TZ
    "$bin" --version
    nvidia-smi --query-gpu=name,driver_version --format=csv 2>/dev/null || true
} > "$out/machine.txt"
echo "part,exit,wall_s" > "$out/parts.csv"

# part NAME LIMIT_S COMMAND...: the command under `timeout`, its console in NAME.log.
part() {
    local name=$1 limit=$2
    shift 2
    local start=$EPOCHREALTIME
    timeout "$limit" "$@" > "$out/$name.log" 2>&1
    local rc=$?
    echo "$name,$rc,$(awk "BEGIN { print $EPOCHREALTIME - $start }")" >> "$out/parts.csv"
}

parts=" ${PARTS:-answer harness heights} "
answer=()
[ "$small" = --small ] && answer=(--set fixed.size=256 --set fixed.droplets=30000
                                  --set fixed.batch=30000)
[[ $parts == *" answer "* ]] && part image-lever-answer 180 "$bin" sweep \
    experiments/image-lever-answer.toml --out "$out/image-lever-answer" --force --verbose \
    "${answer[@]}"
[[ $parts == *" harness "* ]] && JOB_TIMEOUT_S=${JOB_TIMEOUT_S:-170} part harness 530 \
    results/harness/run.sh "$out/harness" $small
if [ -n "$base" ] && [[ $parts == *" heights "* ]]; then
    heights=(2048 1048576 64)
    [ "$small" = --small ] && heights=(256 20000 32)
    part heights 150 results/harness/heights.sh "$out/heights" "$base" "${heights[@]}"
fi
# Heightmaps and large pictures stay behind: the results are the CSVs and JSON.
find "$out" \( -name '*.tif' -o -name '*.raw' \) -delete
find "$out" -name '*.png' -size +2M -delete
cat "$out/parts.csv"
