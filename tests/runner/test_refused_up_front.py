"""Parameter values that name tasks are refused before any kernel starts: exit 2, the reports folder untouched."""

from __future__ import annotations

from pathlib import Path

import pytest

from audit_lib import cli, runner
from audit_lib.benchmarks.humaneval_plus import audit as humaneval_audit
from audit_lib.benchmarks.humaneval_plus.audit import AUDIT, check_task_ids
from audit_lib.errors import ParameterError
from audit_lib.runner.plan import absolute_paths, plan_jobs


@pytest.fixture()
def no_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner.batch, "_execute_all", lambda *a, **k: pytest.fail("a kernel was about to start"))


@pytest.mark.mirror
@pytest.mark.parametrize(("audit", "wanted", "unknown"), [
    ("humaneval_plus", "HumanEval/3,HumanEval/9999", "HumanEval/9999"),
    ("mbpp_plus", "Mbpp/2,Mbpp/1", "Mbpp/1"),  # MBPP+ numbers from 2: its fixed dataset decides the task list
])
def test_an_unknown_task_id_is_refused_before_any_kernel(audit: str, wanted: str, unknown: str, mirror_dir: Path,
                                                         isolated_cache: Path, tmp_path: Path, no_kernel: None,
                                                         monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("AUDIT_MIRROR", raising=False)  # the --mirror flag alone must serve the check
    reports = tmp_path / "reports"
    code = cli.main(["run", audit, "-p", "task_ids", wanted, "--mirror", str(mirror_dir), "--reports-dir",
                     str(reports)])
    assert code == runner.EXIT_BAD_ARGUMENTS
    err = capsys.readouterr().err
    assert f"{audit}: parameter 'task_ids': unknown task id(s) {unknown} (not in " in err
    assert wanted.split(",")[0] + "," not in err  # only the unknown id is named
    assert not reports.exists()  # no lock, no index, no staging


@pytest.mark.mirror
def test_known_task_ids_pass_the_check(mirror_dir: Path, isolated_cache: Path) -> None:
    check_task_ids(AUDIT.validate({"task_ids": "HumanEval/0, HumanEval/163"}), mirror_dir)


def test_the_check_reads_only_a_local_copy_and_defers_without_one(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[tuple[str, object]] = []

    def local(dataset: str, *, mirror: object) -> tuple[str, ...] | None:
        asked.append((dataset, mirror))
        return None if mirror is None else ("T/1", "T/2")

    monkeypatch.setattr(humaneval_audit, "local_task_ids", local)
    params = AUDIT.validate({"task_ids": "T/2,T/3"})
    check_task_ids(params, None)  # no local copy: `load` refuses the id later, nothing is decided here
    with pytest.raises(ParameterError, match=r"unknown task id\(s\) T/3 \(not in humaneval_plus/Human.*2 tasks, "
                                             r"T/1 … T/2\)") as refused:
        check_task_ids(params, Path("/m"))
    assert refused.value.fields == {"field": "task_ids", "value": ["T/3"]}
    check_task_ids(AUDIT.validate({"task_ids": ""}), Path("/m"))  # nothing named: the file is not even read
    assert asked == [("humaneval", None), ("humaneval", Path("/m"))]


@pytest.mark.parametrize(("audit", "name", "content", "problem"), [
    ("impossible_lcb", "heldout_path", "lcbhard_x\n", "field 'task_id': task id 'lcbhard_x' does not end in a number"),
    ("impossible_lcb", "dropped_tasks_path", "# comment only\n", "no task ids"),
    ("unconventional_problems", "grades_path", '{"problem_id": 1, "model": "m", "grade": 42}\n',
     "line 1: field 'grade' 42 is outside 0..10"),
])
def test_a_named_file_that_does_not_read_is_refused_before_any_kernel(
        audit: str, name: str, content: str, problem: str, tmp_path: Path, no_kernel: None,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "given.txt").write_text(content)
    reports = tmp_path / "reports"
    assert cli.main(["run", audit, "-p", name, "given.txt", "--reports-dir", str(reports)]) == \
        runner.EXIT_BAD_ARGUMENTS
    err = capsys.readouterr().err
    assert f"{audit}: parameter {name!r}" in err and str(tmp_path / "given.txt") in err and problem in err
    assert not reports.exists()


def test_a_relative_path_parameter_reaches_the_kernel_absolute(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Kernels run in notebooks/: a path valid where the user typed it must name the same file there."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "held.txt").write_text("lcbhard_1\n")
    [job] = plan_jobs(["impossible_lcb"], [("heldout_path", "held.txt")], reports_dir=tmp_path / "r")
    assert job.params["heldout_path"] == str(tmp_path / "held.txt")
    [job] = plan_jobs(["impossible_lcb"], [("dropped_tasks_path", "")], reports_dir=tmp_path / "r")
    assert job.params["dropped_tasks_path"] == ""  # an empty path stays empty


def test_only_declared_paths_that_exist_here_are_made_absolute(tmp_path: Path) -> None:
    (tmp_path / "here.jsonl").write_text("")
    values = {"grades_path": "here.jsonl", "other_path": "elsewhere.jsonl", "label": "here.jsonl", "n": 3}
    assert absolute_paths(values, ("grades_path", "other_path"), tmp_path) == {
        "grades_path": str(tmp_path / "here.jsonl"),
        "other_path": "elsewhere.jsonl",  # not here: left for the audit's own lookup (e.g. the project root)
        "label": "here.jsonl", "n": 3}
    assert absolute_paths({"grades_path": "/abs/x"}, ("grades_path",), tmp_path) == {"grades_path": "/abs/x"}
