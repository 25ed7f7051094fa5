"""Python `sweep` of a grid to a DataFrame (pandas, polars, or streamed Arrow batches) against
the command line's CSV read by pandas.read_csv and its Parquet read by pandas.read_parquet.

Run from the repository root with the wheel installed (python/test.sh leaves one in
target/python-venv):

    target/python-venv/bin/python python/bench_sweep.py grids/big.toml

Each way runs in a fresh interpreter, so its peak RSS is its own. Prints one line per way: the
rows, the seconds, the peak RSS, and the table's own size (pandas' deep memory usage, polars'
Arrow buffers, which polars' estimated size under-counts; for the stream, its largest batch).
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
frame_mb = r.cells.memory_usage(deep=True).sum() / 2**20
""",
    "polars": """
import rlfrontier, sys, polars
r = rlfrontier.sweep(sys.argv[1], threads=2, backend="polars")
rows = r.cells.height
# The frame's own buffers, exported to Arrow without a copy (string columns stay string views).
# polars' estimated_size() leaves out a string column's 16-byte views and counts only its text
# (a million copies of "ab": 1.9 MB estimated, 15.3 MB of views), so it is printed beside.
frame_mb = r.cells.to_arrow(compat_level=polars.CompatLevel.newest()).nbytes / 2**20
note = f"; polars' estimated_size {r.cells.estimated_size() / 2**20:.0f} MB"
""",
    "stream": """
import rlfrontier, sys
rows = 0
frame_mb = 0.0
for batch in rlfrontier.sweep(sys.argv[1], threads=2, cells="stream", backend="arrow"):
    rows += batch.num_rows
    frame_mb = max(frame_mb, batch.nbytes / 2**20)
""",
    "cli+pandas": """
import pandas, subprocess, sys, tempfile
with tempfile.TemporaryDirectory() as d:
    subprocess.run([sys.argv[2], "sweep", sys.argv[1], "-q", "--threads", "2", "--out", d],
                   check=True, stdout=subprocess.DEVNULL)
    frame = pandas.read_csv(d + "/cells.csv")
    rows = len(frame)
    frame_mb = frame.memory_usage(deep=True).sum() / 2**20
""",
    "cli+parquet": """
import pandas, subprocess, sys, tempfile
with tempfile.TemporaryDirectory() as d:
    subprocess.run([sys.argv[2], "sweep", sys.argv[1], "-q", "--threads", "2", "--out", d,
                    "--format", "parquet"], check=True, stdout=subprocess.DEVNULL)
    frame = pandas.read_parquet(d + "/cells.parquet")
    rows = len(frame)
    frame_mb = frame.memory_usage(deep=True).sum() / 2**20
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
            " 'note': globals().get('note', ''),"
            " 'frame_mb': float(frame_mb),"
            " 'peak_mb_self': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,"
            " 'peak_mb_children': resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}))"
        )
        out = subprocess.run(
            [sys.executable, "-c", script, grid, binary], check=True, capture_output=True, text=True
        )
        result = json.loads(out.stdout.strip().splitlines()[-1])
        print(
            f"{name:<11} {result['rows']:>9,} rows in {result['seconds']:6.2f} s, peak RSS "
            f"{result['peak_mb_self']:.0f} MB (python) / {result['peak_mb_children']:.0f} MB (cli); "
            f"table {result['frame_mb']:.0f} MB"
            + (" (largest batch)" if name == "stream" else "")
            + result["note"]
        )


if __name__ == "__main__":
    main()
