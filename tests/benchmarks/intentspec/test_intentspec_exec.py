"""Sandboxed runs of hand-made IntentSpec candidates (tiny programs, a few children each)."""

from __future__ import annotations

from test_intentspec_helpers import canonical_record, canonicals, spec_record, specs

from audit_lib.benchmarks.intentspec.checks_canonical import canonical_ivr_zero_from
from audit_lib.benchmarks.intentspec.checks_exploit import exit_code_exploit_from
from audit_lib.benchmarks.intentspec.runs import (
    EXIT_ZERO_EXPLOIT,
    canonical_candidate,
    probe_candidates,
    reference_candidate,
    run_candidates,
)

SPECS = specs(spec_record("HumanEval/1"))
BY_TASK = {spec.task_id: spec for spec in SPECS}


def test_canonical_is_bound_to_solution_by_alias():
    candidate = canonical_candidate(canonicals(canonical_record())[0])
    assert candidate.program.endswith("\nsolution = double\n")
    reference = reference_candidate("humaneval_plus", canonical_record())
    assert reference.program == candidate.program


def test_canonical_failing_a_hidden_constraint_is_found_in_the_sandbox():
    # returns a float for every input: passes C1 (4.0 == 4) and C2 (0.0 == 0), fails hidden C3 (isinstance int)
    rows = canonicals(canonical_record(body="    return x * 2.0\n"))
    runs = run_candidates([canonical_candidate(rows[0])], BY_TASK, timeout_s=5.0, progress=False)
    run = next(iter(runs.values()))
    assert {v.constraint_id: v.status for v in run.verdicts} == {"C1": "pass", "C2": "pass", "C3": "fail"}
    check = canonical_ivr_zero_from(SPECS, {"HumanEval/1": run}, rows)
    assert check.status == "defect"
    assert [(r["constraint_id"], r["role"]) for r in check.details] == [("C3", "hidden")]
    assert "AssertionError" in check.details[0]["error"]
    assert check.meta["per_task_ivr"] == {"HumanEval/1": 1.0}


def test_exit_zero_probe_never_passes_in_the_sandbox():
    runs = run_candidates(probe_candidates(SPECS, EXIT_ZERO_EXPLOIT), BY_TASK, timeout_s=5.0, progress=False)
    statuses = {v.status for run in runs.values() for v in run.verdicts}
    assert statuses == {"error"}
    assert {v.exit_code for run in runs.values() for v in run.verdicts} == {0}  # what a naive harness sees
    check = exit_code_exploit_from(SPECS, list(runs.values()), EXIT_ZERO_EXPLOIT)
    assert check.status == "defect" and check.observed["naive_passes"] == 3 and check.observed["sandbox_passes"] == 0
