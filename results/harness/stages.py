#!/usr/bin/env python3
"""Where a sweep's wall time went: the stage times every points.csv row carries, summed
over the points, split into the GPU share (on the device's thread, in series) and the
CPU share (on the CPU-share threads, beside the GPU).
    results/harness/stages.py RESULTS_FOLDER [WALL_S]
WALL_S (the sweep's wall time, from walls.csv) adds the GPU's busy share and the share
of the wall time the GPU share's stages fill.
"""
import csv
import sys
from pathlib import Path

GPU_SHARE = ["terrain", "prepare", "warmup", "timed", "gpm", "replay", "counted", "reruns"]
CPU_SHARE = ["judge", "landform"]

folder = Path(sys.argv[1])
wall = float(sys.argv[2]) if len(sys.argv) > 2 else None
with open(folder / "points.csv") as f:
    rows = list(csv.DictReader(f))


def total(column):
    return sum(float(r[column] or 0) for r in rows)


gpu_s = total("point_gpu_s")
print(f"{folder}: {len(rows)} points, GPU time (warm-ups and repetitions) {gpu_s:.2f} s")
for share, stages in [("GPU share", GPU_SHARE), ("CPU share", CPU_SHARE)]:
    seconds = {stage: total(f"stage_{stage}_s") for stage in stages}
    parts = ", ".join(f"{stage} {s:.2f}" for stage, s in seconds.items())
    line = f"  {share} {sum(seconds.values()):.2f} s: {parts}"
    if wall and share == "GPU share":
        line += f" ({sum(seconds.values()) / wall:.0%} of the wall time)"
    print(line)
if wall:
    print(f"  wall {wall:.2f} s, GPU busy {gpu_s / wall:.1%}")
