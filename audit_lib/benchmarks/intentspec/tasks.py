"""One IntentSpec task as the audit saw it (`AuditSession.task`).

The ambiguous prompt, the canonical and both HumanEval references, and each candidate's verdict on each constraint, from
the audit's batch when a check ran it, else from this task's candidates run in the sandbox. An input here is a
constraint: its test code is the `input`, `expected` is that its asserts hold.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from audit_lib.benchmarks.intentspec.data import SpecPair
from audit_lib.benchmarks.intentspec.load import REFERENCE_KEYS
from audit_lib.benchmarks.intentspec.replay import ReplayRuns, build_candidates
from audit_lib.benchmarks.intentspec.runs import CANONICAL, GENERATION, PROBE, CandidateRun, run_candidates
from audit_lib.benchmarks.intentspec.verdicts import error_text, role_of, task_number
from audit_lib.errors import NoTaskViewError
from audit_lib.report.task_view import TaskView, unknown_task, verdict_frame

EXPECTED = "assertions hold"


def task_view(inputs: Any, params: Any, task_id: str) -> TaskView:
    """The task's view (`inputs` is the audit's `Inputs`); an id outside the selected tasks raises UnknownTaskError."""
    data = inputs.data
    if not data.specs:
        raise NoTaskViewError("no tasks loaded: " + "; ".join(f"{k}: {v}" for k, v in data.unavailable.items()),
                              missing=sorted(data.unavailable))
    if task_id not in data.selected:
        scope = "the tasks of spec_pairs.jsonl" if data.all_tasks_selected else \
            f"the {len(data.selected)} tasks this session selected (max_tasks)"
        raise unknown_task(task_id, sorted(data.selected, key=task_number), scope=scope)
    spec = data.specs_by_task[task_id]
    solutions = {}
    canonical = data.canonicals_by_task.get(task_id)
    if canonical is not None:
        solutions[CANONICAL] = canonical.full_source
    for label, by_task in data.references.items():
        if task_id in by_task:
            solutions[label] = str(by_task[task_id]["prompt"]) + str(by_task[task_id]["canonical_solution"])
    generations_of_task = f"__{task_id.replace('/', '_')}.jsonl"
    notes = [f"{key} is unavailable: its runs are not here" for key in sorted(data.unavailable)
             if key.endswith(generations_of_task) or key in REFERENCE_KEYS.values()]
    if canonical is None:
        notes.append(f"canonicals.jsonl has no canonical for {task_id}")
    rows = [row for run in _task_runs(inputs, task_id) for row in constraint_rows(spec, run)]
    context = {"gold prompt": spec.gold_prompt,
               "constraints": "\n".join(f"{c.id} ({role_of(spec, c.id)}): {c.description}" for c in spec.constraints)}
    return TaskView("intentspec", task_id, spec.ambiguous_prompt, solutions, verdict_frame(rows), context,
                    tuple(notes))


def solution_label(run: CandidateRun) -> str:
    candidate = run.candidate
    if candidate.kind == GENERATION:
        return f"generation:{candidate.label}#{candidate.sample}"
    if candidate.kind == PROBE:
        return f"probe:{candidate.label}"
    return candidate.kind


def constraint_rows(spec: SpecPair, run: CandidateRun) -> list[dict[str, Any]]:
    """One row per constraint: the sandbox's verdict (decided by the sandbox's judge), its error, its time."""
    constraints = spec.constraint_map()
    rows = []
    for verdict in run.verdicts:
        constraint = constraints.get(verdict.constraint_id)
        got = verdict.status if verdict.passed else f"{verdict.status}: {error_text(verdict)}".rstrip(": ")
        rows.append({"solution": solution_label(run), "input_id": verdict.constraint_id,
                     "input": constraint.test_code if constraint is not None else None, "expected": EXPECTED,
                     "got": got, "status": "pass" if verdict.passed else "fail", "kind": verdict.status,
                     "cause": None, "wall_s": verdict.duration_s, "cpu_s": None,
                     "role": role_of(spec, verdict.constraint_id),
                     "description": constraint.description if constraint is not None else None,
                     "exit_code": verdict.exit_code, "trust": verdict.trust})
    return rows


def _task_runs(inputs: Any, task_id: str) -> Sequence[CandidateRun]:
    """The audit's runs of this task when its batch ran; else this task's candidates alone, in the sandbox."""
    replay = vars(inputs).get("replay")
    if isinstance(replay, ReplayRuns):
        return [*([replay.canonical[task_id]] if task_id in replay.canonical else []),
                *(by_task[task_id] for by_task in replay.references.values() if task_id in by_task),
                *(run for run in (*replay.generations, *replay.probes) if run.candidate.task_id == task_id)]
    candidates = [c for c in build_candidates(inputs.data) if c.task_id == task_id]
    runs = run_candidates(candidates, inputs.data.specs_by_task, timeout_s=inputs.timeout_s,
                          executor=inputs.executor)
    order = {candidate.key: index for index, candidate in enumerate(candidates)}
    return sorted(runs.values(), key=lambda run: order[run.candidate.key])


__all__ = ["constraint_rows", "solution_label", "task_view"]
