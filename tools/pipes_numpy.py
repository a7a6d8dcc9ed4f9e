#!/usr/bin/env python3
"""An independent numpy port of vkerode's virtual-pipe model with the upwind transport
(the grid of `vkerode strategies`), written from the equations of docs/kernel.md in
float64: the second implementation that the grid's dt-convergence table is checked
against (results/pipes-dt/README.md).

    tools/pipes_numpy.py TERRAIN.envi SIZE --time T --dt DT --rain R
        [--open --base-level B] [--cap C] [--friction K] [--old-speed] [--no-floor]

TERRAIN.envi is raw float32, row-major, SIZE x SIZE (gdal_translate -of ENVI -ot
Float32 before.tif). Rain R is a depth per time unit. Prints one JSON line: the eroded
and deposited volumes and the net change (kernel height units x cells), and the lowest
cell after. --old-speed restores the rules before issue 40 (no speed in water of mean
depth 1e-4 or less, speed counted up to a cell per step); --no-floor lets open edges
erode below the base level.
"""
import argparse
import json

import numpy as np

GRAVITY = 9.81
PIPE_AREA = 20.0
CELL = 1.0
CAPACITY = 1.0
DISSOLVING = 0.5
DEPOSITION = 1.0
EVAPORATION = 0.015
MAX_EROSION_DEPTH = 0.1

# Pipes: left, right, top, bottom, as (dx, dy) and the index of the opposite pipe.
PIPES = [(-1, 0, 1), (1, 0, 0), (0, -1, 3), (0, 1, 2)]


def shifted(a, dx, dy, outside):
    """a at (x + dx, y + dy), `outside` past the map."""
    out = np.full_like(a, outside)
    h, w = a.shape
    ys, yd = (slice(dy, h), slice(0, h - dy)) if dy >= 0 else (slice(0, h + dy), slice(-dy, h))
    xs, xd = (slice(dx, w), slice(0, w - dx)) if dx >= 0 else (slice(0, w + dx), slice(-dx, w))
    out[yd, xd] = a[ys, xs]
    return out


def run(b, steps, dt, rain, open_edges=False, base=0.0, cap=None, friction=0.0,
        old_speed=False, floor=True):
    b = b.astype(np.float64)
    d = np.zeros_like(b)
    s = np.zeros_like(b)
    f = np.zeros((4,) + b.shape)
    area = CELL * CELL
    inside = {(dx, dy): shifted(np.ones_like(b), dx, dy, 0.0) > 0 for dx, dy, _ in PIPES}
    min_mean = 1e-4 if old_speed else 0.0
    for _ in range(steps):
        d = d + dt * rain
        surface = b + d
        nxt = np.zeros_like(f)
        for k, (dx, dy, _) in enumerate(PIPES):
            other = shifted(surface, dx, dy, base)
            flow = np.maximum(0.0, f[k] * (1.0 - friction * dt)
                              + dt * PIPE_AREA * GRAVITY * (surface - other) / CELL)
            nxt[k] = np.where(inside[(dx, dy)] | open_edges, flow, 0.0)
        total = nxt.sum(axis=0)
        with np.errstate(divide="ignore", invalid="ignore"):
            limit = np.where(total > 0, np.minimum(1.0, d * area / (total * dt)), 1.0)
        f = nxt * limit
        # Upwind transport along this step's outflows, before the water moves.
        with np.errstate(divide="ignore", invalid="ignore"):
            conc = np.where(d > 0, s / (d * area), 0.0)
        received = sum(shifted(conc * f[opp], dx, dy, 0.0) for dx, dy, opp in PIPES)
        s = np.maximum(0.0, s + dt * (received - conc * f.sum(axis=0)))
        inflow = sum(shifted(f[opp], dx, dy, 0.0) for dx, dy, opp in PIPES)
        depth = np.maximum(0.0, d + dt * (inflow - f.sum(axis=0)) / area)
        mean = 0.5 * (d + depth)
        # Net flow through the cell, per axis: half of (in - out) on each side.
        qx = 0.5 * (shifted(f[1], -1, 0, 0.0) - f[0] + f[1] - shifted(f[0], 1, 0, 0.0))
        qy = 0.5 * (shifted(f[3], 0, -1, 0.0) - f[2] + f[3] - shifted(f[2], 0, 1, 0.0))
        with np.errstate(divide="ignore", invalid="ignore"):
            speed = np.where(mean > min_mean, np.hypot(qx, qy) / (CELL * mean), 0.0)
        if old_speed:
            speed = np.minimum(speed, CELL / dt)
        # Past the map a neighbour's terrain is the cell's own.
        def at(dx, dy):
            return np.where(inside[(dx, dy)], shifted(b, dx, dy, 0.0), b)
        slope = np.hypot(0.5 * (at(1, 0) - at(-1, 0)), 0.5 * (at(0, 1) - at(0, -1))) / CELL
        tilt = slope / np.sqrt(1.0 + slope * slope)
        capacity = CAPACITY * tilt * speed * np.clip(depth / MAX_EROSION_DEPTH, 0.0, 1.0)
        change = np.where(capacity > s, DISSOLVING * (capacity - s),
                          -DEPOSITION * (s - capacity)) * dt
        change = np.maximum(change, -s)
        if open_edges and floor:
            change = np.where(change > 0, np.minimum(change, np.maximum(0.0, b - base)), change)
        carried = s + change
        if cap is not None:
            held = cap * depth * (1.0 - EVAPORATION * dt) * area
            over = carried > held
            change = np.where(over, held - s, change)
            carried = np.where(over, held, carried)
        b = b - change
        s = carried
        d = depth * (1.0 - EVAPORATION * dt)
    return b


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("terrain")
    p.add_argument("size", type=int)
    p.add_argument("--time", type=float, required=True)
    p.add_argument("--dt", type=float, required=True)
    p.add_argument("--rain", type=float, required=True)
    p.add_argument("--open", action="store_true")
    p.add_argument("--base-level", type=float, default=0.0)
    p.add_argument("--cap", type=float)
    p.add_argument("--friction", type=float, default=0.0)
    p.add_argument("--old-speed", action="store_true")
    p.add_argument("--no-floor", action="store_true")
    a = p.parse_args()
    before = np.fromfile(a.terrain, dtype=np.float32).reshape(a.size, a.size)
    steps = round(a.time / a.dt)
    after = run(before, steps, a.dt, a.rain, a.open, a.base_level, a.cap, a.friction,
                a.old_speed, not a.no_floor)
    change = after - before
    print(json.dumps({
        "dt": a.dt,
        "steps": steps,
        "eroded": float(-change[change < 0].sum()),
        "deposited": float(change[change > 0].sum()),
        "total_change": float(change.sum()),
        "min_after": float(after.min()),
    }))


if __name__ == "__main__":
    main()
