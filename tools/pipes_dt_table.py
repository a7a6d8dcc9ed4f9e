#!/usr/bin/env python3
"""The grid's dt-convergence table (issue 40): the comparison of strategies run again at
dt, dt/2, dt/4 and dt/8, each run's erosion set beside the same run at half its time
step, seed by seed.

    tools/pipes_dt_table.py CONFIG OUT [--dts 0.02,0.01,0.005,0.0025] [--cpu] [--numpy]
        [--reuse] [--set KEY=VALUE ...]

For each dt it runs `vkerode strategies CONFIG --set pipes.pipes_dt=DT` into OUT/dt-DT
(the GPU: the comparison's own runs, its sea, cap and water timing). With --cpu it also
runs every noise terrain's grid run on the sequential CPU reference (`vkerode erode
--engine cpu-sequential`, the same settings, steps, rain and sea). It writes
OUT/convergence.csv (one row a run) and OUT/convergence.md (per terrain, level and
engine: the eroded volume's mean over seeds at each dt, and the per-seed ratio of each
dt's erosion to dt/2's, its mean and range). Nothing here is statistics beyond a mean
and a range: the verdict is the table's, read by eye against 1%. With --numpy, the
noise terrains' runs again by tools/pipes_numpy.py (float64, written apart from the
Rust): the independent check. --reuse keeps the runs OUT already holds.
"""
import argparse
import csv
import json
import os
import subprocess
import sys

BIN = os.environ.get("VKERODE", "./target/release/vkerode")


def strategies(config, out, dt, sets, reuse):
    folder = os.path.join(out, f"dt-{dt}")
    done = os.path.join(folder, "strategies.csv")
    if not (reuse and os.path.exists(done)):
        run_strategies(config, folder, dt, sets)
    with open(done, newline="") as f:
        return [r for r in csv.DictReader(f) if r["algorithm"] == "pipes"]


def run_strategies(config, folder, dt, sets):
    cmd = [BIN, "strategies", config, "--out", folder, "--force", "--quiet",
           "--set", f"pipes.pipes_dt={dt}"]
    for s in sets:
        cmd += ["--set", s]
    subprocess.run(cmd, check=True)


def terrain_envi(out, size, seed):
    """The noise terrain of `size` and `seed` as raw float32 (vkerode terrain, GDAL)."""
    tif = os.path.join(out, "terrain", f"{size}-{seed}.tif")
    envi = tif[:-4] + ".envi"
    if not os.path.exists(envi):
        os.makedirs(os.path.dirname(tif), exist_ok=True)
        subprocess.run([BIN, "terrain", tif, "--size", str(size), "--seed", seed,
                        "--quiet"], check=True)
        subprocess.run(["gdal_translate", "-q", "-of", "ENVI", "-ot", "Float32", tif, envi],
                       check=True)
    return envi


def numpy_run(row, dt, size, out, pipes_table):
    steps = int(row["work"])
    rain = float(row["water_rained"]) / (steps * dt)
    here = os.path.dirname(os.path.abspath(__file__))
    cmd = [sys.executable, os.path.join(here, "pipes_numpy.py"),
           terrain_envi(out, size, row["seed"]), str(size), "--time", repr(steps * dt),
           "--dt", str(dt), "--rain", repr(rain), "--open", "--base-level", row["base_level"],
           "--cap", str(pipes_table["pipes_sediment_cap"]),
           "--friction", str(pipes_table.get("pipes_friction", 0.0))]
    done = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    return done["eroded"], done["total_change"]


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
    p.add_argument("--numpy", action="store_true")
    p.add_argument("--reuse", action="store_true")
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
    table = os.path.join(a.out, "convergence.csv")
    kept = []
    if a.reuse and os.path.exists(table):
        with open(table, newline="") as f:
            kept = list(csv.DictReader(f))
    key = lambda r: (r["engine"], r["terrain"], float(r["water_per_cell"]), r["seed"],
                     float(r["dt"]))
    have = {key(r): r for r in kept}
    rows = []
    for dt in dts:
        for r in strategies(a.config, a.out, dt, a.set, a.reuse):
            base = {"terrain": r["terrain"], "water_per_cell": r["water_per_cell"],
                    "seed": r["seed"], "dt": dt, "steps": r["work"],
                    "base_level": r["base_level"]}
            rows.append(dict(base, engine="gpu", eroded=r["eroded"], net_change=r["net_change"]))
            size = sizes.get(r["terrain"])
            others = [("cpu-sequential", a.cpu and size, lambda: cpu_run(r, dt, size, pipes_table)),
                      ("numpy", a.numpy and size,
                       lambda: numpy_run(r, dt, size, a.out, pipes_table))]
            for engine, wanted, run in others:
                if not wanted:
                    continue
                old = have.get(key(dict(base, engine=engine)))
                if old:
                    rows.append(old)
                    continue
                eroded, net = run()
                rows.append(dict(base, engine=engine, eroded=eroded, net_change=net))
            print(f"dt {dt}: {r['terrain']} water {r['water_per_cell']} seed {r['seed']}",
                  file=sys.stderr)
    with open(table, "w", newline="") as f:
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
