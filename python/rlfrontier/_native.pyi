"""Type stubs of the extension module (python/src/lib.rs)."""

from typing import List, Tuple

__version__: str

def run(words: List[str]) -> Tuple[int, bytes]:
    """Runs `rlfrontier WORDS...` in this process: (0, stdout) or (exit code, message)."""

def toml_from_json(text: str) -> str:
    """A grid given as JSON text, as TOML text."""
