"""perf/bench_verdict_stability.py: the CPU hog never outlives the run, and the script's exit code and output."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from perf import bench_verdict_stability as bench

REPO_ROOT = Path(__file__).resolve().parents[2]


def hog_running(pid: int) -> bool:
    """A live (not zombie) process running the hog's source; a reused pid running something else does not count."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state != "Z" and b"spinning" in cmdline


def wait_until_gone(pids: tuple[int, ...], timeout_s: float = 10.0) -> list[int]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        alive = [pid for pid in pids if hog_running(pid)]
        if not alive:
            return []
        time.sleep(0.05)
    return [pid for pid in pids if hog_running(pid)]


@pytest.fixture()
def hog_pids(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[int, ...]]]:
    """Records the pids of every hog the script starts; a test that fails does not leave them spinning."""
    started: list[tuple[int, ...]] = []
    original = bench.cpu_hog

    @contextmanager
    def recording(processes: int) -> Iterator[tuple[int, ...]]:
        with original(processes) as pids:
            started.append(pids)
            yield pids

    monkeypatch.setattr(bench, "cpu_hog", recording)
    yield started
    kill_leftovers(tuple(pid for pids in started for pid in pids))


def kill_leftovers(pids: tuple[int, ...]) -> None:
    for pid in pids:
        if hog_running(pid):
            os.kill(pid, signal.SIGKILL)


def test_the_hog_spins_one_process_each_and_stops_them(hog_pids: list[tuple[int, ...]]) -> None:
    with bench.cpu_hog(2) as pids:
        assert len(set(pids)) == 2 and all(hog_running(pid) for pid in pids)
        ticks = [int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[11]) for pid in pids]
        time.sleep(0.3)
        later = [int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[11]) for pid in pids]
        assert all(after > before for before, after in zip(ticks, later))  # user CPU time grows: they spin
    assert [pid for pid in pids if hog_running(pid)] == []


def test_the_hog_stops_when_the_body_raises(hog_pids: list[tuple[int, ...]]) -> None:
    with pytest.raises(RuntimeError, match="audit blew up"), bench.cpu_hog(2) as pids:
        raise RuntimeError("audit blew up")
    assert [pid for pid in pids if hog_running(pid)] == []


def test_the_hog_stops_when_the_audit_run_fails(tmp_path: Path, hog_pids: list[tuple[int, ...]]) -> None:
    [run] = bench.run_under_hog("hog", [sys.executable, "-c", "raise SystemExit(1)"], tmp_path, 2)
    assert run.exit_code == 1 and run.hog_processes == 2
    [pids] = hog_pids
    assert [pid for pid in pids if hog_running(pid)] == []


def test_the_hog_stops_when_the_runner_cannot_start(tmp_path: Path, hog_pids: list[tuple[int, ...]]) -> None:
    with pytest.raises(FileNotFoundError):
        bench.run_under_hog("hog", [str(tmp_path / "no-such-runner")], tmp_path, 1)
    [pids] = hog_pids
    assert [pid for pid in pids if hog_running(pid)] == []


def test_ctrl_c_stops_the_hog_and_the_audit_run(tmp_path: Path, hog_pids: list[tuple[int, ...]]) -> None:
    pid_file = tmp_path / "runner.pid"
    # the "runner" interrupts this process like a Ctrl-C would, then would run for a minute
    runner = (f"import os, signal, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); "
              "os.kill(os.getppid(), signal.SIGINT); time.sleep(60)")
    # Python's own Ctrl-C handler, whatever this process inherited: a suite started with `&` ignores SIGINT
    inherited = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            bench.run_under_hog("hog", [sys.executable, "-c", runner], tmp_path, 2)
    finally:
        signal.signal(signal.SIGINT, inherited)
    [pids] = hog_pids
    assert [pid for pid in pids if hog_running(pid)] == []
    runner_pid = int(pid_file.read_text())
    assert not Path(f"/proc/{runner_pid}").exists() or \
        Path(f"/proc/{runner_pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"


def test_the_hog_exits_by_itself_when_the_script_is_killed(tmp_path: Path) -> None:
    script = ("import sys, time\n"
              "from perf import bench_verdict_stability as bench\n"
              "with bench.cpu_hog(2) as pids:\n"
              "    print(' '.join(map(str, pids)), flush=True)\n"
              "    time.sleep(60)\n")
    with subprocess.Popen([sys.executable, "-c", script], cwd=REPO_ROOT, stdout=subprocess.PIPE, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO_ROOT)}) as parent:
        assert parent.stdout is not None
        pids = tuple(int(pid) for pid in parent.stdout.readline().split())
        assert len(pids) == 2 and all(hog_running(pid) for pid in pids)
        parent.send_signal(signal.SIGKILL)  # no finally runs: only the hogs' own parent check can stop them
        parent.wait()
    try:
        assert wait_until_gone(pids) == []
    finally:
        kill_leftovers(pids)


def test_sigterm_runs_the_cleanup(tmp_path: Path) -> None:
    """The script's SIGTERM handler turns the signal into an exit through the `finally` blocks."""
    script = ("import sys, time\n"
              "from perf import bench_verdict_stability as bench\n"
              "bench.run_batch = lambda *a, **k: (print('running', flush=True), time.sleep(60))\n"
              "bench.reused_run = lambda *a: None\n"
              "bench.run_batches_together = lambda *a, **k: (print('running', flush=True), time.sleep(60))\n"
              "sys.exit(bench.main(['--skip-idle', '--hog', '2', '--out', sys.argv[1]]))\n")
    started = time.monotonic()
    with subprocess.Popen([sys.executable, "-c", script, str(tmp_path)], cwd=REPO_ROOT, stdout=subprocess.PIPE,
                          text=True, env={**os.environ, "PYTHONPATH": str(REPO_ROOT)}) as parent:
        assert parent.stdout is not None
        lines = []
        for line in parent.stdout:
            lines.append(line)
            if line.startswith("running"):
                break
        announced = next(line for line in lines if "CPU hog" in line)
        pids = tuple(int(pid) for pid in announced.split("pids ")[1].split(", "))
        parent.send_signal(signal.SIGTERM)
        try:
            assert parent.wait(timeout=20) == 128 + signal.SIGTERM
            assert [pid for pid in pids if hog_running(pid)] == []  # stopped at once, not left to notice on its own
        finally:
            kill_leftovers(pids)
    assert time.monotonic() - started < 300


def write_run(folder: Path, checks: list[dict[str, Any]], *, audit: str = "humaneval_plus") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{audit}.findings.json").write_text(json.dumps({"audit": audit, "checks": checks}))
    (folder / "summary.json").write_text(json.dumps({"stamp": {"wall_s": 12.5, "load_start": 0.4, "load_end": 2.9,
                                                               "cpus": 2, "workers": 2, "overloaded": True}}))
    return folder


def canonical_check(deterministic: list[str], confirmed: list[str]) -> dict[str, Any]:
    return {"id": "original_canonical_vs_plus", "status": "quirk", "observed": {
        "tasks_failing_deterministic": deterministic,
        "tasks_failing_timing": [{"task_id": t, "input_index": 0, "cpu_s": 3.0, "limit_s": 1.0, "flip_factor": 3.0,
                                  "state": "confirmed"} for t in confirmed]}}


@pytest.mark.parametrize(("hog_check", "code", "verdict"), [
    (canonical_check(["HumanEval/32"], ["HumanEval/127"]), 0, "verdict sets idle vs hog: IDENTICAL"),
    (canonical_check([], ["HumanEval/32", "HumanEval/127"]), 1, "only idle: HumanEval/32; only hog: none"),
    ({"id": "original_canonical_vs_plus", "status": "skipped", "finding": "no original canonical was run"}, 3,
     "NOT COMPARABLE (skipped in the hog run: no original canonical was run)"),
])
def test_main_compares_reused_folders_and_sets_the_exit_code(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                             hog_check: dict[str, Any], code: int,
                                                             verdict: str) -> None:
    idle = write_run(tmp_path / "idle", [canonical_check(["HumanEval/32"], ["HumanEval/127"])])
    hog = write_run(tmp_path / "hog", [hog_check])
    out = tmp_path / "out.json"
    assert bench.main(["--audits", "humaneval_plus", "--idle-from", str(idle), "--hog-from", str(hog),
                       "--json", str(out)]) == code
    printed = capsys.readouterr().out
    assert verdict in printed
    assert "12.5" in printed and "2.9" in printed  # the stamp's wall time and load_end
    assert "warning: the idle run was not idle: its load (0.4 -> 2.9) exceeded its 2 cores" in printed
    payload = json.loads(out.read_text())
    assert payload["exit_code"] == code and payload["runs"][0]["stamp"]["load_start"] == 0.4
    assert payload["pairs"][0]["runs"] == ["idle", "hog"]
    assert payload["pairs"][0]["comparisons"][0]["check"] == "original_canonical_vs_plus"


def test_a_failing_runner_under_the_hog_leaves_no_hog_and_exits_not_comparable(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], hog_pids: list[tuple[int, ...]]) -> None:
    """The real batch runner, refusing an unknown audit (exit 2, before any kernel starts)."""
    idle = write_run(tmp_path / "idle", [canonical_check(["HumanEval/32"], [])])
    code = bench.main(["--audits", "no_such_audit", "--idle-from", str(idle), "--hog", "2",
                       "--out", str(tmp_path / "out")])
    assert code == bench.EXIT_NOT_COMPARABLE
    [pids] = hog_pids
    assert [pid for pid in pids if hog_running(pid)] == []
    printed = capsys.readouterr().out
    assert "runner failed in the hog and concurrent run(s)" in printed
    assert "the hog run wrote no findings" in printed and "the concurrent run wrote no findings" in printed


def test_stale_findings_are_left_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = write_run(tmp_path / "hog", [canonical_check(["HumanEval/32"], [])])
    run = bench.BatchRun("hog", str(folder), 1, 1.0, None, 2, started_at="2999-01-01T00:00:00Z")
    assert bench.fresh_findings(run, ["humaneval_plus"]) == {}
    assert "predates this run" in capsys.readouterr().out


def test_the_concurrent_batch_runs_beside_the_hog_run_and_is_compared_with_idle(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], hog_pids: list[tuple[int, ...]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Both batches start before either ends (each waits for the other's marker), under the same hog."""
    markers = tmp_path / "markers"
    markers.mkdir()

    def command(audits: object, params: object, reports_dir: Path) -> list[str]:
        other = "concurrent" if reports_dir.name == "hog" else "hog"
        script = (f"import pathlib, time\n"
                  f"pathlib.Path({str(markers / reports_dir.name)!r}).touch()\n"
                  f"while not pathlib.Path({str(markers / other)!r}).exists(): time.sleep(0.05)\n"
                  f"out = pathlib.Path({str(reports_dir)!r}); out.mkdir(parents=True, exist_ok=True)\n"
                  f"out.joinpath('humaneval_plus.findings.json').write_text({json.dumps(FOUND[reports_dir.name])!r})\n")
        return [sys.executable, "-c", script]

    monkeypatch.setattr(bench, "runner_command", command)
    idle = write_run(tmp_path / "idle", [canonical_check(["HumanEval/32"], ["HumanEval/127"])])
    code = bench.main(["--audits", "humaneval_plus", "--idle-from", str(idle), "--hog", "1",
                       "--out", str(tmp_path / "out"), "--json", str(tmp_path / "out.json")])
    printed = capsys.readouterr().out
    assert code == bench.EXIT_DIFFERS
    assert "verdict sets idle vs hog: IDENTICAL" in printed
    assert "verdict sets idle vs concurrent: DIFFERS" in printed and "only concurrent: HumanEval/9" in printed
    [pids] = hog_pids
    assert [pid for pid in pids if hog_running(pid)] == []
    runs = json.loads((tmp_path / "out.json").read_text())["runs"]
    assert [(run["label"], run["exit_code"], run["hog_processes"]) for run in runs] == [
        ("idle", None, None), ("hog", 0, 1), ("concurrent", 0, 1)]


LATER = {"started_at": "2999-01-01T00:00:00Z"}  # written by this run, not left from an earlier one
FOUND = {"hog": {"audit": "humaneval_plus", "stamp": LATER,
                 "checks": [canonical_check(["HumanEval/32"], ["HumanEval/127"])]},
         "concurrent": {"audit": "humaneval_plus", "stamp": LATER,
                        "checks": [canonical_check(["HumanEval/32", "HumanEval/9"], ["HumanEval/127"])]}}
