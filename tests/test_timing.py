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
    with pytest.raises(ValueError, match=r"^limit_s must be positive, got 0\.0$"):
        flip_factor(1.0, 0.0)
    with pytest.raises(ValueError, match=r"^limit_s must be positive, got -1\.0$"):
        flip_factor(1.0, -1.0)


def test_evalplus_limit_defaults_to_four_times_the_canonical_and_takes_another_factor() -> None:
    assert evalplus_limit_rule(0.5)(1.0) == 4.0 and evalplus_limit_rule(0.5, gt_time_limit_factor=2.0)(1.0) == 2.0
    assert evalplus_limit_rule(5.0)(1.0) == 5.0


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


def verdict(name: str, factor: float, state: str) -> TimingVerdict:
    return TimingVerdict(name, 0, factor, 1.0, factor, state)  # type: ignore[arg-type]


def test_headlines_name_five_borderline_verdicts_and_count_the_rest() -> None:
    borderline = tuple(verdict(f"b{i}", 1.0 + i / 100, "borderline") for i in range(7))
    split = FailureSplit("tasks", (), borderline)
    shown = "b0 1.00, b1 1.01, b2 1.02, b3 1.03, b4 1.04 and 2 more"
    assert split.headline() == (f"0 deterministic + 0 timing (confirmed), 7 borderline (flip factor {shown}), "
                                "0 not failures on a quiet rerun")
    assert split.failing_headline("runs") == (f"0 runs fail: 0 deterministic + 0 timing (confirmed); 7 borderline, "
                                              f"within 25% of the limit (flip factor {shown})")
    five = FailureSplit("tasks", (), borderline[:5])
    assert five.headline().endswith("b4 1.04), 0 not failures on a quiet rerun")
    assert five.failing_headline("runs").endswith("(flip factor b0 1.00, b1 1.01, b2 1.02, b3 1.03, b4 1.04)")
    assert split.headline(borderline_shown=2) == ("0 deterministic + 0 timing (confirmed), 7 borderline (flip factor "
                                                  "b0 1.00, b1 1.01 and 5 more), 0 not failures on a quiet rerun")
    assert split.failing_headline("runs", borderline_shown=1).endswith("(flip factor b0 1.00 and 6 more)")


def test_a_headline_without_borderline_or_unmeasured_verdicts_does_not_mention_them() -> None:
    split = FailureSplit("inputs", ("x",), (verdict("y", 2.0, "confirmed"), verdict("z", 0.1, "not_a_failure")))
    assert split.headline() == "1 deterministic + 1 timing (confirmed), 0 borderline, 1 not failures on a quiet rerun"
    assert split.failing_headline("inputs") == ("2 inputs fail: 1 deterministic + 1 timing (confirmed); "
                                                "1 more timed out only under load")
    assert [split.count(state) for state in ("confirmed", "borderline", "not_a_failure", "unmeasured")] == [1, 0, 1, 0]


def test_evidence_rows_round_to_four_places_and_name_the_id_column() -> None:
    split = FailureSplit("runs", (), (TimingVerdict("r", 3, 1.234567, 0.987654, 1.25, "confirmed"),))
    assert split.rows("run_id") == [{"run_id": "r", "input_index": 3, "cpu_s": 1.2346, "limit_s": 0.9877,
                                     "flip_factor": 1.25, "state": "confirmed"}]
    assert list(split.rows()[0])[0] == "id"


def test_the_worst_input_is_the_first_of_equal_flip_factors_and_factors_are_rounded() -> None:
    inputs = [TimedInput("T", 0, 3.0, 0.0), TimedInput("T", 1, 3.0, 0.0), TimedInput("U", 0, 1.0, 0.0)]
    verdicts = task_verdicts(inputs, fixed_limit_rule(3.0), margin=0.5)
    assert [(v.task_id, v.input_index, v.flip_factor, v.state) for v in verdicts] == [
        ("T", 0, 1.0, "borderline"), ("U", 0, 0.3333, "not_a_failure")]
    [wide] = task_verdicts([TimedInput("V", 0, 1.4, 0.0)], fixed_limit_rule(1.0), margin=0.5)
    assert wide.state == "borderline"  # confirmed with the default margin
    assert timing_state(1.4, 1.0, margin=0.5) == "borderline" and timing_state(1.5, 1.0, margin=0.5) == "confirmed"
    assert timing_state(0.66, 1.0, margin=0.5) == "not_a_failure"


def test_split_failures_keeps_each_ids_worst_rerun_and_the_margin_it_is_given() -> None:
    failures = [FailedRun("a", "timeout", 4.0), FailedRun("a", "timeout", 1.0), FailedRun("a", "late_value", 2.0),
                FailedRun("b", "timeout", 1.0), FailedRun("b", "timeout", 1.0)]
    reruns = {"a": QuietRerun("a", False, 1.3, 1.3), "b": QuietRerun("b", False, 1.3, 1.3)}
    split = split_failures("inputs", failures, reruns)
    assert [(v.task_id, v.limit_s, v.flip_factor, v.state) for v in split.timing] == [
        ("a", 1.0, 1.3, "confirmed"), ("b", 1.0, 1.3, "confirmed")]
    assert [v.state for v in split_failures("inputs", failures, reruns, margin=0.5).timing] == ["borderline"] * 2
    unmeasured = split_failures("inputs", [FailedRun("c", "timeout", 2.0), FailedRun("c", "timeout", 3.0)], {})
    assert unmeasured.timing == (TimingVerdict("c", -1, 0.0, 2.0, 0.0, "unmeasured"),)


def test_the_default_speed_curve_and_the_slowest_machine() -> None:
    rule = fixed_limit_rule(1.0)
    inputs = [TimedInput("half", -1, 0.5, 0.0), TimedInput("tenth", -1, 0.1, 0.0), TimedInput("quick", -1, 0.2, 0.0)]
    assert [(speed, failing) for speed, failing, _ in speed_curve((), inputs, rule)] == [
        (0.25, 1), (0.33, 1), (0.5, 0), (0.67, 0), (0.8, 0), (1.0, 0), (1.25, 0), (1.5, 0), (2.0, 0), (3.0, 0),
        (4.0, 0)]
    assert failing_slow_inputs(inputs, rule) == [inputs[0]]
    assert failing_slow_inputs(inputs, rule, 0.15) == [inputs[0], inputs[2]]
    at_the_limit = TimedInput("at", -1, 0.25, 0.0)  # exactly 1 s on the slowest machine: not over it
    assert failing_slow_inputs([at_the_limit], rule) == []
    # a limit that scales with the canonical scales on the slow machine too: 4 s against 4 x 2 s, not over
    scaled = TimedInput("scaled", 0, 1.0, 0.5)
    assert failing_slow_inputs([scaled], evalplus_limit_rule(0.1)) == []


def test_a_supervisor_kill_needs_a_signal_name() -> None:
    from audit_lib.timing import supervisor_kill

    assert supervisor_kill("exception", "SIGTERM", True)
    assert not supervisor_kill("exception", None, True) and not supervisor_kill("exception", "", True)


def test_split_findings_lists_every_machine_dependent_key() -> None:
    split = FailureSplit("runs", ("bad",), (verdict("s", 2.0, "confirmed"), verdict("b", 1.0, "borderline"),
                                            verdict("n", 0.1, "not_a_failure")))
    observed, meta = split_findings(split, [(1.0, 2, 1)], deterministic_key="det", timing_key="tim",
                                    timing_rule="fixed 5 s")
    assert observed == {"det": ["bad"], "tim": split.rows(), "timing_confirmed": 1, "timing_borderline": 1,
                        "timing_not_a_failure": 1, "speed_curve": [[1.0, 2, 1]]}
    assert meta == {"failure_split": split.summary(deterministic_key="det", timing_key="tim"),
                    "timing_rule": "fixed 5 s",
                    "machine_dependent": ["tim", "timing_confirmed", "timing_borderline", "timing_not_a_failure",
                                          "speed_curve"]}


def test_fixed_limit_findings_judges_on_the_quiet_rerun_where_there_is_one() -> None:
    """A run timed out in parallel (3 s) but took 0.5 s alone: the curve uses the rerun's time, not the pass's."""
    from audit_lib.timing import fixed_limit_findings

    failures = [FailedRun("loaded", "timeout", 1.0), FailedRun("wrong", "fail", 1.0), FailedRun("slow", "timeout", 1.0)]
    reruns = {"loaded": QuietRerun("loaded", False, 0.5, 0.5), "slow": QuietRerun("slow", False, 1.5, 1.6)}
    measured = [("loaded", 3.0), ("wrong", 0.1), ("slow", 3.0), ("fine", 0.3)]
    observed, meta, split = fixed_limit_findings("runs", failures, reruns, measured, 1.0, deterministic_key="det",
                                                 timing_key="tim", timing_rule="fixed 1 s")
    assert split == split_failures("runs", failures, reruns)
    assert observed["det"] == ["wrong"] and observed["timing_confirmed"] == 1
    assert observed["timing_not_a_failure"] == 1 and meta["timing_rule"] == "fixed 1 s"
    curve = {speed: (failing, timing_only) for speed, failing, timing_only in observed["speed_curve"]}
    # 1x: wrong + slow (1.5 s); loaded is 0.5 s alone. 0.25x: loaded 2 s and fine 1.2 s fail too.
    assert curve[1.0] == (2, 1) and curve[0.5] == (2, 1) and curve[0.25] == (4, 3) and curve[2.0] == (1, 0)
    assert meta["failure_split"]["deterministic_key"] == "det" and meta["failure_split"]["timing_key"] == "tim"
