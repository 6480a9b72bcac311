"""Running HumanEval+/MBPP+ programs on their inputs through the sandbox: one CallJob per task and input set."""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from audit_lib import sandbox, timing
from audit_lib.benchmarks.humaneval_plus.data import PlusTask
from audit_lib.benchmarks.humaneval_plus.programs import CallableProgram
from audit_lib.sandbox import safe_repr

Split = Literal["base", "plus"]
SPLITS: tuple[Split, ...] = ("base", "plus")
OutcomeKind = Literal["value", "exception", "timeout", "unserializable", "not_run"]

# Budget for a ground-truth job on top of its per-input limits (program load, decoding); EvalPlus sets none.
JOB_OVERHEAD_S = 10.0
# A scored sample gets EvalPlus's own slack: +1 s when not fast_check, and the parent's join waits 1 s more.
EVALPLUS_SAMPLE_SLACK_S = 2.0
# A ground-truth job never waits longer than this, however many inputs it carries.
MAX_JOB_TIMEOUT_S = 1800.0
# EvalPlus's whole-sample budget: min(EVALPLUS_TIMEOUT_PER_TASK = 60, sum of per-input limits) + 1.
EVALPLUS_TIMEOUT_PER_TASK_S = 60.0
# EvalPlus's memory cap for a sample (`EVALPLUS_MAX_MEMORY_BYTES`, default 4 GiB).
EVALPLUS_MEMORY_MB = 4096


@dataclass(frozen=True)
class InputOutcome:
    """What one call did: its value or why there is none, and how long it took.

    A run the sandbox's judge compared (`run_programs(judge_for=...)`) holds no value: the judge's `verdict`
    ("match", "wrong_value"; None where there was no expected value), its `reason` and a `preview` of the output."""

    kind: OutcomeKind
    value: Any = None
    duration_s: float = 0.0
    exc_type: str | None = None
    exc_message: str | None = None
    cpu_s: float = 0.0  # the child's CPU time on this input, measured by the sandbox's supervisor
    by_supervisor: bool = False  # the supervisor wrote this outcome (`sandbox.CallOutcome.by_supervisor`)
    verdict: str | None = None
    reason: str = ""
    preview: str | None = None

    @property
    def judged(self) -> bool:
        """A value the sandbox's judge saw (and compared, where there was an expected value) instead of this process."""
        return self.kind == "value" and self.value is None and self.preview is not None

    @property
    def verdict_kind(self) -> str:
        """The kind a verdict is filed under: `killed` for a signal the supervisor recorded, else `kind`."""
        return "killed" if timing.supervisor_kill(self.kind, self.exc_type, self.by_supervisor) else self.kind

    def describe(self) -> str:
        if self.kind == "value":
            return self.preview[:200] if self.judged else shown_value(self.value, 200)
        if self.kind == "exception":
            return f"{self.exc_type}: {(self.exc_message or '')[:160]}"
        if self.kind == "unserializable" and self.exc_type:
            return f"unserializable {self.exc_type}: {(self.exc_message or '')[:160]}"
        return self.kind


def settled(outcome: InputOutcome) -> InputOutcome:
    """`outcome` with a value the sandbox kept encoded (`sandbox.EncodedValue`) decoded now, or `unserializable`.

    The decode runs within a budget of its own; when it is refused (over that budget, or a malformed value) the
    outcome becomes `unserializable` with the reason, as it would have been had the job decoded it: never a value,
    never an exception for the caller."""
    if outcome.kind != "value" or not isinstance(outcome.value, sandbox.EncodedValue):
        return outcome
    value, refusal = sandbox.decoded_or_refusal(outcome.value)
    if refusal is None:
        return replace(outcome, value=value)
    return replace(outcome, kind="unserializable", value=None, exc_type=refusal[0], exc_message=refusal[1])


def shown_value(value: Any, cap: int) -> str:
    """`safe_repr` of a value, one kept encoded decoded for it (its size when that is refused)."""
    try:
        return safe_repr(sandbox.decoded(value), cap)
    except (sandbox.BudgetExceeded, sandbox.MalformedTaggedValue, ValueError, RecursionError):
        return safe_repr(value, cap)


@dataclass(frozen=True)
class SplitRun:
    """The outcomes of one program on one task's base or plus inputs, plus any load failure."""

    task_id: str
    split: Split
    outcomes: tuple[InputOutcome, ...]
    load_error: str | None = None
    job_status: str = "pass"


def inputs_of(task: PlusTask, split: Split) -> tuple[Any, ...]:
    return task.base_input if split == "base" else task.plus_input


@dataclass(frozen=True)
class JobBudget:
    """A job's whole-run limit: min(cap, sum of per-input limits) + 1 s + slack."""

    total_cap_s: float
    slack_s: float


# Ground truth: EvalPlus runs the canonical with no limit; ours gets room for program load and decoding.
GROUND_TRUTH_BUDGET = JobBudget(MAX_JOB_TIMEOUT_S, JOB_OVERHEAD_S)
# A scored sample: EvalPlus's own budget, min(60, sum) + 1, +1 s when not fast_check, and its join waits 1 s more.
EVALPLUS_SAMPLE_BUDGET = JobBudget(EVALPLUS_TIMEOUT_PER_TASK_S, EVALPLUS_SAMPLE_SLACK_S)


def job_limits(per_input_timeouts: Sequence[float], *, budget: JobBudget = GROUND_TRUTH_BUDGET,
               memory_mb: int = EVALPLUS_MEMORY_MB) -> sandbox.Limits:
    total = min(budget.total_cap_s, sum(per_input_timeouts)) + 1.0 + budget.slack_s
    longest = max(per_input_timeouts, default=1.0)
    return sandbox.Limits(timeout_s=longest, total_timeout_s=total, memory_mb=memory_mb)


def run_programs(tasks: Sequence[PlusTask], program_for: Callable[[PlusTask], CallableProgram],
                 timeouts_for: Callable[[PlusTask, Split], Sequence[float]], *,
                 executor: Any = None, splits: Iterable[Split] = SPLITS, progress: bool = True,
                 progress_desc: str = "sandbox",
                 budget: JobBudget = GROUND_TRUTH_BUDGET, fast_check: bool = False,
                 judge_for: Callable[[PlusTask, Split], sandbox.CallJudge] | None = None,
                 cost_for: Callable[[PlusTask, Split], float] | None = None,
                 digest_above_bytes: int | None = None,
                 digest_inputs_for: Callable[[PlusTask, Split], Collection[int] | None] | None = None,
                 ) -> dict[tuple[str, Split], SplitRun]:
    """Run `program_for(task)` on every input of each split, each input under its own time limit.

    With `judge_for`, each split's outputs are compared in the sandbox's judge (`sandbox.CallJudge`) and never reach
    this process: each outcome carries the judge's verdict and a preview. `fast_check` stops a split at its first
    failing input (an exception, a timeout, or with a judge a value it fails), as EvalPlus's default `fast_check`
    does. With `cost_for`, the costliest jobs start first, so no long job is left for the end. With
    `digest_above_bytes`, huge float-free outputs come back (or, judged, reach the judge) as digests: of the inputs
    `digest_inputs_for` names (None: every input).
    """
    units = [ProgramUnit(task.task_id, task, program_for(task)) for task in tasks]
    return run_program_units(units, timeouts_for, executor=executor, splits=splits, progress=progress,
                             progress_desc=progress_desc, budget=budget, fast_check=fast_check,
                             judge_for=judge_for, cost_for=cost_for,
                             digest_above_bytes=digest_above_bytes, digest_inputs_for=digest_inputs_for)


@dataclass(frozen=True)
class ProgramUnit:
    """One program to run on a task's inputs, under a key of the caller's (a task id, or a task and sample)."""

    key: Hashable
    task: PlusTask
    program: CallableProgram


def run_program_units(units: Sequence[ProgramUnit], timeouts_for: Callable[[PlusTask, Split], Sequence[float]], *,
                      executor: Any = None, splits: Iterable[Split] = SPLITS, progress: bool = True,
                      progress_desc: str = "sandbox", budget: JobBudget = GROUND_TRUTH_BUDGET,
                      fast_check: bool = False,
                      judge_for: Callable[[PlusTask, Split], sandbox.CallJudge] | None = None,
                      cost_for: Callable[[PlusTask, Split], float] | None = None,
                      digest_above_bytes: int | None = None,
                      digest_inputs_for: Callable[[PlusTask, Split], Collection[int] | None] | None = None,
                      ) -> dict[tuple[Hashable, Split], SplitRun]:
    """`run_programs` for any number of programs per task.

    Every unit on every input of each split, keyed `(unit.key, split)`, all in one batch. A program's load runs
    outside every per-input limit, within the job's whole budget (the sandbox's default), as EvalPlus loads a sample.
    """
    splits = tuple(splits)
    jobs = []
    for unit in units:
        task, program = unit.task, unit.program
        for split in splits:
            inputs = inputs_of(task, split)
            if not inputs:
                continue
            timeouts = [float(t) for t in timeouts_for(task, split)]
            judge = judge_for(task, split) if judge_for is not None else None
            chosen = digest_inputs_for(task, split) if digest_inputs_for else None
            digest_inputs = None if chosen is None else tuple(sorted(chosen))
            limits = job_limits(timeouts, budget=budget)
            # No deepcopy: every child decodes its own copy of the inputs and calls each one once, so a program
            # that mutates an input cannot affect another call (EvalPlus deep-copies because it reuses inputs). Nor
            # a copy here: the job only encodes them.
            jobs.append((unit.task, sandbox.CallJob(
                key=(unit.key, split), program=program.source, entry_point=program.entry_point,
                inputs=inputs, limits=limits, per_input_timeout_s=tuple(timeouts),
                stop_after_failure=fast_check, judge=judge, values="preview" if judge is not None else "decoded",
                digest_above_bytes=digest_above_bytes, digest_inputs=digest_inputs, deepcopy_inputs=False)))
    task_of = {job.key: task for task, job in jobs}
    if cost_for is not None:
        jobs.sort(key=lambda pair: -cost_for(pair[0], pair[1].key[1]))
    runs: dict[tuple[Hashable, Split], SplitRun] = {}
    for key, result in sandbox.run_many([job for _task, job in jobs], executor, progress=progress,
                                        progress_unit="inputs", progress_weight=_input_count,
                                        progress_desc=progress_desc):
        unit_key, split = key
        task = task_of[key]
        runs[key] = split_run_from_result(task.task_id, split, result, len(inputs_of(task, split)))
    for unit in units:  # empty input sets still get a (trivially empty) run
        for split in splits:
            runs.setdefault((unit.key, split), SplitRun(unit.task.task_id, split, ()))
    return runs


def _input_count(job: sandbox.CallJob) -> int:
    return len(job.inputs)


def split_run_from_result(task_id: str, split: Split, result: Any, expected_count: int) -> SplitRun:
    """Normalise a CallJobResult; inputs the sandbox never reached count as `not_run`."""
    outcomes = [InputOutcome(kind=o.kind, value=o.value, duration_s=float(o.duration_s or 0.0),
                             exc_type=o.exc_type, exc_message=o.exc_message, cpu_s=float(getattr(o, "cpu_s", 0.0) or 0.0),
                             by_supervisor=bool(getattr(o, "by_supervisor", False)), verdict=getattr(o, "verdict", None),
                             reason=getattr(o, "reason", "") or "", preview=getattr(o, "preview", None))
                for o in result.outcomes]
    outcomes += [InputOutcome("not_run")] * (expected_count - len(outcomes))  # e.g. the job's total budget ran out
    load_error = result.load_error
    if load_error is None and result.status not in ("pass", "fail"):
        load_error = f"sandbox job ended with status {result.status}"
    return SplitRun(task_id, split, tuple(outcomes[:expected_count]), load_error, str(result.status))


def outcomes_by_task(runs: Mapping[tuple[str, Split], SplitRun]) -> dict[str, dict[Split, SplitRun]]:
    grouped: dict[str, dict[Split, SplitRun]] = {}
    for (task_id, split), run in runs.items():
        grouped.setdefault(task_id, {})[split] = run
    return grouped


__all__ = ["InputOutcome", "ProgramUnit", "SPLITS", "Split", "SplitRun", "inputs_of", "job_limits",
           "outcomes_by_task", "run_program_units", "run_programs", "settled", "split_run_from_result"]
