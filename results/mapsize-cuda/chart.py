#!/usr/bin/env python3
"""Both curves of results/mapsize-cuda/ and their ratio: vkerode's paper kernel and the
CUDA yardstick, G droplet-steps/s against map size, on one card.

    python3 results/mapsize-cuda/chart.py combine OUT   # standard library only
    python3 results/mapsize-cuda/chart.py draw OUT      # needs matplotlib

`combine` reads OUT/vkerode/points.csv (vkerode sweep experiments/mapsize-cuda.toml) and
OUT/cuda/cuda_mapsize.csv (results/cuda/mapsize.py), checks that both ran the same job
(size, seed, droplets in one dispatch or launch, workgroup or block, lifetime, scale),
and writes OUT/ratio.csv (size,vkerode_g,cuda_g,ratio: G droplet-steps/s, ratio =
vkerode / CUDA; a side that has no point at a size leaves its cells empty) and
OUT/comparison.csv (both sides' GPU times, quartiles, repetitions, droplet-steps and
net changes, and the devices). run.sh runs it on the GPU machine.

`draw` reads OUT/ratio.csv (and OUT/comparison.csv for the device and the quartiles)
and writes OUT/mapsize-cuda.png and OUT/mapsize-cuda.svg.
"""

import argparse
import csv
import sys
from pathlib import Path

CHART = "mapsize-cuda"
RATIO_COLUMNS = ["size", "vkerode_g", "cuda_g", "ratio"]
# Settings both sides must share: (vkerode's points.csv column, cuda_mapsize.csv's).
SAME_JOB = [("droplets", "droplets"), ("seed", "seed"), ("batch", "batch"),
            ("workgroup", "block"), ("lifetime", "lifetime"), ("scale", "scale")]


class CombineError(Exception):
    pass


class NoResults(CombineError):
    """A side's file is missing or holds no rows: that side did not run, or finished no size."""


def read_csv(path, what):
    if not path.is_file():
        raise NoResults(f"{path} is missing ({what})")
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        raise NoResults(f"{path} has no rows ({what})")
    return rows


def number(text):
    """A CSV cell as a number (int where it is one); None for an empty cell."""
    if text is None or text == "":
        return None
    value = float(text)
    return int(value) if value.is_integer() else value


def by_size(rows, path):
    table = {}
    for row in rows:
        size = int(row["size"])
        if size in table:
            raise CombineError(f"{path}: two rows for size {size}")
        table[size] = row
    return table


def vkerode_rows(out):
    path = out / "vkerode" / "points.csv"
    rows = read_csv(path, "vkerode sweep experiments/mapsize-cuda.toml")
    other = {(r.get("algorithm"), r.get("variant")) for r in rows} - {("droplets", "paper")}
    if other:
        raise CombineError(f"{path}: rows of {sorted(other)}, not only the paper's droplet kernel")
    return by_size(rows, path)


def cuda_rows(out):
    path = out / "cuda" / "cuda_mapsize.csv"
    return by_size(read_csv(path, "results/cuda/mapsize.py"), path)


def check_same_job(vk, cu, size):
    """Raises if the two sides' settings at `size` differ."""
    vk_settings = dict(vk)
    # An empty droplet_seed is the terrain seed; the CUDA side uses one seed for both.
    if vk_settings.get("droplet_seed") not in ("", None, vk_settings["seed"]):
        raise CombineError(f"size {size}: vkerode's droplet_seed {vk_settings['droplet_seed']} "
                           f"differs from its terrain seed {vk_settings['seed']}, which the CUDA "
                           "side uses for both")
    for vk_key, cu_key in SAME_JOB:
        a, b = number(vk_settings.get(vk_key)), number(cu.get(cu_key))
        if a != b:
            raise CombineError(f"size {size}: vkerode's {vk_key} is {a}, the CUDA side's "
                               f"{cu_key} is {b}: not the same job")


def combine(out):
    sides, missing = [], []
    for name, read in (("vkerode", vkerode_rows), ("CUDA", cuda_rows)):
        try:
            sides.append(read(out))
        except NoResults as error:
            sides.append({})
            missing.append(str(error))
    vk, cu = sides
    if len(missing) == 2:
        raise CombineError("neither side has results: " + "; ".join(missing))
    for error in missing:
        print(f"warning: {error}: its columns stay empty", file=sys.stderr)
    ratio_rows, comparison = [], []
    for size in sorted(set(vk) | set(cu)):
        v, c = vk.get(size), cu.get(size)
        if v is not None and c is not None:
            check_same_job(v, c, size)
        v_steps = number(v["droplet_steps_per_s"]) if v else None
        vk_g = v_steps / 1e9 if v_steps is not None else None
        cu_g = number(c["g_steps_per_s"]) if c else None
        ratio = vk_g / cu_g if vk_g is not None and cu_g else None
        ratio_rows.append(dict(size=size, vkerode_g=vk_g, cuda_g=cu_g, ratio=ratio))

        def g_over(steps, ms):
            steps, ms = number(steps), number(ms)
            return steps / (ms * 1e-3) / 1e9 if steps is not None and ms else None

        comparison.append(dict(
            size=size,
            heightmap_mib=size * size * 4 / 2**20,
            vkerode_g=vk_g,
            vkerode_g_q1=g_over(v["droplet_steps"], v["gpu_ms_q3"]) if v else None,
            vkerode_g_q3=g_over(v["droplet_steps"], v["gpu_ms_q1"]) if v else None,
            cuda_g=cu_g,
            cuda_g_q1=g_over(c["steps"], c["gpu_ms_q3"]) if c else None,
            cuda_g_q3=g_over(c["steps"], c["gpu_ms_q1"]) if c else None,
            ratio=ratio,
            vkerode_kernel=v.get("kernel") if v else None,
            vkerode_gpu_ms_median=number(v["gpu_ms_median"]) if v else None,
            cuda_gpu_ms_median=number(c["gpu_ms_median"]) if c else None,
            vkerode_reps=number(v.get("reps")) if v else None,
            cuda_reps=number(c["reps"]) if c else None,
            vkerode_droplet_steps=number(v["droplet_steps"]) if v else None,
            cuda_droplet_steps=number(c["steps"]) if c else None,
            vkerode_net_change_counted=number(v.get("total_height_change")) if v else None,
            cuda_net_change_counted=number(c.get("net_change_counted")) if c else None,
            cuda_net_change_timed=number(c["net_change"]) if c else None,
            vkerode_max_cell_change_counted=number(v.get("max_cell_change")) if v else None,
            cuda_max_cell_change_timed=number(c.get("max_cell_change")) if c else None,
            vkerode_device=v.get("device") if v else None,
            vkerode_driver=v.get("driver") if v else None,
            vkerode_commit=v.get("commit") if v else None,
        ))
    device = cuda_device(out)
    for row in comparison:
        row["cuda_device"] = device
    with open(out / "ratio.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=RATIO_COLUMNS)
        writer.writeheader()
        writer.writerows(ratio_rows)
    with open(out / "comparison.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(comparison[0]))
        writer.writeheader()
        writer.writerows(comparison)
    print("size | vkerode G droplet-steps/s | CUDA G droplet-steps/s | vkerode / CUDA")
    for r in ratio_rows:
        print(" | ".join([f"{r['size']}²"] + ["-" if r[k] is None else f"{r[k]:.3f}"
                                                for k in ("vkerode_g", "cuda_g", "ratio")]))
    names = {r["vkerode_device"] for r in comparison if r["vkerode_device"]}
    if device and names and not any(device in n or n in device for n in names):
        print(f"warning: vkerode ran on {sorted(names)}, the CUDA side on {device}: not one card?",
              file=sys.stderr)
    print(f"wrote {out / 'ratio.csv'} and {out / 'comparison.csv'}")


def cuda_device(out):
    """The CUDA side's device name, from cuda_mapsize.json (standard library json)."""
    import json
    try:
        with open(out / "cuda" / "cuda_mapsize.json") as f:
            return json.load(f)["device"]["name"]
    except (OSError, KeyError, ValueError):
        return None


def mib(size):
    """The int32 heightmap of a size x size map, in MiB or GiB."""
    size_bytes = size * size * 4
    return f"{size_bytes / 2**30:g} GiB" if size_bytes >= 2**30 else f"{size_bytes / 2**20:g} MiB"


def draw(out):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import FixedLocator, NullLocator
    except ImportError:
        sys.exit("draw needs matplotlib (python3 -m pip install matplotlib)")
    rows = read_csv(out / "ratio.csv", "chart.py combine")
    extra = {}
    if (out / "comparison.csv").is_file():
        extra = {int(r["size"]): r for r in read_csv(out / "comparison.csv", "chart.py combine")}
    names = [sorted({r.get(k) for r in extra.values() if r.get(k)}) for k in ("vkerode_device", "cuda_device")]
    vk_names, cu_names = (", ".join(n) for n in names)
    if vk_names and cu_names and vk_names != cu_names:
        device = f"{vk_names} (vkerode) and {cu_names} (CUDA)"
    else:
        device = vk_names or cu_names or "an unnamed device"

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 7.5), sharex=True,
                                      gridspec_kw=dict(height_ratios=[2, 1]))
    series = [("cuda_g", "CUDA yardstick (droplet.cu, 64-bit indices, block 64)", "tab:green", "s"),
              ("vkerode_g", "vkerode paper kernel (Vulkan, workgroup 64)", "tab:blue", "o")]
    values = {key: {int(r["size"]): float(r[key]) for r in rows if r[key] not in ("", None)}
              for key, *_ in series}

    def label_offset(key, size):
        """Points' values above the higher curve's point and below the lower's."""
        other = values["vkerode_g" if key == "cuda_g" else "cuda_g"].get(size)
        mine = values[key][size]
        return 7 if other is None or mine > other or (mine == other and key == "cuda_g") else -13

    sizes_all = [int(r["size"]) for r in rows]
    for key, label, colour, marker in series:
        points = [(int(r["size"]), float(r[key])) for r in rows if r[key] not in ("", None)]
        if not points:
            continue
        xs, ys = zip(*points)
        low, high = [], []
        for x, y in points:
            e = extra.get(x, {})
            q1, q3 = e.get(f"{key}_q1"), e.get(f"{key}_q3")
            low.append(y - float(q1) if q1 else 0.0)
            high.append(float(q3) - y if q3 else 0.0)
        top.errorbar(xs, ys, yerr=[low, high], color=colour, marker=marker, capsize=3,
                     label=label)
        for x, y in points:
            top.annotate(f"{y:.2f}" if y >= 0.1 else f"{y:.3f}", (x, y),
                         textcoords="offset points", xytext=(0, label_offset(key, x)), ha="center",
                         fontsize=8,
                         color=colour)
    top.set_yscale("log")
    top.set_ylabel("throughput, G droplet-steps/s\n(10⁹ droplet-steps per second, log)")
    top.grid(True, which="both", alpha=0.3)
    top.legend(loc="best", fontsize=9)

    ratios = [(int(r["size"]), float(r["ratio"])) for r in rows if r["ratio"] not in ("", None)]
    if ratios:
        xs, ys = zip(*ratios)
        bottom.plot(xs, ys, color="tab:purple", marker="D")
        for x, y in ratios:
            bottom.annotate(f"{y:.3g}", (x, y), textcoords="offset points", xytext=(0, -13),
                            ha="center", fontsize=8, color="tab:purple")
        span = [y for y in ys if y > 0] + [1.0]  # with the line at 1
        if max(span) / min(span) > 20:
            bottom.set_yscale("log")
    bottom.axhline(1.0, color="grey", linewidth=0.8, linestyle="--")
    bottom.margins(y=0.2)
    top.margins(y=0.12)
    bottom.set_ylabel("vkerode / CUDA\n(ratio of G droplet-steps/s)")
    bottom.grid(True, which="both", alpha=0.3)

    bottom.set_xscale("log", base=2)
    bottom.xaxis.set_major_locator(FixedLocator(sizes_all))
    bottom.xaxis.set_minor_locator(NullLocator())
    bottom.set_xticks(sizes_all)
    bottom.set_xticklabels([f"{s}²\n{mib(s)}" for s in sizes_all],
                           fontsize=8)
    bottom.set_xlabel("map size, cells (side², log₂), and its int32 heightmap")
    pad = 2 ** 0.4
    bottom.set_xlim(min(sizes_all) / pad, max(sizes_all) * pad)
    fig.suptitle(f"The paper's droplet kernel against map size\non {device}\n"
                 "same terrain and droplets, one dispatch or launch; bars: interquartile range",
                 fontsize=11)
    fig.tight_layout()
    for ext in ("png", "svg"):
        fig.savefig(out / f"{CHART}.{ext}", dpi=130)
    print(f"wrote {out / (CHART + '.png')} and .svg")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=["combine", "draw"])
    parser.add_argument("out", type=Path, help="the folder run.sh wrote")
    args = parser.parse_args()
    if args.action == "combine":
        try:
            combine(args.out)
        except CombineError as error:
            sys.exit(f"combine: {error}")
    else:
        draw(args.out)


if __name__ == "__main__":
    main()
