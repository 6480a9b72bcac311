"""The canonical timing checks' bookkeeping, on hand-made ground-truth runs: no sandbox, no clock."""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

import pytest

from audit_lib import timing
from audit_lib.benchmarks.humaneval_plus import canonical_timing
from audit_lib.benchmarks.humaneval_plus.runs import InputOutcome


@dataclass(frozen=True)
class FakeGroundTruth:
    """`run(task_id, split).outcomes`, from a dict; splits it does not name have no inputs."""

    outcomes: dict

    def run(self, task_id: str, split: str) -> SimpleNamespace:
        return SimpleNamespace(outcomes=self.outcomes.get((task_id, split), []))


def test_the_canonicals_cpu_time_falls_back_to_wall_time_only_when_none_was_kept() -> None:
    assert canonical_timing.canonical_cpu_s(InputOutcome("value", duration_s=2.0, cpu_s=0.5)) == 0.5
    assert canonical_timing.canonical_cpu_s(InputOutcome("value", duration_s=2.0, cpu_s=0.0)) == 2.0


def test_a_quiet_rerun_is_named_by_its_input_and_keeps_both_times() -> None:
    quiet = canonical_timing._quiet(("HumanEval/1", "plus", 3), InputOutcome("value", duration_s=0.7, cpu_s=0.4))
    assert quiet == timing.QuietRerun("HumanEval/1 plus[3]", False, 0.4, 0.7)
    assert canonical_timing._quiet(("T", "base", 0), InputOutcome("exception")).deterministic


def test_ground_truth_files_a_program_that_does_not_load_and_a_changed_value_as_deterministic() -> None:
    problems = [{"task_id": "T/1", "split": "plus", "input_index": None, "kind": "load_error"},
                {"task_id": "T/2", "split": "base", "input_index": 2, "kind": "exception"}]
    gt = FakeGroundTruth({("T/3", "base"): [InputOutcome("value"), InputOutcome("value")]})
    second = {("T/3", "base"): SimpleNamespace(outcomes=[InputOutcome("value"), InputOutcome("value")])}
    differing = [{"task_id": "T/3", "split": "base", "input_index": 0, "accepted_by_evalplus_rules": True},
                 {"task_id": "T/3", "split": "base", "input_index": 1, "accepted_by_evalplus_rules": False}]
    split, _ = canonical_timing.ground_truth_split([], None, problems, differing, second, gt,  # type: ignore[arg-type]
                                                   limit_s=30.0)
    assert split.deterministic == ("T/1 plus", "T/2 base[2]", "T/3 base[1]") and split.timing == ()


def test_the_ground_truth_speed_curve_counts_inputs_over_the_limit_on_the_slowest_machine() -> None:
    """8 s of CPU under a 30 s limit: over it at 0.25x (32 s), not at 0.33x (24 s) or faster."""
    gt = FakeGroundTruth({("T/1", "base"): [InputOutcome("value", cpu_s=8.0), InputOutcome("value", cpu_s=0.1)],
                          ("T/1", "plus"): [InputOutcome("exception")]})
    tasks = [SimpleNamespace(task_id="T/1")]
    _, curve = canonical_timing.ground_truth_split(tasks, None, [], [], {}, gt, limit_s=30.0)  # type: ignore[arg-type]
    by_speed = {speed: (failing, timing_only) for speed, failing, timing_only in curve}
    assert by_speed[0.25] == (1, 1) and by_speed[0.33] == (0, 0) and by_speed[1.0] == (0, 0)


def test_each_input_is_rerun_alone_with_its_program_arguments_and_digest_rule(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The sandbox call stands in: a timeout with too little CPU is retried longer, one that never decides is left
    unmeasured."""
    calls: list[tuple] = []
    answers = [InputOutcome("value", cpu_s=0.2), InputOutcome("timeout", cpu_s=0.1), InputOutcome("value", cpu_s=1.5)]

    def call_alone(program: str, args: tuple, timeout_s: float, digest: object) -> InputOutcome:
        calls.append((program, args, timeout_s, digest))
        return answers.pop(0) if answers else InputOutcome("timeout", cpu_s=0.0)

    monkeypatch.setattr(canonical_timing, "call_alone", call_alone)
    monkeypatch.setattr(canonical_timing, "ground_truth_program", lambda task, dataset: f"{task.task_id} @ {dataset}")
    monkeypatch.setattr(canonical_timing, "inputs_of", lambda task, split: {"base": [("b0",)],
                                                                            "plus": [("p0",), ("p1",)]}[split])
    monkeypatch.setattr(canonical_timing, "digests_allowed_for", lambda dataset, entry: (dataset, entry))
    tasks = [SimpleNamespace(task_id="T/1", entry_point="f"), SimpleNamespace(task_id="T/2", entry_point="g")]
    keys = [("T/1", "base", 0), ("T/2", "plus", 1), ("T/1", "plus", 0)]
    reruns = canonical_timing.rerun_canonical_alone(tasks, "mbpp", keys,  # type: ignore[arg-type]
                                                    {keys[0]: 1.0, keys[1]: 1.0, keys[2]: 40.0})
    assert calls[:3] == [("T/1 @ mbpp", ("b0",), 2.0, ("mbpp", "f")), ("T/2 @ mbpp", ("p1",), 2.0, ("mbpp", "g")),
                         ("T/2 @ mbpp", ("p1",), 4.0, ("mbpp", "g"))]
    assert reruns == {keys[0]: InputOutcome("value", cpu_s=0.2), keys[1]: InputOutcome("value", cpu_s=1.5)}
    assert [call[2] for call in calls[3:]] == [60.0]  # the third never decides within the cap: left unmeasured


def test_a_ground_truth_timeout_is_rerun_on_the_dataset_and_a_changed_slow_value_counted_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list = []

    def rerun(tasks: object, dataset: object, keys: dict, limits: dict) -> dict:
        seen.append((dataset, dict(keys), dict(limits)))
        return {key: InputOutcome("value", cpu_s=0.5, duration_s=0.6) for key in keys}

    monkeypatch.setattr(canonical_timing, "rerun_canonical_alone", rerun)
    problems = [{"task_id": "T/1", "split": "plus", "input_index": 0, "kind": "timeout"}]
    slow_changed = InputOutcome("value", cpu_s=8.0)  # over 30 s at 0.25x, and deterministic: counted once
    gt = FakeGroundTruth({("T/1", "base"): [slow_changed]})
    second = {("T/1", "base"): SimpleNamespace(outcomes=[InputOutcome("value")])}
    differing = [{"task_id": "T/1", "split": "base", "input_index": 0, "accepted_by_evalplus_rules": False}]
    tasks = [SimpleNamespace(task_id="T/1")]
    split, curve = canonical_timing.ground_truth_split(tasks, "humaneval", problems, differing, second,  # type: ignore[arg-type]
                                                       gt, limit_s=30.0)
    assert seen == [("humaneval", {("T/1", "plus", 0): 30.0}, {("T/1", "plus", 0): 30.0})]
    assert split.deterministic == ("T/1 base[0]",)
    assert [(v.task_id, v.state) for v in split.timing] == [("T/1 plus[0]", "not_a_failure")]
    assert {speed: (failing, timing_only) for speed, failing, timing_only in curve}[0.25] == (1, 0)


def test_limit_sensitivity_reruns_exactly_the_inputs_within_the_band_and_keeps_their_quiet_time(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Threshold 1 s: the band starts at 0.8 s, by CPU or by wall time; a quiet rerun's CPU time replaces the pass's."""
    seen: list = []
    quiet = {("T/1", "base", 0): InputOutcome("value", cpu_s=0.1, duration_s=0.1),   # was loaded: not a failure
             ("T/1", "base", 1): InputOutcome("exception", cpu_s=0.2),                 # hid a deterministic failure
             ("T/1", "plus", 0): InputOutcome("timeout", cpu_s=2.0, duration_s=2.5)}   # over, confirmed

    def rerun(tasks: object, dataset: object, keys: list, limits: dict) -> dict:
        seen.append((dataset, list(keys), dict(limits)))
        return {key: quiet[key] for key in keys if key in quiet}

    monkeypatch.setattr(canonical_timing, "rerun_canonical_alone", rerun)
    gt = FakeGroundTruth({
        ("T/1", "base"): [InputOutcome("value", cpu_s=0.8, duration_s=0.1),    # at the band's edge by CPU
                          InputOutcome("value", cpu_s=0.1, duration_s=0.8),    # at the edge by wall time
                          InputOutcome("value", cpu_s=0.79, duration_s=0.79),  # just below it
                          InputOutcome("exception", cpu_s=5.0)],               # no value: not this check's
        ("T/1", "plus"): [InputOutcome("value", cpu_s=0.9, duration_s=0.9),
                          InputOutcome("value", cpu_s=0.3, duration_s=0.3)]})
    split, slow, rerun_count = canonical_timing.limit_sensitivity_split(
        [SimpleNamespace(task_id="T/1")], "humaneval", gt, 1.0)  # type: ignore[arg-type]
    targets = [("T/1", "base", 0), ("T/1", "base", 1), ("T/1", "plus", 0)]
    assert seen == [("humaneval", targets, {key: 1.0 for key in targets})] and rerun_count == 3
    assert split.unit == "inputs" and split.deterministic == ("T/1 base[1]",)
    assert [(v.task_id, v.state) for v in split.timing] == [("T/1 base[0]", "not_a_failure"),
                                                            ("T/1 plus[0]", "confirmed")]
    # on a 0.25x machine (limit 1 s): 0.79 s -> 3.2 s and the quiet 2 s -> 8 s are over, the quiet 0.1 s is not
    # (the pass's 0.8 s would be), 0.3 s -> 1.2 s is over too; the exception's 0.2 s is not counted as a time
    assert slow == [timing.TimedInput("T/1 base[2]", -1, 0.79, 0.0), timing.TimedInput("T/1 plus[0]", -1, 2.0, 0.0),
                    timing.TimedInput("T/1 plus[1]", -1, 0.3, 0.0)]
