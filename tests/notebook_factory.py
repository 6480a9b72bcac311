"""Write tiny audit notebooks for runner, catalogue and CLI tests."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook


def write_notebook(folder: Path, name: str, parameters: str, cells: Sequence[str], *,
                   title: str | None = None) -> Path:
    """`folder/name.ipynb`: an optional markdown title, the tagged parameters cell, then the code cells."""
    folder.mkdir(parents=True, exist_ok=True)
    body = [new_markdown_cell(f"# {title}")] if title else []
    body.append(new_code_cell(parameters, metadata={"tags": ["parameters"]}))
    body.extend(new_code_cell(source) for source in cells)
    notebook = new_notebook(cells=body, metadata={
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})
    path = folder / f"{name}.ipynb"
    nbformat.write(notebook, str(path))
    return path
