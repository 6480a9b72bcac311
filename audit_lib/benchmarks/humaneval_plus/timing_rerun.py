"""Timeouts of the parallel pass, re-run alone: deterministic (the timeout hid a wrong value) or timing, on CPU time.

After the parallel pass, every input a sample failed by `timeout` (or never reached, `not_run`, because the
sample's whole budget ran out) is run again on its own, one sandbox call at a time, under a generous limit, and
so is the benchmark's canonical on the same input: both CPU times come from the sandbox's supervisor, so the
EvalPlus limit `max(min_time_limit, 4 x canonical cpu_s)` and the sample's cost are measured the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from audit_lib import sandbox, timing
from audit_lib.benchmarks.humaneval_plus.compare import ValueDigest, evalplus_judge
from audit_lib.benchmarks.humaneval_plus.data import Dataset, PlusTask, task_sort_key
from audit_lib.benchmarks.humaneval_plus.groundtruth import DIGEST_ABOVE_BYTES, GroundTruth
from audit_lib.benchmarks.humaneval_plus.programs import CallableProgram, candidate_program, ground_truth_program
from audit_lib.benchmarks.humaneval_plus.replay import score_split
from audit_lib.benchmarks.humaneval_plus.runs import (
    EVALPLUS_MEMORY_MB,
    SPLITS,
    InputOutcome,
    Split,
    SplitRun,
    inputs_of,
)
from audit_lib.check_cost import note_sandbox_job
from audit_lib.timing.reruns import doubled, measured_alone
from audit_lib.work_progress import tracked

# Failures a time budget (or a kill by the supervisor, as under load) caused, so a quiet rerun alone can judge them.
RERUN_KINDS = frozenset({"timeout", "not_run", "killed"})
# A rerun outcome that leaves the verdict to the clock: out of time again, or never reached (not another output).
CLOCK_KINDS = frozenset({"timeout", "not_run"})
EVALPLUS_RERUN_MIN_TIMEOUT_S = 10.0
# Wider than `timing.reruns`' generic 1.5x: the speed curve asks which inputs pass on a machine up to 4x as fast.
EVALPLUS_RERUN_LIMIT_FACTOR = 4.0
RerunVerdict = Literal["deterministic", "timing"]


def _rerun_wait(limit_s: float) -> float:
    """How long a quiet rerun of an input with EvalPlus limit `limit_s` may take."""
    return max(EVALPLUS_RERUN_MIN_TIMEOUT_S, EVALPLUS_RERUN_LIMIT_FACTOR * limit_s)


@dataclass(frozen=True)
class InputRerun:
    """One input re-run alone: the sample's outcome and CPU time, and the canonical's CPU time on it."""

    task_id: str
    split: Split
    index: int
    first_kind: str  # the parallel pass's verdict kind (timeout | not_run | killed)
    kind: str  # the rerun's outcome kind
    passed: bool  # the rerun returned the expected value
    cpu_s: float
    wall_s: float
    reference_cpu_s: float
    detail: str = ""

    @property
    def verdict(self) -> RerunVerdict:
        """Whether the rerun decides: a value or an exception does (a kill repeated alone included).

        Another timeout, an input left unreached (or a pass) leaves it to the clock."""
        return "timing" if self.passed or self.kind in CLOCK_KINDS else "deterministic"


def flat_index(task: PlusTask, split: Split, index: int) -> int:
    """One index over a task's inputs, base first then plus (the `input_index` of timing rows)."""
    return index if split == "base" else len(task.base_input) + index


def split_of(task: PlusTask, flat: int) -> tuple[Split, int]:
    base = len(task.base_input)
    return ("base", flat) if flat < base else ("plus", flat - base)


def call_alone(program: CallableProgram, args: Any, timeout_s: float, digest: bool,
               judge: sandbox.CallJudge | None = None) -> InputOutcome:
    """One input in its own sandbox call, with the supervisor's wall and CPU time.

    One input in its own sandbox call: the outcome with the supervisor's wall and CPU time; with a judge, its verdict on
    the output instead of the value (a sample's output never reaches this process).
    """
    limits = sandbox.Limits(timeout_s=timeout_s, total_timeout_s=timeout_s + 10.0, memory_mb=EVALPLUS_MEMORY_MB)
    note_sandbox_job()
    result = sandbox.call_function(program.source, program.entry_point, [list(args)], limits=limits,
                                   per_input_timeout_s=[timeout_s], deepcopy_inputs=False,
                                   digest_above_bytes=DIGEST_ABOVE_BYTES if digest else None,
                                   digest_inputs=(0,) if digest else None, judge=judge,
                                   values="preview" if judge is not None else "decoded")
    if not result.outcomes:
        return InputOutcome("not_run", exc_type="LoadError", exc_message=result.load_error)
    o = result.outcomes[0]
    return InputOutcome(o.kind, o.value, float(o.wall_s or o.duration_s or 0.0), o.exc_type, o.exc_message,
                        cpu_s=float(o.cpu_s or 0.0), by_supervisor=o.by_supervisor, verdict=o.verdict,
                        reason=o.reason, preview=o.preview)


def rerun_targets(verdict_kinds: Mapping[tuple[str, Split], Sequence[tuple[int, str]]]
                  ) -> list[tuple[str, Split, int, str]]:
    """(task_id, split, index, kind) of every input that failed by a time budget, in a stable order."""
    return [(task_id, split, index, kind) for (task_id, split), items in sorted(verdict_kinds.items())
            for index, kind in items if kind in RERUN_KINDS]


def rerun_alone(tasks: Sequence[PlusTask], solution_for: Mapping[str, str], dataset: Dataset, gt: GroundTruth,
                targets: Iterable[tuple[str, Split, int, str]], *, min_time_limit: float,
                wait_for: Callable[[float], float] | None = None,
                widen: Callable[[float, float, float], float] = doubled) -> list[InputRerun]:
    """Each target input, sample then canonical, one sandbox call at a time (never in parallel).

    `wait_for(limit)` is the sample's first wall time alone (default: room for the speed curve's 4x machine); a
    caller that only needs the verdict on this machine gives less (`timing.reruns.rerun_timeout`), and `widen` says
    how a rerun starved of CPU is given more wall time (`timing.reruns.measured_alone`).

    A task is settled by its first rerun that is deterministic (a wrong value or an exception) or a confirmed
    timeout (over its limit by more than the borderline margin, or out of time again); its remaining inputs are
    not re-run, since they cannot change the task's verdict (HumanEval/63 has 38 timeouts of 10 s each)."""
    by_id = {task.task_id: task for task in tasks}
    rule = timing.evalplus_limit_rule(min_time_limit)
    reruns = []
    settled: set[str] = set()
    for task_id, split, index, first_kind in tracked(list(targets), desc="timing reruns", unit="inputs"):
        if task_id in settled:
            continue
        task = by_id[task_id]
        args = inputs_of(task, split)[index]
        expected = gt.run(task_id, split).outcomes[index]
        digest = isinstance(expected.value, ValueDigest)
        canonical = call_alone(ground_truth_program(task, dataset), args, _rerun_wait(rule(expected.duration_s)),
                               digest)
        # the canonical's rerun CPU time when it produced its value, else what the ground truth recorded
        reference = canonical.cpu_s if canonical.kind == "value" and canonical.cpu_s > 0 \
            else (expected.cpu_s or expected.duration_s)
        timeout = (wait_for or _rerun_wait)(rule(reference))
        program = candidate_program(solution_for[task_id], task, dataset)
        judge = evalplus_judge(dataset, task.entry_point, task.atol,
                               [expected.value if expected.kind == "value" else sandbox.NO_EXPECTED])
        # a timeout cut before the run used enough CPU to decide gets more wall time (a loaded machine starves it)
        measured = measured_alone(lambda timeout_s: call_alone(program, args, timeout_s, digest, judge),  # noqa: B023
                                  lambda o: o.kind in CLOCK_KINDS, lambda o: o.cpu_s, rule(reference),
                                  first_timeout_s=timeout, widen=widen)
        if measured is None:  # still undecided: the task stays `unmeasured` unless another input settles it
            continue
        got = measured
        passed, detail = False, got.describe()
        if got.kind == "value" and expected.kind == "value":
            passed = got.verdict == "match"
            detail = "" if passed else f"got {got.describe()}, expected {expected.describe()} ({got.reason})"
        rerun = InputRerun(task_id, split, index, first_kind, got.kind, passed, got.cpu_s, got.duration_s,
                           reference, detail[:300])
        reruns.append(rerun)
        over_limit = got.cpu_s >= (1 + timing.BORDERLINE_MARGIN) * rule(reference)
        if rerun.verdict == "deterministic" or got.kind in CLOCK_KINDS or over_limit:
            settled.add(task_id)
    return reruns


def timed_inputs(tasks: Sequence[PlusTask], reruns: Iterable[InputRerun]) -> list[timing.TimedInput]:
    """The reruns that came back right or timed out again, as `timing.TimedInput` (flat input indices)."""
    by_id = {task.task_id: task for task in tasks}
    return [timing.TimedInput(r.task_id, flat_index(by_id[r.task_id], r.split, r.index), r.cpu_s, r.reference_cpu_s)
            for r in reruns if r.verdict == "timing"]


@dataclass(frozen=True)
class Classification:
    """A sample's failing tasks split by cause: value/exception anywhere, or time only (worst input per task).

    For speed curves (the full dataset's and each reduced variant's) it also keeps, by flat input index: the inputs
    that failed by value or exception, every timing input re-run alone, the timed-out inputs never re-run (their
    task was already deterministic), and the passing inputs whose CPU time would fail on the slowest machine."""

    deterministic: tuple[str, ...]
    timing: tuple[timing.TimingVerdict, ...]  # tasks whose only failures are timing
    inputs: tuple[timing.TimedInput, ...]  # every input re-run alone that a clock decided
    reruns: tuple[InputRerun, ...]
    deterministic_inputs: tuple[tuple[str, int], ...] = ()
    unmeasured_inputs: tuple[tuple[str, int], ...] = ()
    slow_inputs: tuple[timing.TimedInput, ...] = ()

    def causes(self) -> dict[str, str]:
        """Task id -> "deterministic" or its timing state, for every failing task."""
        return {**{v.task_id: v.state for v in self.timing}, **{t: "deterministic" for t in self.deterministic}}

    def count(self, state: str) -> int:
        return sum(1 for verdict in self.timing if verdict.state == state)

    def failure_split(self) -> timing.FailureSplit:
        return timing.FailureSplit("tasks", self.deterministic, self.timing)

    def rows(self) -> list[dict[str, Any]]:
        return self.failure_split().rows("task_id")

    def speed_curve(self, limit_rule: timing.LimitRule,
                    kept: Mapping[str, frozenset[int] | None] | None = None) -> list[tuple[float, int, int]]:
        """(speed, failing tasks, of which timing-only) over `kept` inputs.

        `kept`: task id -> kept flat input indices (None for all; default every task this classification saw). A kept
        timed-out input of a deterministic task counts as failing at every speed: it was never re-run, the task having
        failed by value elsewhere. A timing-only task stands for its measured inputs: the reruns stop at the first input
        that confirms it."""
        if kept is None:
            kept = {task_id: None for task_id in
                    {t for t, _ in self.deterministic_inputs} | {i.task_id for i in (*self.inputs, *self.slow_inputs)}}

        def keeps(task_id: str, index: int) -> bool:
            return task_id in kept and (kept[task_id] is None or index in kept[task_id])  # type: ignore[operator]

        fixed = {t for t, index in (*self.deterministic_inputs, *self.unmeasured_inputs) if keeps(t, index)}
        timed = [i for i in (*self.inputs, *self.slow_inputs) if keeps(i.task_id, i.input_index)]
        return timing.speed_curve(fixed, timed, limit_rule)


def classify(tasks: Sequence[PlusTask], failing: Mapping[tuple[str, Split], Sequence[tuple[int, str]]],
             reruns: Sequence[InputRerun], limit_rule: timing.LimitRule, *,
             sort_key: Any = None, slow_inputs: Sequence[timing.TimedInput] = ()) -> Classification:
    """Each failing task: deterministic, or timing-only with its worst flip factor.

    `failing` holds (index, kind) of each failing input per (task, split) from the parallel pass. A task is
    deterministic when any input failed by value or exception, on the parallel pass or on its rerun; the others are
    judged by the worst flip factor among their reruns (`unmeasured` without one)."""
    by_id = {task.task_id: task for task in tasks}
    rerun_of = {(r.task_id, r.split, r.index): r for r in reruns}
    deterministic_inputs: list[tuple[str, int]] = []
    unmeasured: list[tuple[str, int]] = []
    timing_tasks: set[str] = set()
    for (task_id, split), items in failing.items():
        for index, kind in items:
            rerun = rerun_of.get((task_id, split, index))
            flat = flat_index(by_id[task_id], split, index)
            if kind not in RERUN_KINDS or (rerun is not None and rerun.verdict == "deterministic"):
                deterministic_inputs.append((task_id, flat))
            else:
                timing_tasks.add(task_id)
                if rerun is None:
                    unmeasured.append((task_id, flat))
    deterministic = {task_id for task_id, _ in deterministic_inputs}
    timing_only = timing_tasks - deterministic
    inputs = tuple(timed_inputs(tasks, reruns))
    verdicts = {v.task_id: v for v in timing.task_verdicts([i for i in inputs if i.task_id in timing_only],
                                                          limit_rule)}
    for task_id in timing_only - set(verdicts):  # failed by time but never re-run
        verdicts[task_id] = timing.TimingVerdict(task_id, -1, 0.0, 0.0, 0.0, "unmeasured")
    order = sort_key or (lambda task_id: task_id)
    return Classification(tuple(sorted(deterministic, key=order)),
                          tuple(verdicts[t] for t in sorted(verdicts, key=order)), inputs,
                          tuple(r for r in reruns if r.task_id in by_id), tuple(deterministic_inputs),
                          tuple(item for item in unmeasured if item[0] in deterministic), tuple(slow_inputs))


def slow_passing_inputs(tasks: Sequence[PlusTask], runs: Mapping[tuple[str, Split], SplitRun], gt: GroundTruth,
                        limit_rule: timing.LimitRule) -> list[timing.TimedInput]:
    """Passing inputs that would exceed their limit on the slowest machine of the speed curve.

    By the parallel pass's CPU time, measured by the supervisor, not its wall time."""
    found: list[timing.TimedInput] = []
    for task in tasks:
        for split in SPLITS:
            run = runs.get((task.task_id, split))
            if run is None:
                continue
            expected = gt.run(task.task_id, split).outcomes
            found += timing.failing_slow_inputs(
                (timing.TimedInput(task.task_id, flat_index(task, split, index), outcome.cpu_s,
                                   want.cpu_s or want.duration_s)
                 for index, (outcome, want) in enumerate(zip(run.outcomes, expected))
                 if outcome.kind == "value" and want.kind == "value"), limit_rule)
    return found


def failing_inputs(tasks: Sequence[PlusTask], dataset: Dataset, runs: Mapping[tuple[str, Split], SplitRun],
                   gt: GroundTruth) -> dict[tuple[str, Split], list[tuple[int, str]]]:
    """(index, verdict kind) of every failing input per (task, split) of a sample's parallel pass."""
    failing: dict[tuple[str, Split], list[tuple[int, str]]] = {}
    for task in tasks:
        for split in SPLITS:
            run = runs.get((task.task_id, split))
            if run is not None:
                items = [(v.index, v.kind) for v in score_split(task, dataset, run, gt.run(task.task_id, split))
                         if not v.passed]
                if items:
                    failing[(task.task_id, split)] = items
    return failing


def confirm_timing(tasks: Sequence[PlusTask], solution_for: Mapping[str, str], dataset: Dataset, gt: GroundTruth,
                   runs: Mapping[tuple[str, Split], SplitRun], *, min_time_limit: float) -> Classification:
    """Score the parallel pass, re-run its time-budget failures alone, and classify every failing task."""
    failing = failing_inputs(tasks, dataset, runs, gt)
    # a task that already failed by value or exception is deterministic whatever its timeouts would do alone
    deterministic = {task_id for (task_id, _), items in failing.items() for _, kind in items if kind not in RERUN_KINDS}
    targets = [target for target in rerun_targets(failing) if target[0] not in deterministic]
    reruns = rerun_alone(tasks, solution_for, dataset, gt, targets, min_time_limit=min_time_limit)
    rule = timing.evalplus_limit_rule(min_time_limit)
    return classify(tasks, failing, reruns, rule, sort_key=task_sort_key,
                    slow_inputs=slow_passing_inputs(tasks, runs, gt, rule))


__all__ = ["CLOCK_KINDS", "Classification", "InputRerun", "RERUN_KINDS", "call_alone", "classify", "confirm_timing", "failing_inputs",
           "flat_index", "rerun_alone", "rerun_targets", "slow_passing_inputs", "split_of", "timed_inputs"]
