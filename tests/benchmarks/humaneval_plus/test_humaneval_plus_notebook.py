"""The HumanEval+ notebook end to end on the first few real tasks (needs the mirror)."""

from __future__ import annotations

from pathlib import Path

import pytest

from audit_lib.benchmarks.humaneval_plus.audit import CHECK_IDS, validate_params
from audit_lib.errors import ParameterError
from tests.notebook_helpers import execute_notebook


@pytest.mark.notebook
@pytest.mark.mirror
def test_notebook_runs_on_three_tasks(mirror_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUDIT_MIRROR", str(mirror_dir))
    monkeypatch.setenv("AUDIT_DATA_CACHE", str(tmp_path / "cache"))
    findings = execute_notebook("humaneval_plus", {"dataset": "humaneval", "max_tasks": 3}, tmp_path / "out",
                                timeout_s=120)
    checks = {check["id"]: check for check in findings["checks"]}
    assert tuple(checks) == CHECK_IDS
    assert not [cid for cid, check in checks.items() if check["status"] == "error"]
    assert checks["ground_truth"]["observed"]["inputs"] > 100
    assert checks["version_diff"]["observed"]["tasks_changed"] == ["HumanEval/1"]
    assert (tmp_path / "cache" / "groundtruth").is_dir()


@pytest.mark.parametrize("name, value", [("dataset", "apps"), ("max_tasks", -1), ("executor", "gpu"),
                                         ("min_time_limit", 0), ("recompute_ground_truth", "yes")])
def test_bad_parameters_name_the_parameter(name: str, value: object) -> None:
    params = {"dataset": "humaneval", "max_tasks": 0, "executor": "local", "min_time_limit": 4.0,
              "recompute_ground_truth": False, name: value}
    with pytest.raises(ParameterError, match=name):
        validate_params(**params)
