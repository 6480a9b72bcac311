"""perf/bench_audit.py: its tables and totals from constructed passes, the findings comparison, argument errors.

Nothing here runs an audit; every figure is made up, so no assertion depends on this machine's speed."""

from __future__ import annotations

from pathlib import Path

import pytest

from perf import bench_audit as bench
from perf.bench_audit import AuditTime, CheckTime, PassTime


def cost(wall_s: float, jobs: int | None = 3) -> dict:
    return {"cost": {"wall_s": wall_s, "cpu_s": 0.5, "children_cpu_s": wall_s, "sandbox_jobs": jobs,
                     "machine_dependent": True}}


def findings(observed: int = 1, wall_s: float = 2.0) -> dict:
    return {"audit": "a", "checks": [
        {"id": "slow", "status": "defect", "observed": {"count": observed, "elapsed_s": wall_s}, "meta": cost(wall_s)},
        {"id": "old", "status": "pass", "observed": None, "meta": {}},  # from before costs were kept
    ]}


def a_pass(kind: str, round_number: int, wall: float, checks: tuple[CheckTime, ...], ok: bool = True,
           differ: tuple[str, ...] | None = None, load: CheckTime | None = None) -> PassTime:
    return PassTime(kind, round_number, wall, wall * 1.5, (1.0, 0.9, 0.8), (1.25, 1.0, 0.9),
                    (AuditTime("a", wall - 1, ok, load),), checks, differ)


def test_check_times_reads_each_recorded_cost_and_the_load() -> None:
    assert bench.check_times({"a": findings()}) == (CheckTime("a", "slow", 2.0, 2.5, 3),)
    assert bench.load_time("a", {"load_cost": cost(4.0, None)["cost"]}) == CheckTime("a", "<load>", 4.0, 4.5, None)
    assert bench.load_time("a", findings()) is None and bench.load_time("a", None) is None


def test_findings_differ_on_status_or_observed_but_not_on_timings_or_costs() -> None:
    assert bench.differing_checks({"a": findings()}, {"a": findings(wall_s=99.0)}) == ()
    assert bench.differing_checks({"a": findings()}, {"a": findings(observed=2)}) == ("a.slow",)
    assert bench.differing_checks({"a": findings()}, {}) == ("a.old", "a.slow", "a.<findings>")


def test_totals_name_the_machine_each_pass_its_load_and_medians_over_rounds() -> None:
    passes = [a_pass("cold", 1, 100.0, ()), a_pass("warm", 1, 10.0, (), differ=()),
              a_pass("cold", 2, 80.0, (), ok=False), a_pass("warm", 2, 12.0, (), differ=("a.slow",))]
    lines = bench.totals_lines(passes, cpus=2)
    assert lines[0].startswith("machine: 2 CPU(s)") and "machine-dependent" in lines[0]
    assert lines[1].split()[:7] == ["round", "1", "cold", "wall", "100.0", "s", "CPU"]
    assert "load 1.00 -> 1.25" in lines[1] and "findings" not in lines[1]
    assert lines[2].endswith("findings: same as cold")
    assert lines[3].endswith("FAILED: a")
    assert lines[4].endswith("findings differ from cold: a.slow")
    assert lines[5].split()[:7] == ["median", "of", "2", "cold", "wall", "90.0", "s"]
    assert lines[6].split()[:6] == ["median", "of", "2", "warm", "wall", "11.0"]
    assert len(bench.totals_lines(passes[:2], cpus=2)) == 3  # one round: no medians


def test_tables_list_slowest_cold_first_with_medians_and_uncounted_jobs() -> None:
    cold = (CheckTime("a", "fast", 1.0, 1.0, 0), CheckTime("a", "slow", 50.0, 70.0, 200),
            CheckTime("b", "dask", 5.0, 9.0, None))
    warm = (CheckTime("a", "fast", 1.0, 1.0, 0), CheckTime("a", "slow", 2.0, 2.0, 0),
            CheckTime("b", "dask", 4.0, 4.0, None))
    later = (CheckTime("a", "fast", 3.0, 1.0, 0), CheckTime("a", "slow", 70.0, 90.0, 220),
             CheckTime("b", "dask", 5.0, 9.0, None))
    load = CheckTime("a", "<load>", 3.0, 2.0, 0)
    passes = [a_pass("cold", 1, 60.0, cold, load=load), a_pass("warm", 1, 8.0, warm, load=load),
              a_pass("cold", 2, 80.0, later, load=load), a_pass("warm", 2, 8.0, warm, load=load)]
    table = bench.check_table(passes)
    assert [line.split()[0] for line in table] == ["check", "a.slow", "b.dask", "a.<load>", "a.fast"]
    assert table[1].split() == ["a.slow", "60.0", "s", "2.0", "s", "80.0", "s", "2.0", "s", "200", "0"]
    assert table[2].split()[-2:] == ["-", "-"]
    assert bench.check_table(passes, limit=1)[2:] == ["... and 3 faster check(s) (--checks 0 lists all)"]
    audits = bench.audit_table(passes)
    assert audits[1].split() == ["a", "69.0", "s", "7.0", "s", "3.0", "s", "3.0", "s", "83.0", "s", "5.0", "s",
                                 "200", "0"]
    assert audits[-1].startswith("(wall: the notebook's")
    unloaded = bench.audit_table([a_pass("cold", 1, 5.0, ()), a_pass("warm", 1, 4.0, ())])  # findings from before
    assert unloaded[1].split() == ["a", "4.0", "s", "3.0", "s", "-", "-", "0.0", "s", "0.0", "s", "0", "0"]


@pytest.mark.parametrize("argv, environ, message", [
    ([], {}, "set AUDIT_MIRROR or --mirror"),
    (["--audits", "no_such_audit"], {"AUDIT_MIRROR": "."}, "unknown audit(s) no_such_audit"),
    (["--repeat", "0"], {"AUDIT_MIRROR": "."}, "--repeat and --jobs must be at least 1"),
])
def test_bad_arguments_exit_2_before_any_audit_runs(argv: list[str], environ: dict, message: str,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("AUDIT_MIRROR", raising=False)
    for key, value in environ.items():
        monkeypatch.setenv(key, str(Path(value).resolve()))
    monkeypatch.setattr(bench, "run_pass", lambda *a, **k: pytest.fail("an audit was about to run"))
    assert bench.main(argv) == bench.EXIT_BAD_ARGUMENTS
    assert message in capsys.readouterr().err


def test_the_verdicts_pass_runs_every_notebook_again_between_cold_and_warm(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    calls = []

    def fake_pass(kind: str, round_number: int, audits: list, **options: object) -> tuple[PassTime, dict]:
        calls.append((kind, options.get("reuse_reports", True), options.get("cold_findings") is not None))
        return a_pass(kind, round_number, 5.0, (), differ=None if kind == "cold" else ()), {"a": findings()}

    monkeypatch.setattr(bench, "run_pass", fake_pass)
    assert bench.main(["--audits", "humaneval_plus", "--mirror", str(tmp_path), "--verdicts-pass"]) == bench.EXIT_OK
    assert calls == [("cold", True, False), ("warm-verdicts", False, True), ("warm", True, True)]
    assert "round 1 warm-verdicts" in capsys.readouterr().out
    calls.clear()
    assert bench.main(["--audits", "humaneval_plus", "--mirror", str(tmp_path)]) == bench.EXIT_OK
    assert [kind for kind, _reuse, _compared in calls] == ["cold", "warm"]
