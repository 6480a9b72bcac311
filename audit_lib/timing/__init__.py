"""Verdicts that do not depend on the machine: deterministic vs timing failures, flip factors, a speed curve.

A failing verdict is `deterministic` when it comes from the value or the exception the code produced, and
`timing` when it comes from a time limit (a timeout, or a value that arrived after the limit). A timing
verdict is confirmed on CPU time measured from outside the child, input by input, on a quiet re-run: its
flip factor `cpu_s / limit_s` says how much faster a machine would have to be for it to pass. Factors within
`BORDERLINE_MARGIN` of 1 are reported as borderline, never as a property of the benchmark.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

Cause = Literal["deterministic", "timing"]
TimingState = Literal["confirmed", "borderline", "not_a_failure", "unmeasured"]
# `not_run`: an input a whole-run budget left unreached, so a clock decided it too; `killed`: a signal the sandbox's
# supervisor recorded (a kill under load looks like one), so only a rerun alone can say whether the code caused it.
TIMING_KINDS = frozenset({"timeout", "late_value", "not_run", "killed"})
Unit = Literal["tasks", "inputs", "runs"]
# A verdict whose CPU time is within 25 % of its limit flips with ordinary machine differences.
BORDERLINE_MARGIN = 0.25
SPEED_FACTORS: tuple[float, ...] = (0.25, 0.33, 0.5, 0.67, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0)


def cause_of(kind: str) -> Cause:
    """The cause of a failure: `timing` or `deterministic`.

    A timeout, a late value, an unreached input or a supervisor kill is timing; every other failure (wrong value, the
    code's own exception) is deterministic."""
    return "timing" if kind in TIMING_KINDS else "deterministic"


def supervisor_kill(kind: str, exc_type: str | None, by_supervisor: bool) -> bool:
    """A call outcome the supervisor wrote because a signal ended the process (`SIGKILL: killed by SIGKILL`)."""
    return kind == "exception" and by_supervisor and (exc_type or "").startswith("SIG")


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


def fixed_limit_rule(limit_s: float) -> LimitRule:
    """A limit that does not scale with any reference run (IntentSpec's 5 s per constraint, LCB's 6 s)."""
    if limit_s <= 0:
        raise ValueError(f"limit_s must be positive, got {limit_s}")
    return lambda reference_cpu_s: limit_s


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
    """Tasks with an input over its limit on a machine `speed` times as fast as this one.

    Times scale as 1/speed, the canonical's too, so a limit proportional to it moves with the machine and a fixed floor
    does not."""
    return {item.task_id for item in inputs if item.cpu_s / speed > limit_rule(item.reference_cpu_s / speed)}


def failing_slow_inputs(inputs: Iterable[TimedInput], limit_rule: LimitRule,
                        slowest: float = SPEED_FACTORS[0]) -> list[TimedInput]:
    """The inputs that would fail on the slowest machine of the curve.

    The only ones the curve can count, so a check keeps these of its passing inputs (a handful) instead of all."""
    return [item for item in inputs if item.cpu_s / slowest > limit_rule(item.reference_cpu_s / slowest)]


def speed_curve(deterministic_tasks: Iterable[str], inputs: Sequence[TimedInput], limit_rule: LimitRule,
                factors: Sequence[float] = SPEED_FACTORS) -> list[tuple[float, int, int]]:
    """(speed factor, failing tasks, of which timing-only) for machines slower (< 1) and faster (> 1)."""
    fixed = set(deterministic_tasks)
    curve = []
    for speed in factors:
        timing_only = failing_at_speed(inputs, limit_rule, speed) - fixed
        curve.append((speed, len(fixed) + len(timing_only), len(timing_only)))
    return curve


@dataclass(frozen=True)
class FailureSplit:
    """A check's failing verdicts split by cause, and the machine-readable summary every such check carries.

    `deterministic` holds ids (tasks, inputs or runs, as `unit` says) that failed by value, exception or exit
    status; `timing` one verdict per id that failed by a clock only, judged on a quiet rerun's CPU time."""

    unit: Unit
    deterministic: tuple[str, ...]
    timing: tuple[TimingVerdict, ...]

    def count(self, state: str) -> int:
        return sum(1 for verdict in self.timing if verdict.state == state)

    def rows(self, id_name: str = "id") -> list[dict[str, object]]:
        """The timing verdicts as evidence rows: id, input index, CPU s, limit s, flip factor, state."""
        return [{id_name: v.task_id, "input_index": v.input_index, "cpu_s": round(v.cpu_s, 4),
                 "limit_s": round(v.limit_s, 4), "flip_factor": v.flip_factor, "state": v.state} for v in self.timing]

    def headline(self, *, borderline_shown: int = 5) -> str:
        """"N deterministic + M timing (confirmed), K borderline, J not failures on a quiet rerun".

        A borderline verdict is named with its flip factor, never counted as a failure."""
        unmeasured = self.count("unmeasured")
        borderline = [v for v in self.timing if v.state == "borderline"]
        factors = ", ".join(f"{v.task_id} {v.flip_factor:.2f}" for v in borderline[:borderline_shown]) \
            + (f" and {len(borderline) - borderline_shown} more" if len(borderline) > borderline_shown else "")
        return (f"{len(self.deterministic)} deterministic + {self.count('confirmed')} timing (confirmed), "
                f"{len(borderline)} borderline" + (f" (flip factor {factors})" if borderline else "")
                + f", {self.count('not_a_failure')} not failures on a quiet rerun"
                + (f", {unmeasured} not re-run" if unmeasured else ""))

    def failing(self) -> int:
        """Ids that fail for certain: deterministic, or timing confirmed on a quiet rerun (never borderline ones)."""
        return len(self.deterministic) + self.count("confirmed")

    def failing_headline(self, noun: str, *, borderline_shown: int = 5) -> str:
        """"22 tasks fail: 17 deterministic + 5 timing (confirmed); 5 more timed out only under load".

        Only confirmed failures are counted as failing; borderline and unmeasured ones are named apart."""
        borderline = [v for v in self.timing if v.state == "borderline"]
        factors = ", ".join(f"{v.task_id} {v.flip_factor:.2f}" for v in borderline[:borderline_shown]) \
            + (f" and {len(borderline) - borderline_shown} more" if len(borderline) > borderline_shown else "")
        text = (f"{self.failing()} {noun} fail: {len(self.deterministic)} deterministic + "
                f"{self.count('confirmed')} timing (confirmed)")
        if borderline:
            text += f"; {len(borderline)} borderline, within {BORDERLINE_MARGIN:.0%} of the limit (flip factor {factors})"
        if self.count("not_a_failure"):
            text += f"; {self.count('not_a_failure')} more timed out only under load"
        if self.count("unmeasured"):
            text += f"; {self.count('unmeasured')} more failed by a clock and were not re-run"
        return text

    def summary(self, *, deterministic_key: str, timing_key: str) -> dict[str, object]:
        """`meta["failure_split"]`: counts, and the observed keys that hold the two lists."""
        return {"unit": self.unit, "deterministic": len(self.deterministic),
                "timing_confirmed": self.count("confirmed"), "timing_borderline": self.count("borderline"),
                "timing_not_failing": self.count("not_a_failure"), "timing_unmeasured": self.count("unmeasured"),
                "deterministic_key": deterministic_key, "timing_key": timing_key}


@dataclass(frozen=True)
class FailedRun:
    """One failing verdict of a parallel pass: its id, the kind that failed it, and its limit."""

    id: str
    kind: str  # a verdict kind or a sandbox status: "timeout" and "not_run" are timing, the rest deterministic
    limit_s: float


@dataclass(frozen=True)
class QuietRerun:
    """The same run alone: whether a value or an exception decided it, and its CPU time from the supervisor."""

    id: str
    deterministic: bool  # the rerun failed by value, exception or exit status: the timeout hid that failure
    cpu_s: float
    wall_s: float


def split_failures(unit: Unit, failures: Iterable[FailedRun], reruns: Mapping[str, QuietRerun], *,
                   margin: float = BORDERLINE_MARGIN) -> FailureSplit:
    """Each failing id: deterministic, or timing with its worst flip factor.

    Deterministic when any failure of an id is (or its rerun shows one); `unmeasured` when it was never re-run. Ids keep
    the order they first appear in."""
    deterministic: dict[str, None] = {}
    worst: dict[str, TimingVerdict] = {}
    for failure in failures:
        rerun = reruns.get(failure.id)
        if cause_of(failure.kind) == "deterministic" or (rerun is not None and rerun.deterministic):
            deterministic[failure.id] = None
            continue
        if rerun is None:
            verdict = TimingVerdict(failure.id, -1, 0.0, failure.limit_s, 0.0, "unmeasured")
        else:
            verdict = TimingVerdict(failure.id, -1, rerun.cpu_s, failure.limit_s,
                                    round(flip_factor(rerun.cpu_s, failure.limit_s), 4),
                                    timing_state(rerun.cpu_s, failure.limit_s, margin=margin))
        if failure.id not in worst or verdict.flip_factor > worst[failure.id].flip_factor:
            worst[failure.id] = verdict
    return FailureSplit(unit, tuple(deterministic), tuple(v for key, v in worst.items() if key not in deterministic))



def fixed_limit_speed_curve(split: FailureSplit, measured: Iterable[tuple[str, float]],
                            limit_s: float) -> list[list[float]]:
    """Failing ids on machines 0.25x-4x as fast under a fixed limit.

    The deterministic ones, plus every id whose CPU time (`measured`: the quiet rerun's for a timeout, the parallel
    pass's otherwise) would exceed it."""
    fixed = set(split.deterministic)
    rule = fixed_limit_rule(limit_s)
    timed = [TimedInput(key, -1, cpu_s, 0.0) for key, cpu_s in measured if key not in fixed]
    return [list(point) for point in speed_curve(fixed, failing_slow_inputs(timed, rule), rule)]


def split_findings(split: FailureSplit, curve: Sequence[Sequence[float]], *, deterministic_key: str,
                   timing_key: str, timing_rule: str) -> tuple[dict[str, object], dict[str, object]]:
    """(observed keys, meta keys) a check that classifies its failures gains.

    Both lists, the counts by state and the speed curve; the summary, the rule and which of those keys depend on the
    machine."""
    counts = {f"timing_{state}": split.count(state) for state in ("confirmed", "borderline", "not_a_failure")}
    observed = {deterministic_key: list(split.deterministic), timing_key: split.rows(), **counts,
                "speed_curve": [list(point) for point in curve]}
    meta = {"failure_split": split.summary(deterministic_key=deterministic_key, timing_key=timing_key),
            "timing_rule": timing_rule, "machine_dependent": [timing_key, *counts, "speed_curve"]}
    return observed, meta


def fixed_limit_findings(unit: Unit, failures: Sequence[FailedRun], reruns: Mapping[str, QuietRerun],
                         measured: Iterable[tuple[str, float]], limit_s: float, *, deterministic_key: str,
                         timing_key: str, timing_rule: str) -> tuple[dict[str, object], dict[str, object], FailureSplit]:
    """The whole split of a check under one fixed limit: observed keys, meta keys, and the split.

    `measured`: (id, the parallel pass's CPU time) of every run it judged, a rerun's CPU time replacing it where there
    is one."""
    split = split_failures(unit, failures, reruns)
    quiet = [(key, reruns[key].cpu_s if key in reruns else cpu_s) for key, cpu_s in measured]
    observed, meta = split_findings(split, fixed_limit_speed_curve(split, quiet, limit_s),
                                    deterministic_key=deterministic_key, timing_key=timing_key, timing_rule=timing_rule)
    return observed, meta, split
