"""Verdicts that do not depend on the machine: deterministic vs timing failures, flip factors, a speed curve.

A failing verdict is `deterministic` when it comes from the value or the exception the code produced, and
`timing` when it comes from a time limit (a timeout, or a value that arrived after the limit). A timing
verdict is confirmed on CPU time measured from outside the child, input by input, on a quiet re-run: its
flip factor `cpu_s / limit_s` says how much faster a machine would have to be for it to pass. Factors within
`BORDERLINE_MARGIN` of 1 are reported as borderline, never as a property of the benchmark.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

Cause = Literal["deterministic", "timing"]
TimingState = Literal["confirmed", "borderline", "not_a_failure", "unmeasured"]
TIMING_KINDS = frozenset({"timeout", "late_value"})
# A verdict whose CPU time is within 25 % of its limit flips with ordinary machine differences.
BORDERLINE_MARGIN = 0.25
SPEED_FACTORS: tuple[float, ...] = (0.25, 0.33, 0.5, 0.67, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0)


def cause_of(kind: str) -> Cause:
    """`timing` for a timeout or a late value; every other failure (wrong value, exception) is deterministic."""
    return "timing" if kind in TIMING_KINDS else "deterministic"


def flip_factor(cpu_s: float, limit_s: float) -> float:
    """How many times faster a machine must be for the input to finish within its limit (> 1: it fails here)."""
    if limit_s <= 0:
        raise ValueError(f"limit_s must be positive, got {limit_s}")
    return cpu_s / limit_s


def timing_state(cpu_s: float | None, limit_s: float, *, margin: float = BORDERLINE_MARGIN) -> TimingState:
    """Confirmed (over the limit by more than the margin), borderline, or not a failure at all."""
    if cpu_s is None:
        return "unmeasured"
    factor = flip_factor(cpu_s, limit_s)
    if factor >= 1 + margin:
        return "confirmed"
    if factor >= 1 / (1 + margin):
        return "borderline"
    return "not_a_failure"


@dataclass(frozen=True)
class TimedInput:
    """One input's measured cost against its limit, as the benchmark's own limit rule sets it."""

    task_id: str
    input_index: int
    cpu_s: float
    reference_cpu_s: float  # the canonical's CPU time on the same input (EvalPlus scales its limit by it)


@dataclass(frozen=True)
class TimingVerdict:
    """A task's timing verdict on this machine: the worst input, its limit and flip factor."""

    task_id: str
    input_index: int
    cpu_s: float
    limit_s: float
    flip_factor: float
    state: TimingState


LimitRule = Callable[[float], float]  # the canonical's CPU seconds on an input -> that input's limit


def evalplus_limit_rule(min_time_limit: float, *, gt_time_limit_factor: float = 4.0) -> LimitRule:
    """EvalPlus 0.3.1: `max(min_time_limit, gt_time_limit_factor * canonical time)` per input."""
    return lambda reference_cpu_s: max(min_time_limit, gt_time_limit_factor * reference_cpu_s)


def task_verdicts(inputs: Iterable[TimedInput], limit_rule: LimitRule, *,
                  margin: float = BORDERLINE_MARGIN) -> list[TimingVerdict]:
    """Per task, the input with the largest flip factor, classified; tasks sorted by id."""
    worst: dict[str, TimingVerdict] = {}
    for item in inputs:
        limit = limit_rule(item.reference_cpu_s)
        factor = flip_factor(item.cpu_s, limit)
        verdict = TimingVerdict(item.task_id, item.input_index, item.cpu_s, limit, round(factor, 4),
                                timing_state(item.cpu_s, limit, margin=margin))
        if item.task_id not in worst or factor > worst[item.task_id].flip_factor:
            worst[item.task_id] = verdict
    return [worst[task_id] for task_id in sorted(worst)]


def failing_at_speed(inputs: Sequence[TimedInput], limit_rule: LimitRule, speed: float) -> set[str]:
    """Tasks with an input over its limit on a machine `speed` times as fast as this one (times scale as 1/speed,
    the canonical's too, so a limit proportional to it moves with the machine and a fixed floor does not)."""
    return {item.task_id for item in inputs if item.cpu_s / speed > limit_rule(item.reference_cpu_s / speed)}


def speed_curve(deterministic_tasks: Iterable[str], inputs: Sequence[TimedInput], limit_rule: LimitRule,
                factors: Sequence[float] = SPEED_FACTORS) -> list[tuple[float, int, int]]:
    """(speed factor, failing tasks, of which timing-only) for machines slower (< 1) and faster (> 1)."""
    fixed = set(deterministic_tasks)
    curve = []
    for speed in factors:
        timing_only = failing_at_speed(inputs, limit_rule, speed) - fixed
        curve.append((speed, len(fixed) + len(timing_only), len(timing_only)))
    return curve
