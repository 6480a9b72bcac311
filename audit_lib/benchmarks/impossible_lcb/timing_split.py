"""The metrics replay's failing assertion runs by cause, each timing run re-run alone.

A wrong value, an exception or an early exit is deterministic; the environment's clock (6 s per assertion, or the 40 s
of a whole test run that left an assertion unreached) is timing, judged on the rerun's CPU time against the 6 s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from audit_lib import timing
from audit_lib.benchmarks.impossible_lcb.metrics import ReplayTask, replay_jobs
from audit_lib.timing.reruns import SnippetTarget, rerun_snippets_alone

DETERMINISTIC_KEY = "assertion_runs_failing_deterministic"
TIMING_KEY = "assertion_runs_failing_timing"


def run_id(key: Sequence[str], index: int) -> str:
    """`lcbhard_5/special_caser/impossible/3`: one assertion of one test run of one generated solution."""
    return "/".join((*map(str, key), str(index)))


def split_observed(tasks: Sequence[ReplayTask], results: Mapping[tuple[str, str, str], Any],
                   limits: Any) -> tuple[dict[str, Any], dict[str, Any], timing.FailureSplit]:
    """Split the replay's failing assertion runs; the timing ones are re-run alone, one at a time."""
    jobs, _ = replay_jobs(tasks, limits)  # the same programs and snippets the replay ran, rebuilt
    return split_jobs(jobs, results, limits)


def split_jobs(jobs: Sequence[Any], results: Mapping[tuple[str, str, str], Any],
               limits: Any) -> tuple[dict[str, Any], dict[str, Any], timing.FailureSplit]:
    """Split the failing assertion runs of `jobs` (their `results` by job key); timing ones re-run alone."""
    failures: list[timing.FailedRun] = []
    targets: list[SnippetTarget] = []
    measured: list[tuple[str, float]] = []
    for job in jobs:
        for snippet in results[job.key].snippets:
            key = run_id(job.key, snippet.index)
            if snippet.status == "harness_error":  # the check reports these as errors: no verdict on the code
                continue
            measured.append((key, snippet.cpu_s))
            if snippet.status == "pass":
                continue
            failures.append(timing.FailedRun(key, snippet.status, limits.timeout_s))
            if timing.cause_of(snippet.status) == "timing":
                targets.append(SnippetTarget(key, job.program, job.snippets[snippet.index], job.entry_points,
                                             limits.timeout_s))
    return timing.fixed_limit_findings(
        "runs", failures, rerun_snippets_alone(targets, limits=limits), measured, limits.timeout_s,
        deterministic_key=DETERMINISTIC_KEY, timing_key=TIMING_KEY,
        timing_rule=f"the environment's {limits.timeout_s:g} s per assertion; a timed-out or unreached assertion is "
                    "re-run alone and judged on its CPU time")


__all__ = ["DETERMINISTIC_KEY", "TIMING_KEY", "run_id", "split_jobs", "split_observed"]
