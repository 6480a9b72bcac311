"""Deterministic vs timing verdicts, flip factors on fixed timings, and the speed curve."""

from __future__ import annotations

import pytest

from audit_lib.timing import (
    TimedInput,
    cause_of,
    evalplus_limit_rule,
    failing_at_speed,
    flip_factor,
    speed_curve,
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
