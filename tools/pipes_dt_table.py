#!/usr/bin/env python3
"""The grid's dt-convergence table (issue 40): the comparison of strategies run again at
dt, dt/2, dt/4 and dt/8, each run's erosion set beside the same run at half its time
step, seed by seed.

    tools/pipes_dt_table.py CONFIG OUT [--dts 0.02,0.01,0.005,0.0025] [--cpu]
        [--set KEY=VALUE ...]

For each dt it runs `vkerode strategies CONFIG --set pipes.pipes_dt=DT` into OUT/dt-DT
(the GPU: the comparison's own runs, its sea, cap and water timing). With --cpu it also
runs every noise terrain's grid run on the sequential CPU reference (`vkerode erode
--engine cpu-sequential`, the same settings, steps, rain and sea). It writes
OUT/convergence.csv (one row a run) and OUT/convergence.md (per terrain, level and
engine: the eroded volume's mean over seeds at each dt, and the per-seed ratio of each
dt's erosion to dt/2's, its mean and range). Nothing here is statistics beyond a mean
and a range: the verdict is the table's, read by eye against 1%.
"""
import argparse
import csv
import json
import os
import subprocess
import sys

BIN = os.environ.get("VKERODE", "./target/release/vkerode")


def strategies(config, out, dt, sets):
    folder = os.path.join(out, f"dt-{dt}")
    cmd = [BIN, "strategies", config, "--out", folder, "--force", "--quiet",
           "--set", f"pipes.pipes_dt={dt}"]
    for s in sets:
        cmd += ["--set", s]
    subprocess.run(cmd, check=True)
    with open(os.path.join(folder, "strategies.csv"), newline="") as f:
        return [r for r in csv.DictReader(f) if r["algorithm"] == "pipes"]


def cpu_run(row, dt, size, pipes_table):
    steps = int(row["work"])
    rain = float(row["water_rained"]) / (steps * dt)
    cmd = [BIN, "erode", "--algorithm", "pipes", "--engine", "cpu-sequential",
           "--size", str(size), "--seed", row["seed"], "--pipes-steps", str(steps),
           "--pipes-dt", str(dt), "--pipes-rain", repr(rain), "--pipes-boundary", "open",
           "--pipes-base-level", row["base_level"], "--no-images", "--json", "--quiet",
           "--out", "/tmp/vkerode-pipes-dt", "--force"]
    for key, value in pipes_table.items():
        cmd += [f"--{key.replace('_', '-')}", str(value)]
    done = subprocess.run(cmd, check=True, capture_output=True, text=True)
    change = json.loads(done.stdout)["change"]
    return change["eroded"], change["total_change"]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("config")
    p.add_argument("out")
    p.add_argument("--dts", default="0.02,0.01,0.005,0.0025")
    p.add_argument("--cpu", action="store_true")
    p.add_argument("--set", action="append", default=[])
    a = p.parse_args()
    dts = [float(x) for x in a.dts.split(",")]
    os.makedirs(a.out, exist_ok=True)
    # The CPU runs take the comparison's grid settings that are not its dose or sea.
    import tomllib
    with open(a.config, "rb") as f:
        config = tomllib.load(f)
    pipes_table = {k: v for k, v in config.get("pipes", {}).items()
                   if k in ("pipes_sediment_cap", "pipes_advection", "pipes_friction")}
    pipes_table.setdefault("pipes_sediment_cap", 1.0)
    pipes_table.setdefault("pipes_advection", "upwind")
    sizes = {t["name"]: t.get("size") for t in config["terrain"]}
    rows = []
    for dt in dts:
        for r in strategies(a.config, a.out, dt, a.set):
            base = {"terrain": r["terrain"], "water_per_cell": r["water_per_cell"],
                    "seed": r["seed"], "dt": dt, "steps": r["work"],
                    "base_level": r["base_level"]}
            rows.append(dict(base, engine="gpu", eroded=r["eroded"], net_change=r["net_change"]))
            size = sizes.get(r["terrain"])
            if a.cpu and size:
                eroded, net = cpu_run(r, dt, size, pipes_table)
                rows.append(dict(base, engine="cpu-sequential", eroded=eroded, net_change=net))
            print(f"dt {dt}: {r['terrain']} water {r['water_per_cell']} seed {r['seed']}",
                  file=sys.stderr)
    with open(os.path.join(a.out, "convergence.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    write_table(rows, dts, os.path.join(a.out, "convergence.md"))


def write_table(rows, dts, path):
    by = {}
    for r in rows:
        key = (r["terrain"], float(r["water_per_cell"]), r["engine"])
        by.setdefault(key, {}).setdefault(float(r["dt"]), {})[r["seed"]] = float(r["eroded"])
    head = " | ".join(f"dt {dt}" for dt in dts)
    ratios = " | ".join(f"{dts[i]} / {dts[i + 1]}" for i in range(len(dts) - 1))
    lines = [
        "Eroded volume (kernel height units x cells: cells^3 on noise, the DEM's cell "
        "widths^3 on a DEM), mean over seeds, at each time step; then each dt's erosion "
        "over dt/2's, per seed: mean [lowest, highest].",
        "",
        f"| terrain | water per cell | engine | {head} | {ratios} |",
        "|" + " --- |" * (3 + 2 * len(dts) - 1),
    ]
    for (terrain, water, engine), at in sorted(by.items()):
        means = [sum(at[dt].values()) / len(at[dt]) if dt in at else None for dt in dts]
        cells = [f"{m:,.0f}" if m is not None else "" for m in means]
        for i in range(len(dts) - 1):
            coarse, fine = at.get(dts[i], {}), at.get(dts[i + 1], {})
            r = [coarse[s] / fine[s] for s in coarse if s in fine and fine[s] != 0]
            cells.append(f"{sum(r) / len(r):.4f} [{min(r):.4f}, {max(r):.4f}]" if r else "")
        lines.append(f"| {terrain} | {water:g} | {engine} | " + " | ".join(cells) + " |")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
