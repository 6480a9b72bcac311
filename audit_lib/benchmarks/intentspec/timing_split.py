"""IntentSpec's failing constraint runs by cause: a value, an exception or an exit status (deterministic), or
upstream's fixed per-run timeout (timing), each timeout re-run alone and judged on its CPU time.

Upstream's harness gives every constraint run the same wall-clock limit (`timeout_s`, 5 s by default, see
`runs.make_limits`), so its limit rule is fixed: the flip factor is `cpu_s / timeout_s`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from audit_lib import timing
from audit_lib.benchmarks.intentspec.data import SpecPair
from audit_lib.benchmarks.intentspec.runs import (
    SOLUTION_NAME,
    CandidateRun,
    constraint_snippet,
    judged_summary,
    ordered_constraints,
)
from audit_lib.findings import Result
from audit_lib.timing_reruns import SnippetTarget, rerun_snippets_alone

if TYPE_CHECKING:
    from audit_lib.benchmarks.intentspec.audit import Inputs

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


def with_sandbox_record(inputs: Inputs, result: Result, judged: Sequence[CandidateRun] | None = None) -> Result:
    """A result decided by sandboxed runs, with who decided them (`meta.sandbox_trust`); given the runs it
    `judged`, their failures are also split into deterministic and timing."""
    runs = inputs.runs
    constraint_runs = [*runs.canonical.values(), *(r for by_task in runs.references.values() for r in by_task.values()),
                       *runs.generations]
    trust = {"constraint_runs": judged_summary(constraint_runs), "probe_runs": judged_summary(runs.probes)}
    result = replace(result, meta={**result.meta, "sandbox_trust": trust})
    if judged is None or result.status in ("skipped", "error") or not isinstance(result.observed, dict):
        return result
    observed, meta = split_observed(judged, inputs.quiet_reruns, inputs.timeout_s)
    lead = result.summary.rstrip()
    return replace(result, observed={**result.observed, **observed}, meta={**result.meta, **meta},
                   summary=f"{lead}{'' if lead.endswith('.') else '.'} Failing constraint runs: "
                           f"{meta['failure_headline']}.")


__all__ = ["DETERMINISTIC_KEY", "TIMING_KEY", "failed_runs", "rerun_timeouts", "run_id", "split_observed",
           "with_sandbox_record"]
