"""Deterministic vs timing verdicts, flip factors on fixed timings, and the speed curve."""

from __future__ import annotations

import pytest

from audit_lib.timing import (
    FailedRun,
    FailureSplit,
    QuietRerun,
    TimedInput,
    TimingVerdict,
    cause_of,
    evalplus_limit_rule,
    failing_at_speed,
    failing_slow_inputs,
    fixed_limit_rule,
    fixed_limit_speed_curve,
    flip_factor,
    speed_curve,
    split_failures,
    split_findings,
    task_verdicts,
    timing_state,
)

RULE = evalplus_limit_rule(1.0)


@pytest.mark.parametrize(("kind", "cause"), [("wrong_value", "deterministic"), ("exception", "deterministic"),
                                             ("timeout", "timing"), ("late_value", "timing")])
def test_cause(kind: str, cause: str) -> None:
    assert cause_of(kind) == cause


def test_evalplus_limit_is_the_floor_or_four_times_the_canonical() -> None:
    assert RULE(0.01) == 1.0 and RULE(0.5) == 2.0


@pytest.mark.parametrize(("cpu_s", "limit_s", "state"), [
    (9.0, 1.0, "confirmed"),       # /127-like: many seconds against 1 s, on any plausible machine
    (1.02, 1.0, "borderline"),     # /96-like: right at its limit
    (0.85, 1.0, "borderline"),
    (0.26, 1.0, "not_a_failure"),  # /130-like: a quarter of its limit, a timeout only under contention
    (None, 1.0, "unmeasured"),
])
def test_timing_state_on_fixed_timings(cpu_s: float | None, limit_s: float, state: str) -> None:
    assert timing_state(cpu_s, limit_s) == state


def test_flip_factor_and_its_guard() -> None:
    assert flip_factor(3.0, 1.5) == 2.0
    with pytest.raises(ValueError):
        flip_factor(1.0, 0.0)


def test_task_verdict_takes_the_worst_input_of_each_task() -> None:
    inputs = [TimedInput("T/1", 0, 0.5, 0.01), TimedInput("T/1", 3, 4.0, 0.01), TimedInput("T/2", 0, 0.9, 0.5)]
    verdicts = task_verdicts(inputs, RULE)
    assert [(v.task_id, v.input_index, v.limit_s, v.flip_factor, v.state) for v in verdicts] == [
        ("T/1", 3, 1.0, 4.0, "confirmed"), ("T/2", 0, 2.0, 0.45, "not_a_failure")]


def test_the_floor_does_not_move_with_the_machine_but_a_proportional_limit_does() -> None:
    floor_bound = TimedInput("T/floor", 0, 2.0, 0.01)       # limit 1 s (the floor) at every speed
    proportional = TimedInput("T/prop", 0, 12.0, 2.0)       # limit 8 s here, 4 s on a 2x machine: still fails
    assert failing_at_speed([floor_bound, proportional], RULE, 1.0) == {"T/floor", "T/prop"}
    assert failing_at_speed([floor_bound, proportional], RULE, 2.5) == {"T/prop"}
    assert failing_at_speed([floor_bound, proportional], RULE, 0.5) == {"T/floor", "T/prop"}


def test_speed_curve_adds_timing_only_tasks_to_the_deterministic_ones() -> None:
    inputs = [TimedInput("T/slow", 0, 2.0, 0.01), TimedInput("T/wrong", 0, 5.0, 0.01)]
    curve = dict((speed, (total, timing)) for speed, total, timing in
                 speed_curve({"T/wrong"}, inputs, RULE, factors=(0.5, 1.0, 4.0)))
    assert curve == {0.5: (2, 1), 1.0: (2, 1), 4.0: (1, 0)}


def test_a_budget_left_unreached_input_is_timing_too() -> None:
    assert cause_of("not_run") == "timing" and cause_of("fail") == "deterministic" and cause_of("error") == \
        "deterministic"


def test_fixed_limit_does_not_move_with_the_reference_or_the_machine() -> None:
    rule = fixed_limit_rule(5.0)
    assert rule(0.0) == rule(100.0) == 5.0
    runs = [TimedInput("run/a", -1, 3.0, 0.0), TimedInput("run/b", -1, 0.5, 0.0)]
    assert failing_at_speed(runs, rule, 0.5) == {"run/a"} and failing_at_speed(runs, rule, 0.05) == {"run/a", "run/b"}
    with pytest.raises(ValueError):
        fixed_limit_rule(0.0)


def test_split_failures_on_fixed_timings() -> None:
    failures = [FailedRun("wrong", "fail", 5.0), FailedRun("raises", "error", 5.0),
                FailedRun("slow", "timeout", 5.0), FailedRun("loaded", "timeout", 5.0),
                FailedRun("edge", "timeout", 5.0), FailedRun("hid_a_bug", "timeout", 5.0),
                FailedRun("never_rerun", "not_run", 5.0), FailedRun("wrong", "timeout", 5.0)]
    reruns = {"slow": QuietRerun("slow", False, 9.0, 9.1), "loaded": QuietRerun("loaded", False, 0.4, 0.4),
              "edge": QuietRerun("edge", False, 5.1, 5.2), "hid_a_bug": QuietRerun("hid_a_bug", True, 0.1, 0.1)}
    split = split_failures("runs", failures, reruns)
    assert split.deterministic == ("wrong", "raises", "hid_a_bug")
    states = {v.task_id: (v.state, v.flip_factor) for v in split.timing}
    assert states == {"slow": ("confirmed", 1.8), "loaded": ("not_a_failure", 0.08), "edge": ("borderline", 1.02),
                      "never_rerun": ("unmeasured", 0.0)}
    assert split.headline() == ("3 deterministic + 1 timing (confirmed), 1 borderline (flip factor edge 1.02), 1 "
                                "not failures on a quiet rerun, 1 not re-run")
    assert split.summary(deterministic_key="d", timing_key="t") == {
        "unit": "runs", "deterministic": 3, "timing_confirmed": 1, "timing_borderline": 1, "timing_not_failing": 1,
        "timing_unmeasured": 1, "deterministic_key": "d", "timing_key": "t"}
    assert {row["id"]: row["limit_s"] for row in split.rows()}["slow"] == 5.0


def test_timeouts_counted_as_deterministic_would_change_the_split() -> None:
    # the split must come from the kind: a timeout never lands among the deterministic ids, however slow it was
    split = split_failures("inputs", [FailedRun("x", "timeout", 1.0)], {"x": QuietRerun("x", False, 30.0, 30.0)})
    assert split.deterministic == () and [v.state for v in split.timing] == ["confirmed"]


def test_fixed_limit_speed_curve_and_findings() -> None:
    split = FailureSplit("runs", ("bad",), (TimingVerdict("slow", -1, 8.0, 5.0, 1.6, "confirmed"),))
    measured = [("bad", 0.1), ("slow", 8.0), ("fast", 0.01), ("medium", 2.0)]
    curve = {speed: (failing, timing_only) for speed, failing, timing_only in
             fixed_limit_speed_curve(split, measured, 5.0)}
    # 0.25x: slow (32 s) and medium (8 s) over 5 s; 2x: slow still 4 s < 5 s, so only the deterministic one
    assert curve[0.25] == (3, 2) and curve[1.0] == (2, 1) and curve[2.0] == (1, 0)
    assert failing_slow_inputs([TimedInput("fast", -1, 0.01, 0.0)], fixed_limit_rule(5.0)) == []
    observed, meta = split_findings(split, [[1.0, 2, 1]], deterministic_key="det", timing_key="tim",
                                    timing_rule="fixed 5 s")
    assert observed["det"] == ["bad"] and observed["tim"][0]["state"] == "confirmed"
    assert observed["timing_confirmed"] == 1 and observed["speed_curve"] == [[1.0, 2, 1]]
    assert meta["failure_split"]["deterministic_key"] == "det" and "tim" in meta["machine_dependent"]
