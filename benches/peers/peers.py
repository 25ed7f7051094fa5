#!/usr/bin/env python3
"""rlfrontier against the tools users would use instead, side by side in one run.

Not part of CI. Needs: pip install numpy scipy paretoset moocore; and `cargo build --release`.
Run from the repository root:

    python3 benches/peers/peers.py

1. Two-objective Pareto fronts (minimise the first column, maximise the second) of 1e5 and 1e6
   random and tie-heavy points: `rlfrontier front` (time measured inside the binary, excluding the
   CSV read) against `paretoset.paretoset` and `moocore.is_nondominated` (time of the call only).
   The fronts must be the same set of rows.
2. One 3-parameter sigmoid fit on 50 points: `rlfrontier fit-curve --repeat` (mean time of one
   fit inside the binary) against `scipy.optimize.curve_fit` (bounded, 'trf'), with the largest
   relative difference of the parameters.
Prints a Markdown table with the ratios.
"""
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

import numpy as np
import moocore
import paretoset
from scipy.optimize import curve_fit

BIN = os.environ.get("RLFRONTIER", "./target/release/rlfrontier")


def best_of(f, repeat=3):
    times = []
    out = None
    for _ in range(repeat):
        t = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t)
    return min(times), out


def fronts(rows):
    rng = np.random.default_rng(7)
    for n in (100_000, 1_000_000):
        for kind in ("random", "tie-heavy"):
            if kind == "random":
                pts = rng.random((n, 2))
            else:
                pts = rng.integers(0, 50, size=(n, 2)).astype(float)
            with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as fh:
                fh.write("cost,score\n")
                np.savetxt(fh, pts, delimiter=",", fmt="%.17g")
                path = fh.name
            ours = min((json.loads(subprocess.check_output([BIN, "front", path, "--columns", "cost,score", "--senses", "min,max"]))
                        for _ in range(3)), key=lambda r: r["seconds"])
            os.unlink(path)
            ours_rows = set(ours["front_rows"])
            t_ps, mask_ps = best_of(lambda: paretoset.paretoset(pts, sense=["min", "max"], distinct=False))
            oriented = np.column_stack([pts[:, 0], -pts[:, 1]])
            t_mc, mask_mc = best_of(lambda: moocore.is_nondominated(oriented, maximise=False, keep_weakly=True))
            same_ps = set(np.flatnonzero(mask_ps)) == ours_rows
            same_mc = set(np.flatnonzero(mask_mc)) == ours_rows
            rows.append((f"front, {n:,} {kind} points ({len(ours_rows):,} on the front)", ours["seconds"],
                         [("paretoset", t_ps, same_ps), ("moocore", t_mc, same_mc)]))


def fits(rows):
    rng = np.random.default_rng(11)
    r0, a, beta, c = 0.3, 0.62, 1.4, 2500.0
    x = np.sort(c * 10 ** rng.uniform(-1.2, 1.2, size=50))
    y = r0 + (a - r0) / (1 + (c / x) ** beta) + rng.normal(0, 0.004, size=50)
    with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as fh:
        fh.write("compute,score\n")
        for xi, yi in zip(x, y):
            fh.write(f"{float(xi)!r},{float(yi)!r}\n")
        path = fh.name
    ours = json.loads(subprocess.check_output([BIN, "fit-curve", path, "--base-score", repr(r0), "--json", "--repeat", "200"]))
    os.unlink(path)
    f = lambda x, a, b, c: r0 + (a - r0) / (1 + (c / x) ** b)

    def scipy_fit():
        return curve_fit(f, x, y, p0=[y.max() + 0.01, 1.0, float(np.median(x))],
                         bounds=([r0, 1e-9, 1e-12], [1.0, np.inf, np.inf]), method="trf")[0]
    n = 50
    t = time.perf_counter()
    for _ in range(n):
        popt = scipy_fit()
    t_scipy = (time.perf_counter() - t) / n
    diff = max(abs(ours["ceiling"] - popt[0]) / popt[0], abs(ours["steepness"] - popt[1]) / popt[1],
               abs(ours["midpoint"] - popt[2]) / popt[2])
    rows.append(("sigmoid fit, 50 points (3 parameters)", ours["fit_seconds"],
                 [("scipy curve_fit", t_scipy, diff < 1e-6)]))
    return diff


def main():
    rows = []
    fronts(rows)
    diff = fits(rows)
    print(f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"numpy {np.__version__}; date {time.strftime('%Y-%m-%d')}")
    print()
    print("| task | rlfrontier | peer | peer time | ratio | same answer |")
    print("|---|---:|---|---:|---:|---|")
    for task, ours, peers in rows:
        for name, t, same in peers:
            print(f"| {task} | {ours * 1e3:.2f} ms | {name} | {t * 1e3:.2f} ms | {t / ours:.0f}x | {'yes' if same else 'NO'} |")
    print()
    print(f"sigmoid parameters: largest relative difference from scipy {diff:.1e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
