"""Score samples as `evalplus.evaluate` does: base then plus inputs, EvalPlus's limits, comparison and fast-check.

Every (sample, split) is one sandbox job (`replay.run_candidates`, the audit's own replay): the sample is loaded
after EvalPlus's reliability guard, outside its per-input limits (within the whole sample's budget), then called on
each input under `max(min_time_limit, 4 x canonical time)`, stopping at the first failure (fast-check). A split that
failed only by a clock (a timeout, an input the budget left unreached, a kill) has those inputs re-run alone, with
the canonical, and is judged on CPU time (`timing_rerun.rerun_alone`): a wrong value or an exception there makes it
deterministic; otherwise its worst flip factor decides pass or fail on this machine, and the verdict is `timing`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
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
from audit_lib.timing_reruns import rerun_timeout

SampleKey = tuple[str, int]  # (task id, sample number)
SYNTAX_ERRORS = ("SyntaxError", "IndentationError", "TabError")
# The parallel pass's failure kinds (`replay.InputVerdict.kind`) in a user's terms.
KIND_OF_INPUT_FAILURE: dict[str, FailureKind] = {
    "wrong_value": "wrong_value", "unserializable": "wrong_value", "exception": "exception", "timeout": "timeout",
    "not_run": "timeout", "killed": "killed", "no_expected_output": "harness_error"}
EVIDENCE_CHARS = 300


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
    runs = run_candidates(units, dataset, gt, min_time_limit=min_time_limit, executor=executor, fast_check=True,
                          load_within_budget=True, progress_desc="your samples")
    scored = {(key, split): score_split(by_id[key[0]], dataset, run, gt.run(key[0], split))
              for (key, split), run in runs.items()}
    reruns = _timing_reruns(chosen, by_id, dataset, gt, runs, scored, min_time_limit=min_time_limit)
    rule = timing.evalplus_limit_rule(min_time_limit)
    verdicts = []
    for sample in chosen:
        key = (sample.task_id, sample.index)
        task = by_id[sample.task_id]
        base, plus = (judge_split(task, split, runs[(key, split)], scored[(key, split)], gt,
                                  reruns.get((key, split), ()), rule) for split in SPLITS)
        verdicts.append(SampleVerdict(sample.task_id, sample.index, base, plus))
    return verdicts


def did_not_load(run: SplitRun) -> bool:
    """The program never answered an input because its load failed (or the job ended during it). A job that ended
    later (its whole budget spent) also carries a `load_error`, but answered inputs first."""
    return run.load_error is not None and bool(run.outcomes) and all(o.kind == "not_run" for o in run.outcomes)


def _clock_only(run: SplitRun, verdicts: Sequence[InputVerdict]) -> list[InputVerdict]:
    """The failing inputs of a split that failed by a clock alone (else []): those a rerun alone can judge."""
    if did_not_load(run):
        return []
    failing = [v for v in verdicts if not v.passed]
    return failing if failing and all(v.kind in RERUN_KINDS for v in failing) else []


def _timing_reruns(chosen: Sequence[Sample], by_id: Mapping[str, PlusTask], dataset: Dataset, gt: GroundTruth,
                   runs: Mapping[tuple[SampleKey, Split], SplitRun],
                   scored: Mapping[tuple[SampleKey, Split], list[InputVerdict]], *,
                   min_time_limit: float) -> dict[tuple[SampleKey, Split], tuple[InputRerun, ...]]:
    """Re-run alone the inputs of every split that failed by a clock only, one sample layer and split at a time
    (`rerun_alone` settles a task at its first deciding input; each split is judged on its own)."""
    layers: dict[tuple[int, Split], list[tuple[str, Split, int, str]]] = {}
    for sample in chosen:
        key = (sample.task_id, sample.index)
        for split in SPLITS:
            for verdict in _clock_only(runs[(key, split)], scored[(key, split)]):
                layers.setdefault((sample.index, split), []).append((sample.task_id, split, verdict.index,
                                                                     verdict.kind))
    text_of = {(s.task_id, s.index): solution_of(s, by_id[s.task_id]) for s in chosen}
    found: dict[tuple[SampleKey, Split], tuple[InputRerun, ...]] = {}
    for (index, split), targets in sorted(layers.items()):
        layer_tasks = sorted({task_id for task_id, *_ in targets})
        solution_for = {task_id: text_of[(task_id, index)] for task_id in layer_tasks}
        reruns = rerun_alone([by_id[t] for t in layer_tasks], solution_for, dataset, gt, targets,
                             min_time_limit=min_time_limit, wait_for=rerun_timeout)
        for rerun in reruns:
            found[((rerun.task_id, index), split)] = found.get(((rerun.task_id, index), split), ()) + (rerun,)
    return found


def judge_split(task: PlusTask, split: Split, run: SplitRun, verdicts: Sequence[InputVerdict], gt: GroundTruth,
                reruns: Iterable[InputRerun], rule: timing.LimitRule) -> SplitVerdict:
    """One split's verdict from its parallel pass and the reruns of its clock-only failures."""
    if did_not_load(run):
        return _load_failure(run)
    failing = [v for v in verdicts if not v.passed]
    if not failing:
        return PASSED
    first = failing[0]
    if first.kind not in RERUN_KINDS or any(v.kind not in RERUN_KINDS for v in failing):
        decided = next(v for v in failing if v.kind not in RERUN_KINDS)
        return _input_failure(task, split, run, gt, decided.index, KIND_OF_INPUT_FAILURE.get(decided.kind,
                                                                                           "exception"), "deterministic")
    reruns = list(reruns)
    wrong = next((r for r in reruns if r.verdict == "deterministic"), None)
    if wrong is not None:
        kind: FailureKind = "wrong_value" if wrong.kind in ("value", "unserializable") else "exception"
        return SplitVerdict("fail", "deterministic", kind, wrong.index, _input_text(task, split, wrong.index),
                            gt.run(task.task_id, split).outcomes[wrong.index].describe()[:EVIDENCE_CHARS],
                            (wrong.detail or wrong.kind)[:EVIDENCE_CHARS], wrong.cpu_s)
    timed = [(r, rule(r.reference_cpu_s)) for r in reruns]
    measured = {r.index for r in reruns}
    worst = max(timed, key=lambda pair: (pair[0].kind in CLOCK_KINDS, pair[0].cpu_s / pair[1]), default=None)
    if worst is None:
        return _timing_verdict("fail", task, split, gt, first.index, None, "unmeasured", first.kind)
    rerun, limit = worst
    state = "confirmed" if rerun.kind in CLOCK_KINDS else timing.timing_state(rerun.cpu_s, limit)
    over = rerun.kind in CLOCK_KINDS or rerun.cpu_s > limit
    if not over and any(v.index not in measured for v in failing):
        return _timing_verdict("fail", task, split, gt, first.index, None, "unmeasured", first.kind)
    return _timing_verdict("fail" if over else "pass", task, split, gt, rerun.index, (rerun, limit), state,
                           rerun.kind if over else "value")


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


__all__ = ["KIND_OF_INPUT_FAILURE", "SYNTAX_ERRORS", "compile_failure", "did_not_load", "judge_split",
           "score_evalplus", "solution_of"]
