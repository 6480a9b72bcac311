"""Score samples as `evalplus.evaluate` does: base then plus inputs, EvalPlus's limits, comparison and fast-check.

Every (sample, split) is one sandbox job (`replay.run_candidates`, the audit's own replay): the sample is loaded
after EvalPlus's reliability guard, outside its per-input limits (within the whole sample's budget), then called on
each input under `max(min_time_limit, 4 x canonical time)`, stopping at the first failure (fast-check). A split that
failed only by a clock (a timeout, an input the budget left unreached, a kill) has those inputs re-run alone, with
the canonical, and is judged on CPU time (`timing_rerun.rerun_alone`): a wrong value or an exception there makes it
deterministic; otherwise its worst flip factor decides pass or fail on this machine, and the verdict is `timing`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from audit_lib import timing
from audit_lib.benchmarks.humaneval_plus.data import Dataset, PlusTask
from audit_lib.benchmarks.humaneval_plus.groundtruth import GroundTruth
from audit_lib.benchmarks.humaneval_plus.replay import InputVerdict, run_candidates, score_split
from audit_lib.benchmarks.humaneval_plus.runs import SPLITS, Split, SplitRun, inputs_of
from audit_lib.benchmarks.humaneval_plus.samples.compile_check import compile_error
from audit_lib.benchmarks.humaneval_plus.samples.sample_files import Sample, SampleSet
from audit_lib.benchmarks.humaneval_plus.samples.verdicts import PASSED, FailureKind, SampleVerdict, SplitVerdict
from audit_lib.benchmarks.humaneval_plus.timing_rerun import CLOCK_KINDS, RERUN_KINDS, InputRerun, rerun_alone
from audit_lib.sandbox import safe_repr
from audit_lib.timing.reruns import scaled_to_cpu_share

SampleKey = tuple[str, int]  # (task id, sample number)
SYNTAX_ERRORS = ("SyntaxError", "IndentationError", "TabError")
# The parallel pass's failure kinds (`replay.InputVerdict.kind`) in a user's terms.
KIND_OF_INPUT_FAILURE: dict[str, FailureKind] = {
    "wrong_value": "wrong_value", "unserializable": "wrong_value", "exception": "exception", "timeout": "timeout",
    "not_run": "timeout", "killed": "killed", "no_expected_output": "harness_error"}
EVIDENCE_CHARS = 300


def first_rerun_wait(limit_s: float) -> float:
    """A rerun's first wall time: just past the CPU time that confirms a timeout.

    (`measured_alone` widens it when a loaded machine gave the run less than that).
    """
    return (1 + timing.BORDERLINE_MARGIN + 0.05) * limit_s


def solution_of(sample: Sample, task: PlusTask) -> str:
    """What EvalPlus runs: the `solution` as it is, or the task's prompt followed by the `completion`."""
    return sample.text if sample.field == "solution" else task.prompt + sample.text


def score_evalplus(tasks: Sequence[PlusTask], dataset: Dataset, gt: GroundTruth, samples: SampleSet, *,
                   min_time_limit: float, executor: Any = None) -> list[SampleVerdict]:
    """Every sample of a task in `tasks`, in file order, scored base and plus as `evalplus.evaluate` scores it."""
    by_id = {task.task_id: task for task in tasks}
    chosen = [sample for sample in samples.samples if sample.task_id in by_id]
    errors = {(s.task_id, s.index): compile_error(solution_of(s, by_id[s.task_id])) for s in chosen}
    unparsed = {key: error for key, error in errors.items() if error is not None}
    chosen_run = [s for s in chosen if (s.task_id, s.index) not in unparsed]
    verdicts_of = {key: SampleVerdict(key[0], key[1], *(compile_failure(error) for _ in SPLITS))
                   for key, error in unparsed.items()}
    verdicts_of.update(((v.task_id, v.sample), v) for v in _score_runs(chosen_run, by_id, dataset, gt,
                                                                        min_time_limit=min_time_limit,
                                                                        executor=executor))
    return [verdicts_of[(s.task_id, s.index)] for s in chosen]


def compile_failure(error: str) -> SplitVerdict:
    """The solution does not compile: `exec` fails before any input, a deterministic load failure."""
    return SplitVerdict("fail", "deterministic", "syntax", None, "(program load)", "", error[:EVIDENCE_CHARS])


def _score_runs(chosen: Sequence[Sample], by_id: Mapping[str, PlusTask], dataset: Dataset, gt: GroundTruth, *,
                min_time_limit: float, executor: Any) -> list[SampleVerdict]:
    units = [((s.task_id, s.index), by_id[s.task_id], solution_of(s, by_id[s.task_id])) for s in chosen]
    text_of = {key: text for key, _task, text in units}
    runs = run_candidates(units, dataset, gt, min_time_limit=min_time_limit, executor=executor, fast_check=True,
                          progress_desc="your samples")
    rule = timing.evalplus_limit_rule(min_time_limit)
    verdicts = []
    for sample in chosen:
        key = (sample.task_id, sample.index)
        task = by_id[sample.task_id]
        splits = []
        for split in SPLITS:
            run = runs[(key, split)]
            scored = score_split(task, dataset, run, gt.run(task.task_id, split))
            verdict = judge_split(task, split, run, scored, gt)
            if verdict is None:  # a clock decided: settled alone, after every parallel job has ended
                verdict = ClockSplit(key, task, split, run, scored, text_of[key])
            splits.append(verdict)
        verdicts.append((sample, splits))
    return [SampleVerdict(sample.task_id, sample.index,
                          *(settle_alone(v, dataset, gt, rule, min_time_limit=min_time_limit)
                            if isinstance(v, ClockSplit) else v for v in splits))
            for sample, splits in verdicts]


@dataclass(frozen=True)
class ClockSplit:
    """A split of the parallel pass that failed by a clock only, waiting to be settled alone."""

    key: SampleKey
    task: PlusTask
    split: Split
    run: SplitRun
    scored: tuple[InputVerdict, ...] | list[InputVerdict]
    solution: str


def did_not_load(run: SplitRun) -> bool:
    """The program never answered an input because its load failed (or the job ended during it).

    A job that ended later (its whole budget spent) also carries a `load_error`, but answered inputs first.
    """
    return run.load_error is not None and bool(run.outcomes) and all(o.kind == "not_run" for o in run.outcomes)


def judge_split(task: PlusTask, split: Split, run: SplitRun, verdicts: Sequence[InputVerdict],
                gt: GroundTruth) -> SplitVerdict | None:
    """One split's verdict from its parallel pass; None when only a clock failed it (see `settle_alone`)."""
    if did_not_load(run):
        return _load_failure(run)
    failing = [v for v in verdicts if not v.passed]
    if not failing:
        return PASSED
    decided = next((v for v in failing if v.kind not in RERUN_KINDS), None)
    if decided is None:
        return None
    return _input_failure(task, split, run, gt, decided.index, KIND_OF_INPUT_FAILURE.get(decided.kind, "exception"),
                          "deterministic")


def settle_alone(clock: ClockSplit, dataset: Dataset, gt: GroundTruth, rule: timing.LimitRule, *,
                 min_time_limit: float) -> SplitVerdict:
    """A split a clock failed, judged alone.

    its first such input is re-run alone with the canonical and judged on CPU time (`timing_rerun.rerun_alone`); when
    that input is within its limit, fast-check never judged the inputs after it, so the whole split runs again alone
    (one job) and is judged as the parallel pass would be.
    """
    task, split = clock.task, clock.split
    first = next(v for v in clock.scored if not v.passed)
    rerun = _rerun_input(clock, first, dataset, gt, min_time_limit)
    if rerun is None:
        return _timing_verdict("fail", task, split, gt, first.index, None, "unmeasured", first.kind)
    if rerun.verdict == "deterministic":
        return _rerun_failure(task, split, gt, rerun)
    limit, over, state = _judged_on_cpu(rerun, rule)
    if over:
        return _timing_verdict("fail", task, split, gt, rerun.index, (rerun, limit), state, rerun.kind)
    if all(v.passed or v.index == first.index for v in clock.scored):
        return _timing_verdict("pass", task, split, gt, rerun.index, (rerun, limit), state, "value")
    again = run_candidates([(clock.key, task, clock.solution)], dataset, gt, min_time_limit=min_time_limit,
                           fast_check=True, splits=(split,), progress=False)[(clock.key, split)]
    scored = score_split(task, dataset, again, gt.run(task.task_id, split))
    verdict = judge_split(task, split, again, scored, gt)
    if verdict is not None and verdict.status == "fail":
        return verdict
    if verdict is not None:  # every input passed alone: a pass that a clock decided
        return _timing_verdict("pass", task, split, gt, rerun.index, (rerun, limit), state, "value")
    second = next(v for v in scored if not v.passed)
    if second.index == first.index:  # out of time again in the job, yet within its limit alone: too close to call
        return _timing_verdict("fail", task, split, gt, first.index, (rerun, limit), "borderline", second.kind)
    later = _rerun_input(clock, second, dataset, gt, min_time_limit)
    if later is None:
        return _timing_verdict("fail", task, split, gt, second.index, None, "unmeasured", second.kind)
    if later.verdict == "deterministic":
        return _rerun_failure(task, split, gt, later)
    later_limit, later_over, later_state = _judged_on_cpu(later, rule)
    # still within its limit alone: the inputs after it were not judged a second time
    return _timing_verdict("fail", task, split, gt, later.index, (later, later_limit),
                           later_state if later_over else "unmeasured", later.kind)


def _judged_on_cpu(rerun: InputRerun, rule: timing.LimitRule) -> tuple[float, bool, str]:
    """An input re-run alone: its limit by EvalPlus's rule, whether it went over, and its timing state."""
    limit = rule(rerun.reference_cpu_s)
    if rerun.kind in CLOCK_KINDS:
        return limit, True, "confirmed"
    return limit, rerun.cpu_s > limit, timing.timing_state(rerun.cpu_s, limit)


def _rerun_input(clock: ClockSplit, verdict: InputVerdict, dataset: Dataset, gt: GroundTruth,
                 min_time_limit: float) -> InputRerun | None:
    reruns = rerun_alone([clock.task], {clock.task.task_id: clock.solution}, dataset, gt,
                         [(clock.task.task_id, clock.split, verdict.index, verdict.kind)],
                         min_time_limit=min_time_limit, wait_for=first_rerun_wait, widen=scaled_to_cpu_share)
    return reruns[0] if reruns else None


def _rerun_failure(task: PlusTask, split: Split, gt: GroundTruth, rerun: InputRerun) -> SplitVerdict:
    """A timeout that hid a wrong value or an exception: deterministic, on the rerun's evidence."""
    kind: FailureKind = "wrong_value" if rerun.kind in ("value", "unserializable") else "exception"
    return SplitVerdict("fail", "deterministic", kind, rerun.index, _input_text(task, split, rerun.index),
                        gt.run(task.task_id, split).outcomes[rerun.index].describe()[:EVIDENCE_CHARS],
                        (rerun.detail or rerun.kind)[:EVIDENCE_CHARS], rerun.cpu_s)


def _timing_verdict(status: str, task: PlusTask, split: Split, gt: GroundTruth, index: int,
                    measured: tuple[InputRerun, float] | None, state: str, got_kind: str) -> SplitVerdict:
    rerun, limit = measured if measured is not None else (None, None)
    return SplitVerdict(status, "timing", "timeout" if status == "fail" else None,  # type: ignore[arg-type]
                        index, _input_text(task, split, index),
                        gt.run(task.task_id, split).outcomes[index].describe()[:EVIDENCE_CHARS],
                        got_kind if rerun is None else f"{got_kind} after {rerun.cpu_s:.3f} s of CPU alone",
                        None if rerun is None else rerun.cpu_s, limit, state)


def _input_text(task: PlusTask, split: Split, index: int) -> str:
    return safe_repr(inputs_of(task, split)[index], 200)


def _input_failure(task: PlusTask, split: Split, run: SplitRun, gt: GroundTruth, index: int, kind: FailureKind,
                   cause: str) -> SplitVerdict:
    expected = gt.run(task.task_id, split).outcomes[index].describe()
    got = run.outcomes[index].describe() if index < len(run.outcomes) else "not run"
    return SplitVerdict("fail", cause, kind, index, _input_text(task, split, index),  # type: ignore[arg-type]
                        expected[:EVIDENCE_CHARS], got[:EVIDENCE_CHARS])


def _load_failure(run: SplitRun) -> SplitVerdict:
    """The program did not load: a syntax error or an exception (deterministic), or its load ran out of time."""
    error = run.load_error or ""
    if run.job_status == "timeout" or error.startswith(("_InputTimeout", "Timeout")):
        return SplitVerdict("fail", "timing", "timeout", None, "(program load)", "", error[:EVIDENCE_CHARS],
                            timing_state="unmeasured")
    kind: FailureKind = "syntax" if error.startswith(SYNTAX_ERRORS) else \
        ("killed" if run.job_status == "killed" else "memory" if run.job_status == "memory"
         else "harness_error" if run.job_status == "harness_error" else "load_exception")
    return SplitVerdict("fail", "deterministic", kind, None, "(program load)", "", error[:EVIDENCE_CHARS])


__all__ = ["ClockSplit", "KIND_OF_INPUT_FAILURE", "SYNTAX_ERRORS", "compile_failure", "did_not_load", "judge_split",
           "score_evalplus", "settle_alone", "solution_of"]
