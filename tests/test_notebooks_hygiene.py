"""Every committed notebook: no outputs, a first code cell tagged `parameters` holding literals, findings written."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import nbformat
import pytest

from audit_lib.errors import ParameterError
from audit_lib.runner.catalogue import PARAMETERS_TAG, read_parameters

NOTEBOOKS_DIR = Path(__file__).resolve().parent.parent / "notebooks"
NOTEBOOKS = sorted(NOTEBOOKS_DIR.glob("*.ipynb"))
# One notebook per audit; a notebook that disappears or is renamed must fail here, not shrink the checks below.
AUDIT_NOTEBOOKS = {"codeinsights_edge_case", "data_inventory", "harness_exploits", "humaneval_plus", "impossible_lcb",
                   "intentspec", "unconventional_problems"}
KERNEL = "benchaudit"  # every notebook is on the audit contract and names the project kernel


def _tags(cell: nbformat.NotebookNode) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


def hygiene_problems(path: Path) -> list[str]:
    """Everything that keeps a notebook from being committed as it is; empty when it is clean."""
    notebook = nbformat.read(str(path), as_version=4)
    problems: list[str] = []
    try:
        nbformat.validate(notebook)
    except nbformat.ValidationError as exc:
        problems.append(f"invalid notebook: {exc.message}")
    for number, cell in enumerate(notebook.cells, start=1):
        if cell.cell_type == "code":
            if cell.get("outputs"):
                problems.append(f"cell {number} has outputs")
            if cell.get("execution_count") is not None:
                problems.append(f"cell {number} has an execution count")
        if "papermill" in cell.get("metadata", {}):
            problems.append(f"cell {number} has papermill metadata")
    if "papermill" in notebook.metadata:
        problems.append("saved from a papermill run")
    kernel = notebook.metadata.get("kernelspec", {}).get("name")
    if kernel != KERNEL:
        problems.append(f"kernel {kernel!r}, not {KERNEL!r}")
    code_cells = [cell for cell in notebook.cells if cell.cell_type == "code"]
    if not code_cells:
        return problems + ["no code cells"]
    if PARAMETERS_TAG not in _tags(code_cells[0]):
        problems.append(f"the first code cell is not tagged {PARAMETERS_TAG!r}")
    tagged = sum(PARAMETERS_TAG in _tags(cell) for cell in code_cells)
    if tagged != 1:
        problems.append(f"{tagged} parameters cells")
    else:
        problems += _parameter_problems(path)
    writes = [index for index, cell in enumerate(code_cells) if _calls(cell, {"write"})]
    if not writes:
        problems.append("no code cell writes the findings (audit.write())")
    elif any(_calls(cell, {"run", "show_check", "check"}) for cell in code_cells[writes[-1] + 1:]):
        problems.append("a check runs after the findings are written (only Explore cells may follow audit.write())")
    return problems + _missing_imports(code_cells)


def _missing_imports(code_cells: list[nbformat.NotebookNode]) -> list[str]:
    """Every `audit_lib` module a cell imports, and every `report.<name>` it uses, that does not exist."""
    from audit_lib import report

    missing = []
    for cell in code_cells:
        for node in ast.walk(ast.parse(cell.source)):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "report"
                    and not hasattr(report, node.attr)):
                missing.append(f"uses report.{node.attr}, which audit_lib.report does not export")
            modules = ([node.module] if isinstance(node, ast.ImportFrom) and node.module
                       else [alias.name for alias in node.names] if isinstance(node, ast.Import) else [])
            missing += [f"imports {module}, which does not exist" for module in modules
                        if module.split(".")[0] == "audit_lib" and importlib.util.find_spec(module) is None]
    return missing


def _calls(cell: nbformat.NotebookNode, names: set[str]) -> bool:
    """Whether the cell calls a method or function of one of these names."""
    return any(isinstance(node, ast.Call) and (getattr(node.func, "attr", None) in names
                                               or getattr(node.func, "id", None) in names)
               for node in ast.walk(ast.parse(cell.source)))


def _parameter_problems(path: Path) -> list[str]:
    try:
        parameters = read_parameters(path)  # raises unless every statement is `name = literal`
    except ParameterError as exc:
        return [f"parameters cell: {exc}"]
    names = [p.name for p in parameters]
    if not names:
        return ["the parameters cell declares nothing"]
    if len(names) != len(set(names)):
        return ["a parameter is declared twice"]
    return []


def test_every_audit_has_its_notebook() -> None:
    assert {path.stem for path in NOTEBOOKS} == AUDIT_NOTEBOOKS


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_committed_notebook_is_clean(path: Path) -> None:
    assert hygiene_problems(path) == []


def _write(path: Path, cells: list[nbformat.NotebookNode], kernel: str = KERNEL) -> Path:
    notebook = nbformat.v4.new_notebook(cells=cells)
    notebook.metadata["kernelspec"] = {"name": kernel, "display_name": kernel, "language": "python"}
    nbformat.write(notebook, str(path))
    return path


def _parameters_cell(source: str = "seed = 0\nlimit = 3\n") -> nbformat.NotebookNode:
    return nbformat.v4.new_code_cell(source, metadata={"tags": [PARAMETERS_TAG]})


def test_a_clean_notebook_passes_the_hygiene_check(tmp_path: Path) -> None:
    clean = _write(tmp_path / "clean.ipynb", [_parameters_cell(), nbformat.v4.new_code_cell("audit.write()")])
    assert hygiene_problems(clean) == []


def test_each_hygiene_problem_is_reported(tmp_path: Path) -> None:
    executed = nbformat.v4.new_code_cell("print(1)", execution_count=4,
                                         outputs=[nbformat.v4.new_output("stream", name="stdout", text="1\n")])
    dirty = _write(tmp_path / "dirty.ipynb", [executed, _parameters_cell("seed = 0\nseed = 1\n"),
                                              nbformat.v4.new_code_cell("audit.run('x')")], kernel="python2")
    problems = hygiene_problems(dirty)
    assert "cell 1 has outputs" in problems and "cell 1 has an execution count" in problems
    assert "kernel 'python2', not 'benchaudit'" in problems
    assert "the first code cell is not tagged 'parameters'" in problems
    assert "a parameter is declared twice" in problems
    assert "no code cell writes the findings (audit.write())" in problems
    late = _write(tmp_path / "late.ipynb", [_parameters_cell(), nbformat.v4.new_code_cell("audit.write()"),
                                            nbformat.v4.new_code_cell("report.show_check(audit.run('x'))")])
    assert hygiene_problems(late) == [
        "a check runs after the findings are written (only Explore cells may follow audit.write())"]
    explored = _write(tmp_path / "explored.ipynb", [_parameters_cell(), nbformat.v4.new_code_cell("audit.write()"),
                                                    nbformat.v4.new_code_cell("explore_task(audit, 'T/1')")])
    assert hygiene_problems(explored) == []


def test_an_import_of_a_module_that_moved_is_reported(tmp_path: Path) -> None:
    cells = [_parameters_cell(), nbformat.v4.new_code_cell("from audit_lib.report_tasks import explore_evidence\n"),
             nbformat.v4.new_code_cell("audit.write()\n")]
    assert hygiene_problems(_write(tmp_path / "moved.ipynb", cells)) == [
        "imports audit_lib.report_tasks, which does not exist"]


def test_a_report_helper_the_package_does_not_export_is_reported(tmp_path: Path) -> None:
    cells = [_parameters_cell(), nbformat.v4.new_code_cell("report.emit_everything('<p>')\n"),
             nbformat.v4.new_code_cell("audit.write()\n")]
    assert hygiene_problems(_write(tmp_path / "unexported.ipynb", cells)) == [
        "uses report.emit_everything, which audit_lib.report does not export"]


def test_parameters_cell_must_be_literals_and_single(tmp_path: Path) -> None:
    computed = _write(tmp_path / "computed.ipynb", [_parameters_cell("seed = len('ab')\n"),
                                                    nbformat.v4.new_code_cell("audit.write()")])
    assert any("must be a literal" in problem for problem in hygiene_problems(computed))
    untagged = _write(tmp_path / "untagged.ipynb", [nbformat.v4.new_code_cell("seed = 0"),
                                                    nbformat.v4.new_code_cell("audit.write()")])
    assert "0 parameters cells" in hygiene_problems(untagged)
    twice = _write(tmp_path / "twice.ipynb", [_parameters_cell(), _parameters_cell("other = 1\n"),
                                              nbformat.v4.new_code_cell("audit.write()")])
    assert "2 parameters cells" in hygiene_problems(twice)
