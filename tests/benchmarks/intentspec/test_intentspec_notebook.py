"""The IntentSpec notebook end to end on the real-data mirror, and its parameter validation."""

from __future__ import annotations

import ast
import dataclasses
import json

import pytest
from notebook_helpers import REPO_ROOT, execute_notebook

from audit_lib.benchmarks.intentspec.audit import AUDIT, Params
from audit_lib.errors import ParameterError
from audit_lib.runner.catalogue import read_parameters

NOTEBOOK = REPO_ROOT / "notebooks" / "intentspec.ipynb"
CHECK_IDS = tuple(spec.id for spec in AUDIT.checks)


@pytest.mark.parametrize("name, value, rule", [
    ("executor", "", "must be 'local', 'dask-local' or 'dask://HOST:PORT'"),
    ("max_tasks", -1, "must be at least 0"),
    ("max_tasks", 2.5, "must be an integer"),
    ("timeout_s", 0, "must be more than 0 seconds"),
    ("timeout_s", 301, "must be at most 300.0"),
    ("timeout_s", "5", "must be a number"),
])
def test_bad_parameter_names_the_parameter_and_what_is_allowed(name, value, rule):
    with pytest.raises(ParameterError) as caught:
        AUDIT.validate({name: value})
    assert caught.value.fields["field"] == name
    assert f"parameter {name!r} {rule}" in caught.value.message


def test_params_are_the_notebooks_parameters_cell():
    fields = {f.name: f.default for f in dataclasses.fields(Params)}
    assert [(p.name, p.default) for p in read_parameters(NOTEBOOK)] == list(fields.items())


def test_the_notebook_runs_every_check_once_through_the_session():
    notebook = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    runs = [node.args[1].value for cell in notebook["cells"] if cell["cell_type"] == "code"
            for node in ast.walk(ast.parse("".join(cell["source"]))) if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute) and node.func.attr == "check"]
    assert sorted(runs) == sorted(CHECK_IDS) and len(runs) == len(set(runs))


def test_the_audit_module_imports_no_heavy_library():
    import subprocess
    import sys

    probe = ("import sys, audit_lib.benchmarks.intentspec.audit; "
             "print([m for m in ('numpy', 'pandas', 'polars', 'matplotlib', 'scipy', 'papermill') "
             "if m in sys.modules])")
    assert subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True).stdout.strip() == "[]"


def test_notebook_is_committed_clean_with_literal_parameters():
    notebook = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    assert notebook["metadata"]["kernelspec"] == {"name": "benchaudit", "display_name": "benchaudit",
                                                  "language": "python"}
    code_cells = [cell for cell in notebook["cells"] if cell["cell_type"] == "code"]
    for cell in code_cells:
        cell["source"] = "".join(cell["source"])
        assert not cell["outputs"] and cell["execution_count"] is None
    assert "parameters" in code_cells[0]["metadata"].get("tags", [])
    statements = ast.parse(code_cells[0]["source"]).body
    assert all(isinstance(s, ast.Assign) and isinstance(s.value, ast.Constant) for s in statements)
    assert [s.targets[0].id for s in statements] == ["executor", "max_tasks", "timeout_s", "generations_dir"]
    for line in code_cells[0]["source"].splitlines():  # papermill cannot parse '=' or brackets in a help comment
        assert not any(char in line.partition("#")[2] for char in "=()[]"), line
    writes = [index for index, cell in enumerate(code_cells) if "audit.write()" in cell["source"]]
    assert writes and all("audit.run(" not in cell["source"] and "report.check(" not in cell["source"]
                          for cell in code_cells[writes[-1] + 1:])


NOTEBOOK_TASKS = 8  # the first 8 tasks keep the run well under 40 s on 2 busy cores
YOUR_TASKS = ("HumanEval/26", "HumanEval/18")


@pytest.mark.notebook
@pytest.mark.mirror
def test_notebook_runs_on_the_mirror(mirror_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("AUDIT_MIRROR", str(mirror_dir))
    monkeypatch.setenv("AUDIT_DATA_CACHE", str(tmp_path / "data_cache"))
    generations = tmp_path / "mine"  # gpt-4.1's cached generations of two tasks, brought as a user's own
    generations.mkdir()
    for task in YOUR_TASKS:
        source = mirror_dir / "intentspec" / "generations" / f"gpt-4_1__{task.replace('/', '_')}.jsonl"
        (generations / f"mine__{task.replace('/', '_')}.jsonl").write_bytes(source.read_bytes())
    findings = execute_notebook("intentspec", {"max_tasks": NOTEBOOK_TASKS, "timeout_s": 5.0,
                                               "generations_dir": str(generations)}, tmp_path / "out")
    checks = {check["id"]: check for check in findings["checks"]}
    assert tuple(checks) == CHECK_IDS
    assert findings["params"]["max_tasks"] == NOTEBOOK_TASKS
    assert not [c for c in checks.values() if c["status"] == "error"], checks
    assert checks["schema"]["observed"] == 0 and checks["schema"]["meta"]["spec_rows"] == 49
    assert checks["canonical_ivr_zero"]["observed"]["tasks_run"] == NOTEBOOK_TASKS
    replay = checks["ivr_replay"]["observed"]
    assert set(replay["models"]) == {"claude-sonnet-4-6", "gpt-4.1"}
    published = [json.loads((mirror_dir / "intentspec" / "results" / name).read_text())
                 for name in ("experiment1.json", "experiment1_gpt-4_1.json")]
    per_model = {run["model"]: run["n_solutions_per_spec"] for run in published}
    assert replay["outcomes_compared"] == NOTEBOOK_TASKS * sum(per_model.values())
    for model in replay["models"].values():
        assert model["tasks_included"] + len(model["excluded_replayed"]) == NOTEBOOK_TASKS
    assert checks["exit_code_exploit"]["status"] == "defect"  # the sandbox reports raw exit codes
    yours = checks["your_generations"]["observed"]
    assert yours["models"]["mine"]["tasks_covered"] == len(YOUR_TASKS)
    # the same samples score as the published model does on the same tasks, by upstream's rules
    assert yours["models"]["mine"]["overall_ivr"] == pytest.approx(yours["published"]["gpt-4.1"]["ivr_on_your_tasks"])
    assert (tmp_path / "out" / "intentspec.findings.json").is_file()
    assert (tmp_path / "out" / "intentspec" / "canonical_provenance.csv").is_file()
