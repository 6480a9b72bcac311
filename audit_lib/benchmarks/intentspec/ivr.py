"""The Intent Violation Rate exactly as the upstream harness defines it (pure functions).

Replayed from `anote-ai/Research-IntentSpecification` (`execute.py::evaluate_solution`, `ivr.py::compute_ivr`): a
solution passes the stated constraints when every stated id with a constraint passes (an empty set passes); per task,
IVR = stated-passing solutions failing a hidden constraint / stated-passing solutions; the overall IVR is the unweighted
mean over tasks with a stated-passing solution (0.0 when none is left), and `ivr_by_type` the same mean per `spec_type`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from audit_lib.benchmarks.intentspec.data import PublishedOutcome, SpecPair


@dataclass(frozen=True)
class TaskIVR:
    """One task's IVR; `ivr` is None when no solution passes the stated constraints (excluded from the mean)."""

    task_id: str
    n_solutions: int
    n_passing_stated: int
    n_violating: int
    ivr: float | None


@dataclass(frozen=True)
class OverallIVR:
    """The mean of per-task IVRs over the included tasks, and the tasks left out."""

    value: float
    included: tuple[str, ...]
    excluded: tuple[str, ...]


def outcome_from_verdicts(spec: SpecPair, passed: Mapping[str, bool]) -> PublishedOutcome:
    """One solution's outcome from its per-constraint pass/fail verdicts (keyed by constraint id)."""
    known = spec.constraint_map()
    passes_stated = all(passed[cid] for cid in spec.stated_test_ids if cid in known)
    hidden = [cid for cid in spec.hidden_test_ids if cid in known]
    return PublishedOutcome(
        passes_stated=passes_stated,
        passed_hidden=tuple(cid for cid in hidden if passed[cid]),
        failed_hidden=tuple(cid for cid in hidden if not passed[cid]),
    )


def task_ivr(task_id: str, outcomes: Sequence[PublishedOutcome]) -> TaskIVR:
    passing = [o for o in outcomes if o.passes_stated]
    violating = [o for o in passing if o.failed_hidden]
    return TaskIVR(task_id=task_id, n_solutions=len(outcomes), n_passing_stated=len(passing),
                   n_violating=len(violating), ivr=len(violating) / len(passing) if passing else None)


def overall_ivr(per_task: Sequence[TaskIVR]) -> OverallIVR:
    included = [t for t in per_task if t.ivr is not None]
    value = sum(t.ivr for t in included) / len(included) if included else 0.0  # type: ignore[misc]
    return OverallIVR(value=value, included=tuple(t.task_id for t in included),
                      excluded=tuple(t.task_id for t in per_task if t.ivr is None))


def ivr_of_outcomes(per_task_outcomes: Mapping[str, Sequence[PublishedOutcome]]) -> tuple[dict[str, TaskIVR],
                                                                                          OverallIVR]:
    """Per-task and overall IVR for `{task_id: [outcome, ...]}`, tasks kept in the mapping's order."""
    per_task = {task_id: task_ivr(task_id, outcomes) for task_id, outcomes in per_task_outcomes.items()}
    return per_task, overall_ivr(list(per_task.values()))


def ivr_by_type(specs: Sequence[SpecPair], per_task: Mapping[str, TaskIVR]) -> dict[str, float]:
    """Mean IVR per spec type over the tasks of `per_task` that have a stated-passing solution."""
    scores: dict[str, list[float]] = {}
    for spec in specs:
        result = per_task.get(spec.task_id)
        if result is not None and result.ivr is not None:
            scores.setdefault(spec.spec_type, []).append(result.ivr)
    return {spec_type: sum(values) / len(values) for spec_type, values in scores.items()}
