"""Python `sweep` of a grid to a DataFrame against the command line's CSV read by pandas.

Run from the repository root with the wheel installed (python/test.sh leaves one in
target/python-venv):

    target/python-venv/bin/python python/bench_sweep.py grids/big.toml

Each way runs in a fresh interpreter, so its peak RSS is its own. Prints one line per way.
"""

import json
import resource
import subprocess
import sys
import tempfile
import time

WAYS = {
    "python": """
import rlfrontier, sys
r = rlfrontier.sweep(sys.argv[1], threads=2)
rows = len(r.cells)
""",
    "cli+pandas": """
import pandas, subprocess, sys, tempfile
with tempfile.TemporaryDirectory() as d:
    subprocess.run([sys.argv[2], "sweep", sys.argv[1], "-q", "--threads", "2", "--out", d],
                   check=True, stdout=subprocess.DEVNULL)
    rows = len(pandas.read_csv(d + "/cells.csv"))
""",
}


def main() -> None:
    grid = sys.argv[1]
    binary = sys.argv[2] if len(sys.argv) > 2 else "target/release/rlfrontier"
    for name, body in WAYS.items():
        script = (
            "import time, resource, json\nt = time.perf_counter()\n"
            + body
            + "\nprint(json.dumps({'seconds': time.perf_counter() - t, 'rows': rows,"
            " 'peak_mb_self': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,"
            " 'peak_mb_children': resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}))"
        )
        out = subprocess.run(
            [sys.executable, "-c", script, grid, binary], check=True, capture_output=True, text=True
        )
        result = json.loads(out.stdout.strip().splitlines()[-1])
        print(
            f"{name:<11} {result['rows']:>9,} rows in {result['seconds']:6.2f} s, peak RSS "
            f"{result['peak_mb_self']:.0f} MB (python) / {result['peak_mb_children']:.0f} MB (cli)"
        )


if __name__ == "__main__":
    main()
