"""Comparing two runs' failure splits: deterministic and confirmed timing sets, check by check."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from audit_lib.errors import SchemaError
from audit_lib.runner.verdict_stability import (
    compare_audit,
    compare_findings,
    compare_folders,
    overall_agreement,
    read_failure_split,
    sort_ids,
)

SPLIT_META = {"unit": "tasks", "deterministic": 2, "timing_confirmed": 1, "timing_borderline": 1,
              "timing_not_failing": 0, "deterministic_key": "failing_deterministic", "timing_key": "failing_timing"}


def timing_row(task_id: str, state: str, flip: float) -> dict[str, Any]:
    return {"task_id": task_id, "input_index": 3, "cpu_s": flip, "limit_s": 1.0, "flip_factor": flip, "state": state}


def classifying_check(deterministic: list[str], timing: list[dict[str, Any]], *, check_id: str = "time_limits",
                      status: str = "quirk") -> dict[str, Any]:
    return {"id": check_id, "status": status, "finding": "f",
            "observed": {"failing_deterministic": deterministic, "failing_timing": timing},
            "meta": {"failure_split": dict(SPLIT_META), "machine_dependent": ["failing_timing"]}}


def findings(audit: str, *checks: dict[str, Any]) -> dict[str, Any]:
    return {"audit": audit, "params": {}, "checks": [{"id": "amplification", "status": "pass", "observed": {}},
                                                    *checks]}


IDLE = findings("humaneval_plus", classifying_check(
    ["HumanEval/32", "HumanEval/22"],
    [timing_row("HumanEval/127", "confirmed", 9.8), timing_row("HumanEval/96", "borderline", 1.02)]))


def test_identical_sets_agree_even_when_borderline_verdicts_move() -> None:
    hog = findings("humaneval_plus", classifying_check(
        ["HumanEval/22", "HumanEval/32"],
        [timing_row("HumanEval/127", "confirmed", 12.1), timing_row("HumanEval/130", "not_a_failure", 0.3)]))
    [comparison] = compare_audit("humaneval_plus", IDLE, hog)
    assert comparison.agreement == "identical"
    assert comparison.deterministic.identical and comparison.confirmed.identical
    assert comparison.idle is not None and comparison.hog is not None
    assert (comparison.idle.count("borderline"), comparison.hog.count("borderline")) == (1, 0)
    assert comparison.hog.timing["not_failing"] == {"HumanEval/130"}  # timing.TimingState's spelling normalised
    assert overall_agreement([comparison]) == "identical"


def test_a_confirmed_id_borderline_in_the_other_run_moved_across_the_band_and_does_not_decide() -> None:
    idle = findings("humaneval_plus", classifying_check(
        ["HumanEval/22", "HumanEval/32"],
        [timing_row("HumanEval/127", "confirmed", 1.26), timing_row("HumanEval/96", "borderline", 1.02)]))
    hog = findings("humaneval_plus", classifying_check(
        ["HumanEval/22", "HumanEval/32"],
        [timing_row("HumanEval/127", "borderline", 1.21), timing_row("HumanEval/96", "confirmed", 1.275)]))
    [comparison] = compare_audit("humaneval_plus", idle, hog)
    assert comparison.agreement == "identical" and comparison.confirmed.identical
    assert (comparison.confirmed_at_band.only_idle, comparison.confirmed_at_band.only_hog) == (
        ("HumanEval/127",), ("HumanEval/96",))
    assert comparison.to_json()["confirmed_at_band_only_hog"] == ["HumanEval/96"]


@pytest.mark.parametrize(("confirmed", "borderline", "moved"), [
    (1.25, 1.0, True),  # factors exactly the margin apart: still one measurement each side of the edge
    (1.26, 1.0, False),  # just past the margin
    (1.30, 0.81, False),
])
def test_the_band_move_tolerates_exactly_the_borderline_margin(confirmed: float, borderline: float,
                                                              moved: bool) -> None:
    idle = findings("a", classifying_check([], [timing_row("T/1", "confirmed", confirmed)]))
    hog = findings("a", classifying_check([], [timing_row("T/1", "borderline", borderline)]))
    [comparison] = compare_audit("a", idle, hog)
    assert (comparison.agreement, comparison.confirmed_at_band.only_idle) == (
        ("identical", ("T/1",)) if moved else ("differs", ()))


def test_a_confirmed_id_not_failing_or_absent_in_the_other_run_decides() -> None:
    for other in ([timing_row("HumanEval/127", "not_a_failure", 0.7)], []):
        hog = findings("humaneval_plus", classifying_check(["HumanEval/22", "HumanEval/32"], other))
        [comparison] = compare_audit("humaneval_plus", IDLE, hog)
        assert comparison.agreement == "differs"
        assert comparison.confirmed.only_idle == ("HumanEval/127",) and comparison.confirmed_at_band.identical


def test_a_task_moving_from_deterministic_to_timing_is_a_difference_in_both_sets() -> None:
    hog = findings("humaneval_plus", classifying_check(
        ["HumanEval/22"],
        [timing_row("HumanEval/127", "confirmed", 9.8), timing_row("HumanEval/32", "confirmed", 1.9)]))
    [comparison] = compare_audit("humaneval_plus", IDLE, hog)
    assert comparison.agreement == "differs"
    assert comparison.deterministic.only_idle == ("HumanEval/32",) and comparison.deterministic.only_hog == ()
    assert comparison.confirmed.only_hog == ("HumanEval/32",) and comparison.confirmed.only_idle == ()
    assert overall_agreement([comparison]) == "differs"
    assert comparison.to_json()["deterministic_only_idle"] == ["HumanEval/32"]


def test_a_confirmed_timing_task_turning_borderline_is_a_difference() -> None:
    hog = findings("humaneval_plus", classifying_check(
        ["HumanEval/22", "HumanEval/32"], [timing_row("HumanEval/127", "borderline", 1.1)]))
    [comparison] = compare_audit("humaneval_plus", IDLE, hog)
    assert comparison.agreement == "differs"
    assert comparison.confirmed.only_idle == ("HumanEval/127",)


def test_a_check_missing_in_one_run_cannot_be_compared() -> None:
    [comparison] = compare_audit("humaneval_plus", IDLE, findings("humaneval_plus"))
    assert comparison.agreement == "not_comparable"
    assert comparison.reason == "check missing in the hog run"
    assert comparison.idle is not None and comparison.hog is None
    assert overall_agreement([comparison]) == "not_comparable"


@pytest.mark.parametrize("status", ["skipped", "error"])
def test_a_check_skipped_or_errored_in_one_run_cannot_be_compared(status: str) -> None:
    # its meta still declares the split, but a check that did not run has no lists to read
    idle = findings("mbpp_plus", {"id": "time_limits", "status": status, "finding": "needs MbppPlus.jsonl.gz",
                                  "observed": None, "meta": {"missing": ["humaneval_plus/MbppPlus.jsonl.gz"],
                                                             "failure_split": dict(SPLIT_META)}})
    hog = findings("mbpp_plus", classifying_check(["Mbpp/2"], []))
    [comparison] = compare_audit("mbpp_plus", idle, hog)
    assert comparison.agreement == "not_comparable"
    assert comparison.reason == f"{status} in the idle run: needs MbppPlus.jsonl.gz"


def test_an_audit_without_findings_or_without_classifying_checks_is_not_comparable() -> None:
    [absent] = compare_findings({"humaneval_plus": IDLE}, {}, ["humaneval_plus"])
    assert absent.agreement == "not_comparable" and "hog run wrote no findings" in absent.reason
    [nothing] = compare_audit("intentspec", findings("intentspec"), findings("intentspec"))
    assert nothing.agreement == "not_comparable" and "no check classifies failures" in nothing.reason
    assert overall_agreement([]) == "not_comparable"


def test_known_keys_stand_in_for_the_meta_on_original_canonical_vs_plus() -> None:
    observed = {"tasks_failing_deterministic": ["HumanEval/32"],
                "tasks_failing_timing": [timing_row("HumanEval/31", "confirmed", 4.2)]}
    check = {"id": "original_canonical_vs_plus", "status": "quirk", "observed": observed, "meta": {}}
    split = read_failure_split(check, where="x")
    assert split is not None and split.source == "known keys"
    assert split.deterministic == {"HumanEval/32"} and split.confirmed == {"HumanEval/31"}
    assert split.flip_factors == {"HumanEval/31": 4.2}
    without_rerun = {**check, "observed": {"tasks_disagreeing": 3}}  # no classification in that run
    assert read_failure_split(without_rerun, where="x") is None


def test_input_units_and_nested_keys() -> None:
    check = {"id": "time_limit_sensitivity", "status": "quirk",
             "observed": {"split": {"det": [["Mbpp/2", 0], {"task_id": "Mbpp/3", "input_index": 7}],
                                    "rows": [{"task_id": "Mbpp/4", "input_index": 1, "state": "confirmed"}]}},
             "meta": {"failure_split": {"unit": "inputs", "deterministic_key": "split.det",
                                        "timing_key": "split.rows"}}}
    split = read_failure_split(check, where="x")
    assert split is not None and split.unit == "inputs"
    assert split.deterministic == {"Mbpp/2#0", "Mbpp/3#7"} and split.confirmed == {"Mbpp/4#1"}


@pytest.mark.parametrize(("observed", "field"), [
    ({"failing_timing": []}, "failing_deterministic"),
    ({"failing_deterministic": [], "failing_timing": [{"task_id": "HumanEval/1"}]}, "state"),
    ({"failing_deterministic": [], "failing_timing": [{"task_id": "HumanEval/1", "state": "slow"}]}, "state"),
    ({"failing_deterministic": [{"cpu_s": 1.0}], "failing_timing": []}, "observed.failing_deterministic[0]"),
])
def test_a_malformed_split_is_an_error_naming_audit_check_and_field(observed: dict[str, Any], field: str) -> None:
    check = {"id": "time_limits", "status": "quirk", "observed": observed,
             "meta": {"failure_split": dict(SPLIT_META)}}
    with pytest.raises(SchemaError) as caught:
        compare_audit("mbpp_plus", findings("mbpp_plus", check), findings("mbpp_plus", check))
    assert "mbpp_plus (idle run) check time_limits" in str(caught.value)
    assert field in str(caught.value.fields["field"]) or field in str(caught.value)


def test_compare_folders_reads_findings_files(tmp_path: Path) -> None:
    for name, payload in (("idle", IDLE), ("hog", IDLE)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "humaneval_plus.findings.json").write_text(json.dumps(payload))
    [comparison] = compare_folders(tmp_path / "idle", tmp_path / "hog", ["humaneval_plus"])
    assert comparison.agreement == "identical"
    assert comparison.to_json()["idle"]["deterministic"] == ["HumanEval/22", "HumanEval/32"]


def test_sort_ids_is_natural() -> None:
    assert sort_ids(["HumanEval/10", "HumanEval/9", "Mbpp/2#10", "Mbpp/2#9", "Mbpp/x"]) == \
        ["HumanEval/9", "HumanEval/10", "Mbpp/2#9", "Mbpp/2#10", "Mbpp/x"]


def test_a_comparison_s_json_holds_both_splits_and_every_difference() -> None:
    hog = findings("humaneval_plus", classifying_check(
        ["HumanEval/22", "HumanEval/40"],
        [timing_row("HumanEval/96", "confirmed", 1.1), timing_row("HumanEval/130", "not_a_failure", 0.3)]))
    [comparison] = compare_audit("humaneval_plus", IDLE, hog)
    idle_json = {"unit": "tasks", "source": "meta.failure_split", "deterministic": ["HumanEval/22", "HumanEval/32"],
                 "timing_confirmed": ["HumanEval/127"], "timing_borderline": ["HumanEval/96"],
                 "timing_not_failing": [], "timing_unmeasured": [],
                 "flip_factors": {"HumanEval/127": 9.8, "HumanEval/96": 1.02}}
    hog_json = {"unit": "tasks", "source": "meta.failure_split", "deterministic": ["HumanEval/22", "HumanEval/40"],
                "timing_confirmed": ["HumanEval/96"], "timing_borderline": [], "timing_not_failing": ["HumanEval/130"],
                "timing_unmeasured": [], "flip_factors": {"HumanEval/130": 0.3, "HumanEval/96": 1.1}}
    assert comparison.to_json() == {
        "audit": "humaneval_plus", "check": "time_limits", "agreement": "differs", "reason": "",
        "idle": idle_json, "hog": hog_json,
        "deterministic_only_idle": ["HumanEval/32"], "deterministic_only_hog": ["HumanEval/40"],
        "confirmed_only_idle": ["HumanEval/127"], "confirmed_only_hog": [],
        "confirmed_at_band_only_idle": [], "confirmed_at_band_only_hog": ["HumanEval/96"]}


def test_the_reason_a_check_cannot_be_compared_names_the_run_and_falls_back_in_order() -> None:
    def skipped(**text: str) -> dict[str, Any]:
        return findings("a", {"id": "time_limits", "status": "skipped", "observed": None,
                              "meta": {"failure_split": dict(SPLIT_META)}, **text})

    hog = findings("a", classifying_check(["X/1"], []))
    for text, shown in (({"summary": "set AUDIT_MIRROR"}, "set AUDIT_MIRROR"), ({}, "no reason given")):
        [comparison] = compare_audit("a", skipped(**text), hog)
        assert comparison.reason == f"skipped in the idle run: {shown}"
    [both] = compare_findings({}, {}, ["a"])
    assert both.reason == "the idle run wrote no findings for this audit and the hog run wrote no findings for " \
                          "this audit"
    [idle_only] = compare_findings({}, {"a": findings("a")}, ["a"])
    assert idle_only.reason == "the idle run wrote no findings for this audit"


def test_ids_come_from_strings_numbers_or_a_row_s_id_run_id_or_task_id() -> None:
    check = {"id": "c", "status": "quirk",
             "observed": {"det": ["a/1", 7, {"id": "r/1", "task_id": "ignored"}, {"run_id": "r/2"}],
                          "rows": [{"run_id": "r/3", "state": "confirmed", "flip_factor": 2}]},
             "meta": {"failure_split": {"deterministic_key": "det", "timing_key": "rows"}}}
    split = read_failure_split(check, where="x")
    assert split is not None and split.unit == "tasks" and split.source == "meta.failure_split"
    assert split.deterministic == {"a/1", "7", "r/1", "r/2"} and split.flip_factors == {"r/3": 2.0}
    with pytest.raises(SchemaError, match="names no id"):
        read_failure_split({**check, "observed": {"det": [True], "rows": []}}, where="x")


@pytest.mark.parametrize(("meta", "observed", "field"), [
    ({"deterministic_key": 3, "timing_key": "rows"}, {}, "meta.failure_split.deterministic_key"),
    ({"deterministic_key": "det", "timing_key": "rows"}, {"rows": []}, "det"),
    ({"deterministic_key": "det", "timing_key": "rows"}, {"det": {}, "rows": []}, "det"),
    ({"deterministic_key": "det", "timing_key": "rows"}, {"det": [], "rows": [{"id": "a"}]}, "state"),
    ({"deterministic_key": "det", "timing_key": "rows"}, {"det": [], "rows": [{"id": "a", "state": "x"}]}, "state"),
    ({"deterministic_key": "det", "timing_key": "rows"}, {"det": [{"cpu_s": 1}], "rows": []}, "x observed.det[0]"),
])
def test_each_malformed_split_names_its_field(meta: dict[str, Any], observed: dict[str, Any], field: str) -> None:
    with pytest.raises(SchemaError) as caught:
        read_failure_split({"id": "c", "observed": observed, "meta": {"failure_split": meta}}, where="x")
    assert caught.value.fields == {"field": field} and str(caught.value).startswith("x")
