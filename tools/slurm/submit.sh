#!/usr/bin/env bash
# Submits a sweep to Slurm: a job array with one task per shard (each task
# `vkerode sweep --shard i/n`), then a merge job that starts once every task of the array
# has succeeded (`--dependency=afterok`) and joins the shards with `vkerode merge`:
#   tools/slurm/submit.sh CONFIG RESULTS_ROOT SHARDS [sweep flags...]
# Sweep flags go to every task, e.g. `--devices all` on nodes with several GPUs (each
# task then runs its shard over all of its node's GPUs). sbatch options for both jobs
# go in SBATCH_OPTIONS, e.g. SBATCH_OPTIONS="--partition=gpu --gres=gpu:4". VKERODE
# names the binary (default target/release/vkerode). Prints the array's job id and the
# merge's; the merged set lands in RESULTS_ROOT/<experiment>/<device>/merged, the jobs'
# logs in RESULTS_ROOT/slurm-logs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ $# -lt 3 ]; then
    echo "usage: $0 CONFIG RESULTS_ROOT SHARDS [sweep flags...]" >&2
    exit 2
fi
config=$(realpath "$1")
root=$(realpath -m "$2")
shards=$3
shift 3
case $shards in
    '' | *[!0-9]* | 0) echo "SHARDS must be a positive number, got '$shards'" >&2; exit 2 ;;
esac
bin=$(realpath "${VKERODE:-target/release/vkerode}")
[ -x "$bin" ] || { echo "no vkerode binary at $bin: run make build, or set VKERODE" >&2; exit 2; }
logs="$root/slurm-logs"
mkdir -p "$logs"
# shellcheck disable=SC2086 # SBATCH_OPTIONS holds several options
array=$(sbatch --parsable ${SBATCH_OPTIONS:-} --array="0-$((shards - 1))" \
    --output="$logs/%x-%A_%a.out" --export="ALL,VKERODE=$bin" \
    "$here/sweep-array.sbatch" "$config" "$root" "$@")
array=${array%%;*}
# shellcheck disable=SC2086
merge=$(sbatch --parsable ${SBATCH_OPTIONS:-} --dependency="afterok:$array" \
    --output="$logs/%x-%j.out" --export="ALL,VKERODE=$bin" \
    "$here/merge.sbatch" "$config" "$root")
echo "${array} ${merge%%;*}"
