"""The readings' failing calls by cause, each timing call re-run alone.

An exception, an unsendable value or a program that does not load is deterministic; the sandbox's per-input limit is
timing, judged on the rerun's CPU time.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from audit_lib import timing
from audit_lib.benchmarks.unconventional.readings import ENTRY_POINT, READINGS, AmbiguityReport, Reading
from audit_lib.timing.reruns import CallTarget, rerun_calls_alone

DETERMINISTIC_KEY = "calls_failing_deterministic"
TIMING_KEY = "calls_failing_timing"


def split_observed(report: AmbiguityReport, readings: Sequence[Reading] = READINGS
                   ) -> tuple[dict[str, Any], dict[str, Any], timing.FailureSplit]:
    """(observed keys, meta keys, the split) for the example-ambiguity check; ids are `<reading>/<input index>`."""
    failures: list[timing.FailedRun] = []
    targets: list[CallTarget] = []
    measured: list[tuple[str, float]] = []
    for reading in readings:
        cpu_s = report.cpu_s.get(reading.name, ())
        for index, outcome in enumerate(report.outcomes[reading.name]):
            key = f"{reading.name}/{index}"
            measured.append((key, cpu_s[index] if index < len(cpu_s) else 0.0))
            if outcome.kind == "value":
                continue
            failures.append(timing.FailedRun(key, outcome.kind, report.limit_s))
            if timing.cause_of(outcome.kind) == "timing":
                list1, list2, threshold = report.inputs[index]
                targets.append(CallTarget(key, reading.source, ENTRY_POINT, (list(list1), list(list2), threshold),
                                          report.limit_s))
    return timing.fixed_limit_findings(
        "runs", failures, rerun_calls_alone(targets), measured, report.limit_s, deterministic_key=DETERMINISTIC_KEY,
        timing_key=TIMING_KEY, timing_rule=f"the sandbox's {report.limit_s:g} s per call; a timed-out call is re-run "
                                           "alone and judged on its CPU time")


__all__ = ["DETERMINISTIC_KEY", "TIMING_KEY", "split_observed"]
