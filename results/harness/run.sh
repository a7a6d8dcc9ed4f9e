#!/usr/bin/env bash
# The harness's own cost on a GPU (issue 55): three jobs, each timed from start to exit,
# then OUT/summary.csv (job,points,gpu_s,wall_s,gpu_busy_share).
#   results/harness/run.sh OUT [--small]
# - yardstick: experiments/cuda-yardstick.toml with its committed measure settings;
# - mapsize: experiments/mapsize.toml with sizes to 16384^2, its committed settings;
# - erode-16384: `erode --size 16384` with its defaults (images and GeoTIFFs included).
# gpu_s is the GPU-timestamp time the results rest on: a sweep's points' warm-ups and
# timed repetitions (points.csv's point_gpu_s), erode's timed run (run.json's
# figures.gpu_ms). --small shrinks every job to what lavapipe takes, to try the script.
# Each job's console output is kept in OUT/<job>.log; its results folder is OUT/<job>/.
# JOB_TIMEOUT_S (default none) stops a job that runs longer; it is then left out.
set -uo pipefail
bin=${VKERODE:-./target/release/vkerode}
out=$1
small=${2:-}
mkdir -p "$out"
"$bin" --version > "$out/versions.txt"
"$bin" devices > "$out/devices.txt" 2>&1
echo "job,exit,wall_s" > "$out/walls.csv"

# timed JOB COMMAND...: the command's wall time from start to exit, in walls.csv.
timed() {
    local job=$1
    shift
    local start end rc
    start=$EPOCHREALTIME
    # --foreground: in the caller's process group, so that a timeout around this script
    # stops the job too.
    timeout --foreground "${JOB_TIMEOUT_S:-0}" "$@" > "$out/$job.log" 2>&1
    rc=$?
    end=$EPOCHREALTIME
    echo "$job,$rc,$(awk "BEGIN { print $end - $start }")" >> "$out/walls.csv"
}

if [ "$small" = --small ]; then
    yard=(--set fixed.size=256 --set fixed.droplets=20000 --set fixed.batch=20000
          --set 'axes.workgroup=[8,64]' --set 'axes.lever=["none"]'
          --set measure.min_reps=3 --set measure.max_reps=5 --set measure.time_budget_s=1)
    sizes='axes.size=[128,256,512]'
    map=(--set fixed.droplets=20000 --set fixed.batch=20000 --set measure.min_reps=3
         --set measure.max_reps=5 --set measure.time_budget_s=1)
    erode=(--size 1024 --droplets 20000)
else
    # The levers the measurements before issue 55's cuts ran (nvidia-h200-serial-cpu-
    # shares), image-atomics among them, so that before and after time the same work.
    yard=(--set 'axes.lever=["none","image-atomics","vulkan-memory-model"]')
    sizes='axes.size=[256,512,1024,2048,4096,8192,16384]'
    map=()
    erode=(--size 16384)
fi
# erode first: the shortest, so that a call's time limit leaves it whole.
timed erode-16384 "$bin" erode "${erode[@]}" --out "$out/erode-16384" --force --verbose
timed yardstick "$bin" sweep experiments/cuda-yardstick.toml --out "$out/yardstick" --force \
    --verbose "${yard[@]}"
timed mapsize "$bin" sweep experiments/mapsize.toml --out "$out/mapsize" --force --verbose \
    --set "$sizes" "${map[@]}"

python3 - "$out" <<'PY'
import csv, json, sys
from pathlib import Path
out = Path(sys.argv[1])
walls = {r["job"]: r for r in csv.DictReader(open(out / "walls.csv"))}
rows = []
for job in ["yardstick", "mapsize", "erode-16384"]:
    if job not in walls or walls[job]["exit"] != "0":
        print(f"{job}: not finished, left out of summary.csv", file=sys.stderr)
        continue
    wall = float(walls[job]["wall_s"])
    if job == "erode-16384":
        report = json.load(open(out / job / "run.json"))
        points, gpu_s = 1, report["figures"]["gpu_ms"] / 1e3
    else:
        with open(out / job / "points.csv") as f:
            table = list(csv.DictReader(f))
        points, gpu_s = len(table), sum(float(r["point_gpu_s"]) for r in table)
    rows.append(dict(job=job, points=points, gpu_s=round(gpu_s, 4), wall_s=round(wall, 2),
                     gpu_busy_share=round(gpu_s / wall, 4)))
if not rows:
    sys.exit("no job finished: no summary.csv")
with open(out / "summary.csv", "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0]))
    w.writeheader()
    w.writerows(rows)
print(open(out / "summary.csv").read())
PY
