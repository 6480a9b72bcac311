"""Quiet reruns of the runs a parallel pass failed by a clock: one sandbox call at a time, on CPU time.

After an audit's parallel pass, each run that timed out (or that a whole-run budget left unreached) is run again
alone under a generous limit. The supervisor measures the child's CPU time from outside it; a value, an exception
or an exit status on the rerun means the timeout hid a deterministic failure. What comes back feeds
`timing.split_failures`. HumanEval+/MBPP+ compare values with expected outputs and have their own rerun
(`benchmarks/humaneval_plus/timing_rerun.py`); these serve the audits that judge snippets or only collect values.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from audit_lib import sandbox
from audit_lib.check_cost import note_sandbox_job
from audit_lib.timing import BORDERLINE_MARGIN, QuietRerun

RERUN_MIN_TIMEOUT_S = 2.0
# Past the borderline band, so a rerun that times out again is a confirmed timing failure, not a borderline one.
RERUN_LIMIT_FACTOR = 1 + 2 * BORDERLINE_MARGIN
# A rerun that times out before it has used enough CPU to be confirmed gets twice the wall time, up to this.
MAX_RERUN_TIMEOUT_S = 60.0
# Statuses on a rerun that leave the verdict to the clock: the run finished right, or ran out of time again.
CLOCK_STATUSES = frozenset({"pass", "timeout"})
Result = TypeVar("Result")


def rerun_timeout(limit_s: float) -> float:
    """How long a rerun may take: enough to tell a confirmed timing failure from a borderline one."""
    return max(RERUN_MIN_TIMEOUT_S, RERUN_LIMIT_FACTOR * limit_s)


def doubled(timeout_s: float, cpu_s: float, needed_cpu_s: float) -> float:
    """The next wall time of a rerun that ran out of it before using the CPU time its verdict needs: twice as long."""
    return 2 * timeout_s


def scaled_to_cpu_share(timeout_s: float, cpu_s: float, needed_cpu_s: float) -> float:
    """The next wall time at the CPU share the last run got: enough for the CPU it needs, with 25 % room.

    At least 1.25x the last; twice it when the run got no CPU at all. One widening instead of several doublings on a
    loaded machine (share 0.3: 1.3 s then 5.4 s of wall, where doubling takes 1.3, 2.6 and 5.2 s)."""
    if cpu_s <= 0:
        return 2 * timeout_s
    return max(1.25 * timeout_s, 1.25 * timeout_s * needed_cpu_s / cpu_s)


def measured_alone(run_once: Callable[[float], Result], timed_out: Callable[[Result], bool],
                   cpu_of: Callable[[Result], float], limit_s: float, *,
                   first_timeout_s: float | None = None,
                   widen: Callable[[float, float, float], float] = doubled) -> Result | None:
    """`run_once(wall timeout)` until its CPU time decides; None when it never does (left `unmeasured`).

    It decides when the run finished or used more than the borderline band above its limit. Under load a child gets
    less than a core, so a run cut at a wall-clock timeout may have used far less CPU (0.5 s of CPU in 2 s of wall at
    load 6 on 2 cores): the wall time then widens (`widen(timeout, cpu used, cpu needed)`: doubles by default), up to
    `MAX_RERUN_TIMEOUT_S` (or the first timeout, when longer)."""
    enough_cpu = (1 + BORDERLINE_MARGIN) * limit_s
    timeout = first_timeout_s if first_timeout_s is not None else rerun_timeout(limit_s)
    while True:
        result = run_once(timeout)
        if not timed_out(result) or cpu_of(result) >= enough_cpu:
            return result
        if timeout >= MAX_RERUN_TIMEOUT_S:
            return None
        timeout = min(widen(timeout, cpu_of(result), enough_cpu), MAX_RERUN_TIMEOUT_S)


@dataclass(frozen=True)
class SnippetTarget:
    """One (program, snippet) run to repeat alone, as the audit's parallel pass ran it."""

    id: str
    program: str
    snippet: str
    entry_points: tuple[str, ...]
    limit_s: float


@dataclass(frozen=True)
class CallTarget:
    """One call `entry_point(*args)` to repeat alone."""

    id: str
    program: str
    entry_point: str
    args: tuple[Any, ...]
    limit_s: float


def _rerun_limits(base: sandbox.Limits, timeout_s: float) -> sandbox.Limits:
    return dataclasses.replace(base, timeout_s=timeout_s, total_timeout_s=timeout_s + RERUN_MIN_TIMEOUT_S)


def rerun_snippets_alone(targets: Iterable[SnippetTarget], *,
                         limits: sandbox.Limits = sandbox.Limits()) -> dict[str, QuietRerun]:
    """Each snippet alone, as the parallel pass ran it; a harness error leaves it unmeasured."""
    reruns: dict[str, QuietRerun] = {}
    for target in targets:
        def run_once(timeout_s: float, target: SnippetTarget = target) -> sandbox.SnippetResult | None:
            note_sandbox_job()
            result = sandbox.run_tests(target.program, [target.snippet], entry_points=target.entry_points,
                                       limits=_rerun_limits(limits, timeout_s))
            return result.snippets[0] if result.snippets else None

        snippet = measured_alone(run_once, lambda s: s is not None and s.status == "timeout",
                                 lambda s: s.cpu_s if s is not None else 0.0, target.limit_s)
        if snippet is None or snippet.status == "harness_error":
            continue
        reruns[target.id] = QuietRerun(target.id, snippet.status not in CLOCK_STATUSES, snippet.cpu_s,
                                       snippet.wall_s or snippet.duration_s)
    return reruns


def rerun_calls_alone(targets: Sequence[CallTarget], *,
                      limits: sandbox.Limits = sandbox.Limits()) -> dict[str, QuietRerun]:
    """Each call alone; an exception, an unsendable value or a program that does not load is deterministic."""
    reruns: dict[str, QuietRerun] = {}
    for target in targets:
        def run_once(timeout_s: float, target: CallTarget = target) -> sandbox.CallJobResult:
            note_sandbox_job()
            return sandbox.call_function(target.program, target.entry_point, [list(target.args)],
                                         limits=_rerun_limits(limits, timeout_s), per_input_timeout_s=[timeout_s])

        def first(result: sandbox.CallJobResult) -> sandbox.CallOutcome | None:
            return result.outcomes[0] if result.outcomes else None

        def cut_by_clock(result: sandbox.CallJobResult) -> bool:  # out of time, or unreached though it loaded
            outcome = first(result)
            return outcome is not None and (outcome.kind == "timeout"
                                            or (outcome.kind == "not_run" and not result.load_error))

        result = measured_alone(run_once, cut_by_clock,
                                lambda r: first(r).cpu_s if first(r) is not None else r.cpu_s, target.limit_s)
        if result is None or result.status == "harness_error":
            continue
        outcome = first(result)
        if outcome is None or result.load_error:
            reruns[target.id] = QuietRerun(target.id, True, result.cpu_s, result.duration_s)
            continue
        reruns[target.id] = QuietRerun(target.id, outcome.kind not in ("value", "timeout", "not_run"),
                                       outcome.cpu_s, outcome.wall_s or outcome.duration_s)
    return reruns


__all__ = ["CallTarget", "MAX_RERUN_TIMEOUT_S", "RERUN_LIMIT_FACTOR", "RERUN_MIN_TIMEOUT_S", "SnippetTarget",
           "doubled", "measured_alone", "rerun_calls_alone", "rerun_snippets_alone", "rerun_timeout",
           "scaled_to_cpu_share"]
