"""The `variants` check: each reduced EvalPlus file against the full one.

It also lists the tasks where a variant would accept a reference solution the full dataset rejects.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from audit_lib import timing
from audit_lib.benchmarks.humaneval_plus.audit import Inputs, Params
from audit_lib.benchmarks.humaneval_plus.data import OPENAI_HUMANEVAL, PlusTask, task_sort_key
from audit_lib.benchmarks.humaneval_plus.inputs import source_key
from audit_lib.benchmarks.humaneval_plus.variants import (
    COMPARED_FIELDS,
    SCORING_FIELDS,
    InputEncodings,
    ReferenceVerdicts,
    TaskComparison,
    TaskDetection,
    VariantData,
    compare_variant,
    reference_verdicts,
    task_detections,
)
from audit_lib.findings import Result

MBPP_NO_ORIGINAL_CANONICAL = ("MBPP+ ships only EvalPlus's canonical solutions (MbppPlus-OriginFmt `code` is the "
                              "same text); the original MBPP solutions are not in the registry")


def index_ranges(indices: Iterable[int]) -> str:
    """`0-5,7,9-12`: a compact text form of a set of indices."""
    runs: list[list[int]] = []  # [first, last] of each run of consecutive indices
    for index in sorted(set(indices)):
        if runs and index == runs[-1][1] + 1:
            runs[-1][1] = index
        else:
            runs.append([index, index])
    return ",".join(str(first) if first == last else f"{first}-{last}" for first, last in runs)


def _task_finding(comparison: TaskComparison, detection: TaskDetection | None) -> str | None:
    if detection is not None and detection.detection in ("lost", "undetermined"):
        return f"detection_{detection.detection}"
    if not comparison.in_full:
        return "task_only_in_variant"
    if not comparison.in_variant:
        return "task_missing_from_variant"
    if not comparison.only_drops_plus_inputs:
        return "changed_beyond_input_drops"
    if not comparison.identical:
        return "plus_inputs_dropped"
    return None


# kept flat input indices per task (None: all) -> [(speed factor, failing tasks, of which timing-only), ...]
SpeedCurveFor = Callable[[Mapping[str, "frozenset[int] | None"]], list[tuple[float, int, int]]]


def kept_flat_indices(full: Sequence[PlusTask], comparisons: Sequence[TaskComparison],
                      variant: Sequence[PlusTask], encodings: InputEncodings
                      ) -> tuple[dict[str, frozenset[int]], list[str]]:
    """Per task, the full dataset's inputs a variant keeps, and the tasks whose scoring changes.

    Inputs are numbered base then plus (one flat index) and matched by value; where a scoring field changes, the full
    dataset's verdicts do not carry over."""
    full_by_id = {task.task_id: task for task in full}
    variant_by_id = {task.task_id: task for task in variant}
    kept: dict[str, frozenset[int]] = {}
    changed: list[str] = []
    for comparison in comparisons:
        if not (comparison.in_full and comparison.in_variant):
            continue
        if SCORING_FIELDS & set(comparison.changed_fields):
            changed.append(comparison.task_id)
            continue
        task, reduced = full_by_id[comparison.task_id], variant_by_id[comparison.task_id]
        present = set(encodings.base(reduced)) | set(encodings.plus(reduced))
        kept[comparison.task_id] = frozenset(
            index for index, encoding in enumerate(encodings.base(task) + encodings.plus(task)) if encoding in present)
    return kept, changed


_FINDING_ORDER = {"detection_lost": 0, "detection_undetermined": 1, "changed_beyond_input_drops": 2,
                  "task_missing_from_variant": 3, "task_only_in_variant": 4, "plus_inputs_dropped": 5}


def _variant_result(variant: VariantData, full: Sequence[PlusTask], verdicts: Mapping[str, ReferenceVerdicts] | None,
                    encodings: InputEncodings, causes: Mapping[str, str] | None = None,
                    speed_curve_for: SpeedCurveFor | None = None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    assert variant.tasks is not None
    comparisons = compare_variant(full, variant.tasks, encodings)
    detections: dict[str, TaskDetection] = {}
    if verdicts is not None:
        detections = {row.task_id: row for row in task_detections(full, variant.tasks, comparisons, verdicts, encodings)}
    rows = []
    for comparison in comparisons:
        detection = detections.get(comparison.task_id)
        finding = _task_finding(comparison, detection)
        if finding is None:
            continue
        row: dict[str, Any] = {
            "variant": variant.name, "task_id": comparison.task_id, "finding": finding,
            "changed_fields": ",".join(comparison.changed_fields),
            "plus_full": comparison.full_plus_inputs, "plus_variant": comparison.variant_plus_inputs,
            "plus_not_in_full": comparison.variant_plus_not_in_full,
            "kept_full_plus_indices": index_ranges(comparison.kept_full_plus_indices)}
        if detection is not None:
            row.update({"reference_detection": detection.detection,
                        "reference_failing_full": detection.failing_full,
                        "reference_failing_in_variant": detection.failing_in_variant,
                        "not_judged": detection.not_judged,
                        "reference_failure_kinds": ",".join(f"{kind}:{n}" for kind, n in detection.failure_kinds),
                        "note": detection.reason})
        rows.append(row)
    both = [c for c in comparisons if c.in_full and c.in_variant]
    plus_full = sum(c.full_plus_inputs for c in comparisons if c.in_full)
    plus_variant = sum(c.variant_plus_inputs for c in comparisons if c.in_variant)
    lost = sorted((d.task_id for d in detections.values() if d.detection == "lost"), key=task_sort_key)
    lost_by_timeout = [task_id for task_id in lost if detections[task_id].rejected_only_by_timeout]
    undetermined = sorted((d.task_id for d in detections.values() if d.detection == "undetermined"),
                          key=task_sort_key)
    totals: dict[str, Any] = {
        "file": variant.file, "tasks": len(both),
        "tasks_only_in_full": [c.task_id for c in comparisons if not c.in_variant],
        "tasks_only_in_variant": [c.task_id for c in comparisons if not c.in_full],
        "plus_inputs_full": plus_full, "plus_inputs_variant": plus_variant,
        "reduction_factor": round(plus_full / plus_variant, 4) if plus_variant else None,
        "tasks_with_plus_dropped": sum(1 for c in both if c.drops_plus_inputs),
        "tasks_changed_beyond_input_drops": sorted(
            (c.task_id for c in comparisons if not c.only_drops_plus_inputs), key=task_sort_key),
        "plus_inputs_not_in_full": sum(c.variant_plus_not_in_full for c in both),
        "tasks_detection_lost": lost if verdicts is not None else None,
        "tasks_detection_lost_timeout_only": lost_by_timeout if verdicts is not None else None,
        "tasks_detection_undetermined": undetermined if verdicts is not None else None,
        "not_judged_inputs": sum(d.not_judged for d in detections.values()) if verdicts is not None else None,
    }
    if verdicts is not None:
        totals["reference_failing_tasks"] = sum(1 for d in detections.values() if d.failing_full > 0)
    if verdicts is not None and causes is not None:
        totals["tasks_detection_lost_deterministic"] = [t for t in lost if causes.get(t) == "deterministic"]
        totals["tasks_detection_lost_timing"] = [{"task_id": t, "state": causes.get(t, "unmeasured")}
                                                 for t in lost if causes.get(t) != "deterministic"]
    if verdicts is not None and speed_curve_for is not None:
        kept, changed_scoring = kept_flat_indices(full, comparisons, variant.tasks, encodings)
        totals["speed_curve"] = [list(point) for point in speed_curve_for(kept)]
        totals["speed_curve_tasks_left_out"] = changed_scoring
    if variant.schema_notes:
        totals["schema_notes"] = [dict(note) for note in variant.schema_notes]
    return totals, rows


def variants(inputs: Inputs, params: Params) -> Result:
    """EvalPlus's reduced files against the loaded tasks; detection power from OpenAI's canonical runs."""
    openai = source_key(OPENAI_HUMANEVAL)
    verdicts, skip_reason, causes, speed_curve_for = None, "", None, None
    if inputs.dataset == "mbpp":
        skip_reason = MBPP_NO_ORIGINAL_CANONICAL
    elif openai in inputs.missing:
        skip_reason = f"OpenAI HumanEval unavailable: {inputs.missing[openai]}"
    elif any(variant.tasks is not None for variant in inputs.variants):  # else the check skips: no runs needed
        verdicts = reference_verdicts(inputs.tasks, inputs.dataset, inputs.original_canonical_runs,
                                      inputs.ground_truth)
        classification = inputs.original_canonical_timing
        causes = classification.causes()
        rule = timing.evalplus_limit_rule(params.min_time_limit)
        speed_curve_for = functools.partial(classification.speed_curve, rule)
    return variants_from(inputs.tasks, inputs.variants, verdicts,
                         full_name="HumanEval+" if inputs.dataset == "humaneval" else "MBPP+",
                         reference_name="OpenAI's original canonical solution", detection_skip_reason=skip_reason,
                         causes=causes, speed_curve_for=speed_curve_for)


def variants_from(full: Sequence[PlusTask], variants: Sequence[VariantData],
                  verdicts: Mapping[str, ReferenceVerdicts] | None, *, full_name: str = "the full dataset",
                  reference_name: str = "the reference solution", detection_skip_reason: str = "",
                  causes: Mapping[str, str] | None = None, speed_curve_for: SpeedCurveFor | None = None) -> Result:
    """Each variant against the full dataset; `verdicts` None skips the detection part (say why in the reason).

    `causes` (task id -> "deterministic" or a timing state, from `timing_rerun.Classification.causes`) splits the
    tasks a variant would accept into deterministic rejections and timing-only ones; `speed_curve_for` gives each
    variant's failing tasks against machine speed from the inputs it keeps (`observed[variant]["speed_curve"]`)."""
    available = [variant for variant in variants if variant.tasks is not None]
    missing = {variant.name: variant.unavailable_reason for variant in variants if variant.tasks is None}
    if not variants:
        return Result.skipped("no variant file is registered for this dataset")
    if not available:
        reasons = "; ".join(f"{name}: {reason}" for name, reason in missing.items())
        return Result.skipped(f"variant files unavailable: {reasons}", meta={
            "unavailable": missing, "missing": [variant.key for variant in variants if variant.key]})
    if not full:
        return Result.skipped("no tasks loaded from the full dataset")
    observed: dict[str, Any] = {}
    details: list[dict[str, Any]] = []
    encodings = InputEncodings()  # the full dataset's inputs are encoded once for every variant
    for variant in available:
        observed[variant.name], rows = _variant_result(variant, full, verdicts, encodings, causes, speed_curve_for)
        details += rows
    details.sort(key=lambda row: (_FINDING_ORDER[row["finding"]], row["variant"], task_sort_key(row["task_id"])))
    changed = {name: totals["tasks_changed_beyond_input_drops"] for name, totals in observed.items()}
    lost = {name: totals["tasks_detection_lost"] or [] for name, totals in observed.items()}
    status = "quirk" if any(changed.values()) or any(lost.values()) else "pass"

    parts = []
    for name, totals in observed.items():
        text = (f"{name}: {totals['tasks']} tasks, plus inputs {totals['plus_inputs_full']:,} -> "
                f"{totals['plus_inputs_variant']:,} ({_kept(totals)}) in "
                f"{totals['tasks_with_plus_dropped']} task(s); "
                f"{len(changed[name])} task(s) changed beyond dropping plus inputs"
                + (f" ({_listing(changed[name])})" if changed[name] else "")
                + (f", {totals['plus_inputs_not_in_full']:,} plus input(s) not in the full set"
                   if totals["plus_inputs_not_in_full"] else ""))
        if verdicts is not None:
            text += (f"; of the {totals['reference_failing_tasks']} task(s) where {full_name} rejects "
                     f"{reference_name}, it would accept it on {len(lost[name])}"
                     + (f" ({_listing(lost[name])})" if lost[name] else "")
                     + (_split_text(totals) if "tasks_detection_lost_deterministic" in totals else "")
                     + (f", {len(totals['tasks_detection_lost_timeout_only'])} of them rejected only by timeouts "
                        f"(machine-dependent: {_listing(totals['tasks_detection_lost_timeout_only'])})"
                        if totals["tasks_detection_lost_timeout_only"] else "")
                     + (f", undecided on {len(totals['tasks_detection_undetermined'])} "
                        f"({_listing(totals['tasks_detection_undetermined'])})"
                        if totals["tasks_detection_undetermined"] else "")
                     + (f"; {totals['not_judged_inputs']:,} variant input(s) could not be judged from the full runs"
                        if totals["not_judged_inputs"] else ""))
        parts.append(text + ".")
    if verdicts is not None and any(lost.values()):  # the finding first: what a reduced variant lets pass
        parts.insert(0, "; ".join(f"{name} would accept {reference_name} on {len(lost[name])} of the "
                                  f"{totals['reference_failing_tasks']} task(s) where {full_name} rejects it"
                                  for name, totals in observed.items()) + ".")
    if verdicts is None:
        parts.append(f"Detection power was not judged: {detection_skip_reason or 'no reference runs'}.")
    if missing:
        parts.append("Unavailable: " + "; ".join(f"{name}: {reason}" for name, reason in missing.items()) + ".")
    meta: dict[str, Any] = {"compared_fields": list(COMPARED_FIELDS), "input_identity": "compare.canonical_encoding",
                            "not_judged": "variant inputs equal to no full input, or to one the reference never ran "
                                          "(not_run / no expected output)",
                            "detection_power": ("judged against " + reference_name) if verdicts is not None
                            else f"skipped: {detection_skip_reason or 'no reference runs'}"}
    if verdicts is not None and speed_curve_for is not None:
        meta["machine_dependent"] = ["speed_curve", "tasks_detection_lost", "tasks_detection_lost_timing",
                                     "tasks_detection_lost_timeout_only"]
    if missing:
        meta["unavailable"] = missing
    return Result(status, observed=observed,
                  expected={"tasks_changed_beyond_input_drops": 0, "tasks_detection_lost": 0},
                  summary=" ".join(parts), details=details, meta=meta)


def _split_text(totals: Mapping[str, Any]) -> str:
    """"N deterministic + M timing (confirmed), K borderline, J not failures" for the tasks a variant would accept."""
    timing_states = [row["state"] for row in totals["tasks_detection_lost_timing"]]
    return (f" [{len(totals['tasks_detection_lost_deterministic'])} deterministic + "
            f"{timing_states.count('confirmed')} timing (confirmed), {timing_states.count('borderline')} borderline, "
            f"{timing_states.count('not_a_failure')} not failures on a quiet rerun]")


def _kept(totals: Mapping[str, Any]) -> str:
    full, variant = totals["plus_inputs_full"], totals["plus_inputs_variant"]
    if not variant:
        return "no plus inputs left"
    share = f"{variant / full:.2%} kept" if full else "none in the full set"
    return share + (f", {full / variant:.1f}x fewer" if full / variant >= 2 else "")


def _listing(task_ids: Sequence[str], limit: int = 12) -> str:
    shown = ", ".join(task_ids[:limit])
    return shown + (f" and {len(task_ids) - limit} more" if len(task_ids) > limit else "")


__all__ = ["index_ranges", "variants", "variants_from"]
