"""IntentSpec's failing constraint runs split into deterministic and timing, timeouts re-run alone in the sandbox."""

from __future__ import annotations

import dataclasses

from test_intentspec_helpers import canonical_record, canonicals, spec_record, specs

from audit_lib import timing
from audit_lib.benchmarks.intentspec.runs import (
    Candidate,
    CandidateRun,
    ConstraintVerdict,
    canonical_candidate,
    run_candidates,
)
from audit_lib.benchmarks.intentspec.timing_split import rerun_timeouts, run_id, split_observed

SPECS = specs(spec_record("HumanEval/1"))
BY_TASK = {spec.task_id: spec for spec in SPECS}


def test_a_loaded_timeout_is_not_a_failure_and_a_wrong_value_stays_deterministic() -> None:
    # returns a float: C1 and C2 pass, hidden C3 (isinstance int) fails by value; the run itself takes milliseconds
    rows = canonicals(canonical_record(body="    return x * 2.0\n"))
    run = next(iter(run_candidates([canonical_candidate(rows[0])], BY_TASK, timeout_s=5.0).values()))
    assert [v.status for v in run.verdicts] == ["pass", "pass", "fail"] and all(v.cpu_s > 0 for v in run.verdicts)
    # what a loaded machine did to the parallel pass: C1 ran out of its 5 s of wall time
    loaded = dataclasses.replace(run, verdicts=(dataclasses.replace(run.verdicts[0], status="timeout"),
                                                *run.verdicts[1:]))
    reruns = rerun_timeouts([loaded], BY_TASK, 5.0)
    observed, meta = split_observed([loaded], reruns, 5.0)
    assert observed["runs_failing_deterministic"] == [run_id(run, "C3")]
    (row,) = observed["runs_failing_timing"]
    assert row["id"] == run_id(run, "C1") and row["state"] == "not_a_failure" and row["limit_s"] == 5.0
    assert meta["failure_split"] == {"unit": "runs", "deterministic": 1, "timing_confirmed": 0, "timing_borderline": 0,
                                     "timing_not_failing": 1, "timing_unmeasured": 0,
                                     "deterministic_key": "runs_failing_deterministic",
                                     "timing_key": "runs_failing_timing"}
    assert "1 deterministic + 0 timing (confirmed), 0 borderline, 1 not failures" in meta["failure_headline"]
    assert observed["speed_curve"][0][:2] == [0.25, 1]  # only the value failure, even on a 4x slower machine


def test_a_constraint_that_never_ends_is_a_confirmed_timing_failure() -> None:
    rows = canonicals(canonical_record(body="    while True:\n        x += 1\n"))
    run = next(iter(run_candidates([canonical_candidate(rows[0])], BY_TASK, timeout_s=0.3).values()))
    assert {v.status for v in run.verdicts} == {"timeout"}
    reruns = rerun_timeouts([run], BY_TASK, 0.3)
    observed, meta = split_observed([run], reruns, 0.3)
    assert observed["runs_failing_deterministic"] == []
    assert [row["state"] for row in observed["runs_failing_timing"]] == ["confirmed"] * 3
    assert meta["failure_split"]["timing_confirmed"] == 3 and observed["timing_confirmed"] == 3


def _verdict(constraint_id: str, status: str, cpu_s: float) -> ConstraintVerdict:
    return ConstraintVerdict(constraint_id, status, None, None, "", None, cpu_s, cpu_s=cpu_s)


def test_a_sandbox_failure_is_no_run_judged_and_a_rerun_time_replaces_the_loaded_one() -> None:
    run = CandidateRun(Candidate("generation", "model-a", "HumanEval/17", 2, "def solution(x):\n    return x\n"),
                       (_verdict("C1", "pass", 0.1), _verdict("C2", "harness_error", 100.0),
                        _verdict("C3", "fail", 0.2), _verdict("C4", "timeout", 4.0)))
    assert run_id(run, "C4") == "generation/model-a/HumanEval/17/2/C4"
    # alone, C4 needs 9 s of CPU: a timing failure at this machine's speed although the loaded pass measured 4 s
    reruns = {run_id(run, "C4"): timing.QuietRerun(run_id(run, "C4"), False, 9.0, 9.0)}
    observed, meta = split_observed([run], reruns, 5.0)
    assert observed["runs_failing_deterministic"] == ["generation/model-a/HumanEval/17/2/C3"]
    assert [(row["id"], row["state"]) for row in observed["runs_failing_timing"]] == \
        [("generation/model-a/HumanEval/17/2/C4", "confirmed")]
    curve = {point[0]: point[1:] for point in observed["speed_curve"]}
    assert curve[1.0] == [2, 1] and curve[2.0] == [1, 0]  # C2's 100 s is the sandbox's, never counted
    assert meta["timing_rule"] == ("upstream's fixed 5 s per constraint run; a timed-out run is re-run alone and "
                                   "judged on its CPU time")
