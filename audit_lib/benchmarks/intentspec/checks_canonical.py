"""IntentSpec checks on the canonicals and the HumanEval references.

Canonical IVR == 0, where the canonicals come from, and whether any constraint rejects a correct reference solution.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from audit_lib.benchmarks.intentspec.audit import Inputs, Params
from audit_lib.benchmarks.intentspec.data import Canonical, SpecPair
from audit_lib.benchmarks.intentspec.ivr import outcome_from_verdicts, task_ivr
from audit_lib.benchmarks.intentspec.load import CANONICALS_KEY, REFERENCE_KEYS, SPEC_PAIRS_KEY
from audit_lib.benchmarks.intentspec.runs import CandidateRun
from audit_lib.benchmarks.intentspec.sandbox_record import with_sandbox_record
from audit_lib.benchmarks.intentspec.verdicts import failing_rows, harness_errors, task_number
from audit_lib.findings import Result

# --- canonical_ivr_zero ---------------------------------------------------------------------------------------



def canonical_ivr_zero(inputs: Inputs, params: Params) -> Result:
    """Each selected task's canonical solution against every constraint: its IVR must be 0."""
    runs = inputs.runs.canonical
    result = canonical_ivr_zero_from(inputs.data.selected_specs, runs, inputs.data.canonicals)
    return with_sandbox_record(inputs, result, judged=list(runs.values()))


def canonical_ivr_zero_from(specs: Sequence[SpecPair], canonical_runs: Mapping[str, CandidateRun],
                            canonicals: Sequence[Canonical]) -> Result:
    """`canonical_runs` maps task id -> the canonical's run; a task with no canonical is listed, not dropped."""
    if not specs or not canonical_runs:
        return Result.skipped(
            f"nothing to judge: {len(specs)} spec(s) selected, {len(canonical_runs)} canonical run(s)",
            meta={"missing": [SPEC_PAIRS_KEY, CANONICALS_KEY]})
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
    harness = harness_errors(list(canonical_runs.values()))
    failing_tasks = sorted({row["task_id"] for row in details}, key=task_number)
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
        return Result.errored(f"{len(harness)} sandbox harness error(s)",
                              details=harness)
    status = "defect" if details or no_canonical else ("error" if not_run else "pass")
    return Result(status, observed=observed,
                  expected={"failing_constraints": 0}, summary=summary, details=details,
                  meta={"per_task_ivr": per_task})



# --- canonical_provenance -------------------------------------------------------------------------------------



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


def canonical_provenance(inputs: Inputs, params: Params) -> Result:
    """The selected tasks' canonicals compared with OpenAI's HumanEval solutions, text for text."""
    data = inputs.data
    selected = set(data.selected)
    return canonical_provenance_from([c for c in data.canonicals if c.task_id in selected], data.references,
                                     data.unavailable_under("humaneval"))


def canonical_provenance_from(canonicals: Sequence[Canonical],
                              references: Mapping[str, Mapping[str, Mapping[str, Any]]],
                              unavailable: Mapping[str, str]) -> Result:
    if "openai_humaneval" not in references:
        return Result.skipped(
            f"OpenAI HumanEval is unavailable: {'; '.join(unavailable.values())}",
            meta={"missing": [REFERENCE_KEYS["openai_humaneval"]]})
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
    return Result(status,
                  observed=dict(sorted(tally.items())), expected={"openai_humaneval: exact": len(rows)},
                  summary=summary, details=rows)


# --- constraints_vs_references --------------------------------------------------------------------------------



def constraints_vs_references(inputs: Inputs, params: Params) -> Result:
    """Every constraint against the reference solutions that are available, naming the ones that are not."""
    runs = inputs.runs.references
    unavailable = inputs.data.unavailable_under("humaneval")
    result = constraints_vs_references_from(inputs.data.selected_specs, runs, unavailable)
    return with_sandbox_record(inputs, result, judged=[run for by_task in runs.values() for run in by_task.values()])


def constraints_vs_references_from(specs: Sequence[SpecPair],
                                   reference_runs: Mapping[str, Mapping[str, CandidateRun]],
                                   unavailable: Mapping[str, str]) -> Result:
    """`reference_runs` maps source label -> task id -> run (OpenAI original, HumanEval+ canonical)."""
    if not reference_runs:
        return Result.skipped(
            f"no reference solutions available: {'; '.join(unavailable.values())}",
            meta={"missing": sorted(unavailable) or sorted(REFERENCE_KEYS.values())})
    runs = [run for by_task in reference_runs.values() for run in by_task.values()]
    if not runs:
        return Result.skipped(
            f"no reference solution was run for the {len(specs)} selected task(s)",
            meta={"missing": [REFERENCE_KEYS.get(label, label) for label in reference_runs]})
    harness = harness_errors(runs)
    if harness:
        return Result.errored(f"{len(harness)} sandbox harness error(s)", details=harness)
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
    return Result(status,
                  observed={"constraints_rejecting_a_reference": len(rejected_by), **{
                      f"rejecting_{label}": n for label, n in per_source.items()}},
                  expected={"constraints_rejecting_a_reference": 0}, summary=summary, details=details,
                  meta={"references_absent": missing_tasks})
