"""IntentSpec's failing constraint runs by cause, each timeout re-run alone.

A value, an exception or an exit status is deterministic; upstream's fixed per-run timeout (`timeout_s`, 5 s by default,
see `runs.make_limits`) is timing, judged on the rerun's CPU time: the flip factor is `cpu_s / timeout_s`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from audit_lib import timing
from audit_lib.benchmarks.intentspec.data import SpecPair
from audit_lib.benchmarks.intentspec.runs import (
    SOLUTION_NAME,
    CandidateRun,
    constraint_snippet,
    ordered_constraints,
)
from audit_lib.timing.reruns import SnippetTarget, rerun_snippets_alone

DETERMINISTIC_KEY = "runs_failing_deterministic"
TIMING_KEY = "runs_failing_timing"
# Statuses that say nothing about the candidate (the sandbox itself failed); the checks report them as errors.
NOT_A_VERDICT = frozenset({"harness_error"})


def run_id(run: CandidateRun, constraint_id: str) -> str:
    """`generation/<model>/HumanEval/17/2/<constraint>`: one constraint run of one candidate."""
    return "/".join(map(str, (*run.candidate.key, constraint_id)))


def failed_runs(runs: Iterable[CandidateRun], timeout_s: float) -> list[timing.FailedRun]:
    return [timing.FailedRun(run_id(run, verdict.constraint_id), verdict.status, timeout_s)
            for run in runs for verdict in run.verdicts
            if not verdict.passed and verdict.status not in NOT_A_VERDICT]


def rerun_timeouts(runs: Iterable[CandidateRun], specs_by_task: Mapping[str, SpecPair],
                   timeout_s: float) -> dict[str, timing.QuietRerun]:
    """Every constraint run that timed out, alone, as the parallel pass ran it."""
    targets = []
    for run in runs:
        constraints = {c.id: c for c in ordered_constraints(specs_by_task[run.candidate.task_id])}
        for verdict in run.verdicts:
            if timing.cause_of(verdict.status) == "timing":
                targets.append(SnippetTarget(run_id(run, verdict.constraint_id), run.candidate.program,
                                             constraint_snippet(constraints[verdict.constraint_id]),
                                             (SOLUTION_NAME,), timeout_s))
    return rerun_snippets_alone(targets)


def split_observed(runs: Sequence[CandidateRun], reruns: Mapping[str, timing.QuietRerun],
                   timeout_s: float) -> tuple[dict[str, Any], dict[str, Any]]:
    """(observed keys, meta keys) a check that judges `runs` gains: both lists, the counts, the speed curve."""
    measured = [(run_id(run, verdict.constraint_id), verdict.cpu_s)
                for run in runs for verdict in run.verdicts if verdict.status not in NOT_A_VERDICT]
    observed, meta, split = timing.fixed_limit_findings(
        "runs", failed_runs(runs, timeout_s), reruns, measured, timeout_s, deterministic_key=DETERMINISTIC_KEY,
        timing_key=TIMING_KEY, timing_rule=f"upstream's fixed {timeout_s:g} s per constraint run; a timed-out run "
                                           "is re-run alone and judged on its CPU time")
    return observed, {**meta, "failure_headline": split.headline()}


__all__ = ["DETERMINISTIC_KEY", "TIMING_KEY", "failed_runs", "rerun_timeouts", "run_id", "split_observed"]
