"""EvalPlus's scoring, replayed: per-input time limits, input-by-input verdicts, and candidate runs in the sandbox.

The checks built on it live in the `checks_<topic>` modules: `checks_canonical` (ground truth, time limits),
`checks_contracts`, `checks_original` (OpenAI's canonical and the original tests) and `checks_errata`.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from audit_lib import sandbox
from audit_lib.benchmarks.humaneval_plus.compare import SampleComparer, ValueDigest, evalplus_judge
from audit_lib.benchmarks.humaneval_plus.data import Dataset, HumanEvalTask, PlusTask
from audit_lib.benchmarks.humaneval_plus.groundtruth import DIGEST_ABOVE_BYTES, GroundTruth
from audit_lib.benchmarks.humaneval_plus.programs import candidate_program
from audit_lib.benchmarks.humaneval_plus.runs import (
    EVALPLUS_SAMPLE_BUDGET,
    SPLITS,
    ProgramUnit,
    Split,
    SplitRun,
    inputs_of,
    run_program_units,
    settled,
)

DEFAULT_MIN_TIME_LIMIT_S = 1.0  # evalplus/config.py DEFAULT_MIN_TIME_LIMIT (evalplus HEAD 26d6d00, PyPI 0.3.1)
GT_TIME_LIMIT_FACTOR = 4.0  # evalplus/config.py DEFAULT_GT_TIME_LIMIT_FACTOR
ASSERT_TEST_TIMEOUT_S = 30.0


def time_limits(ground_truth_times: Sequence[float], *, min_time_limit: float,
                factor: float = GT_TIME_LIMIT_FACTOR) -> list[float]:
    """EvalPlus's per-input limit: `max(min_time_limit, factor x canonical time)`."""
    return [max(min_time_limit, factor * t) for t in ground_truth_times]


@dataclass(frozen=True)
class InputVerdict:
    """One input of a sample under EvalPlus's rules."""

    index: int
    passed: bool
    kind: str  # match | wrong_value | exception | killed | timeout | unserializable | not_run | no_expected_output
    detail: str


def score_split(task: PlusTask, dataset: Dataset, run: SplitRun, expected: SplitRun) -> list[InputVerdict]:
    """Every input's verdict (EvalPlus with `--test-details`: no early stop), atol promotion carried along.

    A run the sandbox's judge compared carries its verdicts (`run_candidate`); one whose values came back (two
    canonical runs, say) is compared here by the same rules."""
    comparer = SampleComparer(dataset=dataset, entry_point=task.entry_point, atol=task.atol)
    inputs = inputs_of(task, run.split)
    verdicts = []
    for index, (got, want) in enumerate(zip(run.outcomes, expected.outcomes)):
        if got.kind == want.kind == "value" and not got.judged:  # compared here: a refused decode is unserializable
            got, want = settled(got), settled(want)
        if want.kind != "value":
            verdicts.append(InputVerdict(index, False, "no_expected_output", want.describe()))
        elif got.kind != "value":
            verdicts.append(InputVerdict(index, False, got.verdict_kind, got.describe()))
        else:
            passed, reason = (got.verdict == "match", got.reason or "not judged") if got.judged \
                else _compared(comparer.compare(inputs[index], got.value, want.value))
            verdicts.append(InputVerdict(index, passed, "match" if passed else "wrong_value",
                                         "" if passed else f"got {got.describe()}, expected "
                                         f"{want.describe()} ({reason})"))
    return verdicts


def _compared(comparison) -> tuple[bool, str]:  # noqa: ANN001 - compare.Comparison
    return comparison.passed, comparison.reason


def evalplus_time_limits_for(gt: GroundTruth, *, min_time_limit: float):
    def limits(task: PlusTask, split: Split) -> list[float]:
        return time_limits(gt.times(task.task_id, split), min_time_limit=min_time_limit)
    return limits


def run_candidate(tasks: Sequence[PlusTask], solution_for: Mapping[str, str], dataset: Dataset, gt: GroundTruth, *,
                  min_time_limit: float = DEFAULT_MIN_TIME_LIMIT_S, executor: Any = None,
                  fast_check: bool = False) -> dict[tuple[str, Split], SplitRun]:
    """Run full candidate programs (one per task id) under EvalPlus's per-input limits and whole-sample budget.

    Each output is compared with the ground truth's under EvalPlus's rules in the sandbox's judge
    (`compare.evalplus_judge`), never in this process: the runs carry verdicts and previews, no values. The audit
    runs every input (`fast_check=False`) to count and classify failures; `fast_check=True` stops a split at its
    first failing input, which is how `evalplus.evaluate` scores by default.
    """
    units = [(task.task_id, task, solution_for[task.task_id]) for task in tasks if task.task_id in solution_for]
    return run_candidates(units, dataset, gt, min_time_limit=min_time_limit, executor=executor,
                          fast_check=fast_check)  # type: ignore[return-value]


def run_candidates(units: Sequence[tuple[Hashable, PlusTask, str]], dataset: Dataset, gt: GroundTruth, *,
                   min_time_limit: float = DEFAULT_MIN_TIME_LIMIT_S, executor: Any = None, fast_check: bool = False,
                   progress_desc: str = "sandbox",
                   splits: Sequence[Split] = SPLITS, progress: bool = True) -> dict[tuple[Hashable, Split], SplitRun]:
    """`run_candidate` for any number of programs per task.

    `(key, task, solution)` units, all in one batch, keyed `(key, split)`; each program loads outside the per-input
    limits, within the sample's budget, as EvalPlus loads it (see `runs.run_program_units`).
    """
    def judge_for(task: PlusTask, split: Split) -> sandbox.CallJudge:
        expected = [o.value if o.kind == "value" else sandbox.NO_EXPECTED for o in gt.run(task.task_id, split).outcomes]
        return evalplus_judge(dataset, task.entry_point, task.atol, expected)

    def canonical_seconds(task: PlusTask, split: Split) -> float:
        return sum(gt.times(task.task_id, split))

    def digested_expectations(task: PlusTask, split: Split) -> list[int]:
        return [i for i, o in enumerate(gt.run(task.task_id, split).outcomes) if isinstance(o.value, ValueDigest)]

    program_units = [ProgramUnit(key, task, candidate_program(solution, task, dataset))
                     for key, task, solution in units]
    return run_program_units(program_units, evalplus_time_limits_for(gt, min_time_limit=min_time_limit),
                             executor=executor, budget=EVALPLUS_SAMPLE_BUDGET, fast_check=fast_check,
                             judge_for=judge_for, cost_for=canonical_seconds,
                             digest_above_bytes=DIGEST_ABOVE_BYTES, digest_inputs_for=digested_expectations,
                             progress_desc=progress_desc, splits=splits,
                             progress=progress)


def original_solutions(tasks: Sequence[PlusTask], originals: Mapping[str, HumanEvalTask]) -> dict[str, str]:
    """How EvalPlus scores a completion: HumanEval+'s prompt followed by OpenAI's canonical body."""
    return {task.task_id: task.prompt + originals[task.task_id].canonical_solution
            for task in tasks if task.task_id in originals}



def run_original_tests(jobs_spec: Sequence[tuple[str, str, str, str]], *, executor: Any = None,
                       timeout_s: float = ASSERT_TEST_TIMEOUT_S) -> dict[str, Any]:
    """Run `(key, program, snippet, entry_point)` jobs: key -> TestsResult.

    Each snippet runs in the sandbox's judge against the program's answers."""
    limits = sandbox.Limits(timeout_s=timeout_s, total_timeout_s=timeout_s + 10.0)
    jobs = [sandbox.TestsJob(key=key, program=program, snippets=(snippet,), entry_points=(entry_point,),
                             limits=limits)
            for key, program, snippet, entry_point in jobs_spec]
    return dict(sandbox.run_many(jobs, executor, progress_desc="original tests", progress_unit="tasks"))


__all__ = ["ASSERT_TEST_TIMEOUT_S", "DEFAULT_MIN_TIME_LIMIT_S", "GT_TIME_LIMIT_FACTOR", "InputVerdict",
           "evalplus_time_limits_for", "original_solutions", "run_candidate", "run_candidates", "run_original_tests",
           "score_split", "time_limits"]
