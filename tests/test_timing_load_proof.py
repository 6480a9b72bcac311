"""Verdicts that hold under load: the borderline band's exact edges, supervisor kills and unreached inputs never
deterministic, and headlines that count only confirmed failures."""

from __future__ import annotations

import pytest

from audit_lib import sandbox, timing
from audit_lib.timing import reruns as timing_reruns
from audit_lib.timing import FailedRun, FailureSplit, QuietRerun, TimingVerdict, split_failures, timing_state


@pytest.mark.parametrize(("cpu_s", "state"), [
    (1.25, "confirmed"),         # the upper edge itself: 1 + BORDERLINE_MARGIN
    (1.2501, "confirmed"),       # just outside the band, above
    (1.2499, "borderline"),      # just inside it
    (1.0, "borderline"),
    (0.8, "borderline"),         # the lower edge itself: 1 / (1 + BORDERLINE_MARGIN)
    (0.8001, "borderline"),      # just inside
    (0.7999, "not_a_failure"),   # just outside, below
    (0.78, "not_a_failure"),     # between 0.75 and 0.8: a lower edge of 1 - margin would call it borderline
    (0.75, "not_a_failure"),
])
def test_the_borderline_band_edges_exactly(cpu_s: float, state: str) -> None:
    assert timing.BORDERLINE_MARGIN == 0.25
    assert timing_state(cpu_s, 1.0) == state
    assert timing_state(cpu_s * 4, 4.0) == state  # a property of the ratio, not of the unit


def test_split_failures_files_band_edges_like_timing_state() -> None:
    failures = [FailedRun(name, "timeout", 1.0) for name in ("upper", "lower", "below")]
    reruns = {"upper": QuietRerun("upper", False, 1.25, 1.3), "lower": QuietRerun("lower", False, 0.8, 0.8),
              "below": QuietRerun("below", False, 0.78, 0.8)}
    states = {v.task_id: v.state for v in split_failures("runs", failures, reruns).timing}
    assert states == {"upper": "confirmed", "lower": "borderline", "below": "not_a_failure"}


def test_a_supervisor_kill_is_timing_and_the_codes_own_signal_name_is_not() -> None:
    assert timing.cause_of("killed") == "timing"
    assert timing.supervisor_kill("exception", "SIGKILL", True)
    assert not timing.supervisor_kill("exception", "SIGKILL", False)  # an exception the code named so
    assert not timing.supervisor_kill("exception", "ProcessExit", True)  # the code's own exit
    assert not timing.supervisor_kill("timeout", None, True)


def test_a_kill_under_load_is_re_run_not_filed_as_deterministic() -> None:
    split = split_failures("runs", [FailedRun("killed_in_parallel", "killed", 1.0)],
                           {"killed_in_parallel": QuietRerun("killed_in_parallel", False, 0.01, 0.02)})
    assert split.deterministic == () and [v.state for v in split.timing] == ["not_a_failure"]


def not_run_result(*_args: object, **kwargs: object) -> sandbox.CallJobResult:
    limits = kwargs.get("limits", sandbox.Limits())
    return sandbox.CallJobResult(status="timeout", outcomes=(sandbox.CallOutcome(0, "not_run"),), load_error=None,
                                 limits=limits, duration_s=0.1)  # type: ignore[arg-type]


def test_a_call_rerun_that_reports_not_run_is_retried_and_never_deterministic(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[float] = []

    def unreached(*args: object, **kwargs: object) -> sandbox.CallJobResult:
        calls.append(kwargs["per_input_timeout_s"][0])  # type: ignore[index]
        return not_run_result(*args, **kwargs)

    monkeypatch.setattr(timing_reruns.sandbox, "call_function", unreached)
    reruns = timing_reruns.rerun_calls_alone([timing_reruns.CallTarget("cut", "def f(x):\n    return x\n", "f",
                                                                       (1,), 1.0)])
    # given ever more wall time, then left unmeasured: never a rerun that decides by value or exception
    assert "cut" not in reruns and calls[-1] == timing_reruns.MAX_RERUN_TIMEOUT_S and len(calls) > 1
    split = split_failures("runs", [FailedRun("cut", "not_run", 1.0)], reruns)
    assert split.deterministic == () and [v.state for v in split.timing] == ["unmeasured"]


def test_a_not_run_call_outcome_that_does_come_back_is_not_deterministic(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(timing_reruns, "measured_alone", lambda run_once, *a, **k: run_once(1.0))
    monkeypatch.setattr(timing_reruns.sandbox, "call_function", not_run_result)
    reruns = timing_reruns.rerun_calls_alone([timing_reruns.CallTarget("cut", "x = 1\n", "f", (1,), 1.0)])
    assert reruns["cut"].deterministic is False


def test_humaneval_plus_rerun_kinds() -> None:
    from audit_lib.benchmarks.humaneval_plus.canonical_timing import _quiet
    from audit_lib.benchmarks.humaneval_plus.runs import InputOutcome
    from audit_lib.benchmarks.humaneval_plus.timing_rerun import InputRerun

    def rerun(kind: str) -> InputRerun:
        return InputRerun("T/0", "plus", 0, "killed", kind, False, 0.0, 0.0, 0.01)

    assert rerun("not_run").verdict == "timing" and rerun("timeout").verdict == "timing"
    assert rerun("exception").verdict == "deterministic"  # killed again alone, or the code's own exception
    key = ("T/0", "plus", 0)
    assert not _quiet(key, InputOutcome("not_run")).deterministic
    assert not _quiet(key, InputOutcome("timeout")).deterministic
    assert _quiet(key, InputOutcome("exception", exc_type="ValueError")).deterministic
    killed = InputOutcome("exception", exc_type="SIGKILL", exc_message="killed by SIGKILL", by_supervisor=True)
    assert killed.verdict_kind == "killed"
    assert InputOutcome("exception", exc_type="SIGKILL").verdict_kind == "exception"


def test_failing_headline_counts_only_confirmed_failures() -> None:
    def verdict(name: str, factor: float, state: str) -> TimingVerdict:
        return TimingVerdict(name, 0, factor, 1.0, factor, state)  # type: ignore[arg-type]

    split = FailureSplit("tasks", ("a", "b"), (verdict("c", 3.0, "confirmed"), verdict("d", 1.1, "borderline"),
                                               verdict("e", 0.1, "not_a_failure"), verdict("f", 0.2, "not_a_failure"),
                                               TimingVerdict("g", -1, 0.0, 1.0, 0.0, "unmeasured")))
    assert split.failing() == 3
    assert split.failing_headline("tasks") == (
        "3 tasks fail: 2 deterministic + 1 timing (confirmed); 1 borderline, within 25% of the limit (flip factor "
        "d 1.10); 2 more timed out only under load; 1 more failed by a clock and were not re-run")
    assert FailureSplit("tasks", ("a",), ()).failing_headline("tasks") == \
        "1 tasks fail: 1 deterministic + 0 timing (confirmed)"


def test_humaneval_plus_a_kill_under_load_is_re_run_alone_and_not_counted_as_failing() -> None:
    from tests.benchmarks.humaneval_plus.test_timing_verdicts import burning_task, ground_truth_of

    from audit_lib.benchmarks.humaneval_plus.checks_original import original_canonical_vs_plus_from
    from audit_lib.benchmarks.humaneval_plus.runs import InputOutcome, SplitRun
    from audit_lib.benchmarks.humaneval_plus.timing_rerun import confirm_timing

    task = burning_task("T/0", 1)
    gt = ground_truth_of(task)
    right = {"T/0": task.prompt + "    return x * x\n"}
    killed = InputOutcome("exception", exc_type="SIGKILL", exc_message="killed by SIGKILL", by_supervisor=True)
    runs = {("T/0", "base"): gt.run("T/0", "base"), ("T/0", "plus"): SplitRun("T/0", "plus", (killed,))}
    result = confirm_timing([task], right, "humaneval", gt, runs, min_time_limit=1.0)
    assert result.deterministic == () and [v.state for v in result.timing] == ["not_a_failure"]
    check = original_canonical_vs_plus_from([task], "humaneval", runs, gt, result, min_time_limit=1.0)
    assert check.observed["tasks_failing_deterministic"] == []
    assert check.summary.startswith("OpenAI's canonical fails HumanEval+ on 0 of 1 tasks (0 tasks fail: 0 "
                                    "deterministic + 0 timing (confirmed); 1 more timed out only under load)")


def test_ground_truth_an_input_not_run_on_the_second_pass_is_not_another_output() -> None:
    import dataclasses

    from tests.benchmarks.humaneval_plus.test_timing_verdicts import burning_task, ground_truth_of

    from audit_lib.benchmarks.humaneval_plus.checks_canonical import ground_truth_from
    from audit_lib.benchmarks.humaneval_plus.runs import InputOutcome

    task = burning_task("T/0", 1)
    gt = ground_truth_of(task)
    second = dict(gt.runs)
    second[("T/0", "plus")] = dataclasses.replace(gt.run("T/0", "plus"), outcomes=(InputOutcome("not_run"),))
    check = ground_truth_from([task], "humaneval", gt, second, input_timeout_s=1.0)
    assert check.status == "pass" and check.observed["nondeterministic_inputs"] == 0
    assert check.observed["cut_by_clock_inputs"] == 1 and check.observed["inputs_failing_deterministic"] == []
    assert "give another output" not in check.summary
    assert [row["state"] for row in check.observed["inputs_failing_timing"]] == ["not_a_failure"]
