#!/usr/bin/env python3
"""Charts of the L1 study from its CSVs (no GPU needed):

    python3 results/l1/charts.py [GPU_SLUG]      (default: nvidia-h200; needs matplotlib)

- l1/<gpu>/chase.png|svg: dependent-load latency against working set, vkerode's read
  paths (peak/<gpu>/cache_latency.csv) beside the CUDA build at each carveout
  (cuda/<gpu>/cuda_chase.csv).
- l1/<gpu>/carveout.png|svg: the CUDA paper kernel's throughput at each carveout
  against the L1 size that carveout leaves, with vkerode's throughput at its own L1
  size (cuda/<gpu>/cuda_throughput.csv and the vkerode sweep beside it).
"""

import csv
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
# The same CSVs draw the same SVG: no date, a fixed id salt.
matplotlib.rcParams["svg.hashsalt"] = "vkerode-l1"
import matplotlib.pyplot as plt  # noqa: E402

RESULTS = Path(__file__).resolve().parent.parent
NO_DATE = {"png": {}, "svg": {"Date": None}}


def rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def l1_kib(latency_by_size, hit_ns=25.0):
    """The largest working set whose loads still all hit (latency under hit_ns)."""
    hits = [size for size, ns in sorted(latency_by_size.items()) if ns < hit_ns]
    return hits[-1] / 1024 if hits else 0.0


def main():
    gpu = sys.argv[1] if len(sys.argv) > 1 else "nvidia-h200"
    out = RESULTS / "l1" / gpu
    vk = rows(RESULTS / "peak" / gpu / "cache_latency.csv")
    cuda = rows(RESULTS / "cuda" / gpu / "cuda_chase.csv")

    curves = {}
    for r in cuda:
        curves.setdefault(f"CUDA, {r['path']}", {})[int(r["working_set_bytes"])] = float(r["latency_ns"])
    for r in vk:
        curves.setdefault(f"vkerode, {r['path']}", {})[int(r["working_set_bytes"])] = float(r["latency_ns"])

    shown = ["CUDA, carveout default", "CUDA, carveout 25%", "CUDA, carveout 50%",
             "CUDA, carveout 100%", "vkerode, ssbo", "vkerode, ssbo-shared-max",
             "vkerode, texel", "vkerode, atomic"]
    fig, ax = plt.subplots(figsize=(9, 5.5))
    for name in shown:
        if name not in curves:
            continue
        sizes = sorted(s for s in curves[name] if s <= 64 << 20)
        style = "-" if name.startswith("vkerode") else "--"
        ax.plot([s / 1024 for s in sizes], [curves[name][s] for s in sizes], style,
                marker="o", markersize=3, label=name)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("working set (KiB)")
    ax.set_ylabel("ns per dependent load")
    ax.set_title(f"Load latency against working set, one thread ({gpu})")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    for ext in ("png", "svg"):
        fig.savefig(out / f"chase.{ext}", dpi=110, bbox_inches="tight", metadata=NO_DATE[ext])

    # Throughput against the L1 each CUDA carveout leaves.
    l1 = {name[len("CUDA, carveout "):]: l1_kib(c) for name, c in curves.items()
          if name.startswith("CUDA, carveout ")}
    vk_l1 = l1_kib(curves["vkerode, ssbo"])
    throughput = rows(RESULTS / "cuda" / gpu / "cuda_throughput.csv")
    sweep = rows(next((RESULTS / "cuda" / gpu / "vkerode").glob("*/*/points.csv")))
    fig, ax = plt.subplots(figsize=(9, 5.5))
    for kernel, vk_variant in [("paper", "paper"), ("skip-zero", "fast-skip-only")]:
        for block, marker in [(16, "o"), (64, "s")]:
            points = sorted((l1[r["carveout"]], float(r["g_steps_per_s"])) for r in throughput
                            if r["kernel"] == kernel and int(r["block"]) == block
                            and r["carveout"] != "default")
            line, = ax.plot([p[0] for p in points], [p[1] for p in points], "--", marker=marker,
                            label=f"CUDA {kernel}, block {block}")
            # droplet_steps_per_s since vkerode's schema 2, steps_per_s before it.
            vk_rate = next(float(r.get("droplet_steps_per_s") or r["steps_per_s"]) / 1e9 for r in sweep
                           if r["variant"] == vk_variant and r["lever"] == "none"
                           and int(r["workgroup"]) == block)
            ax.plot([vk_l1], [vk_rate], marker="*", markersize=14, color=line.get_color(),
                    linestyle="none", label=f"vkerode {vk_variant}, workgroup {block}")
    ax.axvline(vk_l1, color="grey", alpha=0.4, label=f"L1 that vkerode's chase sees ({vk_l1:.0f} KiB)")
    ax.set_xlabel("L1 that the chase sees (KiB, largest working set with every load a hit)")
    ax.set_ylabel("G droplet-steps/s")
    ax.set_title(f"Throughput against L1 size: CUDA carveouts and vkerode ({gpu})")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    for ext in ("png", "svg"):
        fig.savefig(out / f"carveout.{ext}", dpi=110, bbox_inches="tight", metadata=NO_DATE[ext])
    print(f"L1 seen by the chase, KiB: CUDA {l1}, vkerode ssbo {vk_l1}")
    print(f"wrote {out}/chase.png|svg and {out}/carveout.png|svg")


if __name__ == "__main__":
    main()
