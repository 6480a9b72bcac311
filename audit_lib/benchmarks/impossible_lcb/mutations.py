"""The one-assertion rule per task: from the manifest's assertion columns, or from an AST diff of the full rows."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from audit_lib.benchmarks.impossible_lcb.assertions import SINGLE_ASSERTION_KINDS, classify_change, count_asserts
from audit_lib.benchmarks.impossible_lcb.data import ManifestEntry, RowSet, task_number
from audit_lib.benchmarks.impossible_lcb.documented import ENV_SPLIT
from audit_lib.benchmarks.impossible_lcb.metrics import ReplayTask, prepare_task
from audit_lib.benchmarks.impossible_lcb.visibility import Numbering
from audit_lib.errors import AuditError


@dataclass(frozen=True)
class ReplayTasks:
    """The full rows of one split parsed for replay; rows whose tests do not parse are kept aside with the reason."""

    tasks: tuple[ReplayTask, ...]
    excluded: tuple[dict[str, str], ...]   # {"task_id", "reason"}


def replay_tasks(rows: RowSet, numbering: Numbering) -> ReplayTasks:
    tasks, excluded = [], []
    for row in rows.rows:
        try:
            tasks.append(prepare_task(row, numbering))
        except AuditError as exc:
            excluded.append({"task_id": row.task_id, "reason": exc.message})
    return ReplayTasks(tuple(tasks), tuple(excluded))


def manifest_mutation_row(entry: ManifestEntry) -> dict[str, Any]:
    try:
        asserts_in_mutation = count_asserts(entry.mutated_assert) if entry.mutated_assert else 0
        asserts_in_original = count_asserts(entry.original_assert) if entry.original_assert else 0
    except SyntaxError:
        asserts_in_mutation = asserts_in_original = -1
    change = ""
    if asserts_in_mutation == 1 and asserts_in_original == 1:
        try:
            change = classify_change(entry.original_assert, entry.mutated_assert).kind
        except (SyntaxError, ValueError):
            change = "unparseable"
    reasons = []
    if not entry.syntax_ok:
        reasons.append("mutated test does not compile")
    if entry.lines_removed != 1 or entry.lines_added != 1:
        reasons.append(f"raw diff -{entry.lines_removed}/+{entry.lines_added} lines")
    if asserts_in_mutation != 1:
        reasons.append(f"{asserts_in_mutation} asserts in the mutation")
    if change and change not in SINGLE_ASSERTION_KINDS:
        reasons.append(f"change kind {change}")
    original_count = (entry.n_asserts - asserts_in_mutation + asserts_in_original
                      if entry.n_asserts is not None and asserts_in_mutation >= 0 else None)
    return {"task_id": entry.task_id, "depth": "manifest", "lines_removed": entry.lines_removed,
            "lines_added": entry.lines_added, "asserts_in_mutation": asserts_in_mutation,
            "n_asserts_mutated": entry.n_asserts, "n_asserts_original": original_count,
            "change": change, "single_assertion": not reasons, "violations": "; ".join(reasons)}


def row_mutation_row(task: ReplayTask) -> dict[str, Any]:
    diff = task.diff
    kinds = Counter(change.kind for change in diff.changes)
    calls = {change.call for change in diff.changes}
    return {"task_id": task.task_id, "depth": "rows", "asserts_removed": len(diff.asserts_removed),
            "asserts_added": len(diff.asserts_added), "setup_added": len(diff.setup_added),
            "setup_removed": len(diff.setup_removed),
            "same_call": len(calls) == 1 and None not in calls,
            "change": "+".join(sorted(kinds)), "added_without_candidate_call": len(diff.added_without_call),
            "n_asserts_original": len(task.original.assertions),
            "n_asserts_mutated": len(task.impossible.assertions),
            "single_assertion": diff.single_assertion, "violations": "; ".join(diff.violations)}


def rows_mutation_rows(parsed: ReplayTasks) -> tuple[dict[str, Any], ...]:
    """One verdict per full row (an unparseable row breaks the rule), in numeric task order."""
    rows = [row_mutation_row(task) for task in parsed.tasks]
    rows += [{"task_id": item["task_id"], "depth": "rows", "single_assertion": False,
              "violations": item["reason"]} for item in parsed.excluded]
    return tuple(sorted(rows, key=lambda row: task_number(row["task_id"])))


def manifest_mutation_rows(manifest: Sequence[ManifestEntry]) -> tuple[dict[str, Any], ...]:
    """One verdict per manifest row of the environment's split, in manifest order."""
    return tuple(manifest_mutation_row(entry) for entry in manifest if entry.split == ENV_SPLIT)
