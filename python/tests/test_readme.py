"""The book's Python snippets (the ```py blocks of docs/book/src/python.md, "From Python"), run in
order against the installed wheel from a scratch copy of the folders they read, as a notebook
would run them."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def readme_snippets() -> list[str]:
    text = (REPO / "docs/book/src/python.md").read_text(encoding="utf-8")
    section = text.split("# From Python: dicts and DataFrames", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```py\n(.*?)```", section, flags=re.S)


def test_the_readme_notebook_runs(tmp_path, capsys):
    snippets = readme_snippets()
    assert len(snippets) >= 4, "the book's Python chapter lost its snippets"
    for folder in ["grids", "results/examples"]:
        shutil.copytree(REPO / folder, tmp_path / folder)
    os.chdir(tmp_path)
    namespace: dict = {}
    for snippet in snippets:
        exec(compile(snippet, "docs/book/src/python.md", "exec"), namespace)
    # The snippets write only to temporary folders: the picture and the fit are there, and the
    # working folder holds only what the test copied in.
    assert Path(namespace["picture"]).stat().st_size > 10_000
    assert namespace["report"].calibration_file.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["grids", "results"]
    assert sorted(p.name for p in (tmp_path / "results").iterdir()) == ["examples"]
    printed = capsys.readouterr().out
    assert "USD;" in printed and "cells;" in printed and "cross-validated RMSE" in printed
