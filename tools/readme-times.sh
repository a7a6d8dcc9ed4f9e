#!/usr/bin/env bash
# Times every job README.md shows, as written there, on the default Vulkan device, and
# writes one CSV row per job (job, wall seconds, device, commit, command) to stdout.
# README's times come from this script's rows in results/readme-times/.
#   tools/readme-times.sh [JOB...] > results/readme-times/<device>.csv
# Without JOBs it runs them all; the work goes to a temporary folder, removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${VKERODE:-target/release/vkerode}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
device=$("$bin" devices --json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(sorted(d, key=lambda x: x["device_type"] == "CPU")[0]["name"])')
# The commit the binary was built from, as it says.
commit=$("$bin" --version | sed -n 's/.*(commit \(.*\))$/\1/p')

declare -A jobs=(
  [demo-erode]="erode --size 512 --droplets 300000 --out $work/demo"
  [demo-sweep]="sweep experiments/demo-workgroup.toml --out $work/demo/results/{experiment}/{device}"
  [erode-droplets]="erode --size 1024 --droplets 1000000 --out $work/erode"
  [erode-pipes]="erode --size 1024 --algorithm pipes --pipes-steps 500 --out $work/pipes"
  [erode-thermal]="erode --size 1024 --algorithm thermal --thermal-steps 200 --out $work/thermal"
  [erode-dem]="erode --input tests/data/jacksboro_fault_dem.tif --cell-size 74.5,92.6 --droplets 200000 --out $work/jacksboro"
  [sweep]="sweep experiments/workgroup.toml --set fixed.size=512 --set fixed.droplets=100000 --out $work/workgroup"
  [plot]="plot $work/workgroup/points.csv --x workgroup --series variant --out $work/charts"
  [compare]="compare results/workgroup/nvidia-h200 results/h200-state-and-compare/fresh/workgroup/nvidia-h200"
  [report]="report $work/workgroup --html $work/workgroup.html"
  [equivalence]="equivalence --size 256 --droplets 50000 --seeds 10 --variants paper,fast --out $work/equivalence"
  # Not in the default order: its time is its --budget (10 minutes on a GPU, 2 on lavapipe).
  [reproduce]="reproduce --out $work/reproduce"
)
# In README's order: plot and report read the sweep's set.
order=(demo-erode demo-sweep erode-droplets erode-pipes erode-thermal erode-dem sweep plot compare report equivalence)
[ $# -gt 0 ] && order=("$@")

echo "job,seconds,device,commit,command"
for job in "${order[@]}"; do
  command=${jobs[$job]:?"no job $job; the jobs are ${!jobs[*]}"}
  started=$(date +%s.%N)
  # shellcheck disable=SC2086 # the command is words, as README writes it
  if ! "$bin" $command --quiet > "$work/$job.log" 2>&1; then
    echo "$job failed:" >&2
    cat "$work/$job.log" >&2
    exit 1
  fi
  seconds=$(python3 -c "print(f'{$(date +%s.%N) - $started:.1f}')")
  echo "$job,$seconds,\"$device\",$commit,\"vkerode ${command//$work/OUT}\""
done
