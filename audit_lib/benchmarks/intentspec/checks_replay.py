"""The IVR replay: re-execute the cached generations and compare outcomes and IVR with the published results."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from audit_lib.benchmarks.intentspec.audit import Inputs, Params
from audit_lib.benchmarks.intentspec.data import PublishedOutcome, PublishedRun, SpecPair
from audit_lib.benchmarks.intentspec.ivr import OverallIVR, TaskIVR, ivr_by_type, ivr_of_outcomes, outcome_from_verdicts
from audit_lib.benchmarks.intentspec.load import GENERATIONS_KEY_PREFIX, RESULTS_KEY_PREFIX, missing_under
from audit_lib.benchmarks.intentspec.runs import CandidateRun
from audit_lib.benchmarks.intentspec.sandbox_record import with_sandbox_record
from audit_lib.benchmarks.intentspec.verdicts import ERROR_TEXT_CHARS, error_text, harness_errors
from audit_lib.findings import Result

IVR_TOLERANCE = 1e-9


@dataclass(frozen=True)
class ModelReplay:
    """One model's replayed outcomes and IVR next to the published ones (same task subset)."""

    model: str
    model_slug: str
    replayed: Mapping[str, tuple[PublishedOutcome, ...]]
    replayed_task_ivr: Mapping[str, TaskIVR]
    replayed_overall: OverallIVR
    published_task_ivr: Mapping[str, TaskIVR]
    published_overall_recomputed: OverallIVR
    published_overall_stored: float


def replay_outcomes(specs_by_task: Mapping[str, SpecPair], runs: Sequence[CandidateRun]
                    ) -> dict[str, dict[str, tuple[PublishedOutcome, ...]]]:
    """model slug -> task id -> outcomes in sample order, from generation runs."""
    grouped: dict[str, dict[str, list[tuple[int, PublishedOutcome]]]] = defaultdict(lambda: defaultdict(list))
    for run in runs:
        candidate = run.candidate
        outcome = outcome_from_verdicts(specs_by_task[candidate.task_id], run.passed_by_id())
        grouped[candidate.label][candidate.task_id].append((candidate.sample, outcome))
    return {slug: {task: tuple(o for _, o in sorted(items, key=lambda item: item[0]))
                   for task, items in by_task.items()} for slug, by_task in grouped.items()}


def model_replays(specs: Sequence[SpecPair], runs: Sequence[CandidateRun],
                  published: Sequence[PublishedRun]) -> list[ModelReplay]:
    specs_by_task = {spec.task_id: spec for spec in specs}
    replayed_all = replay_outcomes(specs_by_task, runs)
    order = [spec.task_id for spec in specs]
    replays = []
    for run in published:
        replayed = {task: replayed_all.get(run.model_slug, {}).get(task, ()) for task in order
                    if task in replayed_all.get(run.model_slug, {})}
        published_subset = {task: run.per_task[task] for task in order if task in run.per_task}
        replayed_task, replayed_overall = ivr_of_outcomes(replayed)
        published_task, published_overall = ivr_of_outcomes(published_subset)
        replays.append(ModelReplay(run.model, run.model_slug, replayed, replayed_task, replayed_overall,
                                   published_task, published_overall, run.overall_ivr))
    return replays


def outcome_mismatches(spec: SpecPair, model: str, published: Sequence[PublishedOutcome],
                       replayed: Sequence[PublishedOutcome], runs_by_sample: Mapping[int, CandidateRun]
                       ) -> list[dict[str, Any]]:
    rows = []
    if len(published) != len(replayed):
        rows.append({"model": model, "task_id": spec.task_id, "sample": None, "field": "n_solutions",
                     "published": len(published), "replayed": len(replayed), "evidence": ""})
    for sample, (ours, theirs) in enumerate(zip(replayed, published)):
        for field in ("passes_stated", "passed_hidden", "failed_hidden"):
            if getattr(ours, field) != getattr(theirs, field):
                run = runs_by_sample.get(sample)
                evidence = "; ".join(f"{v.constraint_id}={v.status} ({v.trust}) {error_text(v)}".strip()
                                     for v in (run.verdicts if run else ()) if not v.passed)
                rows.append({"model": model, "task_id": spec.task_id, "sample": sample, "field": field,
                             "published": getattr(theirs, field), "replayed": getattr(ours, field),
                             "evidence": evidence[:ERROR_TEXT_CHARS]})
    return rows


def ivr_replay(inputs: Inputs, params: Params) -> Result:
    """The cached generations re-run under every constraint, against the published outcomes and IVR."""
    data = inputs.data
    generations = inputs.runs.generations
    result = ivr_replay_from(data.selected_specs, generations, data.published, all_tasks=data.all_tasks_selected,
                             unavailable=data.unavailable)
    return with_sandbox_record(inputs, result, judged=generations)


def ivr_replay_from(specs: Sequence[SpecPair], runs: Sequence[CandidateRun], published: Sequence[PublishedRun],
                    *, all_tasks: bool, unavailable: Mapping[str, str]) -> Result:
    if not published:
        return Result.skipped(
            f"no published results file available: {'; '.join(unavailable.values()) or 'none'}",
            meta={"missing": missing_under(unavailable, RESULTS_KEY_PREFIX)})
    if not runs:
        return Result.skipped(
            f"no cached generations available: {'; '.join(unavailable.values()) or 'none'}",
            meta={"missing": missing_under(unavailable, GENERATIONS_KEY_PREFIX)})
    harness = harness_errors(runs)
    if harness:
        return Result.errored(f"{len(harness)} sandbox harness error(s)", details=harness)
    specs_by_task = {spec.task_id: spec for spec in specs}
    runs_index: dict[tuple[str, str], dict[int, CandidateRun]] = defaultdict(dict)
    for run in runs:
        runs_index[(run.candidate.label, run.candidate.task_id)][run.candidate.sample] = run
    details: list[dict[str, Any]] = []
    per_model: dict[str, Any] = {}
    compared = 0
    for replay in model_replays(specs, runs, published):
        published_run = next(p for p in published if p.model == replay.model)
        for task_id, spec in specs_by_task.items():
            theirs = published_run.per_task.get(task_id)
            ours = replay.replayed.get(task_id)
            if theirs is None or ours is None:
                details.append({"model": replay.model, "task_id": task_id, "sample": None, "field": "presence",
                                "published": theirs is not None, "replayed": ours is not None, "evidence": ""})
                continue
            compared += min(len(theirs), len(ours))
            details += outcome_mismatches(spec, replay.model, theirs, ours, runs_index[(replay.model_slug, task_id)])
        overall_delta = abs(replay.replayed_overall.value - replay.published_overall_recomputed.value)
        stored_delta = abs(replay.published_overall_recomputed.value - replay.published_overall_stored)
        if overall_delta > IVR_TOLERANCE:
            details.append({"model": replay.model, "task_id": "(overall)", "sample": None, "field": "overall_ivr",
                            "published": replay.published_overall_recomputed.value,
                            "replayed": replay.replayed_overall.value, "evidence": ""})
        if all_tasks and stored_delta > IVR_TOLERANCE:
            details.append({"model": replay.model, "task_id": "(overall)", "sample": None,
                            "field": "overall_ivr (stored vs recomputed from published outcomes)",
                            "published": replay.published_overall_stored,
                            "replayed": replay.published_overall_recomputed.value, "evidence": ""})
        replayed_by_type = ivr_by_type(specs, replay.replayed_task_ivr)
        expected_by_type = (dict(published_run.ivr_by_type) if all_tasks
                            else ivr_by_type(specs, replay.published_task_ivr))
        for spec_type in sorted(set(replayed_by_type) | set(expected_by_type)):
            ours_value, theirs_value = replayed_by_type.get(spec_type), expected_by_type.get(spec_type)
            if ours_value is None or theirs_value is None or abs(ours_value - theirs_value) > IVR_TOLERANCE:
                details.append({"model": replay.model, "task_id": f"(spec_type {spec_type})", "sample": None,
                                "field": "ivr_by_type", "published": theirs_value, "replayed": ours_value,
                                "evidence": ""})
        per_model[replay.model] = {
            "replayed_ivr_by_type": replayed_by_type,
            "replayed_overall_ivr": replay.replayed_overall.value,
            "published_overall_ivr": (replay.published_overall_stored if all_tasks
                                      else replay.published_overall_recomputed.value),
            "tasks_included": len(replay.replayed_overall.included),
            "excluded_replayed": list(replay.replayed_overall.excluded),
            "excluded_published": list(replay.published_overall_recomputed.excluded),
        }
    published_slugs = {run.model_slug for run in published}
    for slug in sorted({run.candidate.label for run in runs} - published_slugs):
        details.append({"model": slug, "task_id": "(all)", "sample": None, "field": "presence",
                        "published": False, "replayed": True, "evidence": "generations without a results file"})
    scope = "all tasks" if all_tasks else (f"the first {len(specs)} tasks (published overall recomputed from "
                                            "their published outcomes, since the stored figure covers all tasks)")
    summary = (f"Compared {compared} solution outcomes over {scope}; {len(details)} mismatch(es). "
               + "; ".join(f"{model}: replayed IVR {v['replayed_overall_ivr']:.4f} vs published "
                           f"{v['published_overall_ivr']:.4f}, excluded (no stated-passing solution): "
                           f"{', '.join(v['excluded_replayed']) or 'none'}" for model, v in per_model.items()))
    return Result("quirk" if details else "pass",
                  observed={"mismatches": len(details), "outcomes_compared": compared, "models": per_model},
                  expected={"mismatches": 0}, summary=summary, details=details,
                  meta={"scope": scope})
