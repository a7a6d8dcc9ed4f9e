#!/usr/bin/env bash
# `make test`'s end-to-end check of tools/slurm/: starts a one-node Slurm cluster
# (cluster.sh), submits a two-task array of a tiny sweep plus its merge job
# (submit.sh), waits for them, and checks that the merged folder holds every point
# exactly once, with the settings a single-process run of the same sweep records. The
# cluster is stopped whatever happens.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
bin="$repo/target/release/vkerode"
work=$(mktemp -d /tmp/vkerode-slurm.XXXXXX)
# munged runs as the munge user: it must reach its folder.
chmod 755 "$work"
cluster="$work/cluster"
cleanup() {
    if [ -n "${SLURM_CONF:-}" ]; then
        scancel --user="$(id -un)" 2>/dev/null || true
    fi
    "$repo/tools/slurm/cluster.sh" stop "$cluster"
    rm -rf "$work"
}
trap cleanup EXIT
"$repo/tools/slurm/cluster.sh" start "$cluster"
export SLURM_CONF="$cluster/slurm.conf"
# As every test: the validation layer on, and any message it prints a failure.
export VKERODE_VALIDATE=1

config="$work/slurm-test.toml"
cat > "$config" <<'TOML'
name = "slurm-test"
description = "tools/slurm/test.sh: three points over two array tasks"
[fixed]
size = 64
droplets = 3000
[axes]
workgroup = [16, 32, 64]
[measure]
warmup = 1
min_reps = 3
max_reps = 4
target_rel_iqr = 0.5
time_budget_s = 2
TOML

read -r array merge < <(VKERODE="$bin" "$repo/tools/slurm/submit.sh" "$config" "$work/cluster-results" 2)
echo "submitted array $array and merge $merge"
for _ in $(seq 300); do
    state=$(scontrol show job "$merge" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
    case $state in
        COMPLETED) break ;;
        FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY)
            echo "the merge job ended $state" >&2
            cat "$work"/cluster-results/slurm-logs/* >&2 || true
            exit 1
            ;;
    esac
    sleep 1
done
[ "${state:-}" = COMPLETED ] || { echo "the merge job did not finish (state ${state:-unknown})" >&2; exit 1; }

if grep -il "validation" "$work"/cluster-results/slurm-logs/*; then
    echo "the validation layer reported messages in the jobs' logs above" >&2
    exit 1
fi
"$bin" sweep "$config" --out "$work/single-results/{experiment}/{device}" --quiet > /dev/null
merged=$(echo "$work"/cluster-results/slurm-test/*/merged/points.csv)
single=$(echo "$work"/single-results/slurm-test/*/points.csv)
python3 - "$merged" "$single" <<'PY'
import csv, sys
def rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))
merged, single = rows(sys.argv[1]), rows(sys.argv[2])
points = sorted(int(r["point"]) for r in merged)
assert points == [0, 1, 2], f"every point exactly once, got {points}"
# The settings columns: from `algorithm` up to `kernel`, as the single run wrote them.
names = list(single[0].keys())
settings = names[names.index("algorithm"):names.index("kernel")]
by_point = {int(r["point"]): r for r in single}
for row in merged:
    want = by_point[int(row["point"])]
    diff = [c for c in settings if row[c] != want[c]]
    assert not diff, f"point {row['point']}: {diff} differ from the single-process run"
print(f"slurm: {len(merged)} points merged from 2 array tasks, settings as a single run")
PY
