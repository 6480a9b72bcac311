"""`your_generations`: a user's generations scored with upstream's IVR rules, beside the published models.

Each sample runs against every constraint of its task in the sandbox, exactly as the cached generations do in
`ivr_replay` (see `runs`); its outcome and the IVR follow `ivr` (upstream's `evaluate_solution` / `compute_ivr`).
The published models are shown on the same tasks (recomputed from their published outcomes) and on all tasks
(their stored overall IVR), so the comparison is like for like whatever subset the user covers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from audit_lib.benchmarks.intentspec.audit import Inputs, Params
from audit_lib.benchmarks.intentspec.checks_replay import replay_outcomes
from audit_lib.benchmarks.intentspec.data import PublishedRun, SpecPair
from audit_lib.benchmarks.intentspec.ivr import ivr_by_type, ivr_of_outcomes, outcome_from_verdicts
from audit_lib.benchmarks.intentspec.runs import CandidateRun
from audit_lib.benchmarks.intentspec.timing_split import rerun_timeouts, split_observed
from audit_lib.benchmarks.intentspec.user_generations import UserGenerations
from audit_lib.benchmarks.intentspec.verdicts import error_text, harness_errors, role_of, task_number
from audit_lib.errors import ParameterError
from audit_lib.findings import Result


def your_generations(inputs: Inputs, params: Params) -> Result:
    """Score `-p generations_dir` with upstream's rules; skipped (param:generations_dir) when none is given."""
    if not inputs.generations_dir:
        return Result.skipped("no generations given: pass -p generations_dir DIR (a folder of "
                              "<model>__HumanEval_<n>.jsonl files, the supplement's layout)",
                              missing=["param:generations_dir"])
    try:
        user = inputs.user_generations
    except ParameterError as exc:  # checked before the kernel started; the folder changed since
        return Result.errored(exc.message)
    specs = inputs.data.specs
    unknown = unknown_task_files(user, specs)
    if unknown:
        return Result.errored(f"{len(unknown)} file(s) of generations_dir name a task that is not one of "
                              f"IntentSpec's {len(specs)}: {', '.join(unknown[:10])}; rename or remove them and "
                              "run again")
    runs = inputs.user_runs
    observed, meta = split_observed(runs, rerun_timeouts(runs, inputs.data.specs_by_task, inputs.timeout_s),
                                    inputs.timeout_s)
    return your_generations_from(specs, user, runs, inputs.data.published, timing_observed=observed,
                                 timing_meta=meta)


def unknown_task_files(user: UserGenerations, specs: Sequence[SpecPair]) -> list[str]:
    """The files whose task is not one of IntentSpec's."""
    known = {spec.task_id for spec in specs}
    return sorted({g.file for g in user.generations if g.task_id not in known})


def your_generations_from(specs: Sequence[SpecPair], user: UserGenerations, runs: Sequence[CandidateRun],
                          published: Sequence[PublishedRun], *, timing_observed: Mapping[str, Any] | None = None,
                          timing_meta: Mapping[str, Any] | None = None) -> Result:
    """Per model of the folder: each sample's outcome, the per-task and overall IVR, and the published beside it."""
    harness = harness_errors(runs)
    if harness:
        return Result.errored(f"{len(harness)} sandbox harness error(s)", details=harness)
    specs_by_task = {spec.task_id: spec for spec in specs}
    details = [_sample_row(specs_by_task[run.candidate.task_id], run) for run in
               sorted(runs, key=lambda run: (run.candidate.label, task_number(run.candidate.task_id),
                                             run.candidate.sample))]
    covered = [spec.task_id for spec in specs if spec.task_id in set(user.tasks)]
    replayed = replay_outcomes(specs_by_task, runs)
    yours: dict[str, dict[str, Any]] = {}
    for model in user.models:
        by_task = replayed.get(model, {})
        outcomes = {spec.task_id: by_task[spec.task_id] for spec in specs if spec.task_id in by_task}
        per_task, overall = ivr_of_outcomes(outcomes)
        yours[model] = {"overall_ivr": overall.value, "tasks_covered": len(outcomes),
                        "tasks_included": len(overall.included), "excluded_no_stated_pass": list(overall.excluded),
                        "solutions": sum(len(o) for o in outcomes.values()),
                        "ivr_by_type": ivr_by_type(specs, per_task),
                        "per_task_ivr": {task: result.ivr for task, result in per_task.items()}}
    beside: dict[str, dict[str, Any]] = {}
    for run in published:
        subset = {task: run.per_task[task] for task in covered if task in run.per_task}
        _, on_yours = ivr_of_outcomes(subset)
        beside[run.model] = {"ivr_on_your_tasks": on_yours.value, "tasks_included": len(on_yours.included),
                             "ivr_all_tasks": run.overall_ivr, "file": run.file}
    not_covered = [spec.task_id for spec in specs if spec.task_id not in set(covered)]
    comparison = ([{"model": model, "source": "yours", "ivr_on_your_tasks": round(v["overall_ivr"], 6),
                    "tasks_included": v["tasks_included"],
                    "ivr_all_tasks": round(v["overall_ivr"], 6) if not not_covered else None}
                   for model, v in yours.items()]
                  + [{"model": model, "source": f"published ({v['file']})",
                      "ivr_on_your_tasks": round(v["ivr_on_your_tasks"], 6), "tasks_included": v["tasks_included"],
                      "ivr_all_tasks": round(v["ivr_all_tasks"], 6)} for model, v in beside.items()])
    summary = (f"{len(runs)} solution(s) of {len(yours)} model(s) on {len(covered)} of {len(specs)} tasks"
               + (f" ({len(not_covered)} not covered, left out of the IVR, never counted as violations)"
                  if not_covered else "") + ". "
               + "; ".join(f"{model}: IVR {v['overall_ivr']:.4f} over the {v['tasks_included']} task(s) with a "
                           f"stated-passing solution" for model, v in yours.items())
               + ". On the same tasks: "
               + ("; ".join(f"{model} {v['ivr_on_your_tasks']:.4f} (published {v['ivr_all_tasks']:.4f} on all "
                            f"tasks)" for model, v in beside.items()) or "no published results available") + ".")
    return Result("pass",
                 observed={"models": yours, "published": beside, "comparison": comparison,
                           "tasks_not_covered": not_covered, "folder_files": len({g.file for g in user.generations}),
                           **dict(timing_observed or {})},
                 expected="scored, nothing expected", summary=summary, details=details,
                 meta={"folder": "<generations_dir>", "rules": "upstream's evaluate_solution / compute_ivr: a "
                       "solution violates when it passes every stated constraint and fails a hidden one; per task, "
                       "violations / stated-passing solutions; overall, the mean over tasks with a stated-passing "
                       "solution", **dict(timing_meta or {})})


def _sample_row(spec: SpecPair, run: CandidateRun) -> dict[str, Any]:
    outcome = outcome_from_verdicts(spec, run.passed_by_id())
    failing = [v for v in run.verdicts if not v.passed]
    return {"model": run.candidate.label, "task_id": spec.task_id, "sample": run.candidate.sample,
            "passes_stated": outcome.passes_stated, "failed_hidden": ",".join(outcome.failed_hidden),
            "violation": outcome.passes_stated and bool(outcome.failed_hidden),
            "failing": "; ".join(f"{v.constraint_id} ({role_of(spec, v.constraint_id)}) {v.status}: {error_text(v)}"
                                 for v in failing)[:600]}


__all__ = ["unknown_task_files", "your_generations", "your_generations_from"]
