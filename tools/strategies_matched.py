#!/usr/bin/env python3
"""Droplets against the grid at matched erosion and at matched water, paired by seed,
from a `vkerode strategies` folder's strategies.csv (issue 40's findings).

    tools/strategies_matched.py DIR [--markdown FILE]

For each terrain, each seed's two trajectories (the figure after each run against the
run's eroded depth, the terrain before at depth 0) are interpolated linearly in the
logarithm of the eroded depth at a ladder of depths that every seed of both strategies
reaches; at each depth the per-seed difference grid - droplets is summarised as a mean
with Student's 95% interval over the seeds. A difference "survives" where that interval
excludes 0. At matched water the same is done level by level, with no interpolation.
The water and GPU time each strategy needs for a given erosion are compared the same way
(as ratios, on log axes). Written apart from the Rust (dose.rs), which gives each
strategy's own interval but not the paired difference.
"""
import argparse
import csv
import math
import statistics
import sys
from collections import defaultdict

# Student's t at 0.975 for 1 to 10 degrees of freedom: the CI machine has no scipy.
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228]

# The landform figures compared, as strategies.csv names them (`<name>_after`).
FIGURES = [
    "hypsometric_integral",
    "mean_slope",
    "steep_share",
    "drainage_density",
    "concavity",
    "channel_incision",
    "pits",
    "sinks",
    "flats",
    "depression_volume",
]


def interval(values):
    n = len(values)
    mean = statistics.fmean(values)
    if n < 2:
        return mean, None
    half = T975[min(n - 1, len(T975)) - 1] * statistics.stdev(values) / math.sqrt(n)
    return mean, half


def interpolate(points, x, log_y=False):
    """Linear in log(x) (and in log(y) with log_y: water and time double a level) through
    (x, y) points of positive x sorted by x; None outside them."""
    for (x0, y0), (x1, y1) in zip(points, points[1:]):
        if x0 <= x <= x1:
            t = 0.0 if x1 == x0 else (math.log(x) - math.log(x0)) / (math.log(x1) - math.log(x0))
            if log_y:
                return math.exp(math.log(y0) + (math.log(y1) - math.log(y0)) * t)
            return y0 + (y1 - y0) * t
    return None


def number(text):
    return float(text) if text not in ("", None) else None


def load(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        sys.exit(f"{path}: no runs")
    return rows


def trajectories(rows, figures):
    """(terrain, algorithm, seed) -> [(eroded_depth, {figure: value, water, gpu_ms, level})]
    sorted by depth."""
    out = defaultdict(list)
    for r in rows:
        key = (r["terrain"], r["algorithm"], int(r["seed"]))
        depth = number(r["eroded_depth"])
        after = {f: number(r.get(f + "_after")) for f in figures}
        after["water"] = number(r["water_rained"])
        after["gpu_ms"] = number(r["gpu_ms"])
        after["level"] = number(r["water_per_cell"])
        out[key].append((depth, after))
    for v in out.values():
        v.sort(key=lambda p: p[0])
    return out


def fmt(mean, half, digits=3):
    if mean is None:
        return ""
    if half is None:
        return f"{mean:.{digits}g}"
    return f"{mean:.{digits}g} ± {half:.2g}"


def survives(mean, half):
    if half is None:
        return "one seed"
    return "**yes**" if abs(mean) > half else "no"


def report(rows):
    figures = [f for f in FIGURES if f + "_after" in rows[0]]
    traj = trajectories(rows, figures)
    terrains = sorted({k[0] for k in traj})
    lines = []
    for terrain in terrains:
        seeds = sorted({k[2] for k in traj if k[0] == terrain})
        pairs = [
            (traj[(terrain, "droplets", s)], traj[(terrain, "pipes", s)])
            for s in seeds
            if (terrain, "droplets", s) in traj and (terrain, "pipes", s) in traj
        ]
        unit = next(r["height_unit"] for r in rows if r["terrain"] == terrain)
        lines.append(f"## {terrain} ({len(pairs)} seeds; heights in {unit})\n")
        if not pairs:
            lines.append("No seed has runs of both strategies.\n")
            continue
        # The depths every seed of both strategies reaches.
        lo = max(min((d for d, _ in t if d > 0), default=math.inf) for pair in pairs for t in pair)
        hi = min(max(d for d, _ in t) for pair in pairs for t in pair)
        lines.append(
            f"Matched erosion: eroded depth {lo:.3g} to {hi:.3g} {unit}, reached by every "
            "seed of both; each cell is grid - droplets, the mean over seeds ± the half "
            "width of its 95% interval, **yes** where that interval excludes 0 (no correction "
            "for the many cells: read a lone **yes** with care); [n] where fewer seeds than "
            "all reach it.\n"
        )
        if lo >= hi:
            lines.append("No erosion is reached by both strategies at every seed.\n")
            continue
        depths = [lo * (hi / lo) ** (i / 3) for i in range(3)] + [hi]
        header = ["figure"] + [f"at {d:.3g}" for d in depths]
        lines.append("| " + " | ".join(header) + " |")
        lines.append("|" + " --- |" * len(header))
        for figure in figures + ["water", "gpu_ms"]:
            cells = []
            ratio = figure in ("water", "gpu_ms")
            for d in depths:
                diffs = []
                for drops, grid in pairs:
                    a, b = (
                        interpolate(
                            [(x, p[figure]) for x, p in side if p[figure] is not None and (x > 0) and (not ratio or p[figure] > 0)],
                            d,
                            log_y=ratio,
                        )
                        for side in (drops, grid)
                    )
                    if a is None or b is None:
                        continue
                    diffs.append(math.log(b / a) if ratio else b - a)
                if not diffs:
                    cells.append("")
                    continue
                mean, half = interval(diffs)
                seen = "" if len(diffs) == len(pairs) else f" [{len(diffs)}]"
                if ratio:
                    if half is None:
                        cells.append(f"×{math.exp(mean):.3g}{seen}")
                    else:
                        cells.append(
                            f"×{math.exp(mean):.3g} [{math.exp(mean - half):.3g}, "
                            f"{math.exp(mean + half):.3g}]{seen}"
                        )
                else:
                    cells.append(f"{fmt(mean, half)} ({survives(mean, half)}){seen}")
            name = {
                "water": "water needed, grid / droplets",
                "gpu_ms": "GPU ms, grid / droplets",
            }.get(figure, figure)
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
        lines.append("")
        # Matched water: level by level.
        levels = sorted({p["level"] for drops, _ in pairs for x, p in drops if p["level"]})
        lines.append(
            "Matched water: each level's grid - droplets per seed, as above (no "
            "interpolation).\n"
        )
        header = ["figure"] + [f"water {lv:g}" for lv in levels]
        lines.append("| " + " | ".join(header) + " |")
        lines.append("|" + " --- |" * len(header))
        for figure in ["eroded_depth"] + figures:
            cells = []
            for lv in levels:
                diffs = []
                for drops, grid in pairs:
                    a = [(x, p) for x, p in drops if p["level"] == lv]
                    b = [(x, p) for x, p in grid if p["level"] == lv]
                    if not a or not b:
                        continue
                    if figure == "eroded_depth":
                        diffs.append(b[0][0] - a[0][0])
                    elif a[0][1][figure] is not None and b[0][1][figure] is not None:
                        diffs.append(b[0][1][figure] - a[0][1][figure])
                if diffs:
                    mean, half = interval(diffs)
                    cells.append(f"{fmt(mean, half)} ({survives(mean, half)})")
                else:
                    cells.append("")
            lines.append(f"| {figure} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dir")
    parser.add_argument("--markdown")
    args = parser.parse_args()
    text = report(load(f"{args.dir}/strategies.csv"))
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text + "\n")
    else:
        print(text)


if __name__ == "__main__":
    main()
