"""What a check cost: the session records it per check, nested checks are charged to themselves, and every
sandbox job started outside `run_many` is counted where it starts. No assertion here bounds a duration."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from audit_lib import check_cost
from audit_lib.check_cost import CheckCost, CostMeter, Usage
from audit_lib.findings import Result
from audit_lib.plugin import AuditPlugin, CheckSpec, param
from audit_lib.report import banner, show_check
from tests.toy_audit.audit import AUDIT as TOY

REPO = Path(__file__).resolve().parent.parent
COST_KEYS = {"wall_s", "cpu_s", "children_cpu_s", "sandbox_jobs", "machine_dependent"}


def test_a_nested_span_is_charged_to_itself_not_to_the_span_around_it() -> None:
    readings = iter([Usage(0, 0, 0, 0),     # outer starts
                     Usage(1, 1, 10, 2),    # inner starts
                     Usage(4, 2, 40, 7),    # inner stops: 3 s wall, 1 s CPU, 30 s children, 5 jobs
                     Usage(6, 3, 41, 8)])   # outer stops: 6 s in all, 3 s of it its own
    meter = CostMeter(clock=lambda: next(readings))
    meter.start()
    meter.start()
    assert meter.stop() == Usage(3, 1, 30, 5)
    assert meter.stop() == Usage(3, 2, 11, 3)


def test_the_cost_round_trips_through_meta_and_a_malformed_one_reads_as_none() -> None:
    cost = CheckCost(12.3456, 1.25, 20.5, 164)
    meta = {"cost": cost.to_meta()}
    assert set(meta["cost"]) == COST_KEYS and meta["cost"]["machine_dependent"] is True
    assert CheckCost.from_meta(meta) == CheckCost(12.346, 1.25, 20.5, 164)
    assert cost.text() == "12.3 s wall · 21.8 s CPU · 164 sandbox jobs"
    assert CheckCost(1.0, 0.004, 0.03, None).text() == "1.0 s wall · 0.03 s CPU"
    for broken in ({}, {"cost": None}, {"cost": {"wall_s": "soon"}}, {"cost": {"wall_s": 1.0}}, None):
        assert CheckCost.from_meta(broken) is None


def test_child_processes_are_seen_live_and_after_they_end() -> None:
    before = check_cost.usage_now()
    child = subprocess.Popen([sys.executable, "-c", "import sys\nsum(range(3_000_000))\nsys.stdin.read()"],
                             stdin=subprocess.PIPE)
    try:
        assert child.pid in set(check_cost.live_descendants(os.getpid()))
    finally:
        child.communicate(b"")
    after = check_cost.usage_now()
    spent = after - before
    assert spent.children_cpu_s > 0 and spent.wall_s >= 0


@dataclass(frozen=True)
class Params:
    executor: str = param("local")


def _plugin(*specs: CheckSpec) -> AuditPlugin:
    return AuditPlugin("costs", "costs", Params, lambda p: None, specs)


def test_every_check_the_session_runs_records_its_cost(tmp_path: Path) -> None:
    audit = TOY.session({"text": "a a a b", "max_repeats": 2}, out_dir=tmp_path)
    for check in audit.run_all():  # a defect, a skip and an error alike
        cost = check.meta["cost"]
        assert set(cost) == COST_KEYS and cost["sandbox_jobs"] == 0 and cost["machine_dependent"] is True
        assert all(isinstance(cost[key], float) and cost[key] >= 0 for key in ("wall_s", "cpu_s", "children_cpu_s"))
    assert audit.run("glossary").meta["missing"] == ["toy/glossary.txt"]  # the check's own meta is kept


def test_jobs_of_a_needed_check_are_charged_to_it(tmp_path: Path) -> None:
    def counted(jobs: int):
        def run(inputs: object, params: object) -> Result:
            check_cost.note_sandbox_job(jobs)
            return Result("pass", summary="ran")
        return run

    audit = _plugin(CheckSpec("first", "first", counted(3)),
                    CheckSpec("second", "second", counted(1), ("check:first",))).session({}, out_dir=tmp_path)
    second = audit.run("second")  # runs `first` inside it
    assert second.meta["cost"]["sandbox_jobs"] == 1 and audit.run("first").meta["cost"]["sandbox_jobs"] == 3


def test_the_load_of_the_inputs_records_its_own_cost_beside_the_checks(tmp_path: Path) -> None:
    def load(params: object) -> None:
        check_cost.note_sandbox_job(2)  # e.g. a ground truth computed while loading

    audit = AuditPlugin("loads", "loads", Params, load,
                        (CheckSpec("c", "c", lambda i, p: Result("pass")),)).session({}, out_dir=tmp_path)
    assert audit.run("c").meta["cost"]["sandbox_jobs"] == 0
    written = audit.builder.findings().to_json()
    assert set(written["load_cost"]) == COST_KEYS and written["load_cost"]["sandbox_jobs"] == 2
    assert "inputs loaded in " in banner(audit.builder).html


def test_jobs_are_not_counted_where_a_dask_cluster_runs_them(tmp_path: Path) -> None:
    check = _plugin(CheckSpec("c", "c", lambda i, p: Result("pass"))).session(
        {"executor": "dask://scheduler:8786"}, out_dir=tmp_path).run("c")
    assert check.meta["cost"]["sandbox_jobs"] is None


def test_run_many_counts_each_job_it_runs() -> None:
    from audit_lib.sandbox import run_many

    @dataclass(frozen=True)
    class NoSandbox:
        key: int

        def run(self) -> int:
            return self.key

        def harness_error(self, message: str) -> None:
            return None

    before = check_cost.sandbox_jobs_so_far()
    assert sorted(key for key, _ in run_many([NoSandbox(k) for k in range(7)], "local", progress=False)) \
        == list(range(7))
    assert check_cost.sandbox_jobs_so_far() - before == 7


SANDBOX_CALLS = {"call_function", "run_tests", "run_asserts", "script_exit_codes"}


def own_calls(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """Names a function calls in its own body (lambdas included, nested functions and classes not)."""
    names: set[str] = set()
    pending: list[ast.AST] = list(function.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(node, ast.Call):
            names.add(getattr(node.func, "attr", getattr(node.func, "id", "")))
        pending.extend(ast.iter_child_nodes(node))
    return names


def uncounted_sandbox_calls(source: str) -> list[str]:
    """Functions that call the sandbox directly without `note_sandbox_job` (a job's own `run` is counted by
    `run_many`, which runs it)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name != "run":
            calls = own_calls(node)
            if calls & SANDBOX_CALLS and "note_sandbox_job" not in calls:
                found.append(node.name)
    return found


def test_the_guard_finds_an_uncounted_sandbox_call() -> None:
    bare = "def rerun(p):\n    return sandbox.call_function(p, 'f', [[1]])\n"
    counted = "def rerun(p):\n    note_sandbox_job()\n    return sandbox.call_function(p, 'f', [[1]])\n"
    job = "class Job:\n    def run(self):\n        return sandbox.run_tests(self.p, [])\n"
    nested = ("def reruns(ps):\n    note_sandbox_job()\n    def once(p):\n        return run_tests(p, [])\n"
              "    return [once(p) for p in ps]\n")
    assert uncounted_sandbox_calls(bare) == ["rerun"] and uncounted_sandbox_calls(nested) == ["once"]
    assert uncounted_sandbox_calls(counted) == [] and uncounted_sandbox_calls(job) == []


def test_every_direct_sandbox_call_outside_the_sandbox_is_counted() -> None:
    offenders = {}
    for path in sorted((REPO / "audit_lib").rglob("*.py")):
        if "sandbox" in path.relative_to(REPO / "audit_lib").parts[:1]:
            continue
        found = uncounted_sandbox_calls(path.read_text(encoding="utf-8"))
        if found:
            offenders[str(path.relative_to(REPO))] = found
    assert offenders == {}, "call check_cost.note_sandbox_job() where these start a sandbox job"


def test_the_report_shows_a_checks_time_marked_as_this_machines(tmp_path: Path) -> None:
    check = TOY.session({}, out_dir=tmp_path).run("repeats")
    html = show_check(check).html
    assert '<span class="cost" title="measured on this machine in this run' in html
    assert " s wall · " in html and " s CPU · 0 sandbox jobs</span>" in html
    old = {"id": "c", "title": "t", "status": "pass", "meta": {}}  # findings from before costs were kept
    assert 'class="cost"' not in show_check(old).html

