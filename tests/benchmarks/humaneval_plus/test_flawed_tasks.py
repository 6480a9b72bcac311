"""Which tasks the HumanEval+ / MBPP+ audit calls flawed, read off check results shaped like the real ones."""

from __future__ import annotations

import pytest

from audit_lib.benchmarks.humaneval_plus.flawed_tasks import (
    FLAW_CHECKS,
    flaw_checks_for,
    flaw_checks_rule,
    flaw_needs,
    flawed_tasks,
)
from audit_lib.findings import Check, Result


def results() -> dict[str, Check]:
    return {
        "ground_truth": Check("ground_truth", "t", "defect", observed={
            "inputs_failing_deterministic": ["H/1 plus[3]", "H/1 plus[4]", "H/2 base", "H/12 plus[0]"],
            "inputs_failing_timing": [{"id": "H/9 plus[0]", "state": "confirmed"}]}, details=[
            {"problem": "canonical_failure", "task_id": "H/1", "split": "plus", "input_index": 3},
            {"problem": "nondeterministic", "task_id": "H/1", "split": "plus", "input_index": 4,
             "accepted_by_evalplus_rules": False, "cut_by_clock": False},
            {"problem": "canonical_failure", "task_id": "H/2", "split": "base", "input_index": None},
            {"problem": "canonical_failure", "task_id": "H/9", "split": "plus", "input_index": 0},
            {"problem": "exceeds_sandbox_limits", "task_id": "H/12", "split": "plus", "input_index": 0},
            {"problem": "nondeterministic", "task_id": "H/13", "split": "plus", "input_index": 1,
             "accepted_by_evalplus_rules": True, "cut_by_clock": False}]),
        "contract_violations": Check("contract_violations", "t", "defect", observed={"tasks": ["H/3"]}, details=[
            {"task_id": "H/3", "kind": "assertion"}, {"task_id": "H/3", "kind": "invalid_inputs"},
            {"task_id": "H/4", "kind": "timeout"}]),
        "original_canonical_vs_plus": Check("original_canonical_vs_plus", "t", "quirk", observed={
            "tasks_failing_deterministic": ["H/5"], "tasks_failing_timing": [{"id": "H/6"}]},
            details=[{"task_id": "H/5", "failing_inputs": 12}, {"task_id": "H/6", "failing_inputs": 1}]),
        "original_tests_vs_canonical": Check("original_tests_vs_canonical", "t", "defect", observed={
            "runs_failing_deterministic": ["evalplus::H/7", "openai::H/7"]}),
        "errata_diff": Check("errata_diff", "t", "quirk", details=[
            {"task_id": "H/8", "fields": "prompt", "prompt_whitespace_only": True},
            {"task_id": "H/10", "fields": "prompt,test", "prompt_whitespace_only": False}]),
        "version_diff": Check("version_diff", "t", "quirk", observed={"tasks_changed": ["H/11"]}, details=[
            {"task_id": "H/11", "field": "plus_input"}, {"task_id": "H/11", "field": "contract"}]),
    }


def test_each_check_flags_its_deterministic_tasks_only():
    flawed = flawed_tasks(results(), FLAW_CHECKS)
    # not flagged: timing-only H/9 and H/6, H/12 beyond the sandbox's limits, H/13 whose change EvalPlus accepts
    assert flawed.task_ids == {"H/1", "H/2", "H/3", "H/5", "H/7", "H/10", "H/11"}
    assert flawed.reasons("H/1") == ("ground_truth: 2 input(s) with a deterministic canonical failure or changed "
                                     "output",)
    assert flawed.reasons("H/3") == ("contract_violations: 2 input(s) violate its contract",)
    assert flawed.reasons("H/5") == ("original_canonical_vs_plus: OpenAI's canonical fails 12 of its inputs",)
    assert flawed.reasons("H/7") == ("original_tests_vs_canonical: EvalPlus's and OpenAI's canonicals fail the "
                                     "original tests",)
    assert flawed.reasons("H/10") == ("errata_diff: the errata changes its prompt, test",)
    assert flawed.reasons("H/11") == ("version_diff: v0.1.9 -> v0.1.10 changes its plus_input, contract",)


def test_the_table_has_one_row_per_consulted_check():
    table = flawed_tasks(results(), ("contract_violations", "errata_diff")).table()
    assert [(row["check"], row["tasks"], row["task_ids"]) for row in table] == [
        ("contract_violations", 1, "H/3"), ("errata_diff", 1, "H/10")]
    assert all(row["why"] for row in table)


def test_an_unusable_check_is_refused_not_ignored():
    broken = {**results(), "ground_truth": Check.of("ground_truth", "t", Result.skipped("no data", missing=["x"]))}
    with pytest.raises(ValueError, match=r"ground_truth \(skipped\)"):
        flawed_tasks(broken, FLAW_CHECKS)
    with pytest.raises(ValueError, match=r"version_diff \(not run\)"):
        flawed_tasks({k: v for k, v in results().items() if k != "version_diff"}, FLAW_CHECKS)
    with pytest.raises(ValueError, match=r"have run: ground_truth \(skipped\), version_diff \(not run\)$"):
        flawed_tasks({k: v for k, v in broken.items() if k != "version_diff"}, FLAW_CHECKS)


def test_the_set_per_dataset_and_parameter():
    assert flaw_checks_for("humaneval") == FLAW_CHECKS
    assert flaw_checks_for("mbpp") == ("ground_truth", "contract_violations", "original_tests_vs_canonical")
    assert flaw_checks_for("mbpp", "contract_violations,errata_diff") == ("contract_violations",)
    assert flaw_needs(("ground_truth",)) == ("check:ground_truth",)
    assert flaw_checks_rule("all") is None and flaw_checks_rule("errata_diff, ground_truth") is None
    assert "unknown: nonsense" in flaw_checks_rule("ground_truth,nonsense")
    assert flaw_checks_rule("ground_truth,,") is not None


def test_a_changed_output_counts_only_when_evalplus_refuses_it_and_no_clock_cut_it():
    rows = [{"problem": "nondeterministic", "task_id": task, "split": "plus", "input_index": 0,
             "accepted_by_evalplus_rules": accepted, "cut_by_clock": cut}
            for task, accepted, cut in (("H/20", False, False), ("H/21", True, False), ("H/22", False, True))]
    check = Check("ground_truth", "t", "defect", observed={
        "inputs_failing_deterministic": ["H/20 plus[0]", "H/21 plus[0]", "H/22 plus[0]"]}, details=rows)
    assert flawed_tasks({"ground_truth": check}, ("ground_truth",)).task_ids == {"H/20"}


@pytest.mark.parametrize("check", [c for c in FLAW_CHECKS if c != "errata_diff"])
def test_a_check_that_recorded_no_figures_is_refused_by_name(check):
    broken = {**results(), check: Check(check, "t", "pass", observed=None, details=[])}
    with pytest.raises(ValueError, match=rf"need {check}'s observed figures, and it recorded NoneType"):
        flawed_tasks(broken, FLAW_CHECKS)


def test_checks_with_nothing_observed_flag_nothing():
    empty = {check: Check(check, "t", "pass", observed={}, details=[]) for check in FLAW_CHECKS}
    flawed = flawed_tasks(empty, FLAW_CHECKS)
    assert flawed.rows == () and flawed.consulted == FLAW_CHECKS


def test_each_checks_reason_in_its_other_shapes():
    checks = {
        "contract_violations": Check("contract_violations", "t", "defect", observed={"tasks": ["H/3"]},
                                     details=[{"task_id": "H/3", "kind": "exception"}]),
        "original_canonical_vs_plus": Check("original_canonical_vs_plus", "t", "quirk",
                                            observed={"tasks_failing_deterministic": ["H/5"]}),
        "original_tests_vs_canonical": Check("original_tests_vs_canonical", "t", "defect", observed={
            "runs_failing_deterministic": ["evalplus::H/7", "other::H/8"]}),
        "errata_diff": Check("errata_diff", "t", "quirk", details=[
            {"task_id": "H/9", "fields": "test", "prompt_whitespace_only": True}]),
        "version_diff": Check("version_diff", "t", "quirk", observed={"tasks_changed": ["H/11"]}),
    }
    flawed = flawed_tasks(checks, tuple(checks))
    assert flawed.reasons("H/3") == ("contract_violations: 1 input(s) violate its contract",)
    assert flawed.reasons("H/5") == ("original_canonical_vs_plus: OpenAI's canonical fails ? of its inputs",)
    assert flawed.reasons("H/7") == ("original_tests_vs_canonical: EvalPlus's canonical fails the original tests",)
    assert flawed.reasons("H/8") == ("original_tests_vs_canonical: other canonical fails the original tests",)
    assert flawed.reasons("H/9") == ("errata_diff: the errata changes its test",)
    assert flawed.reasons("H/11") == ("version_diff: v0.1.9 -> v0.1.10 changes its ?",)


def test_flags_by_task_restricted_to_the_audited_tasks_and_the_table_lists_them():
    flawed = flawed_tasks(results(), FLAW_CHECKS)
    assert flawed.by_task()["H/1"] == ("ground_truth",)
    restricted = flawed.restricted_to(["H/1", "H/7", "H/99"])
    assert restricted.task_ids == {"H/1", "H/7"} and restricted.consulted == FLAW_CHECKS
    assert restricted.by_task() == {"H/1": ("ground_truth",), "H/7": ("original_tests_vs_canonical",)}
    assert flawed_tasks({**results(), "version_diff": Check("version_diff", "t", "quirk", observed={
        "tasks_changed": ["H/1"]}, details=[])}, FLAW_CHECKS).by_task()["H/1"] == ("ground_truth", "version_diff")
    two = flawed_tasks({**results(), "errata_diff": Check("errata_diff", "t", "quirk", details=[
        {"task_id": "H/8", "fields": "test", "prompt_whitespace_only": False},
        {"task_id": "H/10", "fields": "prompt,test", "prompt_whitespace_only": False}])}, ("errata_diff",))
    assert two.table()[0]["task_ids"] == "H/8, H/10"


def test_the_parameter_rule_names_the_unknown_and_empty_choices():
    assert flaw_checks_for("humaneval", " ") == FLAW_CHECKS and flaw_checks_rule(" ") is None
    known = ", ".join(FLAW_CHECKS)
    assert flaw_checks_rule("ground_truth,bogus") == f"must be 'all' or a comma list of {known}; unknown: bogus"
    assert flaw_checks_rule("ground_truth,,errata_diff") \
        == f"must be 'all' or a comma list of {known}; unknown: (empty)"
    assert flaw_checks_rule("x, y") == f"must be 'all' or a comma list of {known}; unknown: x, y"
