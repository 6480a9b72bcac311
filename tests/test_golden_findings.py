"""The golden-findings comparison: what it pins, what it leaves out, and how an update is recorded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests import golden_findings
from tests.golden_findings import DROPPED, compare, stable_checks, update


def findings(status: str = "defect", failing: int = 23, timeouts: int = 86, duration_s: float = 3.2) -> dict:
    return {"audit": "humaneval_plus", "params": {"dataset": "humaneval"}, "checks": [
        {"id": "contract_violations", "status": status, "observed": {"violations": 63, "tasks": ["HumanEval/32"]}},
        {"id": "original_canonical_vs_plus", "status": "defect",
         "observed": {"tasks_disagreeing": failing, "failing_input_kinds": {"wrong_value": 1245, "timeout": timeouts},
                      "per_split": [{"split": "plus", "duration_s": duration_s}]}},
        {"id": "time_limit_sensitivity", "status": "quirk",
         "observed": {"inputs_over_floor": 36, "inputs_timed": 900, "inputs_failing_deterministic": [],
                      "inputs_failing_timing": [{"id": "HumanEval/130 plus[3]", "state": "confirmed"}],
                      "timing_confirmed": 36, "speed_curve": [[0.25, 40, 40], [1.0, 36, 36]]}},
    ]}


@pytest.fixture()
def golden_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(golden_findings, "GOLDEN_DIR", tmp_path)
    return tmp_path


def test_timings_and_machine_dependent_figures_are_left_out() -> None:
    pinned = stable_checks(findings())
    observed = pinned["original_canonical_vs_plus"]["observed"]
    assert observed["failing_input_kinds"] == {"wrong_value": 1245, "timeout": DROPPED}
    assert observed["tasks_disagreeing"] == DROPPED
    assert observed["per_split"] == [{"split": "plus", "duration_s": DROPPED}]
    # judged on CPU time now: what a clock decides is left out, what none decides is pinned
    assert pinned["time_limit_sensitivity"] == {"status": DROPPED, "observed": {
        "inputs_over_floor": DROPPED, "inputs_timed": 900, "inputs_failing_deterministic": [],
        "inputs_failing_timing": DROPPED, "timing_confirmed": DROPPED, "speed_curve": DROPPED}}


def test_volatile_parts_do_not_count_as_differences(golden_dir: Path) -> None:
    update("he", findings(), "first pin")
    golden = json.loads((golden_dir / "he.json").read_text())
    assert compare(golden, findings(failing=26, timeouts=99, duration_s=9.9)) == []


@pytest.mark.parametrize("changed, where", [
    (dict(status="quirk"), "contract_violations: status"),
])
def test_a_changed_status_is_a_difference(golden_dir: Path, changed: dict, where: str) -> None:
    update("he", findings(), "first pin")
    golden = json.loads((golden_dir / "he.json").read_text())
    differences = compare(golden, findings(**changed))
    assert [f"{d.check}: {d.field}" for d in differences] == [where]


def test_a_changed_figure_a_missing_and_an_extra_check_are_differences(golden_dir: Path) -> None:
    update("he", findings(), "first pin")
    golden = json.loads((golden_dir / "he.json").read_text())
    run = findings()
    run["checks"][0]["observed"]["violations"] = 62
    run["checks"].pop(1)
    run["checks"].append({"id": "new_check", "status": "pass", "observed": 1})
    described = {(d.check, d.field) for d in compare(golden, run)}
    assert described == {("contract_violations", "observed.violations"), ("original_canonical_vs_plus", "check"),
                         ("new_check", "check")}


def test_update_requires_a_reason_and_records_old_and_new_values(golden_dir: Path) -> None:
    with pytest.raises(ValueError, match="reason"):
        update("he", findings(), "  ")
    update("he", findings(), "first pin")
    update("he", findings(status="quirk"), "the contract rule now ignores HumanEval/32")
    history = json.loads((golden_dir / "he.json").read_text())["history"]
    assert [entry["reason"] for entry in history] == ["first pin", "the contract rule now ignores HumanEval/32"]
    assert history[1]["changes"] == [{"check": "contract_violations", "field": "status", "old": "defect",
                                      "new": "quirk"}]


def test_an_unchanged_run_writes_nothing(golden_dir: Path) -> None:
    update("he", findings(), "first pin")
    before = (golden_dir / "he.json").read_text()
    update("he", findings(timeouts=1), "nothing stable changed")
    assert (golden_dir / "he.json").read_text() == before


def test_a_checks_cost_and_the_run_stamp_are_never_pinned(golden_dir: Path) -> None:
    """`meta.cost` and `load_cost` (this machine's wall, CPU and job counts) and the stamp differ on every run: none
    is compared, by the golden files nor by `diff`."""
    from audit_lib.runner.history import diff_findings

    def costed(wall_s: float, jobs: int) -> dict:
        document = findings()
        document["stamp"] = {"load_1m": wall_s}
        document["load_cost"] = {"wall_s": wall_s, "cpu_s": 1.0, "children_cpu_s": 0.0, "sandbox_jobs": jobs}
        for check in document["checks"]:
            check["meta"] = {"cost": {"wall_s": wall_s, "cpu_s": wall_s / 2, "children_cpu_s": wall_s * 3,
                                      "sandbox_jobs": jobs, "machine_dependent": True}}
        return document

    update("he", costed(1.5, 10), "first pin")
    golden = json.loads((golden_dir / "he.json").read_text())
    assert "cost" not in json.dumps(golden["checks"]) and compare(golden, costed(99.0, 11)) == []
    assert diff_findings({"he": costed(1.5, 10)}, {"he": costed(99.0, 11)}) == []
