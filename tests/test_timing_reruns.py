"""Quiet reruns in the sandbox on hand-made programs: a timeout that hid a wrong value, one the machine's load caused,
one at the limit and one far over it, each judged on the CPU time the supervisor measured."""

from __future__ import annotations

import pytest

from audit_lib import timing
from audit_lib.timing.reruns import (
    CallTarget,
    SnippetTarget,
    measured_alone,
    rerun_calls_alone,
    rerun_snippets_alone,
    rerun_timeout,
)

BURN = "def f(n, wrong=False):\n    s = 0\n    for i in range(n):\n        s += i\n    return s + 1 if wrong else s\n"


def expected_sum(n: int) -> int:
    return n * (n - 1) // 2


def snippet(n: int) -> str:
    return f"assert f({n}) == {expected_sum(n)}\n"


def test_rerun_waits_past_the_borderline_band() -> None:
    assert rerun_timeout(0.1) == 2.0 and rerun_timeout(6.0) == pytest.approx(9.0)
    assert rerun_timeout(6.0) > (1 + timing.BORDERLINE_MARGIN) * 6.0


def test_wrong_and_slow_is_deterministic_once_rerun_alone() -> None:
    # the parallel pass saw a timeout at 0.05 s; alone, the run finishes and its value is wrong
    wrong = "def f(n):\n    s = 0\n    for i in range(n):\n        s += i\n    return s + 1\n"
    target = SnippetTarget("wrong_and_slow", wrong, snippet(2_000_000), ("f",), 0.05)
    reruns = rerun_snippets_alone([target])
    split = timing.split_failures("runs", [timing.FailedRun("wrong_and_slow", "timeout", 0.05)], reruns)
    assert reruns["wrong_and_slow"].deterministic and split.deterministic == ("wrong_and_slow",)
    assert split.timing == ()


def test_right_but_slow_only_under_contention_is_not_a_failure() -> None:
    # what a loaded machine did to the parallel pass: a run that needs a few ms of CPU timed out at 1 s of wall time
    target = SnippetTarget("loaded", BURN, snippet(10_000), ("f",), 1.0)
    reruns = rerun_snippets_alone([target])
    split = timing.split_failures("runs", [timing.FailedRun("loaded", "timeout", 1.0)], reruns)
    assert split.deterministic == ()
    (verdict,) = split.timing
    assert verdict.state == "not_a_failure" and 0 < verdict.cpu_s < 0.5 and verdict.flip_factor < 0.5


def test_far_over_its_limit_is_confirmed_and_measured_in_cpu_time() -> None:
    forever = "def f(n):\n    while True:\n        n += 1\n"
    reruns = rerun_snippets_alone([SnippetTarget("forever", forever, "assert f(1) == 2\n", ("f",), 0.2)])
    split = timing.split_failures("runs", [timing.FailedRun("forever", "timeout", 0.2)], reruns)
    (verdict,) = split.timing
    # timed out again, after using more CPU than the borderline band allows: a lower bound past it
    assert verdict.state == "confirmed" and verdict.cpu_s >= 1.25 * 0.2 and verdict.flip_factor >= 1.25


def test_a_rerun_starved_of_cpu_gets_more_wall_time_or_stays_unmeasured() -> None:
    # a loaded machine: the child gets a tenth of a core, so each timed-out attempt used a tenth of its wall time
    tried: list[float] = []

    def starved(timeout_s: float) -> tuple[str, float]:
        tried.append(timeout_s)
        return ("timeout", 0.1 * timeout_s)

    def timed_out(result: tuple[str, float]) -> bool:
        return result[0] == "timeout"

    def cpu_of(result: tuple[str, float]) -> float:
        return result[1]

    assert measured_alone(starved, timed_out, cpu_of, 1.0) == ("timeout", 1.6) and tried == [2.0, 4.0, 8.0, 16.0]
    tried.clear()
    assert measured_alone(starved, timed_out, cpu_of, 6.0) is None and tried == [9.0, 18.0, 36.0, 60.0]
    assert measured_alone(lambda t: ("pass", 0.01), timed_out, cpu_of, 6.0) == ("pass", 0.01)
    tried.clear()  # HumanEval+'s reruns start at 10 s to see how far over a task goes; the cap never shortens that
    assert measured_alone(starved, timed_out, cpu_of, 20.0, first_timeout_s=80.0) is None and tried == [80.0]


def test_a_run_at_its_limit_is_borderline() -> None:
    # a burn to a CPU-clock target: the same loop's CPU time varies by about a third between runs on a shared machine,
    # more than the borderline band, so a loop of fixed work measured against an earlier run of it can land outside
    burn = "import time\ndef f(s):\n    start = time.process_time()\n    while time.process_time() - start < s:\n" \
           "        pass\n    return s\n"
    limit_s = 0.3
    reruns = rerun_snippets_alone([SnippetTarget("edge", burn, f"assert f({limit_s}) == {limit_s}\n", ("f",), limit_s)])
    split = timing.split_failures("runs", [timing.FailedRun("edge", "timeout", limit_s)], reruns)
    (verdict,) = split.timing
    # the supervisor measures the child from outside: at least what it burned by its own clock, plus its start-up
    assert limit_s * 0.95 <= verdict.cpu_s < limit_s * 1.25
    assert verdict.state == "borderline" and 0.8 <= verdict.flip_factor < 1.25


def test_calls_rerun_alone_tell_an_exception_from_a_slow_value() -> None:
    raises = "def f(n):\n    return 1 // (n - n)\n"
    reruns = rerun_calls_alone([CallTarget("slow_value", BURN, "f", (10_000,), 1.0),
                                CallTarget("raises", raises, "f", (3,), 1.0),
                                CallTarget("no_load", "def f(:\n", "f", (3,), 1.0)])
    assert not reruns["slow_value"].deterministic and reruns["slow_value"].cpu_s < 0.5
    assert reruns["raises"].deterministic and reruns["no_load"].deterministic


def test_a_starved_rerun_can_widen_to_its_cpu_share_in_one_step() -> None:
    """At a third of a core, one widening reaches the CPU time that confirms (doubling needs two more runs)."""
    from audit_lib.timing.reruns import scaled_to_cpu_share

    tried: list[float] = []

    def third_of_a_core(timeout_s: float) -> tuple[str, float]:
        tried.append(timeout_s)
        return "timeout", timeout_s / 3

    result = measured_alone(third_of_a_core, lambda r: r[0] == "timeout", lambda r: r[1], 1.0, first_timeout_s=1.3,
                            widen=scaled_to_cpu_share)
    assert result is not None and result[1] >= 1.25 and len(tried) == 2
    assert tried[1] == pytest.approx(1.25 * 1.3 * 1.25 / (1.3 / 3))
    assert scaled_to_cpu_share(2.0, 0.0, 1.25) == 4.0 and scaled_to_cpu_share(2.0, 2.0, 1.25) == 2.5
