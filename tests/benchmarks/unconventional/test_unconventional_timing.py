"""The readings' calls without a value split into deterministic and timing; timeouts re-run alone in the sandbox."""

from __future__ import annotations

import dataclasses

import pytest

from audit_lib.benchmarks.unconventional import readings, timing_split
from audit_lib.benchmarks.unconventional.timing_split import split_observed
from audit_lib.timing import QuietRerun
from audit_lib.timing.reruns import CallTarget


def test_a_loaded_timeout_is_rerun_alone_and_an_exception_stays_deterministic() -> None:
    chosen = [r for r in readings.READINGS if r.name in (readings.LITERAL_READING, "strict_threshold")]
    inputs = list(readings.FIXED_INPUTS[:3])
    report = readings.run_readings(inputs, readings=chosen)
    assert all(o.kind == "value" for outcomes in report.outcomes.values() for o in outcomes)
    assert all(len(times) == 3 for times in report.cpu_s.values()) and report.limit_s == 6.0
    literal = list(report.outcomes[readings.LITERAL_READING])
    literal[1] = readings.ReadingOutcome("timeout")  # what a loaded machine did to the parallel pass
    strict = list(report.outcomes["strict_threshold"])
    strict[2] = readings.ReadingOutcome("exception", detail="TypeError boom")
    injected = dataclasses.replace(report, outcomes={readings.LITERAL_READING: tuple(literal),
                                                     "strict_threshold": tuple(strict)})
    observed, meta, split = split_observed(injected, chosen)
    assert observed["calls_failing_deterministic"] == ["strict_threshold/2"]
    (row,) = observed["calls_failing_timing"]
    assert row["id"] == "literal/1" and row["state"] == "not_a_failure"
    assert meta["failure_split"]["deterministic"] == 1 and meta["failure_split"]["timing_not_failing"] == 1
    assert split.headline().startswith("1 deterministic + 0 timing (confirmed)")


def test_the_check_carries_the_split() -> None:
    from audit_lib.benchmarks.unconventional.checks_paper import example_ambiguity_from

    check = example_ambiguity_from(seed=0, n_generated=5)
    assert check.observed["calls_failing_deterministic"] == [] and check.observed["calls_failing_timing"] == []
    assert check.meta["failure_split"]["deterministic_key"] == "calls_failing_deterministic"
    assert len(check.observed["speed_curve"]) == 11 and "0 deterministic + 0 timing" in check.summary


def _report(outcomes: dict[str, tuple[readings.ReadingOutcome, ...]], cpu_s: dict[str, tuple[float, ...]],
            limit_s: float) -> readings.AmbiguityReport:
    inputs = (((1, 2), (3,), 2), ((0,), (1,), 0))
    return readings.AmbiguityReport(inputs=inputs, outcomes=outcomes, counterexamples=(),
                                    inputs_with_any_disagreement=0, distinct_outputs_per_input=(1, 1),
                                    pairwise_disagreement={}, sandbox_statuses={}, cpu_s=cpu_s, limit_s=limit_s)


def test_a_call_without_a_measured_cpu_time_counts_as_instant_on_the_speed_curve(
        monkeypatch: pytest.MonkeyPatch) -> None:
    value = readings.ReadingOutcome("value", 1)
    chosen = [readings.Reading("slow", "x", "src"), readings.Reading("unmeasured", "y", "src")]
    # "slow" has a CPU time for its first input only; "unmeasured" has none (its job was not measured)
    report = _report({"slow": (value, value), "unmeasured": (value,)}, {"slow": (7.0,)}, limit_s=2.0)
    monkeypatch.setattr(timing_split, "rerun_calls_alone", lambda targets: {})
    observed, meta, split = timing_split.split_observed(report, chosen)
    curve = {point[0]: point[1:] for point in observed["speed_curve"]}
    # only slow/0 fails by the clock on this machine or a 4x slower one; a missing time is never a made-up one
    assert curve[1.0] == [1, 1] and curve[0.25] == [1, 1] and curve[4.0] == [0, 0]
    assert split.deterministic == () and split.timing == ()
    assert meta["failure_split"]["unit"] == "runs"
    assert meta["timing_rule"] == "the sandbox's 2 s per call; a timed-out call is re-run alone and judged on its CPU time"


def test_only_timeouts_are_rerun_alone_with_their_inputs(monkeypatch: pytest.MonkeyPatch) -> None:
    chosen = [readings.Reading("r", "x", "def sort_concat_square_deduplicate(a, b, t):\n    return a\n")]
    report = _report({"r": (readings.ReadingOutcome("exception", detail="boom"), readings.ReadingOutcome("timeout"))},
                     {"r": (0.1, 6.0)}, limit_s=6.0)
    asked: list[CallTarget] = []

    def quiet(targets: list[CallTarget]) -> dict[str, QuietRerun]:
        asked.extend(targets)
        return {"r/1": QuietRerun("r/1", False, 12.0, 12.0)}

    monkeypatch.setattr(timing_split, "rerun_calls_alone", quiet)
    observed, _, _ = timing_split.split_observed(report, chosen)
    assert asked == [CallTarget("r/1", chosen[0].source, readings.ENTRY_POINT, ([0], [1], 0), 6.0)]
    assert observed["calls_failing_deterministic"] == ["r/0"]
    assert [(row["id"], row["state"], row["cpu_s"]) for row in observed["calls_failing_timing"]] == \
        [("r/1", "confirmed", 12.0)]
