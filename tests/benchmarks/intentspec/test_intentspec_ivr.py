"""The upstream IVR formula on hand-computed cases."""

from __future__ import annotations

import pytest
from test_intentspec_helpers import outcome, spec_record, specs

from audit_lib.benchmarks.intentspec.ivr import (
    ivr_by_type,
    ivr_of_outcomes,
    outcome_from_verdicts,
    overall_ivr,
    task_ivr,
)


def test_task_ivr_counts_only_stated_passing_solutions():
    outcomes = [outcome(True, ("C2",), ()), outcome(True, (), ("C2",)), outcome(True, ("C2",), ()),
                outcome(True, ("C2",), ()), outcome(False, (), ("C2",))]
    result = task_ivr("T", outcomes)
    assert (result.n_solutions, result.n_passing_stated, result.n_violating) == (5, 4, 1)
    assert result.ivr == pytest.approx(0.25)


def test_task_without_stated_passing_solution_is_excluded_from_the_mean():
    per_task, overall = ivr_of_outcomes({
        "A": [outcome(True, (), ("C2",)), outcome(True, ("C2",), ()), outcome(True, ("C2",), ()),
              outcome(True, ("C2",), ())],                              # 1/4
        "B": [outcome(False, (), ("C2",)), outcome(False, ("C2",), ())],  # excluded
        "C": [outcome(True, (), ("C3",)), outcome(True, ("C2",), ("C3",))],  # 2/2
    })
    assert per_task["B"].ivr is None
    assert overall.value == pytest.approx((0.25 + 1.0) / 2)
    assert overall.included == ("A", "C") and overall.excluded == ("B",)


def test_overall_is_zero_when_every_task_is_excluded():
    assert overall_ivr([task_ivr("A", [outcome(False)])]).value == 0.0


def test_outcome_from_verdicts_follows_upstream_order_and_skips_unknown_ids():
    spec = specs(spec_record(stated_test_ids=["C1", "C9"], hidden_test_ids=["C3", "C2", "C8"]))[0]
    result = outcome_from_verdicts(spec, {"C1": True, "C2": False, "C3": True})
    assert result.passes_stated is True
    assert result.passed_hidden == ("C3",) and result.failed_hidden == ("C2",)
    assert outcome_from_verdicts(spec, {"C1": False, "C2": True, "C3": True}).passes_stated is False


def test_ivr_by_type_averages_included_tasks_per_type():
    rows = specs(spec_record("A"), spec_record("B", spec_type="data"), spec_record("C"), spec_record("D"))
    per_task, _ = ivr_of_outcomes({"A": [outcome(True, (), ("C2",))], "B": [outcome(True, ("C2",), ())],
                                   "C": [outcome(True, ("C2",), ()), outcome(True, (), ("C3",))],
                                   "D": [outcome(False)]})
    assert ivr_by_type(rows, per_task) == {"algorithm": pytest.approx((1.0 + 0.5) / 2), "data": 0.0}


def five_constraints(**overrides: object) -> dict[str, object]:
    constraints = [{"id": f"C{i}", "description": f"constraint {i}", "test_code": "assert True"} for i in range(1, 6)]
    return spec_record(constraints=constraints, **overrides)


def test_passes_the_stated_set_only_when_every_stated_constraint_passes():
    spec = specs(five_constraints(stated_test_ids=["C1", "C2"], hidden_test_ids=["C3"]))[0]
    verdicts = {"C3": True}
    assert outcome_from_verdicts(spec, {**verdicts, "C1": True, "C2": True}).passes_stated is True
    assert outcome_from_verdicts(spec, {**verdicts, "C1": True, "C2": False}).passes_stated is False
    assert outcome_from_verdicts(spec, {**verdicts, "C1": False, "C2": True}).passes_stated is False


def test_hidden_ids_keep_the_order_the_spec_lists_them_in():
    spec = specs(five_constraints(stated_test_ids=["C1"], hidden_test_ids=["C5", "C3", "C4", "C2"]))[0]
    result = outcome_from_verdicts(spec, {"C1": True, "C5": False, "C3": True, "C4": False, "C2": True})
    assert result.passed_hidden == ("C3", "C2")
    assert result.failed_hidden == ("C5", "C4")
