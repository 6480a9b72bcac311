"""A batch starts its notebooks longest first, from the durations its reports folder's last summary recorded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from audit_lib import runner
from audit_lib.runner.order import longest_first, previous_durations
from audit_lib.runner.plan import AuditJob


def job(audit: str) -> AuditJob:
    return AuditJob(audit, f"{audit}.ipynb", {}, "python3", "reports", {}, False, None)


def summary(folder: Path, durations: dict[str, object]) -> None:
    rows = [{"audit": audit, "duration_s": seconds} for audit, seconds in durations.items()]
    (folder / "summary.json").write_text(json.dumps({"audits": rows}), encoding="utf-8")


def test_never_timed_audits_start_first_then_the_longest() -> None:
    planned = [job("a"), job("b"), job("c"), job("d")]
    ordered = longest_first(planned, {"a": 5.0, "b": 90.0, "d": 30.0})
    assert [j.audit for j in ordered] == ["c", "b", "d", "a"]


def test_without_durations_the_plan_order_stays() -> None:
    planned = [job("z"), job("a"), job("m")]
    assert longest_first(planned, {}) == planned


def test_durations_come_from_the_last_summary(tmp_path: Path) -> None:
    summary(tmp_path, {"a": 12.5, "b": 3, "c": "slow"})  # a value that is not a number orders nothing
    assert previous_durations(tmp_path) == {"a": 12.5, "b": 3.0}


@pytest.mark.parametrize("text", [None, "not json", "[]", '{"audits": 3}'])
def test_a_missing_or_unreadable_summary_orders_nothing(tmp_path: Path, text: str | None) -> None:
    if text is not None:
        (tmp_path / "summary.json").write_text(text, encoding="utf-8")
    assert previous_durations(tmp_path) == {}


def test_a_parallel_batch_starts_the_longest_notebook_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from notebook_factory import plugin_for, write_notebook

    cells = ["from audit_lib.findings import FindingsBuilder\nFindingsBuilder('{0}', {{}}).write()"]
    plugins = {name: plugin_for(write_notebook(tmp_path, name, "x = 1\n", [cells[0].format(name)]))
               for name in ("quick", "slow")}
    reports = tmp_path / "reports"
    reports.mkdir()
    summary(reports, {"quick": 2.0, "slow": 200.0})
    started: list[list[str]] = []

    class Started(Exception):
        pass

    def record_order(planned: list[AuditJob], *args: object) -> None:
        started.append([j.audit for j in planned])
        raise Started  # no kernel needed: the order is all this test reads

    monkeypatch.setattr(runner.batch, "_execute_all", record_order)
    for jobs in (2, 1):
        with pytest.raises(Started):
            runner.run_audits(["quick", "slow"], jobs=jobs, reports_dir=reports, plugins=plugins, progress=None)
    assert started == [["slow", "quick"], ["quick", "slow"]]  # one at a time, the plan's order
