"""Type stubs of the extension module (python/src/lib.rs)."""

from typing import List, Tuple

__version__: str

def run(words: List[str]) -> Tuple[int, bytes]:
    """Runs `rlfrontier WORDS...` in this process: (0, stdout) or (exit code, message)."""

def toml_from_json(text: str) -> str:
    """A grid given as JSON text, as TOML text."""

class CellStream:
    """A running `sweep` whose cells table is read through the Arrow C stream interface."""

    @property
    def has_cells(self) -> bool:
        """Whether the sweep produced a cells table (false after an early error)."""
    def __arrow_c_stream__(self, requested_schema: object = None) -> object:
        """A PyCapsule holding an ArrowArrayStream of the cells (once)."""
    def finish(self) -> Tuple[int, bytes]:
        """Waits for the sweep: (0, summary JSON) or (exit code, message)."""
    def cancel(self) -> None:
        """Stops the sweep at its next check."""

def sweep_stream(words: List[str], whole: bool = False, string_views: bool = False) -> CellStream:
    """Starts `rlfrontier sweep WORDS...` with its cells table streamed: one record batch per row
    group, or with ``whole`` one batch holding the whole table in contiguous columns; text
    columns as ``large_string``, or with ``string_views`` as ``string_view`` (polars' layout)."""
