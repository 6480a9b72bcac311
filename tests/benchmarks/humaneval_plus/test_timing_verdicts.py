"""Timeouts re-run alone on hand-made tasks: deterministic vs timing, flip factors, contention that a rerun clears."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from audit_lib import timing
from audit_lib.benchmarks.humaneval_plus.checks_canonical import ground_truth_from, time_limit_sensitivity_from
from audit_lib.benchmarks.humaneval_plus.data import PlusTask
from audit_lib.benchmarks.humaneval_plus.groundtruth import GroundTruth, compute_ground_truth
from audit_lib.benchmarks.humaneval_plus.checks_original import original_canonical_vs_plus_from
from audit_lib.benchmarks.humaneval_plus.replay import run_candidate
from audit_lib.benchmarks.humaneval_plus.runs import InputOutcome, SplitRun
from audit_lib.benchmarks.humaneval_plus.timing_rerun import Classification, InputRerun, classify, confirm_timing
from audit_lib.benchmarks.humaneval_plus.variants import InputEncodings, compare_variant
from audit_lib.benchmarks.humaneval_plus.checks_variants import kept_flat_indices

BURN = "    s = 0\n    for i in range({n}):\n        s += i\n"
# Burns `{s}` seconds of its own CPU time: the same loop's CPU time varies by about a third between runs on a shared
# machine (measured here: 0.128-0.204 s for 5M iterations), more than the borderline band a test may need to hit.
BURN_CPU = "    import time\n    start = time.process_time()\n    while time.process_time() - start < {s}:\n" \
           "        pass\n"


def burning_task(task_id: str, iterations: int) -> PlusTask:
    prompt = "def square(x):\n    \"\"\"doc\"\"\"\n"
    return PlusTask(task_id, prompt, "square", BURN.format(n=iterations) + "    return x * x\n", "",
                    ((2,),), ((3,),), 0.0, None, 1)


def ground_truth_of(*tasks: PlusTask) -> GroundTruth:
    return GroundTruth("humaneval", "test", compute_ground_truth(tasks, "humaneval"), Path("unused.json.gz"), 0,
                       len(tasks))


def rerun(task_id: str, index: int, cpu_s: float, reference_cpu_s: float, *, passed: bool = True,
          kind: str = "value") -> InputRerun:
    return InputRerun(task_id, "plus", index, "timeout", kind, passed, cpu_s, cpu_s, reference_cpu_s)


def test_flip_factor_and_state_on_fixed_timings() -> None:
    task = burning_task("T/9", 1)
    tasks = [dataclasses.replace(task, task_id=f"T/{n}", plus_input=((3,), (4,))) for n in range(5)]
    failing = {("T/0", "plus"): [(0, "timeout"), (1, "timeout")], ("T/1", "plus"): [(0, "timeout")],
               ("T/2", "plus"): [(0, "timeout")], ("T/3", "plus"): [(0, "timeout")],
               ("T/4", "plus"): [(0, "wrong_value"), (1, "timeout")]}
    reruns = [rerun("T/0", 0, 0.5, 0.1), rerun("T/0", 1, 3.0, 0.5),  # worst: 3.0 / max(1, 2.0) = 1.5
              rerun("T/1", 0, 1.0, 0.01),  # 1.0 / 1.0: at the limit
              rerun("T/2", 0, 0.25, 0.01),  # a quarter of its limit
              rerun("T/3", 0, 0.3, 0.01, passed=False, kind="exception"),  # the timeout hid an exception
              rerun("T/4", 1, 9.0, 0.01)]
    result = classify(tasks, failing, reruns, timing.evalplus_limit_rule(1.0))
    assert result.deterministic == ("T/3", "T/4")
    rows = {row["task_id"]: row for row in result.rows()}
    assert set(rows) == {"T/0", "T/1", "T/2"}
    assert (rows["T/0"]["input_index"], rows["T/0"]["limit_s"], rows["T/0"]["flip_factor"]) == (2, 2.0, 1.5)
    assert [rows[t]["state"] for t in ("T/0", "T/1", "T/2")] == ["confirmed", "borderline", "not_a_failure"]
    assert (result.count("confirmed"), result.count("borderline"), result.count("not_a_failure")) == (1, 1, 1)
    curve = dict((speed, (failing_n, timing_n)) for speed, failing_n, timing_n in
                 result.speed_curve(timing.evalplus_limit_rule(1.0)))
    # at 0.5x: T/0 needs 6 s against 4 s, T/1 2 s against the 1 s floor, T/2 0.5 s: 2 timing-only tasks
    assert curve[0.5] == (4, 2) and curve[1.0] == (3, 1) and curve[4.0] == (2, 0)


def test_wrong_and_slow_sample_is_deterministic_once_rerun_alone() -> None:
    task = burning_task("T/0", 1)
    gt = ground_truth_of(task)
    slow_and_wrong = {"T/0": task.prompt + BURN.format(n=12_000_000) + "    return x * x + 1\n"}
    runs = run_candidate([task], slow_and_wrong, "humaneval", gt, min_time_limit=0.1)
    assert {o.kind for run in runs.values() for o in run.outcomes} == {"timeout"}
    result = confirm_timing([task], slow_and_wrong, "humaneval", gt, runs, min_time_limit=0.1)
    assert result.deterministic == ("T/0",) and result.timing == ()
    assert {r.kind for r in result.reruns} == {"value"} and not any(r.passed for r in result.reruns)


def test_canonical_near_the_limit_is_borderline() -> None:
    prompt = "def square(x):\n    \"\"\"doc\"\"\"\n"
    canonical = PlusTask("T/0", prompt, "square", BURN_CPU.format(s=0.15) + "    return x * x\n", "", ((2,),), ((3,),),
                         0.0, None, 1)
    gt = ground_truth_of(canonical)
    # four times the canonical's CPU time: EvalPlus's limit is 4 x its time, so the flip factor is about 1
    solution = {"T/0": prompt + BURN_CPU.format(s=0.6) + "    return x * x\n"}
    runs = {key: SplitRun(key[0], key[1], (InputOutcome("timeout"),)) for key in gt.runs}
    result = confirm_timing([canonical], solution, "humaneval", gt, runs, min_time_limit=0.001)
    (verdict,) = result.timing
    worst = next(r for r in result.reruns if (r.split == "base") == (verdict.input_index == 0))
    assert verdict.limit_s == pytest.approx(4 * worst.reference_cpu_s) and worst.reference_cpu_s > 0.05
    assert 0.8 <= verdict.flip_factor < 1.25 and verdict.state == "borderline"
    check = original_canonical_vs_plus_from([canonical], "humaneval", runs, gt, result, min_time_limit=0.001)
    assert check.observed["tasks_failing_deterministic"] == [] and check.observed["timing_borderline"] == 1
    assert "0 tasks fail: 0 deterministic + 0 timing (confirmed); 1 borderline" in check.summary
    assert "tasks_failing_timing" in check.meta["machine_dependent"]


def test_timeout_under_contention_that_a_quiet_rerun_clears_is_not_a_failure() -> None:
    task = burning_task("T/0", 1)
    gt = ground_truth_of(task)
    right = {"T/0": task.prompt + "    return x * x\n"}
    runs = run_candidate([task], right, "humaneval", gt, min_time_limit=1.0)
    assert all(o.kind == "value" for run in runs.values() for o in run.outcomes)
    # what a loaded machine did to the parallel pass: the plus input ran out of wall time
    runs[("T/0", "plus")] = SplitRun("T/0", "plus", (InputOutcome("timeout", duration_s=1.0),))
    result = confirm_timing([task], right, "humaneval", gt, runs, min_time_limit=1.0)
    assert result.deterministic == ()
    assert [(v.task_id, v.input_index, v.state) for v in result.timing] == [("T/0", 1, "not_a_failure")]
    check = original_canonical_vs_plus_from([task], "humaneval", runs, gt, result, min_time_limit=1.0)
    assert check.observed["tasks_disagreeing"] == 1 and check.observed["timing_not_a_failure"] == 1
    assert check.observed["tasks_failing_timing"][0]["flip_factor"] < 0.2


def test_speed_figure_draws_failing_and_deterministic_lines() -> None:
    from audit_lib.timing.figure import speed_figure

    assert speed_figure({"empty": []}, title="t") is None
    fig = speed_figure({"OpenAI's canonical": [[0.5, 9, 2], [1.0, 8, 1], [2.0, 7, 0]]}, title="t")
    failing, deterministic = fig.axes[0].get_lines()[:2]
    assert list(failing.get_ydata()) == [9, 8, 7] and list(deterministic.get_ydata()) == [7, 7, 7]


def test_ground_truth_splits_a_canonical_that_raises_from_one_that_never_ends() -> None:
    body = "    if x == 1:\n        while True:\n            x += 0\n    if x == 2:\n        raise ValueError(x)\n" \
           "    return x\n"
    task = PlusTask("T/8", "def f(x):\n    \"\"\"doc\"\"\"\n", "f", body, "", ((0,),), ((1,), (2,)), 0.0, None, 1)
    runs = compute_ground_truth([task], "humaneval", input_timeout_s=0.3)
    gt = GroundTruth("humaneval", "t", runs, Path("x"), 0, 1)
    check = ground_truth_from([task], "humaneval", gt, runs, input_timeout_s=0.3)
    assert check.observed["inputs_failing_deterministic"] == ["T/8 plus[1]"]
    (row,) = check.observed["inputs_failing_timing"]
    assert row["id"] == "T/8 plus[0]" and row["state"] == "confirmed" and row["limit_s"] == 0.3
    assert check.meta["failure_split"]["unit"] == "inputs" and check.meta["failure_split"]["timing_confirmed"] == 1
    assert "1 deterministic + 1 timing (confirmed)" in check.summary


def test_time_limit_sensitivity_is_judged_on_cpu_time_not_on_a_loaded_wall_clock() -> None:
    fast = burning_task("T/0", 1)
    gt = ground_truth_of(fast)
    # the ground-truth pass on a loaded machine: every input took 0.6 s of wall time, over the 0.25 s threshold
    loaded = {key: dataclasses.replace(run, outcomes=tuple(dataclasses.replace(o, duration_s=0.6)
                                                           for o in run.outcomes)) for key, run in gt.runs.items()}
    check = time_limit_sensitivity_from([fast], dataclasses.replace(gt, runs=loaded), min_time_limit=1.0)
    assert check.status == "pass" and check.observed["inputs_over_floor"] == 0
    assert check.observed["inputs_rerun"] == 2 and check.observed["timing_not_a_failure"] == 2
    assert check.meta["failure_split"]["timing_not_failing"] == 2 and check.meta["failure_split"]["deterministic"] == 0
    assert {row["state"] for row in check.details} == {"not_a_failure"}


def test_time_limit_sensitivity_confirms_an_input_over_the_threshold_alone() -> None:
    slow = burning_task("T/0", 3_000_000)  # tens of ms of CPU, against a 1 ms floor / 4
    check = time_limit_sensitivity_from([slow], ground_truth_of(slow), min_time_limit=0.001)
    assert check.status == "quirk" and check.observed["inputs_over_floor"] == 2
    assert check.observed["inputs_failing_deterministic"] == [] and check.observed["timing_confirmed"] == 2
    assert all(point[1] == 2 for point in check.observed["speed_curve"])  # far over: on every machine


def test_a_variant_speed_curve_counts_only_the_inputs_it_keeps() -> None:
    task = dataclasses.replace(burning_task("T/0", 1), plus_input=((3,), (4,), (5,)))
    variant = dataclasses.replace(task, plus_input=((3,),))
    comparisons = compare_variant([task], [variant])
    kept, changed = kept_flat_indices([task], comparisons, [variant], InputEncodings())
    assert kept == {"T/0": frozenset({0, 1})} and changed == []
    # full dataset: a wrong value on plus[2] (flat 3), a confirmed timeout on plus[0] (flat 1)
    result = Classification(("T/0",), (), (timing.TimedInput("T/0", 1, 3.0, 0.01),), (),
                            deterministic_inputs=(("T/0", 3),))
    rule = timing.evalplus_limit_rule(1.0)
    full = {speed: failing for speed, failing, _ in result.speed_curve(rule)}
    reduced = {speed: (failing, timing_only) for speed, failing, timing_only in result.speed_curve(rule, kept)}
    assert full[4.0] == 1  # the wrong value fails it on any machine
    assert reduced[1.0] == (1, 1) and reduced[4.0] == (0, 0)  # the variant keeps only the slow input


def test_original_tests_a_loaded_timeout_is_not_the_canonicals_failure() -> None:
    from audit_lib.benchmarks.humaneval_plus.checks_original import original_tests_vs_canonical_from
    from audit_lib.benchmarks.humaneval_plus.replay import run_original_tests

    program = "def square(x):\n    return x * x\n"
    jobs = [("evalplus::T/0", program, "assert square(3) == 9\n", "square"),
            ("evalplus::T/1", program, "assert square(3) == 10\n", "square")]
    results = run_original_tests(jobs)
    assert results["evalplus::T/0"].snippets[0].status == "pass"
    assert results["evalplus::T/1"].snippets[0].status == "fail"
    task = burning_task("T/0", 1)
    check = original_tests_vs_canonical_from([task], results, test_name="toy", jobs=jobs)
    assert check.status == "defect" and check.observed["runs_failing_deterministic"] == ["evalplus::T/1"]
    # the parallel pass on a loaded machine: T/0's test ran out of time; alone it passes at once
    first = dataclasses.replace(results["evalplus::T/0"].snippets[0], status="timeout")
    loaded = {"evalplus::T/0": dataclasses.replace(results["evalplus::T/0"], snippets=(first,))}
    check = original_tests_vs_canonical_from([task], loaded, test_name="toy", jobs=jobs)
    assert check.status == "pass" and check.observed["runs_failing_deterministic"] == []
    assert [row["state"] for row in check.observed["runs_failing_timing"]] == ["not_a_failure"]
    assert check.meta["failure_split"]["timing_not_failing"] == 1 and "0 deterministic" in check.summary
