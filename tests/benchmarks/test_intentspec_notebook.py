"""The IntentSpec notebook end to end on the real-data mirror, and its parameter validation."""

from __future__ import annotations

import pytest

from audit_lib.benchmarks.intentspec import CHECK_IDS, validate_params
from audit_lib.errors import ParameterError
from notebook_helpers import execute_notebook


@pytest.mark.parametrize("name, value", [("executor", ""), ("max_tasks", -1), ("max_tasks", 2.5),
                                         ("timeout_s", 0), ("timeout_s", "5")])
def test_bad_parameter_names_the_parameter(name, value):
    params = {"executor": "local", "max_tasks": 0, "timeout_s": 5.0, name: value}
    with pytest.raises(ParameterError) as caught:
        validate_params(**params)
    assert caught.value.fields["parameter"] == name


@pytest.mark.notebook
@pytest.mark.mirror
def test_notebook_runs_on_the_mirror(mirror_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("AUDIT_MIRROR", str(mirror_dir))
    monkeypatch.setenv("AUDIT_DATA_CACHE", str(tmp_path / "data_cache"))
    findings = execute_notebook("intentspec", {"max_tasks": 0, "timeout_s": 5.0}, tmp_path / "out")
    checks = {check["id"]: check for check in findings["checks"]}
    assert tuple(checks) == CHECK_IDS
    assert not [c for c in checks.values() if c["status"] == "error"], checks
    assert checks["schema"]["observed"] == 0
    replay = checks["ivr_replay"]["observed"]
    assert replay["outcomes_compared"] == 490
    assert set(replay["models"]) == {"claude-sonnet-4-6", "gpt-4.1"}
    # the recomputed overall must equal the published file's figure (read independently here)
    import json
    for name in ("experiment1.json", "experiment1_gpt-4_1.json"):
        published = json.loads((mirror_dir / "intentspec" / "results" / name).read_text())
        model = replay["models"][published["model"]]
        assert model["published_overall_ivr"] == published["overall_ivr"]
        assert model["tasks_included"] + len(model["excluded_replayed"]) == len(published["per_task"])
    assert checks["canonical_ivr_zero"]["observed"]["tasks_run"] == 49
    assert (tmp_path / "out" / "intentspec.findings.json").is_file()
