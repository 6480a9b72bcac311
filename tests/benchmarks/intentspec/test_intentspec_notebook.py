"""The IntentSpec notebook end to end on the real-data mirror, and its parameter validation."""

from __future__ import annotations

import json

import pytest
from notebook_helpers import execute_notebook

from audit_lib.benchmarks.intentspec.audit import CHECK_IDS, validate_params
from audit_lib.errors import ParameterError


@pytest.mark.parametrize("name, value", [("executor", ""), ("max_tasks", -1), ("max_tasks", 2.5),
                                         ("timeout_s", 0), ("timeout_s", "5")])
def test_bad_parameter_names_the_parameter(name, value):
    params = {"executor": "local", "max_tasks": 0, "timeout_s": 5.0, name: value}
    with pytest.raises(ParameterError) as caught:
        validate_params(**params)
    assert caught.value.fields["parameter"] == name


def test_notebook_is_committed_clean_with_literal_parameters():
    import ast

    from notebook_helpers import REPO_ROOT

    notebook = json.loads((REPO_ROOT / "notebooks" / "intentspec.ipynb").read_text(encoding="utf-8"))
    assert notebook["metadata"]["kernelspec"]["name"] == "python3"
    code_cells = [cell for cell in notebook["cells"] if cell["cell_type"] == "code"]
    for cell in code_cells:
        cell["source"] = "".join(cell["source"])
        assert not cell["outputs"] and cell["execution_count"] is None
    assert "parameters" in code_cells[0]["metadata"].get("tags", [])
    statements = ast.parse(code_cells[0]["source"]).body
    assert all(isinstance(s, ast.Assign) and isinstance(s.value, ast.Constant) for s in statements)
    assert [s.targets[0].id for s in statements] == ["executor", "max_tasks", "timeout_s"]
    for line in code_cells[0]["source"].splitlines():  # papermill cannot parse '=' or brackets in a help comment
        assert not any(char in line.partition("#")[2] for char in "=()[]"), line
    assert "builder.write()" in code_cells[-1]["source"]


NOTEBOOK_TASKS = 8  # the first 8 tasks keep the run well under 40 s on 2 busy cores


@pytest.mark.notebook
@pytest.mark.mirror
def test_notebook_runs_on_the_mirror(mirror_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("AUDIT_MIRROR", str(mirror_dir))
    monkeypatch.setenv("AUDIT_DATA_CACHE", str(tmp_path / "data_cache"))
    findings = execute_notebook("intentspec", {"max_tasks": NOTEBOOK_TASKS, "timeout_s": 5.0}, tmp_path / "out")
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
    assert (tmp_path / "out" / "intentspec.findings.json").is_file()
    assert (tmp_path / "out" / "intentspec.canonical_provenance.csv").is_file()
