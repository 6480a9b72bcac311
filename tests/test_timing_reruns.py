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
    # the measured CPU is the burn plus the job's and its judge's start-up (tens of ms, more under load): a 1 s limit
    # and a 0.95 s burn leave that start-up 0.3 s of room inside the borderline band
    limit_s, burn_s = 1.0, 0.95
    reruns = rerun_snippets_alone([SnippetTarget("edge", burn, f"assert f({burn_s}) == {burn_s}\n", ("f",), limit_s)])
    split = timing.split_failures("runs", [timing.FailedRun("edge", "timeout", limit_s)], reruns)
    (verdict,) = split.timing
    # the supervisor measures the child from outside: at least what it burned by its own clock, plus its start-up
    assert burn_s <= verdict.cpu_s < limit_s * 1.25
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


class FakeSandbox:
    """Stands in for the sandbox: records each call's arguments and answers from a queue of results."""

    def __init__(self, results: list) -> None:
        self.results = list(results)
        self.calls: list[tuple[tuple, dict]] = []

    def __call__(self, *args: object, **kwargs: object) -> object:
        self.calls.append((args, kwargs))
        return self.results.pop(0)


def snippet_job(*snippets: object) -> object:
    from audit_lib import sandbox

    return sandbox.AssertJobResult("pass", tuple(snippets), sandbox.Limits(), 0.0, False)  # type: ignore[arg-type]


def test_a_snippet_rerun_runs_alone_under_the_rerun_limits_and_reads_the_supervisors_times(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from audit_lib import sandbox
    from audit_lib.timing import reruns as timing_reruns

    # a harness error and an empty answer come first: each leaves its run unmeasured, not the runs after it
    fake = FakeSandbox([snippet_job(sandbox.SnippetResult(0, "harness_error", 0.1)),
                        snippet_job(),
                        snippet_job(sandbox.SnippetResult(0, "fail", 0.9, wall_s=0.0, cpu_s=0.3)),
                        snippet_job(sandbox.SnippetResult(0, "pass", 0.9, wall_s=0.5, cpu_s=0.4))])
    monkeypatch.setattr(timing_reruns.sandbox, "run_tests", fake)
    base = sandbox.Limits(timeout_s=1.0, total_timeout_s=1.5, memory_mb=321)
    targets = [SnippetTarget(name, "prog", f"snippet {name}", ("f", "g"), 4.0)
               for name in ("broken", "empty", "wrong", "right")]
    reruns = rerun_snippets_alone(targets, limits=base)
    assert reruns == {"wrong": timing.QuietRerun("wrong", True, 0.3, 0.9),
                      "right": timing.QuietRerun("right", False, 0.4, 0.5)}
    args, kwargs = fake.calls[2]
    assert args == ("prog", ["snippet wrong"]) and kwargs["entry_points"] == ("f", "g")
    limits = kwargs["limits"]
    assert (limits.timeout_s, limits.total_timeout_s, limits.memory_mb) == (6.0, 8.0, 321)


def test_a_snippet_rerun_that_times_out_again_is_timing_not_deterministic(monkeypatch: pytest.MonkeyPatch) -> None:
    from audit_lib import sandbox
    from audit_lib.timing import reruns as timing_reruns

    starved = sandbox.SnippetResult(0, "timeout", 3.0, wall_s=3.0, cpu_s=0.2)  # too little CPU to decide: again
    over = sandbox.SnippetResult(0, "timeout", 6.0, wall_s=6.0, cpu_s=2.6)  # past 1.25 x its 2 s limit
    fake = FakeSandbox([snippet_job(starved), snippet_job(over)])
    monkeypatch.setattr(timing_reruns.sandbox, "run_tests", fake)
    assert rerun_snippets_alone([SnippetTarget("t", "p", "s", ("f",), 2.0)]) == {
        "t": timing.QuietRerun("t", False, 2.6, 6.0)}
    assert [kwargs["limits"].timeout_s for _, kwargs in fake.calls] == [3.0, 6.0]


def call_job(*outcomes: object, status: str = "pass", load_error: str | None = None, cpu_s: float = 0.0) -> object:
    from audit_lib import sandbox

    return sandbox.CallJobResult(status, tuple(outcomes), load_error, sandbox.Limits(), 0.7,  # type: ignore[arg-type]
                                 cpu_s=cpu_s)


def test_a_call_rerun_passes_the_call_and_decides_by_the_first_outcome(monkeypatch: pytest.MonkeyPatch) -> None:
    from audit_lib import sandbox
    from audit_lib.timing import reruns as timing_reruns

    fake = FakeSandbox([
        call_job(sandbox.CallOutcome(0, "value", 1), status="harness_error"),
        call_job(sandbox.CallOutcome(0, "value", 3, duration_s=0.2, wall_s=0.0, cpu_s=0.1)),
        call_job(sandbox.CallOutcome(0, "exception", exc_type="ValueError", wall_s=0.3, cpu_s=0.2)),
        call_job(sandbox.CallOutcome(0, "timeout", wall_s=9.0, cpu_s=7.0)),
        call_job(status="error", load_error="SyntaxError", cpu_s=0.05),
        call_job(cpu_s=0.06)])
    monkeypatch.setattr(timing_reruns.sandbox, "call_function", fake)
    targets = [CallTarget(name, "prog", "f", (1, [2]), 4.0)
               for name in ("harness", "value", "raises", "slow", "no_load", "nothing")]
    reruns = rerun_calls_alone(targets, limits=sandbox.Limits(timeout_s=1.0, memory_mb=321))
    assert reruns == {"value": timing.QuietRerun("value", False, 0.1, 0.2),
                      "raises": timing.QuietRerun("raises", True, 0.2, 0.3),
                      "slow": timing.QuietRerun("slow", False, 7.0, 9.0),
                      "no_load": timing.QuietRerun("no_load", True, 0.05, 0.7),
                      "nothing": timing.QuietRerun("nothing", True, 0.06, 0.7)}
    args, kwargs = fake.calls[1]
    assert args == ("prog", "f", [[1, [2]]]) and kwargs["per_input_timeout_s"] == [6.0]
    limits = kwargs["limits"]
    assert (limits.timeout_s, limits.total_timeout_s, limits.memory_mb) == (6.0, 8.0, 321)


def test_a_call_cut_by_the_clock_is_retried_on_the_outcomes_cpu_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """Timed out with too little CPU: retried with more wall time; a load error is never retried."""
    from audit_lib import sandbox
    from audit_lib.timing import reruns as timing_reruns

    fake = FakeSandbox([call_job(sandbox.CallOutcome(0, "timeout", wall_s=2.0, cpu_s=0.1), cpu_s=5.0),
                        call_job(sandbox.CallOutcome(0, "value", 1, wall_s=0.4, cpu_s=0.3)),
                        call_job(sandbox.CallOutcome(0, "not_run"), status="error", load_error="boom", cpu_s=0.01)])
    monkeypatch.setattr(timing_reruns.sandbox, "call_function", fake)
    reruns = rerun_calls_alone([CallTarget("starved", "p", "f", (), 1.0), CallTarget("bad", "p", "f", (), 1.0)])
    assert [kwargs["per_input_timeout_s"] for _, kwargs in fake.calls] == [[2.0], [4.0], [2.0]]
    assert reruns == {"starved": timing.QuietRerun("starved", False, 0.3, 0.4),
                      "bad": timing.QuietRerun("bad", True, 0.01, 0.7)}


def test_the_widening_rules() -> None:
    from audit_lib.timing.reruns import doubled, scaled_to_cpu_share

    assert doubled(3.0, 1.0, 5.0) == 6.0
    assert scaled_to_cpu_share(2.0, 1.0, 1.0) == 2.5  # enough CPU already: the 1.25x floor
    assert scaled_to_cpu_share(2.0, 0.5, 2.0) == pytest.approx(10.0)  # a quarter of a core: 1.25 x 2 x 4
    assert scaled_to_cpu_share(2.0, -1.0, 2.0) == 4.0


def test_measured_alone_stops_at_the_cap_and_at_enough_cpu() -> None:
    tried: list[float] = []

    def run(timeout_s: float) -> tuple[str, float]:
        tried.append(timeout_s)
        return ("timeout", 1.25 * 2.0 if timeout_s >= 12.0 else 0.0)

    assert measured_alone(run, lambda r: r[0] == "timeout", lambda r: r[1], 2.0) == ("timeout", 2.5)
    assert tried == [3.0, 6.0, 12.0]  # exactly 1.25 x the limit is enough
    tried.clear()
    assert measured_alone(run, lambda r: r[0] == "timeout", lambda r: r[1], 2.0, first_timeout_s=40.0) == (
        "timeout", 2.5)
    tried.clear()
    assert measured_alone(lambda t: tried.append(t) or ("timeout", 0.0), lambda r: r[0] == "timeout",
                          lambda r: r[1], 2.0, first_timeout_s=40.0) is None
    assert tried == [40.0, 60.0]
