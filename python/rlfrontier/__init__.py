"""rlfrontier from Python: price an RL post-training run, sweep an allocation grid, calibrate on
pilot results, with dicts and DataFrames in and out.

Every function runs the same Rust code as the ``rlfrontier`` command line, in this process (no
subprocess, no network, no GPU): the numbers and the error messages are the command line's.

- :func:`cost` prices one run (the content of ``rlfrontier cost --json``).
- :func:`sweep` evaluates a grid (a TOML file or a dict) and returns its cells, frontier and
  shortlist as DataFrames; cells arrive as Arrow record batches while the sweep runs (no file,
  no CSV text), or batch by batch with ``cells="stream"``.
- :func:`fit` calibrates the outcome model on pilot results (a DataFrame or a CSV file).
- :func:`catalog` lists the models, GPUs, engines, rewards and API prices the tool knows.

Bad input raises :class:`RlfrontierError` with the command line's one-line message.
"""

from __future__ import annotations

import json
import math
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Literal, Mapping, Optional, Union

from . import _native

__all__ = [
    "RlfrontierError",
    "SweepResult",
    "SweepStream",
    "FitReport",
    "cost",
    "sweep",
    "fit",
    "catalog",
    "check",
    "run",
    "__version__",
]

__version__: str = _native.__version__

PathLike = Union[str, "os.PathLike[str]"]
Backend = Literal["pandas", "polars", "arrow"]


class RlfrontierError(Exception):
    """A command that failed: ``message`` is the command line's one-line error (it names the
    file, field or flag and how to fix it) and ``exit_code`` its exit code (2 bad input, 3 a run
    that cannot fit on the hardware, 1 an environment failure such as an unwritable folder)."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code


def run(*words: str) -> str:
    """Runs ``rlfrontier WORDS...`` in this process and returns what it printed.

    The escape hatch for commands without a dedicated function:
    ``rlfrontier.run("flops", "--model", "qwen2.5-7b", "--tokens", "1e9")``.
    """
    code, payload = _native.run([_word(w) for w in words])
    text = bytes(payload).decode("utf-8")
    if code != 0:
        raise RlfrontierError(text, code)
    return text


def _word(value: Any) -> str:
    """One command-line word: a path (``str``, ``bytes`` or ``os.PathLike``) through
    ``os.fsdecode`` (a bytes path is the file it names, never ``"b'g.toml'"``), anything else
    through ``str``."""
    if isinstance(value, (bytes, os.PathLike)):
        return os.fsdecode(value)
    return str(value)


def _keyword_error(function: str, options: Mapping[str, Any], error: RlfrontierError) -> RlfrontierError:
    """The command line's "unexpected argument '--group-szie'" said in Python's words: the
    keyword as it was typed, and the command line's suggestion as the keyword to use
    (``group_size``); other errors pass through unchanged."""
    unexpected = re.search(r"unexpected argument '(--[A-Za-z0-9-]+)'", error.message)
    if unexpected is None:
        return error
    flag = unexpected.group(1)
    for key, value in options.items():
        name = key.replace("_", "-")
        if flag in ("--" + name, "--no-" + name):
            typed = f"{key}={value!r}"
            suggestion = re.search(r"similar argument exists: '--([A-Za-z0-9-]+)'", error.message)
            hint = (
                f"; did you mean {suggestion.group(1).replace('-', '_')}=?"
                if suggestion
                else f"; see `rlfrontier {function} --help` for the keywords (flags with underscores)"
            )
            return RlfrontierError(
                f"{function}(): keyword {typed} is not accepted (the command line has no {flag}){hint}",
                error.exit_code,
            )
    return error


def _polars():
    """polars, or an error that names the extra that installs it."""
    try:
        import polars as pl
    except ModuleNotFoundError:
        raise ModuleNotFoundError(
            "backend='polars' needs polars, which is an optional extra: pip install 'rlfrontier[polars]'"
        ) from None
    return pl


# Keywords that would make a command print something other than its result.
_NOT_KEYWORDS = ("help", "version", "json", "h", "V")


def _flag_words(options: Mapping[str, Any], function: str = "cost") -> List[str]:
    """Keyword arguments as command-line words: ``gpu_hours=3`` becomes ``--gpu-hours=3`` (one
    word, so a negative value is never read as a flag); ``True`` becomes the bare flag and
    ``False`` its negation (``kl_reference=False`` is ``--no-kl-reference``; a flag without a
    negation is then refused by the command line, never ignored); ``None`` is left out; lists
    give their values after one flag (``--logs a b``); paths go through ``os.fsdecode``. A
    value that is not a number, string, path, bool or list of them, a NaN or infinity, and the
    keywords ``help``/``version``/``json`` raise :class:`RlfrontierError` naming the keyword."""
    words: List[str] = []
    for key, value in options.items():
        if key in _NOT_KEYWORDS:
            raise RlfrontierError(f"{function}(): keyword {key}= is not accepted; see help(rlfrontier.{function})", 2)
        if value is None:
            continue
        flag = "--" + key.replace("_", "-")
        if value is True:
            words.append(flag)
        elif value is False:
            words.append("--no-" + key.replace("_", "-"))
        elif isinstance(value, (list, tuple)):
            words.append(flag)
            words.extend(_keyword_value(function, key, v) for v in value)
        else:
            words.append(f"{flag}={_keyword_value(function, key, value)}")
    return words


def _keyword_value(function: str, key: str, value: Any) -> str:
    """A keyword's value as one word, or :class:`RlfrontierError` naming the keyword."""
    if isinstance(value, float) and not math.isfinite(value):
        raise RlfrontierError(f"{function}(): keyword {key}={value!r} is not a finite number", 2)
    if isinstance(value, (bool, int, float, str, bytes, os.PathLike)):
        return _word(value)
    raise RlfrontierError(
        f"{function}(): keyword {key}={value!r} is a {type(value).__name__}; give a number, a string or a path",
        2,
    )


def cost(**run_settings: Any) -> Dict[str, Any]:
    """Prices one run: what it costs, where the money goes (search, learning, feedback, per
    phase) and where it is wasted. The keywords are ``rlfrontier cost``'s flags with underscores
    (``model``, ``gpu``, ``gpus``, ``group_size``, ``max_response_len``, ``steps``,
    ``budget``, ``reward``, ``lora_rank``, ``from_verl``, ...); see ``rlfrontier cost --help``.

    >>> report = rlfrontier.cost(model="qwen2.5-7b", gpu="h100-sxm", gpus=8, steps=200)
    >>> report["usd"]["total"], report["usd_share"]["search"]

    Returns the parsed ``cost --json`` document.
    """
    try:
        return json.loads(run("cost", "--json", *_flag_words(run_settings)))
    except RlfrontierError as error:
        raise _keyword_error("cost", run_settings, error) from None


def catalog(part: Optional[str] = None) -> Dict[str, Any]:
    """The catalog as a dict: ``models``, ``gpus``, ``engines``, ``rewards``, ``apis`` (or only
    ``part``), each entry with its source."""
    words = ["catalog"] + ([part] if part else []) + ["--json"]
    return json.loads(run(*words))


def _grid_file(grid: Union[PathLike, Mapping[str, Any]], folder: Path) -> str:
    """A grid argument as a file path: a path is used as it is; a dict is written as TOML."""
    if isinstance(grid, Mapping):
        bad = _bad_grid_value(grid, "")
        if bad is not None:
            raise RlfrontierError(
                f"grid: {bad[0]} = {bad[1]!r} cannot be written to a grid file; give a number, string, bool, list or table (leave a key out for its default)",
                2,
            )
        path = folder / "grid.toml"
        path.write_text(_native.toml_from_json(json.dumps(grid, allow_nan=False)), encoding="utf-8")
        return str(path)
    if not isinstance(grid, (str, bytes, os.PathLike)):
        raise RlfrontierError(f"grid: {grid!r} is a {type(grid).__name__}; give a path or a dict", 2)
    return os.fsdecode(grid)


def _bad_grid_value(value: Any, key: str) -> Optional[tuple]:
    """The first (dotted key, value) of a grid dict TOML cannot hold: None, NaN, infinity or an
    object that is not a number, string, bool, list or table."""
    if isinstance(value, Mapping):
        for k, v in value.items():
            bad = _bad_grid_value(v, f"{key}.{k}" if key else str(k))
            if bad is not None:
                return bad
        return None
    if isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            bad = _bad_grid_value(v, f"{key}[{i}]")
            if bad is not None:
                return bad
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return key, value
    if value is None or not isinstance(value, (bool, int, float, str)):
        return key, value
    return None


def check(grid: Union[PathLike, Mapping[str, Any]]) -> str:
    """Validates a grid (a TOML file or a dict of the same shape) and returns ``check``'s
    summary: axes, cell counts, what is pruned and why."""
    with tempfile.TemporaryDirectory(prefix="rlfrontier-") as scratch:
        return run("check", _grid_file(grid, Path(scratch)))


def _check_backend(backend: Backend) -> None:
    """Refuses a backend other than the three, or polars when it is not installed, before any
    work."""
    if backend not in ("pandas", "polars", "arrow"):
        raise ValueError(f"backend must be 'pandas', 'polars' or 'arrow', not {backend!r}")
    if backend == "polars":
        _polars()


def _frame(table: Any, backend: Backend):
    """A pyarrow Table or RecordBatch in the chosen DataFrame library. pandas takes a table's
    contiguous columns without copying where it can (``split_blocks``: numeric columns without
    missing values; with pandas 3, strings as its ``str`` dtype) and releases the rest column by
    column as they are converted (``self_destruct``)."""
    if backend == "arrow":
        return table
    if backend == "polars":
        return _polars().from_arrow(table)
    import pyarrow as pa

    if isinstance(table, pa.Table):
        return table.to_pandas(self_destruct=True, split_blocks=True)
    return table.to_pandas()


def _table(path: Path, backend: Backend):
    """Reads a Parquet file into the chosen DataFrame library (pyarrow is the bridge)."""
    import pyarrow.parquet as pq

    return _frame(pq.read_table(path), backend)


def _tables(folder: Path, names: List[str], backend: Backend) -> Dict[str, Any]:
    """The sweep's small tables (frontier, allocation frontier, shortlist) from its folder; None
    for one that was not written."""
    tables = {}
    for name in names:
        path = folder / f"{name}.parquet"
        tables[name] = _table(path, backend) if path.exists() else None
    return tables


# What the native reader reports when Ctrl-C interrupts a whole-table read.
_INTERRUPTED = "rlfrontier: interrupted (KeyboardInterrupt)"


class _StreamedSweep:
    """A native sweep whose cells come as an Arrow C stream. Its thread is always joined
    (:meth:`summary` or :meth:`stop`) before its folder may be removed."""

    def __init__(self, words: List[str], whole: bool = False, backend: Backend = "pandas") -> None:
        # ``whole``: one record batch with the whole table, each column one contiguous array,
        # which pandas (``split_blocks``) and polars take without copying; else one per row group.
        # For polars the text columns come as string views, its own layout for strings.
        self.native = _native.sweep_stream(words, whole, backend == "polars")
        self.reader: Any = None
        self.joined = False

    def batches(self):
        """The cells' record batches, in cell order (none when the sweep made no table). A sweep
        that fails raises its own error, the command line's, not pyarrow's."""
        import pyarrow as pa

        if not self.native.has_cells:
            return
        self.reader = pa.RecordBatchReader.from_stream(self.native)
        try:
            yield from self.reader
        except pa.ArrowException as error:
            self.reader.close()
            if _INTERRUPTED in str(error):
                # Ctrl-C during a whole-table read (taken once per row group): the sweep is
                # stopped by ``stop()``; the interrupt is the user's, not a sweep failure.
                raise KeyboardInterrupt from None
            code, text = self._join()
            if code != 0 and text in str(error):
                raise RlfrontierError(text, code) from None
            raise

    def _join(self):
        """Waits for the sweep's thread: its exit code and what it printed (or its message)."""
        self.joined = True
        code, payload = self.native.finish()
        return code, bytes(payload).decode("utf-8")

    def summary(self) -> Dict[str, Any]:
        """After the batches: the sweep's summary, or its error raised."""
        code, text = self._join()
        if code != 0:
            raise RlfrontierError(text, code)
        return json.loads(text)

    def stop(self) -> None:
        """Stops the sweep if it still runs and waits for its thread (nothing raised)."""
        if self.joined:
            return
        if self.reader is not None:
            self.reader.close()
        self.native.cancel()
        self._join()


@dataclass
class SweepResult:
    """A swept grid: ``cells`` (one row per cell, the columns of cells.csv), ``frontier`` (the
    cost-score Pareto front per budget), ``allocation_frontier`` (the compute-split fronts),
    ``shortlist`` (the regimes worth a validation run), ``summary`` (what ``sweep --json``
    prints) and ``out`` (the folder with the report and plots, or None when it was temporary)."""

    cells: Any
    frontier: Any
    allocation_frontier: Any
    shortlist: Any
    summary: Dict[str, Any]
    out: Optional[Path] = None


def _sweep_words(
    grid_file: str, folder: Path, cells: str, options: Mapping[str, Any]
) -> List[str]:
    """The ``sweep`` command line the Python sweep runs."""
    words = [
        "sweep",
        grid_file,
        "--out",
        str(folder),
        "--format",
        "parquet",
        "--json",
        "--quiet",
        "--cells",
        cells,
    ]
    return words + _flag_words(options)


def _files_kept(summary: dict, out: Optional[PathLike]) -> dict:
    """The summary with ``files`` listing only files that outlive the call: without ``out`` the
    sweep wrote into a temporary folder that is removed, so it lists none."""
    if out is None:
        return dict(summary, files=[])
    return summary


def sweep(
    grid: Union[PathLike, Mapping[str, Any]],
    *,
    out: Optional[PathLike] = None,
    cells: Literal["all", "feasible", "frontier", "none", "stream"] = "all",
    calibration: Optional[PathLike] = None,
    threads: Optional[int] = None,
    catalog: Optional[PathLike] = None,
    force: bool = False,
    backend: Backend = "pandas",
) -> Union[SweepResult, "SweepStream"]:
    """Evaluates every cell of a grid (a TOML file in ``grids/`` or a dict of the same shape) and
    returns its tables as DataFrames (``backend``: pandas, polars, or pyarrow Tables).

    Without ``out`` the cells reach Python as Arrow record batches while the sweep runs (the
    Arrow C stream interface: no file, no text), and the other outputs live in a temporary
    folder that is removed. With ``out`` the folder keeps everything ``rlfrontier sweep
    --format parquet`` writes (cells.parquet, report.html, plots, the CSV tables) and the cells
    are read back from cells.parquet. ``cells`` limits the rows as ``--cells`` does.

    ``cells="stream"`` returns a :class:`SweepStream` instead: iterate over it for the cells, one
    DataFrame per row group of about 131,072 cells in cell order, for grids larger than memory
    (every row, as ``cells="all"``); its ``result`` then holds the frontier, shortlist and
    summary. The streamed cells are not written, with ``out`` or without (the folder gets the
    other outputs).
    """
    _check_backend(backend)
    options = {
        "calibration": calibration,
        "threads": threads,
        "catalog": catalog,
        "force": True if (force or out is None) else None,
    }
    if cells == "stream":
        return SweepStream(grid, out, options, backend)
    with tempfile.TemporaryDirectory(prefix="rlfrontier-") as scratch:
        folder = Path(out) if out is not None else Path(scratch) / "out"
        words = _sweep_words(_grid_file(grid, Path(scratch)), folder, cells, options)
        cells_table = None
        if out is None and cells != "none":
            streamed = _StreamedSweep(words, whole=True, backend=backend)
            try:
                batches = list(streamed.batches())
                summary = streamed.summary()
            finally:
                streamed.stop()
            if streamed.reader is not None:
                import pyarrow as pa

                table = pa.Table.from_batches(batches, schema=streamed.reader.schema)
                del batches
                cells_table = _frame(table, backend)
        else:
            summary = json.loads(run(*words))
            cells_file = folder / "cells.parquet"
            cells_table = _table(cells_file, backend) if cells_file.exists() else None
        tables = _tables(folder, ["frontier", "allocation_frontier", "shortlist"], backend)
        return SweepResult(
            summary=_files_kept(summary, out),
            out=Path(out) if out is not None else None,
            cells=cells_table,
            **tables,
        )


class SweepStream:
    """A sweep whose cells arrive as they are computed (``sweep(..., cells="stream")``).

    Iterate over it once for the cells: one DataFrame (or pyarrow RecordBatch with
    ``backend="arrow"``) per row group, in cell order; the sweep waits while the loop is behind,
    so memory stays bounded however large the grid. When the iteration ends, ``result`` is the
    :class:`SweepResult` without ``cells`` (frontier, allocation frontier, shortlist, summary);
    a failed sweep raises :class:`RlfrontierError` from the loop. :meth:`close` (or leaving a
    ``with`` block) stops a sweep still running, waits for it, and removes its temporary folder.
    The cells are not written anywhere, with ``out`` or without; the sweep commits its folder
    only once the stream has been read to its end (a stream closed earlier leaves no results).
    """

    def __init__(
        self,
        grid: Union[PathLike, Mapping[str, Any]],
        out: Optional[PathLike],
        options: Mapping[str, Any],
        backend: Backend,
    ) -> None:
        self._scratch = tempfile.TemporaryDirectory(prefix="rlfrontier-")
        self._out = Path(out) if out is not None else None
        self._folder = self._out or Path(self._scratch.name) / "out"
        grid_file = _grid_file(grid, Path(self._scratch.name))
        self._backend = backend
        self._sweep = _StreamedSweep(
            _sweep_words(grid_file, self._folder, "all", options), backend=backend
        )
        self._result: Optional[SweepResult] = None
        self._iterator: Any = None

    def __iter__(self):
        if self._iterator is not None:
            raise RuntimeError("a SweepStream can be iterated once")
        self._iterator = self._frames()
        return self._iterator

    def _frames(self):
        try:
            for batch in self._sweep.batches():
                yield _frame(batch, self._backend)
            summary = self._sweep.summary()
            tables = _tables(
                self._folder, ["frontier", "allocation_frontier", "shortlist"], self._backend
            )
            self._result = SweepResult(
                cells=None, summary=_files_kept(summary, self._out), out=self._out, **tables
            )
        finally:
            self._sweep.stop()
            self._scratch.cleanup()

    @property
    def result(self) -> SweepResult:
        """The sweep's other tables and summary, once every batch has been read."""
        if self._result is None:
            raise RuntimeError("read every batch of the stream first (iterate over it)")
        return self._result

    def close(self) -> None:
        """Stops the sweep if it still runs, waits for it, and removes its temporary folder."""
        if self._iterator is not None:
            self._iterator.close()
        self._sweep.stop()
        self._scratch.cleanup()

    def __enter__(self) -> "SweepStream":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


@dataclass
class FitReport:
    """A calibration on pilot runs: ``calibration`` (calibration.json: the fitted outcome
    parameters, which the pilots decided and which the prior did, cross-validated error),
    ``fits`` (per-run sigmoid fits with identification and notes), ``text`` (``fit``'s
    printed summary) and ``calibration_file`` (give it to :func:`sweep` as ``calibration``; None
    when the folder was temporary)."""

    calibration: Dict[str, Any]
    fits: Any
    text: str
    calibration_file: Optional[Path] = None
    extra: Dict[str, Any] = field(default_factory=dict)


def fit(
    results: Any,
    plan: PathLike,
    *,
    out: Optional[PathLike] = None,
    metric: Optional[str] = None,
    scale: Optional[Literal["fraction", "percent"]] = None,
    seed: Optional[int] = None,
    bootstrap: Optional[int] = None,
    force: bool = False,
    backend: Backend = "pandas",
) -> FitReport:
    """Fits the pilots' results (a pandas or polars DataFrame with the columns of results.csv:
    ``run_id``, ``step``, ``metric``, ``value``; or a path to such a CSV) against the plan they
    came from (plan.csv written by ``rlfrontier plan``), and returns the calibration.

    Without ``out`` the outputs live in a temporary folder; pass ``out`` to keep
    calibration.json for :func:`sweep`.
    """
    with tempfile.TemporaryDirectory(prefix="rlfrontier-") as scratch:
        scratch_path = Path(scratch)
        if isinstance(results, (str, os.PathLike)):
            results_file = os.fspath(results)
        else:
            results_file = str(scratch_path / "results.csv")
            if hasattr(results, "write_csv"):  # polars
                results.write_csv(results_file)
            elif hasattr(results, "to_csv"):  # pandas
                results.to_csv(results_file, index=False)
            else:
                raise TypeError(
                    "results must be a pandas or polars DataFrame or a path to results.csv"
                )
        folder = Path(out) if out is not None else scratch_path / "fit"
        # --quiet: no spinner drawn on the host's stderr (a notebook or a REPL).
        words = ["fit", results_file, "--plan", os.fspath(plan), "--out", str(folder), "--quiet"]
        words += _flag_words(
            {
                "metric": metric,
                "scale": scale,
                "seed": seed,
                "bootstrap": bootstrap,
                "force": True if force else None,
            }
        )
        text = run(*words)
        calibration = json.loads((folder / "calibration.json").read_text(encoding="utf-8"))
        import pyarrow.csv as pacsv

        fits_table = pacsv.read_csv(folder / "fits.csv")
        if backend == "arrow":
            fits = fits_table
        elif backend == "polars":
            fits = _polars().from_arrow(fits_table)
        else:
            fits = fits_table.to_pandas()
        return FitReport(
            calibration=calibration,
            fits=fits,
            text=text,
            calibration_file=(folder / "calibration.json") if out is not None else None,
        )
