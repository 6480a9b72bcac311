"""The readings' calls without a value split into deterministic and timing; timeouts re-run alone in the sandbox."""

from __future__ import annotations

import dataclasses

from audit_lib.benchmarks.unconventional import readings
from audit_lib.benchmarks.unconventional.timing_split import split_observed


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
