"""The canonical solutions' own clock-dependent verdicts, re-run alone on CPU time (HumanEval+ and MBPP+ alike).

Two checks judge the canonical against a clock. `time_limit_sensitivity` lists inputs whose EvalPlus limit is set by
4 x the canonical's time instead of the 1 s floor: measured in wall time during a parallel pass that list moved with
the machine's load (MBPP+: 82 to 127 inputs). Here it is measured in CPU time, and every input near or over the
threshold is re-run alone: its flip factor is `cpu_s / (floor / 4)`. `ground_truth` reports inputs without an
expected output; those that hit the sandbox's 30 s limit are re-run alone the same way, against that limit.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from audit_lib import timing
from audit_lib.benchmarks.humaneval_plus.data import Dataset, PlusTask
from audit_lib.benchmarks.humaneval_plus.groundtruth import (
    GROUND_TRUTH_INPUT_TIMEOUT_S,
    GroundTruth,
    digests_allowed_for,
)
from audit_lib.benchmarks.humaneval_plus.programs import ground_truth_program
from audit_lib.benchmarks.humaneval_plus.runs import SPLITS, InputOutcome, Split, inputs_of
from audit_lib.benchmarks.humaneval_plus.timing_rerun import CLOCK_KINDS, RERUN_KINDS, call_alone
from audit_lib.timing.reruns import measured_alone

InputKey = tuple[str, Split, int]


def input_id(task_id: str, split: Split, index: int) -> str:
    """`HumanEval/130 plus[12]`: one input of one task, the id of an input-level timing row."""
    return f"{task_id} {split}[{index}]"


def canonical_cpu_s(outcome: InputOutcome) -> float:
    """The canonical's CPU time on an input; caches written before CPU times were kept have only wall time."""
    return outcome.cpu_s if outcome.cpu_s > 0 else outcome.duration_s


def rerun_canonical_alone(tasks: Sequence[PlusTask], dataset: Dataset, keys: Iterable[InputKey],
                          limit_s: Mapping[InputKey, float]) -> dict[InputKey, InputOutcome]:
    """Each input's canonical in its own sandbox call, one at a time (see `timing.reruns.measured_alone`)."""
    by_id = {task.task_id: task for task in tasks}
    reruns: dict[InputKey, InputOutcome] = {}
    for key in keys:
        task_id, split, index = key
        task = by_id[task_id]
        program, args = ground_truth_program(task, dataset), inputs_of(task, split)[index]
        digest = digests_allowed_for(dataset, task.entry_point)
        outcome = measured_alone(lambda timeout_s: call_alone(program, args, timeout_s, digest),  # noqa: B023
                                 lambda o: o.kind in CLOCK_KINDS, lambda o: o.cpu_s, limit_s[key])
        if outcome is not None:  # None: cut by the wall clock before its CPU time could decide (left unmeasured)
            reruns[key] = outcome
    return reruns


def _quiet(key: InputKey, outcome: InputOutcome) -> timing.QuietRerun:
    """Whether a rerun leaves the verdict to the clock.

    A value, another timeout or an unreached input does; an exception (MemoryError and a kill repeated alone included)
    does not."""
    return timing.QuietRerun(input_id(*key), outcome.kind not in ("value", *CLOCK_KINDS), outcome.cpu_s,
                             outcome.duration_s)


# ---- time_limit_sensitivity ----------------------------------------------------------------------------------

def limit_sensitivity_split(tasks: Sequence[PlusTask], dataset: Dataset, gt: GroundTruth, threshold_s: float
                            ) -> tuple[timing.FailureSplit, list[timing.TimedInput], int]:
    """Inputs whose time limit the canonical's time sets, judged on CPU time alone.

    Every input within the borderline band of `threshold_s` by CPU or wall time in the ground-truth run is re-run alone
    and judged on that CPU time. Also returns every input slow enough to matter on a 0.25x machine (for the speed curve)
    and how many inputs were re-run."""
    near = threshold_s / (1 + timing.BORDERLINE_MARGIN)
    measured: dict[InputKey, float] = {}
    targets: list[InputKey] = []
    for task in tasks:
        for split in SPLITS:
            for index, outcome in enumerate(gt.run(task.task_id, split).outcomes):
                if outcome.kind == "value":
                    key = (task.task_id, split, index)
                    measured[key] = canonical_cpu_s(outcome)
                    if measured[key] >= near or outcome.duration_s >= near:  # wall time: the old, loaded reading
                        targets.append(key)
    reruns = rerun_canonical_alone(tasks, dataset, targets, {key: threshold_s for key in targets})
    failures = [timing.FailedRun(input_id(*key), "timeout", threshold_s) for key in targets]
    quiet = {input_id(*key): _quiet(key, outcome) for key, outcome in reruns.items()}
    for key, outcome in reruns.items():  # the quiet CPU time replaces the parallel pass's (a lower bound if cut)
        if outcome.kind in ("value", *CLOCK_KINDS):
            measured[key] = outcome.cpu_s
    rule = timing.fixed_limit_rule(threshold_s)
    slow = timing.failing_slow_inputs((timing.TimedInput(input_id(*key), -1, cpu_s, 0.0)
                                       for key, cpu_s in measured.items()), rule)
    return timing.split_failures("inputs", failures, quiet), slow, len(targets)


# ---- ground_truth --------------------------------------------------------------------------------------------

def ground_truth_split(tasks: Sequence[PlusTask], dataset: Dataset, problems: Sequence[Mapping[str, Any]],
                       differing: Sequence[Mapping[str, Any]], second: Mapping[tuple[str, Split], Any],
                       gt: GroundTruth, *, limit_s: float = GROUND_TRUTH_INPUT_TIMEOUT_S
                       ) -> tuple[timing.FailureSplit, list[list[float]]]:
    """The ground truth's failing inputs by cause, and their speed curve.

    An exception, a value the sandbox cannot send or a changed value is deterministic; a timeout (on either run) is
    re-run alone against the sandbox's per-input limit. The speed curve counts inputs over that limit on machines
    0.25x-4x as fast, from the canonical's CPU times."""
    failures: list[timing.FailedRun] = []
    clock_keys: dict[InputKey, float] = {}
    for row in problems:
        if row["input_index"] is None:  # the program did not load: every input of the split fails alike
            failures.append(timing.FailedRun(f"{row['task_id']} {row['split']}", "load_error", limit_s))
            continue
        key = (row["task_id"], row["split"], row["input_index"])
        failures.append(timing.FailedRun(input_id(*key), row["kind"], limit_s))
        if row["kind"] in RERUN_KINDS:
            clock_keys[key] = limit_s
    for row in differing:
        if row["accepted_by_evalplus_rules"]:
            continue
        key = (row["task_id"], row["split"], row["input_index"])
        kinds = {gt.run(key[0], key[1]).outcomes[key[2]].verdict_kind,
                 second[(key[0], key[1])].outcomes[key[2]].verdict_kind}
        clock = next((kind for kind in sorted(kinds) if kind in RERUN_KINDS), None)
        failures.append(timing.FailedRun(input_id(*key), clock or "changed_value", limit_s))
        if clock is not None:
            clock_keys[key] = limit_s
    reruns = rerun_canonical_alone(tasks, dataset, clock_keys, clock_keys)
    split = timing.split_failures("inputs", failures, {input_id(*key): _quiet(key, o) for key, o in reruns.items()})
    slowest_factor = timing.SPEED_FACTORS[0]
    measured = [(input_id(task.task_id, split_name, index), canonical_cpu_s(outcome))
                for task in tasks for split_name in SPLITS
                for index, outcome in enumerate(gt.run(task.task_id, split_name).outcomes)
                if outcome.kind == "value" and canonical_cpu_s(outcome) / slowest_factor > limit_s]
    measured += [(input_id(*key), outcome.cpu_s) for key, outcome in reruns.items()]
    return split, timing.fixed_limit_speed_curve(split, measured, limit_s)


__all__ = ["canonical_cpu_s", "ground_truth_split", "input_id", "limit_sensitivity_split", "rerun_canonical_alone"]
