#!/usr/bin/env python3
"""Checks rlfrontier's sigmoid fitter against scipy.optimize.curve_fit on the same data.

Not part of CI (it needs numpy and scipy: pip install numpy scipy). Run from the repository root
after `cargo build --release`:

    python3 benches/peers/curve_fit_check.py

For a set of seeded noisy ScaleRL-style curves R(x) = R0 + (A - R0) / (1 + (C/x)^beta) it writes
each data set to a CSV, fits it with `rlfrontier fit-curve --json`, fits it with curve_fit
(bounds A in [R0, 1], beta > 0, C > 0, method 'trf'), and prints the largest relative difference
of every parameter and of the residual sum of squares.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
from scipy.optimize import curve_fit

BIN = os.environ.get("RLFRONTIER", "./target/release/rlfrontier")


def model(x, r0):
    def f(x, a, beta, c):
        return r0 + (a - r0) / (1.0 + (c / x) ** beta)
    return f


def main():
    rng = np.random.default_rng(20261129)
    worst = {"ceiling": 0.0, "steepness": 0.0, "midpoint": 0.0, "rss": 0.0}
    cases = 0
    for case in range(40):
        r0 = rng.uniform(0.1, 0.5)
        a = rng.uniform(r0 + 0.1, 0.95)
        beta = rng.uniform(0.6, 2.5)
        c = 10 ** rng.uniform(2, 5)
        n = int(rng.integers(12, 60))
        x = np.sort(c * 10 ** rng.uniform(-1.2, 1.2, size=n))
        y = model(x, r0)(x, a, beta, c) + rng.normal(0, 0.004, size=n)
        with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as fh:
            fh.write("compute,score\n")
            for xi, yi in zip(x, y):
                fh.write(f"{float(xi)!r},{float(yi)!r}\n")
            path = fh.name
        ours = json.loads(subprocess.check_output([BIN, "fit-curve", path, "--base-score", repr(float(r0)), "--json"]))
        os.unlink(path)
        f = model(x, r0)
        best = None
        for p0 in ([max(y.max(), r0 + 1e-3) + 0.05 * (1 - y.max()), 1.0, np.median(x)], [min(0.99, (y.max() + 1) / 2), 2.0, x.max()]):
            try:
                popt, _ = curve_fit(f, x, y, p0=p0, bounds=([r0, 1e-9, 1e-12], [1.0, np.inf, np.inf]), method="trf",
                                    xtol=1e-15, ftol=1e-15, gtol=1e-15, max_nfev=100000)
            except RuntimeError:
                continue
            rss = float(np.sum((f(x, *popt) - y) ** 2))
            if best is None or rss < best[1]:
                best = (popt, rss)
        popt, rss_scipy = best
        rss_ours = float(np.sum((f(x, ours["ceiling"], ours["steepness"], ours["midpoint"]) - y) ** 2))
        cases += 1
        for name, ref, got in (("ceiling", popt[0], ours["ceiling"]), ("steepness", popt[1], ours["steepness"]),
                               ("midpoint", popt[2], ours["midpoint"])):
            worst[name] = max(worst[name], abs(got - ref) / abs(ref))
        worst["rss"] = max(worst["rss"], (rss_ours - rss_scipy) / rss_scipy)
    print(f"{cases} curves; largest relative difference from scipy.optimize.curve_fit:")
    for k, v in worst.items():
        label = "RSS (ours - scipy) / scipy" if k == "rss" else k
        print(f"  {label:28s} {v:.3e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
