"""`meta["failure_split"]`: validated, phrased as "N deterministic + M timing (confirmed)", shown beside its check
on the index with the run's load warning when the load exceeded the cores; a malformed split is shown, named."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from audit_lib.errors import SchemaError
from audit_lib.report.split import FailureSplit, overload_of, split_markup
from audit_lib.runner.index_page import write_index_and_summary

SPLIT = {"unit": "tasks", "deterministic": 17, "timing_confirmed": 5, "timing_borderline": 1,
         "timing_not_failing": 3}
QUIET = {"cpus": 2, "load_start": 0.4, "load_end": 1.9}
LOADED = {"cpus": 2, "load_start": 1.5, "load_end": 3.25}


def test_text_states_deterministic_plus_confirmed_timing() -> None:
    assert FailureSplit.from_json(SPLIT).text() == (
        "failing tasks: 17 deterministic + 5 timing (confirmed), 1 borderline; "
        "3 timed out only in the parallel run (pass alone)")
    plain = dict(SPLIT, unit="inputs", deterministic=1245, timing_borderline=0, timing_not_failing=0)
    assert FailureSplit.from_json(plain).text() == "failing inputs: 1,245 deterministic + 5 timing (confirmed)"


@pytest.mark.parametrize(("payload", "field"), [
    ([17, 5], "failure_split"),
    (dict(SPLIT, unit="problems"), "unit"),
    ({k: v for k, v in SPLIT.items() if k != "timing_borderline"}, "timing_borderline"),
    (dict(SPLIT, deterministic=-1), "deterministic"),
    (dict(SPLIT, timing_confirmed="5"), "timing_confirmed"),
    (dict(SPLIT, timing_not_failing=True), "timing_not_failing"),
    (dict(SPLIT, deterministic=2.0), "deterministic"),
])
def test_a_malformed_split_names_its_field(payload: Any, field: str) -> None:
    with pytest.raises(SchemaError) as caught:
        FailureSplit.from_json(payload)
    assert caught.value.fields["field"] == field and field in str(caught.value)


def test_overload_comes_from_the_stamp() -> None:
    assert overload_of(QUIET) is None and overload_of(None) is None and overload_of({"cpus": 2}) is None
    assert overload_of(LOADED) == (3.25, 2)
    assert "load 3.25 on 2 CPUs" in split_markup(SPLIT, overload=overload_of(LOADED))
    assert "load" not in split_markup(SPLIT, overload=None)
    assert split_markup(None) == ""


def findings(checks: list[dict[str, Any]], stamp: dict[str, Any] | None) -> dict[str, Any]:
    return {"audit": "humaneval_plus", "checks": checks, "stamp": stamp}


def index_for(tmp_path: Path, payload: dict[str, Any], *, batch_stamp: dict[str, Any] | None = None) -> str:
    (tmp_path / "humaneval_plus.findings.json").write_text(json.dumps(payload))
    outcome = {"audit": "humaneval_plus", "notebook": "humaneval_plus", "params": {}, "ok": True, "duration_s": 1.0,
               "failure": None, "files": {"findings": "humaneval_plus.findings.json"}, "status": "ok"}
    write_index_and_summary(tmp_path, [outcome], {"kernel": "python3"}, stamp=batch_stamp)
    return (tmp_path / "index.html").read_text()


def cell_of(html: str, check_id: str) -> str:
    [row] = [r for r in re.findall(r"<tr>.*?</tr>", html, flags=re.DOTALL) if f"<code>{check_id}</code><br>" in r]
    return row


CHECKS = [
    {"id": "original_canonical_vs_plus", "title": "t", "status": "defect", "meta": {"failure_split": SPLIT}},
    {"id": "contract_violations", "title": "t", "status": "quirk", "observed": 63},
]


def test_the_index_shows_the_split_beside_its_check(tmp_path: Path) -> None:
    html = index_for(tmp_path, findings(CHECKS, QUIET))
    row = cell_of(html, "original_canonical_vs_plus")
    assert "failing tasks: 17 deterministic + 5 timing (confirmed), 1 borderline" in row
    assert "CPUs during this run" not in row
    assert 'class="split' not in cell_of(html, "contract_violations")
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["audits"][0]["checks"][0]["failure_split"] == SPLIT


def test_the_load_warning_sits_next_to_the_split_when_the_audits_run_was_overloaded(tmp_path: Path) -> None:
    row = cell_of(index_for(tmp_path, findings(CHECKS, LOADED)), "original_canonical_vs_plus")
    assert "load 3.25 on 2 CPUs during this run" in row
    # An audit without its own stamp takes the batch's.
    row = cell_of(index_for(tmp_path, findings(CHECKS, None), batch_stamp=LOADED), "original_canonical_vs_plus")
    assert "load 3.25 on 2 CPUs during this run" in row
    row = cell_of(index_for(tmp_path, findings(CHECKS, QUIET), batch_stamp=LOADED), "original_canonical_vs_plus")
    assert "CPUs during this run" not in row  # the audit's own stamp says its run was quiet


def test_a_malformed_split_on_the_index_is_shown_with_where_it_came_from(tmp_path: Path) -> None:
    broken = [dict(CHECKS[0], meta={"failure_split": dict(SPLIT, timing_confirmed=None)})]
    row = cell_of(index_for(tmp_path, findings(broken, QUIET)), "original_canonical_vs_plus")
    assert "humaneval_plus.findings.json, check original_canonical_vs_plus" in row
    assert "failure_split.timing_confirmed must be a non-negative int, got None" in row


def test_a_report_shows_the_split_beside_its_check() -> None:
    from audit_lib.findings import Check
    from audit_lib.report import show_check

    split = {"unit": "tasks", "deterministic": 17, "timing_confirmed": 5, "timing_borderline": 1,
             "timing_not_failing": 0, "deterministic_key": "d", "timing_key": "t"}
    shown = str(show_check(Check("c", "C", "quirk", summary="Fails.", meta={"failure_split": split})))
    assert "17 deterministic + 5 timing (confirmed), 1 borderline" in shown and ".ba .split{" in shown
    plain = str(show_check(Check("c", "C", "quirk", summary="Fails.")))
    assert 'class="split' not in plain and ".ba .split{" not in plain
