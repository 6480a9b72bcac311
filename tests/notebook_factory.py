"""Write tiny audit notebooks for runner, catalogue and CLI tests."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import make_dataclass
from pathlib import Path
from typing import Any

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from audit_lib.plugin import AuditPlugin, param


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


def plugin_for(notebook: Path, *, name: str | None = None, fixed_params: dict | None = None) -> AuditPlugin:
    """An audit plugin for a hand-written test notebook: Params follow its parameters cell, no checks of its own."""
    from audit_lib.runner.catalogue import read_parameters

    fields = []
    for parameter in read_parameters(notebook):
        kind = {"int": int, "float": float, "str": str, "bool": bool, "list": list}.get(parameter.type_name, Any)
        fields.append((parameter.name, kind, param(parameter.default)))
    params = make_dataclass(f"{(name or notebook.stem).title()}Params", fields, frozen=True)
    return AuditPlugin(name or notebook.stem, f"{name or notebook.stem} (test notebook)", params, lambda p: None, (),
                       notebook=notebook, fixed_params=dict(fixed_params or {}))
