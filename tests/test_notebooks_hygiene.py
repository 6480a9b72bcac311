"""Every committed notebook: no outputs, a first code cell tagged `parameters` holding literals, findings written."""

from __future__ import annotations

import ast
from pathlib import Path

import nbformat
import pytest

from audit_lib.runner.catalogue import PARAMETERS_TAG, read_parameters

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))


def test_there_are_notebooks() -> None:
    assert any(path.stem == "data_inventory" for path in NOTEBOOKS)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_committed_without_outputs(path: Path) -> None:
    notebook = nbformat.read(str(path), as_version=4)
    nbformat.validate(notebook)
    for number, cell in enumerate(notebook.cells, start=1):
        if cell.cell_type == "code":
            assert cell.outputs == [], f"{path.name} cell {number} has outputs"
            assert cell.execution_count is None, f"{path.name} cell {number} has an execution count"
        assert "papermill" not in cell.get("metadata", {}), f"{path.name} cell {number} has papermill metadata"
    assert "papermill" not in notebook.metadata, f"{path.name} was saved from a papermill run"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_first_code_cell_is_the_tagged_parameters_cell(path: Path) -> None:
    notebook = nbformat.read(str(path), as_version=4)
    code_cells = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert code_cells, f"{path.name} has no code"
    assert PARAMETERS_TAG in code_cells[0].get("metadata", {}).get("tags", []), \
        f"{path.name}: the first code cell must be tagged {PARAMETERS_TAG!r}"
    tagged = [c for c in code_cells if PARAMETERS_TAG in c.get("metadata", {}).get("tags", [])]
    assert len(tagged) == 1, f"{path.name} has {len(tagged)} parameters cells"
    parameters = read_parameters(path)  # raises unless every statement is `name = literal`
    assert parameters, f"{path.name}: the parameters cell declares nothing"
    names = [p.name for p in parameters]
    assert len(names) == len(set(names)), f"{path.name} declares a parameter twice"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_kernel_and_last_cell(path: Path) -> None:
    notebook = nbformat.read(str(path), as_version=4)
    code_cells = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert notebook.metadata.get("kernelspec", {}).get("name") == "benchaudit"
    assert any("AUDIT.session(globals())" in cell.source for cell in code_cells), "every audit is on the contract"
    last = ast.parse(code_cells[-1].source)
    calls = [node for node in ast.walk(last) if isinstance(node, ast.Call)
             and isinstance(node.func, ast.Attribute) and node.func.attr == "write"]
    assert calls, f"{path.name}: the last code cell must write the findings (builder.write())"
