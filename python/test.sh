#!/usr/bin/env bash
# Builds the Python wheel with maturin (from PyPI) and runs the Python tests against it in a fresh
# virtual environment: what CI runs (.ci/run) and what a developer runs after changing python/.
# Usage: python/test.sh [pytest arguments...]
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/python-venv
rm -rf "$venv" target/wheels
python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q --upgrade pip >/dev/null
"$venv/bin/python" -m pip install -q "maturin>=1.16,<2" "pytest>=8" pandas pyarrow polars matplotlib
# One wheel for every CPython >= 3.9 (abi3), built by the same cargo workspace as the binary.
"$venv/bin/maturin" build --release --quiet -m python/Cargo.toml -o target/wheels \
  --interpreter "$venv/bin/python"
"$venv/bin/python" -m pip install -q --force-reinstall --no-deps target/wheels/rlfrontier-*.whl
# From the repository root, so the tests find grids/ and results/examples/; the installed wheel
# (not python/rlfrontier) is imported because the tests run with python/ out of sys.path.
"$venv/bin/python" -m pytest -q -p no:cacheprovider python/tests "$@"
