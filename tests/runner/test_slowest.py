"""The runner's closing lines: the slowest checks of the batch, from the cost each check recorded."""

from __future__ import annotations

from pathlib import Path

import pytest

from audit_lib import cli, runner
from audit_lib.runner.slowest import slowest_checks, slowest_lines


def timed(check_id: str, wall_s: float, jobs: int | None = 0, *, in_meta: bool = False) -> dict:
    cost = {"wall_s": wall_s, "cpu_s": 1.0, "children_cpu_s": 2.0, "sandbox_jobs": jobs, "machine_dependent": True}
    return {"id": check_id, "status": "pass", **({"meta": {"cost": cost}} if in_meta else {"cost": cost})}


def test_the_slowest_come_first_and_untimed_checks_are_left_out() -> None:
    checks = {"b": [timed("x", 3.0), timed("y", 40.0, in_meta=True), {"id": "old", "status": "pass"}],
              "a": [timed(f"c{n}", float(n)) for n in range(6)] + [timed("x", 3.0)]}
    ranked = [(t.audit, t.check, t.cost.wall_s) for t in slowest_checks(checks)]
    assert ranked == [("b", "y", 40.0), ("a", "c5", 5.0), ("a", "c4", 4.0), ("a", "c3", 3.0), ("a", "x", 3.0)]
    assert slowest_checks({"a": [{"id": "old", "status": "pass", "cost": None}]}) == []
    assert slowest_lines([]) == []


def test_the_lines_name_audit_check_wall_cpu_and_jobs_and_say_they_are_this_machines() -> None:
    lines = slowest_lines(slowest_checks({"humaneval_plus": [timed("ground_truth", 123.45, 1640)],
                                          "intentspec": [timed("replay", 2.0, None)]}))
    assert lines[0] == ("slowest checks (measured on this machine in this run; wall, CPU = kernel + its child "
                        "processes, sandbox jobs):")
    assert lines[1].split() == ["humaneval_plus.ground_truth", "123.5", "s", "3.0", "s", "CPU", "(1.0", "+",
                                "2.0)", "1,640", "jobs"]
    assert lines[2].split()[0] == "intentspec.replay" and lines[2].split()[-2:] == ["-", "jobs"]


def test_the_cli_prints_the_slowest_checks_of_the_audits_that_finished(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    outcomes = (runner.AuditOutcome("a", "a", {}, True, 1.0),
                runner.AuditOutcome("broken", "broken", {}, False, 1.0, runner.NotebookFailure(2, 3, "E", "m")))
    # a failed audit shows its last good run's checks: their times are not this run's
    summary = runner.RunSummary(outcomes, tmp_path, tmp_path / "index.html", tmp_path / "summary.json",
                                {"a": (timed("fast", 0.5), timed("slow", 9.0, 12)), "broken": (timed("stale", 99.0),)})
    monkeypatch.setattr(cli, "run_audits", lambda *args, **kwargs: summary)
    cli.main(["run", "a", "broken"])
    out = capsys.readouterr().out.splitlines()
    start = next(i for i, line in enumerate(out) if line.startswith("slowest checks"))
    assert [line.split()[0] for line in out[start + 1:start + 3]] == ["a.slow", "a.fast"]
    assert not any("broken.stale" in line for line in out)
