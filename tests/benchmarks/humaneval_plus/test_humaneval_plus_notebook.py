"""The HumanEval+ / MBPP+ plugin against its notebook: parameters, value rules, one cell per check, and a real run."""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from audit_lib import benchmarks
from audit_lib.benchmarks.humaneval_plus.audit import AUDIT, MBPP_AUDIT, Params
from audit_lib.errors import ParameterError
from audit_lib.runner.catalogue import read_parameters
from tests.notebook_helpers import execute_notebook

HUMANEVAL_ONLY = ("original_canonical_vs_plus", "version_diff", "errata_diff")


def check_ids(dataset: str) -> tuple[str, ...]:
    return tuple(spec.id for spec in AUDIT.check_specs(AUDIT.validate({"dataset": dataset})))


def test_params_are_the_notebook_parameters_cell() -> None:
    cell = read_parameters(AUDIT.notebook_path())
    fields = dataclasses.fields(Params)
    assert [(p.name, p.default) for p in cell] == [(f.name, f.default) for f in fields]
    assert [p.help for p in cell] == [f.metadata["help"] for f in fields]


def test_min_time_limit_default_is_evalplus_floor() -> None:
    from audit_lib.benchmarks.humaneval_plus.replay import DEFAULT_MIN_TIME_LIMIT_S

    assert Params().min_time_limit == DEFAULT_MIN_TIME_LIMIT_S


@pytest.mark.parametrize("name, value, rule", [
    ("dataset", "mbppp", "must be one of 'humaneval', 'mbpp'"),
    ("max_tasks", -1, "must be at least 0"),
    ("max_tasks", "3", "must be an integer"),
    ("task_ids", ["HumanEval/0"], "must be a string"),
    ("executor", "gpu", "must be 'local', 'dask-local' or 'dask://HOST:PORT'"),
    ("min_time_limit", 0, "must be a positive number of seconds"),
    ("min_time_limit", -1.5, "must be a positive number of seconds"),
    ("recompute_ground_truth", "yes", "must be true or false"),
])
def test_validate_refuses_a_bad_value_naming_the_parameter_and_the_rule(name: str, value: object, rule: str) -> None:
    with pytest.raises(ParameterError, match=re.escape(f"parameter {name!r} {rule}")) as refused:
        AUDIT.validate({name: value})
    assert refused.value.fields["field"] == name


def test_validate_keeps_good_values() -> None:
    params = AUDIT.validate({"dataset": "mbpp", "max_tasks": 3, "task_ids": "Mbpp/2", "executor": "dask-local",
                             "min_time_limit": 2, "recompute_ground_truth": True})
    assert params == Params("mbpp", 3, "Mbpp/2", "dask-local", 2.0, True)


def test_mbpp_plus_is_the_same_notebook_with_the_dataset_fixed() -> None:
    assert benchmarks.load("humaneval_plus") is AUDIT and benchmarks.load("mbpp_plus") is MBPP_AUDIT
    assert MBPP_AUDIT.notebook_path() == AUDIT.notebook_path()
    assert AUDIT.notebook_path().name == "humaneval_plus.ipynb" and AUDIT.notebook_path().is_file()
    assert MBPP_AUDIT.validate({}).dataset == "mbpp"
    assert MBPP_AUDIT.validate({"dataset": "humaneval", "max_tasks": 2}) == Params("mbpp", 2)


def test_mbpp_plus_has_no_check_that_cannot_apply_to_it() -> None:
    humaneval, mbpp = check_ids("humaneval"), check_ids("mbpp")
    assert mbpp == tuple(check_id for check_id in humaneval if check_id not in HUMANEVAL_ONLY)
    assert len(humaneval) == 13 and set(HUMANEVAL_ONLY) <= set(humaneval)


def test_notebook_runs_every_check_exactly_once() -> None:
    notebook = nbformat.read(str(AUDIT.notebook_path()), as_version=4)
    source = "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "code")
    ran = re.findall(r'report\.check\(audit, "([a-z_]+)"', source)
    every_id = set(check_ids("humaneval")) | set(check_ids("mbpp"))
    assert sorted(ran) == sorted(every_id)
    for check_id in HUMANEVAL_ONLY:  # guarded, so the MBPP+ run does not ask for a check its audit lacks
        assert f'if "{check_id}" in audit.check_ids:' in source


def test_importing_the_plugin_stays_light() -> None:
    code = ("import sys, audit_lib.benchmarks.humaneval_plus.audit; "
            "print([m for m in ('numpy', 'pandas', 'polars', 'matplotlib', 'scipy', 'papermill') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.notebook
@pytest.mark.mirror
def test_notebook_runs_on_three_tasks(mirror_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUDIT_MIRROR", str(mirror_dir))
    monkeypatch.setenv("AUDIT_DATA_CACHE", str(tmp_path / "cache"))
    samples = mirror_dir / "samples"
    findings = execute_notebook("humaneval_plus", {
        "dataset": "humaneval", "max_tasks": 3, "samples_path": str(samples / "phi_1_samples.jsonl"),
        "version": "v0.1.9", "official_results_path": str(samples / "phi_1_samples_eval_results.json"),
        "bootstrap_resamples": 200}, tmp_path / "out", timeout_s=120)
    checks = {check["id"]: check for check in findings["checks"]}
    assert tuple(checks) == check_ids("humaneval")
    assert not [cid for cid, check in checks.items() if check["status"] in ("error", "skipped")]
    yours = checks["your_samples"]
    assert yours["finding"].startswith("your pass@1 on HumanEval+ v0.1.9 is ")
    assert yours["observed"]["tasks_covered"] == 3 and yours["observed"]["tasks_outside_selection"] == 161
    assert yours["observed"]["agreement"]["disagreeing_deterministic"] == 0
    assert checks["ground_truth"]["observed"]["inputs"] > 100
    assert checks["version_diff"]["observed"]["tasks_changed"] == ["HumanEval/1"]
    assert (tmp_path / "cache" / "groundtruth").is_dir()
    assert {p["file"] for p in findings["provenance"]} >= {"HumanEvalPlus.jsonl.gz", "HumanEvalPlus-Mini.jsonl.gz"}


@pytest.mark.mirror
def test_unknown_task_ids_are_refused_naming_them(mirror_dir: Path, isolated_cache: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUDIT_MIRROR", str(mirror_dir))
    with pytest.raises(ParameterError, match="HumanEval/999, HumanEval/x") as refused:
        AUDIT.load(AUDIT.validate({"task_ids": "HumanEval/0, HumanEval/999,HumanEval/x"}))
    assert refused.value.fields["field"] == "task_ids"
    inputs = AUDIT.load(AUDIT.validate({"task_ids": "HumanEval/116,HumanEval/32", "max_tasks": 1}))
    assert [task.task_id for task in inputs.tasks] == ["HumanEval/32"]  # file order, then the first max_tasks
    assert inputs.missing == {}
