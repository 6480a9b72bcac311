"""Progress within a cell: the file the kernel replaces under the runner (and reading it back, whatever is in
it), a bar only in Jupyter or on a terminal, and `run_many` counting what its jobs stand for."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import pytest

from audit_lib import work_progress
from audit_lib.sandbox import executors
from audit_lib.work_progress import PROGRESS_FILE_ENV, WorkProgress, progress_mode, read_progress, track_progress


@pytest.fixture()
def progress_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "staging" / "progress" / "audit.json"
    monkeypatch.setenv(PROGRESS_FILE_ENV, str(path))
    monkeypatch.setattr(work_progress, "WRITE_INTERVAL_S", 0.0)
    return path


def test_the_runners_file_holds_the_latest_counts_and_says_when_the_work_is_over(
        progress_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with track_progress(124_253, desc="ground truth", unit="inputs") as sink:
        assert read_progress(progress_file) == WorkProgress("ground truth", 0, 124_253, "inputs")
        sink.update(41_000)
        sink.update(220)
        shown = read_progress(progress_file)
        assert shown is not None and shown.text() == "41,220/124,253 inputs" and not shown.finished
    assert read_progress(progress_file) == WorkProgress("ground truth", 41_220, 124_253, "inputs", True)
    assert capsys.readouterr() == ("", "")  # under the runner no bar is drawn anywhere
    assert [p.name for p in progress_file.parent.iterdir()] == ["audit.json"]  # replaced atomically, no leftovers


def test_writes_are_throttled(progress_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(work_progress, "WRITE_INTERVAL_S", 3600.0)
    with track_progress(10, desc="sandbox", unit="jobs") as sink:
        sink.update(3)
        assert read_progress(progress_file).done == 0  # type: ignore[union-attr]
        sink.update(7)  # the last one is always written
        assert read_progress(progress_file).done == 10  # type: ignore[union-attr]


@pytest.mark.parametrize("content", [
    b"", b'{"desc": "sandbox", "done": 12', b"\x00\xff garbage \x89PNG", b"[1, 2, 3]", b"null",
    b'{"desc": "sandbox", "done": "12", "total": 40, "unit": "jobs"}',
    b'{"desc": "sandbox", "done": -1, "total": 40, "unit": "jobs"}',
    b'{"desc": "sandbox", "done": 1, "total": true, "unit": "jobs"}',
    b'{"desc": 7, "done": 1, "total": 4, "unit": "jobs"}',
    b'{"desc": "sandbox", "done": 1, "total": 4, "unit": "jobs", "finished": "no"}',
    b'{"desc": "' + b"x" * 10_000 + b'", "done": 1, "total": 4, "unit": "jobs"}',
])
def test_a_truncated_or_garbage_file_reads_as_no_progress(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "p.json"
    path.write_bytes(content)
    assert read_progress(path) is None


def test_an_absent_file_or_total_is_fine(tmp_path: Path) -> None:
    assert read_progress(tmp_path / "absent.json") is None
    (tmp_path / "p.json").write_text(json.dumps({"desc": "sandbox", "done": 5, "total": None, "unit": "jobs"}))
    assert read_progress(tmp_path / "p.json").text() == "5 jobs"  # type: ignore[union-attr]


def test_where_progress_goes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PROGRESS_FILE_ENV, raising=False)
    monkeypatch.setattr(sys, "stderr", types.SimpleNamespace(isatty=lambda: False))
    assert progress_mode() == "off"
    monkeypatch.setattr(sys, "stderr", types.SimpleNamespace(isatty=lambda: True))
    assert progress_mode() == "terminal"
    kernel = type("ZMQInteractiveShell", (), {})()
    monkeypatch.setitem(sys.modules, "IPython", types.SimpleNamespace(get_ipython=lambda: kernel))
    assert progress_mode() == "notebook"
    monkeypatch.setenv(PROGRESS_FILE_ENV, "/nonexistent/progress.json")
    assert progress_mode() == "file"  # under the runner, even in its kernel: no bar in the report


def test_a_bar_on_the_terminal_and_in_jupyter(monkeypatch: pytest.MonkeyPatch) -> None:
    import tqdm.auto
    import tqdm.std

    drawn: list[tuple[str, object]] = []

    class Bar:
        def __init__(self, kind: str, **kwargs: object) -> None:
            drawn.append((kind, kwargs["total"]))

        def __enter__(self) -> Bar:
            return self

        def __exit__(self, *exc: object) -> None:
            pass

        def update(self, n: int = 1) -> None:
            drawn.append(("update", n))

    monkeypatch.setattr(tqdm.std, "tqdm", lambda **kw: Bar("terminal", **kw))
    monkeypatch.setattr(tqdm, "tqdm", lambda **kw: Bar("terminal", **kw))
    monkeypatch.setattr(tqdm.auto, "tqdm", lambda **kw: Bar("notebook", **kw))
    for mode in ("terminal", "notebook"):
        monkeypatch.setattr(work_progress, "progress_mode", lambda mode=mode: mode)
        with track_progress(3, desc="sandbox", unit="jobs") as sink:
            sink.update(2)
    assert drawn == [("terminal", 3), ("update", 2), ("notebook", 3), ("update", 2)]


def test_tracked_counts_each_item_done(progress_file: Path) -> None:
    seen = []
    for item in work_progress.tracked(["a", "b", "c"], desc="timing reruns", unit="inputs"):
        seen.append((item, read_progress(progress_file).done))  # type: ignore[union-attr]
    assert seen == [("a", 0), ("b", 1), ("c", 2)]
    assert read_progress(progress_file) == WorkProgress("timing reruns", 3, 3, "inputs", True)


class CountingJob:
    def __init__(self, key: int, inputs: int) -> None:
        self.key = key
        self.inputs = tuple(range(inputs))

    def run(self) -> str:
        return f"ran {self.key}"

    def harness_error(self, message: str) -> str:
        return message


def test_run_many_reports_what_its_jobs_stand_for(progress_file: Path) -> None:
    jobs = [CountingJob(key, inputs) for key, inputs in enumerate([3, 0, 5, 1])]
    results = dict(executors.run_many(jobs, "local", workers=2, progress_unit="inputs",
                                      progress_weight=lambda job: len(job.inputs)))
    assert results == {key: f"ran {key}" for key in range(4)}
    assert read_progress(progress_file) == WorkProgress("sandbox", 9, 9, "inputs", True)
    dict(executors.run_many(jobs, "local", workers=2))
    assert read_progress(progress_file) == WorkProgress("sandbox", 4, 4, "jobs", True)
    progress_file.unlink()
    dict(executors.run_many(jobs, "local", workers=2, progress=False))
    assert not progress_file.exists()
