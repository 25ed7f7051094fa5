# Load time and peak memory of a sweep's cells table in pandas, CSV against Parquet:
#   rlfrontier sweep grids/big.toml -q --cells all --out /tmp/bigcsv
#   rlfrontier sweep grids/big.toml -q --cells all --format parquet --out /tmp/bigpq
#   python3 benches/load_cells.py /tmp/bigcsv/cells.csv; python3 benches/load_cells.py /tmp/bigpq/cells.parquet
# (pandas, and pyarrow for Parquet; one file per process so the peak memory is that load's.)
import sys, time, resource, pandas as pd
path = sys.argv[1]
t = time.perf_counter()
df = pd.read_parquet(path) if path.endswith(".parquet") else pd.read_csv(path)
dt = time.perf_counter() - t
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(f"{path}: {len(df):,} rows x {df.shape[1]} columns in {dt:.2f} s, peak RSS {rss:.0f} MB")
