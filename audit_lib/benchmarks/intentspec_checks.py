"""IntentSpec checks that judge executed runs: canonicals, references, the IVR replay, the exit-code probe, power."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from audit_lib.benchmarks.intentspec_data import Canonical, PublishedOutcome, PublishedRun, SpecPair
from audit_lib.benchmarks.intentspec_exec import CandidateRun, ConstraintVerdict, ordered_constraints
from audit_lib.benchmarks.intentspec_ivr import (
    OverallIVR, TaskIVR, ivr_by_type, ivr_of_outcomes, outcome_from_verdicts, task_ivr,
)
from audit_lib.findings import Check

IVR_TOLERANCE = 1e-9
ERROR_TEXT_CHARS = 300


def role_of(spec: SpecPair, constraint_id: str) -> str:
    if constraint_id in spec.stated_test_ids:
        return "stated"
    if constraint_id in spec.hidden_test_ids:
        return "hidden"
    return "unassigned"


def _error_text(verdict: ConstraintVerdict) -> str:
    parts = [p for p in (verdict.error_type, verdict.error_message) if p]
    text = ": ".join(parts) if parts else verdict.stderr_tail.strip()
    return text[:ERROR_TEXT_CHARS]


def _harness_errors(runs: Sequence[CandidateRun]) -> list[dict[str, Any]]:
    return [{"candidate": "/".join(map(str, run.candidate.key)), "constraint_id": v.constraint_id,
             "error": _error_text(v)}
            for run in runs for v in run.verdicts if v.status == "harness_error"]


def failing_rows(spec: SpecPair, run: CandidateRun) -> list[dict[str, Any]]:
    descriptions = {c.id: c.description for c in spec.constraints}
    return [{"task_id": spec.task_id, "source": run.candidate.label, "constraint_id": v.constraint_id,
             "role": role_of(spec, v.constraint_id), "description": descriptions.get(v.constraint_id, ""),
             "status": v.status, "error": _error_text(v), "trust": v.trust}
            for v in run.verdicts if not v.passed]


# --- canonical_ivr_zero ---------------------------------------------------------------------------------------

CANONICAL_TITLE = "Every canonical passes every constraint (canonical IVR == 0)"


def canonical_ivr_zero_check(specs: Sequence[SpecPair], canonical_runs: Mapping[str, CandidateRun],
                             canonicals: Sequence[Canonical]) -> Check:
    """`canonical_runs` maps task id -> the canonical's run; a task with no canonical is listed, not dropped."""
    if not specs or not canonical_runs:
        return Check.skipped("canonical_ivr_zero", CANONICAL_TITLE,
                             f"nothing to judge: {len(specs)} spec(s) selected, {len(canonical_runs)} canonical run(s)")
    details: list[dict[str, Any]] = []
    per_task: dict[str, Any] = {}
    no_canonical = []
    not_run = []
    canonical_tasks = {c.task_id for c in canonicals}
    for spec in specs:
        run = canonical_runs.get(spec.task_id)
        if run is None:
            (no_canonical if spec.task_id not in canonical_tasks else not_run).append(spec.task_id)
            continue
        outcome = outcome_from_verdicts(spec, run.passed_by_id())
        ivr = task_ivr(spec.task_id, [outcome])
        per_task[spec.task_id] = "excluded (fails stated)" if ivr.ivr is None else ivr.ivr
        details += failing_rows(spec, run)
    harness = _harness_errors(list(canonical_runs.values()))
    failing_tasks = sorted({row["task_id"] for row in details}, key=_task_number)
    observed = {"tasks_run": len(per_task), "tasks_with_failures": len(failing_tasks),
                "failing_constraints": len(details),
                "tasks_ivr_1": sum(1 for v in per_task.values() if v == 1.0),
                "tasks_failing_stated": sum(1 for v in per_task.values() if isinstance(v, str)),
                "tasks_without_canonical": no_canonical, "tasks_canonical_not_run": not_run}
    summary = (f"{len(details)} failing constraint(s) on {len(failing_tasks)} of {len(per_task)} tasks: "
               f"{', '.join(failing_tasks) or 'none'}. Canonical bound as `full_source + '\\nsolution = "
               f"<entry_point>\\n'`."
               + (f" Without a canonical: {', '.join(no_canonical)}." if no_canonical else "")
               + (f" Canonical present but not run: {', '.join(not_run)}." if not_run else ""))
    if harness:
        return Check.errored("canonical_ivr_zero", CANONICAL_TITLE, f"{len(harness)} sandbox harness error(s)",
                             details=harness)
    status = "defect" if details or no_canonical else ("error" if not_run else "pass")
    return Check(id="canonical_ivr_zero", title=CANONICAL_TITLE, status=status, observed=observed,
                 expected={"failing_constraints": 0}, summary=summary, details=details,
                 meta={"per_task_ivr": per_task})


def _task_number(task_id: str) -> tuple[int, str]:
    match = re.search(r"(\d+)$", task_id)
    return (int(match.group(1)) if match else -1, task_id)


# --- canonical_provenance -------------------------------------------------------------------------------------

PROVENANCE_TITLE = "Canonicals are HumanEval's reference solutions verbatim (as the data README says)"


def normalise_whitespace(text: str) -> str:
    return " ".join(text.split())


def provenance_rows(canonicals: Sequence[Canonical],
                    references: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> list[dict[str, Any]]:
    rows = []
    for canonical in canonicals:
        row: dict[str, Any] = {"task_id": canonical.task_id}
        matches = []
        for label, by_task in references.items():
            reference = by_task.get(canonical.task_id)
            if reference is None:
                row[f"{label}_solution"] = "task absent"
                continue
            theirs = str(reference["canonical_solution"])
            if theirs == canonical.canonical_solution:
                verdict = "exact"
            elif normalise_whitespace(theirs) == normalise_whitespace(canonical.canonical_solution):
                verdict = "whitespace-normalised"
            else:
                verdict = "differs"
            row[f"{label}_solution"] = verdict
            row[f"{label}_prompt"] = "exact" if str(reference["prompt"]) == canonical.prompt else "differs"
            if verdict != "differs":
                matches.append(f"{label} ({verdict})")
        row["matches"] = "; ".join(matches) or "none"
        rows.append(row)
    return rows


def canonical_provenance_check(canonicals: Sequence[Canonical],
                               references: Mapping[str, Mapping[str, Mapping[str, Any]]],
                               unavailable: Mapping[str, str]) -> Check:
    if "openai_humaneval" not in references:
        return Check.skipped("canonical_provenance", PROVENANCE_TITLE,
                             f"OpenAI HumanEval is unavailable: {'; '.join(unavailable.values())}")
    rows = provenance_rows(canonicals, references)
    tally: dict[str, int] = defaultdict(int)
    for row in rows:
        for label in references:
            tally[f"{label}: {row.get(f'{label}_solution', 'absent')}"] += 1
    verbatim_openai = sum(1 for row in rows if row["openai_humaneval_solution"] == "exact")
    matching_nothing = [row["task_id"] for row in rows if row["matches"] == "none"]
    if matching_nothing:
        status = "defect"
    elif verbatim_openai == len(rows):
        status = "pass"
    else:
        status = "quirk"
    summary = (f"{verbatim_openai} of {len(rows)} canonical solutions are OpenAI HumanEval's verbatim; "
               + ", ".join(f"{key}: {n}" for key, n in sorted(tally.items()))
               + (f"; match no source: {matching_nothing}" if matching_nothing else "")
               + ("" if "humaneval_plus" in references else "; HumanEval+ unavailable, not compared"))
    return Check(id="canonical_provenance", title=PROVENANCE_TITLE, status=status,
                 observed=dict(sorted(tally.items())), expected={"openai_humaneval: exact": len(rows)},
                 summary=summary, details=rows)


# --- constraints_vs_references --------------------------------------------------------------------------------

REFERENCES_TITLE = "No constraint rejects a correct HumanEval reference solution"


def constraints_vs_references_check(specs: Sequence[SpecPair],
                                    reference_runs: Mapping[str, Mapping[str, CandidateRun]],
                                    unavailable: Mapping[str, str]) -> Check:
    """`reference_runs` maps source label -> task id -> run (OpenAI original, HumanEval+ canonical)."""
    if not reference_runs:
        return Check.skipped("constraints_vs_references", REFERENCES_TITLE,
                             f"no reference solutions available: {'; '.join(unavailable.values())}")
    runs = [run for by_task in reference_runs.values() for run in by_task.values()]
    if not runs:
        return Check.skipped("constraints_vs_references", REFERENCES_TITLE,
                             f"no reference solution was run for the {len(specs)} selected task(s)")
    harness = _harness_errors(runs)
    if harness:
        return Check.errored("constraints_vs_references", REFERENCES_TITLE,
                             f"{len(harness)} sandbox harness error(s)", details=harness)
    rejected_by: dict[tuple[str, str], list[str]] = defaultdict(list)
    details = []
    missing_tasks = []
    for spec in specs:
        for label, by_task in reference_runs.items():
            run = by_task.get(spec.task_id)
            if run is None:
                missing_tasks.append(f"{label}:{spec.task_id}")
                continue
            for row in failing_rows(spec, run):
                rejected_by[(spec.task_id, row["constraint_id"])].append(label)
                details.append(row)
    for row in details:
        row["rejected_by"] = ", ".join(rejected_by[(row["task_id"], row["constraint_id"])])
    rejecting_plus = {key for key, labels in rejected_by.items() if "humaneval_plus" in labels}
    rejecting_openai_only = {key for key, labels in rejected_by.items() if labels == ["openai_humaneval"]}
    status = "defect" if rejecting_plus else ("quirk" if rejected_by else "pass")
    per_source = {label: sum(1 for labels in rejected_by.values() if label in labels) for label in reference_runs}
    summary = (f"{len(rejected_by)} constraint(s) reject at least one reference: "
               + ", ".join(f"{label} rejected by {n}" for label, n in per_source.items())
               + (f"; {len(rejecting_openai_only)} reject only the OpenAI original (HumanEval+'s canonical passes "
                  "them)." if "humaneval_plus" in reference_runs else "; HumanEval+ canonical not run.")
               + (f" Not run (reference absent): {missing_tasks}." if missing_tasks else ""))
    return Check(id="constraints_vs_references", title=REFERENCES_TITLE, status=status,
                 observed={"constraints_rejecting_a_reference": len(rejected_by), **{
                     f"rejecting_{label}": n for label, n in per_source.items()}},
                 expected={"constraints_rejecting_a_reference": 0}, summary=summary, details=details,
                 meta={"references_absent": missing_tasks})


# --- ivr_replay -----------------------------------------------------------------------------------------------

REPLAY_TITLE = "Re-executing the cached generations reproduces the published outcomes and IVR"


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
                evidence = "; ".join(f"{v.constraint_id}={v.status} ({v.trust}) {_error_text(v)}".strip()
                                     for v in (run.verdicts if run else ()) if not v.passed)
                rows.append({"model": model, "task_id": spec.task_id, "sample": sample, "field": field,
                             "published": getattr(theirs, field), "replayed": getattr(ours, field),
                             "evidence": evidence[:ERROR_TEXT_CHARS]})
    return rows


def ivr_replay_check(specs: Sequence[SpecPair], runs: Sequence[CandidateRun], published: Sequence[PublishedRun],
                     *, all_tasks: bool, unavailable: Mapping[str, str]) -> Check:
    if not published:
        return Check.skipped("ivr_replay", REPLAY_TITLE,
                             f"no published results file available: {'; '.join(unavailable.values()) or 'none'}")
    if not runs:
        return Check.skipped("ivr_replay", REPLAY_TITLE,
                             f"no cached generations available: {'; '.join(unavailable.values()) or 'none'}")
    harness = _harness_errors(runs)
    if harness:
        return Check.errored("ivr_replay", REPLAY_TITLE, f"{len(harness)} sandbox harness error(s)", details=harness)
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
    return Check(id="ivr_replay", title=REPLAY_TITLE, status="quirk" if details else "pass",
                 observed={"mismatches": len(details), "outcomes_compared": compared, "models": per_model},
                 expected={"mismatches": 0}, summary=summary, details=details,
                 meta={"scope": scope})


# --- exit_code_exploit ----------------------------------------------------------------------------------------

EXPLOIT_TITLE = "A solution that exits with status 0 before any assertion is not counted as passing"


def exit_code_exploit_check(specs: Sequence[SpecPair], probe_runs: Sequence[CandidateRun], probe_source: str) -> Check:
    """Naive verdict = the child's raw exit code is 0 (upstream `run_solution`); ours = the sandbox status."""
    if not probe_runs:
        return Check.skipped("exit_code_exploit", EXPLOIT_TITLE, "no probe runs (no task selected)")
    harness = _harness_errors(probe_runs)
    if harness:
        return Check.errored("exit_code_exploit", EXPLOIT_TITLE, f"{len(harness)} sandbox harness error(s)",
                             details=harness)
    verdicts = [v for run in probe_runs for v in run.verdicts]
    sandbox_passes = sum(1 for v in verdicts if v.passed)
    if sandbox_passes:
        return Check(id="exit_code_exploit", title=EXPLOIT_TITLE, status="error", observed=sandbox_passes,
                     expected=0, summary=f"our sandbox counted {sandbox_passes} of {len(verdicts)} exit-0 probe runs "
                     "as passes: the sandbox verdict is broken", meta={"probe_source": probe_source})
    unknown = [v for v in verdicts if v.exit_code is None and v.status not in ("timeout", "memory", "killed")]
    if unknown:
        return Check.skipped(
            "exit_code_exploit", EXPLOIT_TITLE,
            f"the sandbox reports no raw child exit code ({len(unknown)} of {len(verdicts)} probe runs), so what the "
            f"naive exit-code harness would score cannot be read from the sandboxed run. Sandbox side: "
            f"{sandbox_passes}/{len(verdicts)} probe runs pass; statuses "
            f"{sorted({f'{v.status}/{v.error_type}' for v in verdicts})}.",
            observed={"constraints_run": len(verdicts), "sandbox_passes": sandbox_passes},
            meta={"probe_source": probe_source})
    specs_by_task = {spec.task_id: spec for spec in specs}
    naive: dict[str, list[PublishedOutcome]] = defaultdict(list)
    ours: dict[str, list[PublishedOutcome]] = defaultdict(list)
    details = []
    for run in probe_runs:
        spec = specs_by_task[run.candidate.task_id]
        naive_passed = {v.constraint_id: v.exit_code == 0 for v in run.verdicts}
        naive[spec.task_id].append(outcome_from_verdicts(spec, naive_passed))
        ours[spec.task_id].append(outcome_from_verdicts(spec, run.passed_by_id()))
        for v in run.verdicts:
            details.append({"task_id": spec.task_id, "constraint_id": v.constraint_id,
                            "role": role_of(spec, v.constraint_id), "exit_code": v.exit_code,
                            "naive_verdict": "pass" if v.exit_code == 0 else "fail", "sandbox_status": v.status,
                            "trust": v.trust})
    _, naive_overall = ivr_of_outcomes(naive)
    _, sandbox_overall = ivr_of_outcomes(ours)
    naive_passes = sum(1 for row in details if row["naive_verdict"] == "pass")
    observed = {"constraints_run": len(verdicts), "naive_passes": naive_passes, "sandbox_passes": sandbox_passes,
                "naive_overall_ivr": naive_overall.value, "naive_tasks_included": len(naive_overall.included),
                "sandbox_overall_ivr": sandbox_overall.value,
                "sandbox_tasks_included": len(sandbox_overall.included)}
    status = "defect" if naive_passes else "pass"
    summary = (f"Probe `{probe_source.strip().splitlines()[-1].strip()}`: the exit-code harness passes "
               f"{naive_passes}/{len(verdicts)} constraints, so a model emitting it scores overall IVR "
               f"{naive_overall.value:.3f} over {len(naive_overall.included)} tasks. The sandbox "
               f"passes {sandbox_passes}/{len(verdicts)}; {len(sandbox_overall.excluded)} of {len(ours)} tasks have "
               f"no stated-passing solution and are excluded, so the upstream formula reports "
               f"{sandbox_overall.value:.3f} over {len(sandbox_overall.included)} included tasks.")
    return Check(id="exit_code_exploit", title=EXPLOIT_TITLE, status=status, observed=observed,
                 expected={"sandbox_passes": 0, "naive_passes": 0}, summary=summary, details=details,
                 meta={"probe_source": probe_source})


# --- constraint_power -----------------------------------------------------------------------------------------

POWER_TITLE = "Constraints discriminate between generations, and descriptions agree with tests"
NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])")
QUOTED = re.compile(r"'([^']+)'|\"([^\"]+)\"")


def description_test_disagreements(spec: SpecPair) -> list[dict[str, Any]]:
    """Heuristic spot-check: literals (numbers, quoted strings) the description names but the test never uses."""
    rows = []
    for constraint in spec.constraints:
        literals = {m for m in NUMBER.findall(constraint.description)}
        literals |= {a or b for a, b in QUOTED.findall(constraint.description)}
        absent = sorted(lit for lit in literals if lit not in constraint.test_code)
        if absent:
            rows.append({"finding": "description literal absent from test", "task_id": spec.task_id,
                         "constraint_id": constraint.id, "role": role_of(spec, constraint.id),
                         "description": constraint.description, "absent_literals": absent,
                         "test_code": constraint.test_code[:ERROR_TEXT_CHARS]})
    return rows


def constraint_power_check(specs: Sequence[SpecPair], generation_runs: Sequence[CandidateRun],
                           rejected_by_all_references: Sequence[tuple[str, str]] = ()) -> Check:
    """`rejected_by_all_references`: (task, constraint) pairs the canonical and every reference fail."""
    if not generation_runs:
        return Check.skipped("constraint_power", POWER_TITLE, "no cached generations were run")
    tallies: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])  # passes, runs
    for run in generation_runs:
        for v in run.verdicts:
            tally = tallies[(run.candidate.task_id, v.constraint_id)]
            tally[0] += int(v.passed)
            tally[1] += 1
    details = []
    never_failed_hidden = always_passed_stated = 0
    for spec in specs:
        for constraint in ordered_constraints(spec):
            passes, total = tallies.get((spec.task_id, constraint.id), [0, 0])
            role = role_of(spec, constraint.id)
            base = {"task_id": spec.task_id, "constraint_id": constraint.id, "role": role,
                    "description": constraint.description, "generations_passing": passes, "generations_run": total}
            if total and passes == total and role == "hidden":
                never_failed_hidden += 1
                details.append({"finding": "hidden constraint no generation fails", **base})
            elif total and passes == total and role == "stated":
                always_passed_stated += 1
                details.append({"finding": "stated constraint every generation passes", **base})
        spot = description_test_disagreements(spec)
        for task_id, constraint_id in rejected_by_all_references:
            if task_id == spec.task_id:
                constraint = spec.constraint_map()[constraint_id]
                spot.append({"finding": "test rejects the canonical and every reference", "task_id": task_id,
                             "constraint_id": constraint_id, "role": role_of(spec, constraint_id),
                             "description": constraint.description,
                             "test_code": constraint.test_code[:ERROR_TEXT_CHARS]})
        details += spot
    hidden_total = sum(len(s.hidden_test_ids) for s in specs)
    stated_total = sum(len(s.stated_test_ids) for s in specs)
    spot_total = sum(1 for row in details if row["finding"] not in (
        "hidden constraint no generation fails", "stated constraint every generation passes"))
    summary = (f"{never_failed_hidden} of {hidden_total} hidden constraints are failed by no generation (they never "
               f"count towards IVR); {always_passed_stated} of {stated_total} stated constraints are passed by every "
               f"generation; {spot_total} description/test spot-check candidate(s) (heuristic, for human review).")
    status = "quirk" if never_failed_hidden or spot_total else "pass"
    return Check(id="constraint_power", title=POWER_TITLE, status=status,
                 observed={"hidden_never_failed": never_failed_hidden, "hidden_total": hidden_total,
                           "stated_always_passed": always_passed_stated, "stated_total": stated_total,
                           "spot_check_candidates": spot_total},
                 expected={"hidden_never_failed": 0}, summary=summary, details=details)
