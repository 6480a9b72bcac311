"""One HumanEval+ / MBPP+ task as the audit saw it (`AuditSession.task`).

Its prompt, canonical solutions, and every input's verdict: EvalPlus's canonical (which defines the expected output)
and, for HumanEval+, OpenAI's canonical scored with EvalPlus's rules. The runs are the audit's own when a check already
made them; otherwise only this task is run, in the sandbox, and nothing is re-run to classify timeouts.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from audit_lib.benchmarks.humaneval_plus.data import OPENAI_HUMANEVAL, PlusTask
from audit_lib.benchmarks.humaneval_plus.inputs import Inputs, source_key
from audit_lib.benchmarks.humaneval_plus.runs import SPLITS, InputOutcome, Split, SplitRun, inputs_of, shown_value
from audit_lib.errors import NoTaskViewError
from audit_lib.sandbox import safe_repr
from audit_lib.report.task_view import TaskView, unknown_task, verdict_frame

if TYPE_CHECKING:
    from audit_lib.benchmarks.humaneval_plus.groundtruth import GroundTruth
    from audit_lib.benchmarks.humaneval_plus.timing_rerun import Classification

EVALPLUS_CANONICAL = "evalplus_canonical"
OPENAI_CANONICAL = "openai_canonical"
VALUE_CHARS = 2000  # a value's text in the frame; the report collapses anything longer than a line


def task_view(inputs: Inputs, params: Any, task_id: str) -> TaskView:
    """The task's view; an id outside the selected tasks raises UnknownTaskError with the near matches."""
    if inputs.plus is None:
        raise NoTaskViewError(f"no tasks loaded: {inputs.missing.get(inputs.plus_key, inputs.plus_key)}",
                              missing=[inputs.plus_key])
    by_id = {task.task_id: task for task in inputs.tasks}
    if task_id not in by_id:
        raise unknown_task(task_id, list(by_id), scope=_scope(inputs))
    task = by_id[task_id]
    gt = _ground_truth(inputs, task)
    rows = [row for split in SPLITS for row in canonical_rows(task, split, gt.run(task_id, split))]
    solutions = {EVALPLUS_CANONICAL: task.canonical_solution}
    notes = []
    openai = source_key(OPENAI_HUMANEVAL)
    if inputs.dataset != "humaneval":
        notes.append("MBPP+ ships only EvalPlus's canonical solution: no other solution is scored")
    elif openai in inputs.missing:
        notes.append(f"OpenAI's canonical is not scored: {openai} is unavailable")
    elif task_id not in inputs.originals:
        notes.append(f"OpenAI's canonical is not scored: {openai} has no {task_id}")
    else:
        solutions[OPENAI_CANONICAL] = inputs.originals[task_id].canonical_solution
        runs = _openai_runs(inputs, task, gt)
        classification = vars(inputs).get("original_canonical_timing")  # computed by original_canonical_vs_plus
        for split in SPLITS:
            if (task_id, split) in runs:
                rows += scored_rows(task, inputs.dataset, split, runs[(task_id, split)], gt.run(task_id, split),
                                    classification)
        if classification is None and any(r["cause"] == "unclassified" for r in rows):
            notes.append("timeouts are not classified (deterministic or timing): run the check "
                         "original_canonical_vs_plus, which re-runs them alone")
    context = {"contract": task.contract} if task.contract.strip() else {}
    return TaskView(inputs.dataset, task_id, task.prompt, solutions, verdict_frame(rows), context, tuple(notes))


def canonical_rows(task: PlusTask, split: Split, run: SplitRun) -> list[dict[str, Any]]:
    """EvalPlus's canonical on each input: its output is the expected one; no output fails every sample."""
    rows = []
    for index, args in enumerate(inputs_of(task, split)):
        outcome = run.outcomes[index] if index < len(run.outcomes) else InputOutcome("not_run")
        passed = outcome.kind == "value"
        rows.append({"solution": EVALPLUS_CANONICAL, "input_id": f"{split}[{index}]",
                     "input": safe_repr(args, VALUE_CHARS), "expected": None, "got": outcome_text(outcome),
                     "status": "pass" if passed else "fail", "kind": outcome.kind,
                     "cause": None if passed else "no expected output", "wall_s": outcome.duration_s,
                     "cpu_s": outcome.cpu_s or None, "detail": run.load_error})
    return rows


def scored_rows(task: PlusTask, dataset: Any, split: Split, run: SplitRun, expected: SplitRun,
                classification: Classification | None) -> list[dict[str, Any]]:
    """A sample's outcome on each input under EvalPlus's rules (every input scored, atol promotion carried)."""
    from audit_lib.benchmarks.humaneval_plus.replay import score_split
    from audit_lib.benchmarks.humaneval_plus.timing_rerun import RERUN_KINDS

    reruns = {(r.split, r.index): r for r in classification.reruns if r.task_id == task.task_id} \
        if classification is not None else {}
    states = classification.causes() if classification is not None else {}
    args_list = inputs_of(task, split)
    rows = []
    for verdict in score_split(task, dataset, run, expected):
        got = run.outcomes[verdict.index]
        rerun = reruns.get((split, verdict.index))
        cause = None
        if not verdict.passed:
            if verdict.kind not in RERUN_KINDS:
                cause = "deterministic"
            elif rerun is not None:
                state = states.get(task.task_id)
                cause = rerun.verdict + (f" ({state})" if rerun.verdict == "timing" and state else "")
            else:
                cause = "not re-run" if classification is not None else "unclassified"
        want = expected.outcomes[verdict.index]
        rows.append({"solution": OPENAI_CANONICAL, "input_id": f"{split}[{verdict.index}]",
                     "input": safe_repr(args_list[verdict.index], VALUE_CHARS), "expected": outcome_text(want),
                     "got": outcome_text(got), "status": "pass" if verdict.passed else "fail", "kind": verdict.kind,
                     "cause": cause, "wall_s": got.duration_s, "cpu_s": got.cpu_s or None,
                     "detail": _reason(verdict.detail, got, want),
                     "rerun_cpu_s": rerun.cpu_s if rerun is not None else None,
                     "rerun_canonical_cpu_s": rerun.reference_cpu_s if rerun is not None else None})
    return rows


def _reason(detail: str, got: InputOutcome, want: InputOutcome) -> str | None:
    """Why a value was refused (`|poly(xs, out)| = … > atol …`), without the values the row already shows."""
    prefix = f"got {got.describe()}, expected {want.describe()} ("  # replay.score_split's wording
    if detail.startswith(prefix) and detail.endswith(")"):
        return detail[len(prefix):-1] or None
    return None if detail == got.describe() else (detail or None)  # a timeout's detail is its `got`


def outcome_text(outcome: InputOutcome) -> str:
    if outcome.kind == "value" and not outcome.judged:
        return shown_value(outcome.value, VALUE_CHARS)
    return outcome.describe()


def _scope(inputs: Inputs) -> str:
    if not inputs.selects_tasks:
        return f"the tasks of {inputs.plus_key}"
    chosen = ", ".join(f"{name}={value!r}" for name, value in (("task_ids", ",".join(inputs.task_ids)),
                                                                ("max_tasks", inputs.max_tasks)) if value)
    return f"the tasks this session selected ({chosen})"


def _ground_truth(inputs: Inputs, task: PlusTask) -> GroundTruth:
    """The audit's ground truth when computed; else this task's, from the cache or run now in the sandbox."""
    from audit_lib.benchmarks.humaneval_plus.groundtruth import load_or_compute_ground_truth

    if "ground_truth" in vars(inputs):
        return inputs.ground_truth
    assert inputs.plus is not None
    return load_or_compute_ground_truth(dataclasses.replace(inputs.plus, tasks=(task,)), executor=inputs.executor)


def _openai_runs(inputs: Inputs, task: PlusTask, gt: GroundTruth) -> Mapping[tuple[str, Split], SplitRun]:
    """OpenAI's canonical runs of the audit when made; else this task alone, in the sandbox."""
    from audit_lib.benchmarks.humaneval_plus.replay import original_solutions, run_candidate

    if "original_canonical_runs" in vars(inputs):
        return inputs.original_canonical_runs
    return run_candidate([task], original_solutions([task], inputs.originals), inputs.dataset, gt,
                         min_time_limit=inputs.min_time_limit, executor=inputs.executor)


__all__ = ["EVALPLUS_CANONICAL", "OPENAI_CANONICAL", "canonical_rows", "outcome_text", "scored_rows", "task_view"]
