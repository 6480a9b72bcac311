"""Once at a time per reports folder, a run leaves nothing behind, `diff` gates and prints relative folders."""

from __future__ import annotations

import io
import json
import os
import threading
from pathlib import Path

import pytest

from audit_lib import cli, runner
from audit_lib.runner.batch import remove_staging
from audit_lib.runner.lock import describe_holder, reports_lock


def test_a_second_holder_is_refused_at_once_with_who_holds_it(tmp_path: Path) -> None:
    with reports_lock(tmp_path, command="first run"):
        assert str(os.getpid()) in describe_holder(tmp_path / ".lock")
        with pytest.raises(runner.ReportsFolderBusyError, match=rf"pid {os.getpid()} .*started .*first run"):
            with reports_lock(tmp_path, wait=False):
                pass
    with reports_lock(tmp_path, wait=False):  # released: free again
        pass
    assert not (tmp_path / ".lock").exists()  # a finished run leaves nothing behind


def test_a_run_that_waited_on_a_removed_lock_file_still_excludes_the_next(tmp_path: Path) -> None:
    """The first holder removes `.lock` on release; the run that was waiting on that file must lock the file the
    path names now, else a third run could lock a fresh file beside it: two runs at once."""
    waiting_holds, release_waiting = threading.Event(), threading.Event()
    messages = io.StringIO()

    def second_run() -> None:
        with reports_lock(tmp_path, stream=messages, command="second run"):
            waiting_holds.set()
            release_waiting.wait(timeout=600)

    with reports_lock(tmp_path, command="first run"):
        waiter = threading.Thread(target=second_run)
        waiter.start()
        while "waiting:" not in messages.getvalue():  # the second run has opened the first one's file
            waiter.join(timeout=0.05)
    assert waiting_holds.wait(timeout=600)
    try:
        assert "second run" in describe_holder(tmp_path / ".lock")
        with pytest.raises(runner.ReportsFolderBusyError, match="second run"):
            with reports_lock(tmp_path, wait=False, command="third run"):
                pass
    finally:
        release_waiting.set()
        waiter.join(timeout=600)
    assert not (tmp_path / ".lock").exists()


def test_removing_one_runs_staging_keeps_another_runs(tmp_path: Path) -> None:
    mine, theirs = tmp_path / ".staging" / "run-a", tmp_path / ".staging" / "run-b"
    (mine / "worker-budget").mkdir(parents=True)
    (theirs / "audit").mkdir(parents=True)
    remove_staging(mine)
    assert not mine.exists() and theirs.is_dir()
    remove_staging(theirs)
    assert not (tmp_path / ".staging").exists()  # nothing left behind, not even an empty folder


def test_removing_a_staging_folder_that_was_never_made_is_quiet(tmp_path: Path) -> None:
    """An interrupted run may end before its staging folder exists; the cleanup must not raise over it."""
    remove_staging(tmp_path / ".staging" / "run-a")
    assert list(tmp_path.iterdir()) == []
    (tmp_path / ".staging").mkdir()
    remove_staging(tmp_path / ".staging" / "run-a")
    assert not (tmp_path / ".staging").exists()


def write_run(reports: Path, name: str, status: str) -> Path:
    folder = reports / "runs" / name
    folder.mkdir(parents=True)
    (folder / "summary.json").write_text("{}")
    (folder / "a.findings.json").write_text(json.dumps({"audit": "a", "checks": [{"id": "c", "status": status}]}))
    return folder


def test_diff_compares_the_last_two_runs_and_fails_on_change(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    reports = tmp_path / "reports"
    write_run(reports, "2026-01-01T00-00-00Z", "pass")
    write_run(reports, "2026-01-02T00-00-00Z", "defect")
    write_run(reports, "2026-01-03T00-00-00Z", "defect")
    assert cli.main(["diff", "--reports-dir", str(reports), "--fail-on-change"]) == 0  # not first vs last
    out = capsys.readouterr().out
    assert "runs/2026-01-02T00-00-00Z -> runs/2026-01-03T00-00-00Z: 0 check(s) changed" in out
    assert str(tmp_path) not in out
    write_run(reports, "2026-01-04T00-00-00Z", "quirk")
    assert cli.main(["diff", "--reports-dir", str(reports)]) == 0
    assert cli.main(["diff", "--reports-dir", str(reports), "--fail-on-change"]) == runner.EXIT_GATE
    out = capsys.readouterr().out
    assert "~ a.c: defect -> quirk" in out and str(tmp_path) not in out


def test_mirror_naming_a_file_is_refused_as_such(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner.batch, "_execute_all", lambda *a, **k: pytest.fail("a kernel was about to start"))
    not_a_folder = tmp_path / "mirror.tar"
    not_a_folder.write_text("")
    assert cli.main(["run", "data_inventory", "--mirror", str(not_a_folder), "--reports-dir",
                     str(tmp_path / "r")]) == runner.EXIT_BAD_ARGUMENTS
    assert "is a file, not a folder" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(("content", "described"), [
    (None, "a run that has not yet said who it is"),
    ("", "a run that has not yet said who it is"),
    ("{not json", "a run that has not yet said who it is"),
    ("[1, 2]", "a run that has not yet said who it is"),
    ('{"host": "h"}', "a run that has not yet said who it is"),
    ('{"pid": 7}', "pid 7 on ?, started ?"),
    ('{"pid": 7, "host": "h", "started_at": "T", "command": ""}', "pid 7 on h, started T"),
    ('{"pid": 7, "host": "h", "started_at": "T", "command": "python -m audit_lib run x"}',
     "pid 7 on h, started T (python -m audit_lib run x)"),
])
def test_the_holder_is_described_from_what_its_lock_file_says(tmp_path: Path, content: str | None,
                                                              described: str) -> None:
    if content is not None:
        (tmp_path / ".lock").write_text(content, encoding="utf-8")
    assert describe_holder(tmp_path / ".lock") == described


def test_the_holder_records_who_it_is_and_a_refusal_says_what_to_do(tmp_path: Path) -> None:
    import re
    import socket

    reports = tmp_path / "new" / "reports"
    with reports_lock(reports, command="python -m audit_lib run a") as lock_path:
        assert lock_path == reports / ".lock"
        record = json.loads(lock_path.read_text(encoding="utf-8"))
        assert (record["pid"], record["host"], record["command"]) == (os.getpid(), socket.gethostname(),
                                                                      "python -m audit_lib run a")
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", record["started_at"])
        with pytest.raises(runner.ReportsFolderBusyError) as refused:
            with reports_lock(reports, wait=False, stream=io.StringIO()):
                pass
        holder = describe_holder(lock_path)
        assert str(refused.value.message) == (
            f"{reports} is in use by another run: {holder}. Wait for it, drop --no-wait to queue behind it, or give "
            "this run its own --reports-dir")
        assert refused.value.fields["holder"] == holder
        assert lock_path.stat().st_mode & 0o777 == 0o644 & ~_umask()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_a_waiting_run_says_once_who_it_waits_for(tmp_path: Path) -> None:
    messages = io.StringIO()
    entered = threading.Event()

    def waiter() -> None:
        with reports_lock(tmp_path, stream=messages, command="second"):
            entered.set()

    with reports_lock(tmp_path, command="first"):
        holder = describe_holder(tmp_path / ".lock")
        thread = threading.Thread(target=waiter)
        thread.start()
        for _ in range(12_000):  # up to 10 minutes: a bound only a hang reaches
            if "waiting:" in messages.getvalue():
                break
            thread.join(timeout=0.05)
        assert not entered.is_set()
    thread.join(timeout=600)
    assert entered.is_set()
    assert messages.getvalue() == (f"waiting: {tmp_path} is in use by another run ({holder}); this run starts when "
                                   "it ends (--no-wait refuses instead)\n")
    assert not (tmp_path / ".lock").exists()
