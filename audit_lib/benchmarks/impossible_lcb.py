"""ImpossibleBench LiveCodeBench as used by the impossible-lcb-rl environment: one function per check.

Manifest-level checks run on all tasks from the audit's manifest; row-level checks run on whichever full HF rows
are available (the pinned parquet files, else the two reconstructed rows). Every check records its depth and
task count in `meta` and says it in its summary.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from audit_lib.benchmarks.impossible_lcb_ast import (
    SINGLE_ASSERTION_KINDS,
    classify_change,
    count_asserts,
    inspect_structure,
)
from audit_lib.benchmarks.impossible_lcb_codeblocks import READINGS, python_blocks, reply_cases
from audit_lib.benchmarks.impossible_lcb_data import (
    KnownIssue,
    ManifestEntry,
    RowSet,
    ids_in,
    load_known_issues,
    load_manifest,
    load_rows,
    task_number,
)
from audit_lib.benchmarks.impossible_lcb_metrics import (
    ReplayTask,
    generate_solutions,
    lifting_summary,
    prepare_task,
    run_replay,
    separation,
)
from audit_lib.benchmarks.impossible_lcb_rules import (
    derive_drop_list,
    parse_id_list,
    position_split_flips,
    read_task_id_file,
)
from audit_lib.benchmarks.impossible_lcb_visibility import NUMBERINGS, Numbering, visibility
from audit_lib.errors import AuditError, DataError, ParameterError
from audit_lib.findings import Check

AUDIT = "impossible_lcb"
ENV_SPLIT = "oneoff"            # the environment's impossible form
# What the environment's README documents; the checks compare the data against these claims.
DOCUMENTED_TASKS = 103
DOCUMENTED_AFTER_DROP = 90
DOCUMENTED_DROPPED = 13
DOCUMENTED_AFTER_RULE = 89
DOCUMENTED_RULE_BREAKERS = ("lcbhard_5",)
DOCUMENTED_HELDOUT = 30
DOCUMENTED_TRAIN = 59
EXECUTOR_CHOICES = ("local", "dask-local")

TITLES = {
    "dropped_tasks": "Drop list derived from the audit's defect list (103 -> 90)",
    "single_assertion_mutation": "Every oneoff mutation changes exactly one assertion (90 -> 89)",
    "broken_mutations": "Mutated tests that do not compile or lack the check wrapper",
    "task_order": "Task ids sorted as text vs by number",
    "split": "Held-out / train split (30 / 59)",
    "visibility_rule": "\"Even-numbered assertions shown, plus the changed one\" under both numberings",
    "metrics_replay": "Six metrics on three generated solutions, both forms, in the sandbox",
    "has_code_parsing": "has_code: code-block extraction on awkward replies",
}


# ---- parameters and inputs -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class AuditParams:
    """Validated notebook parameters."""

    dropped_tasks_path: str
    heldout_ids: tuple[str, ...]
    heldout_path: str
    assertion_numbering: Numbering
    executor: str


def validate_params(*, dropped_tasks_path: Any, heldout_ids: Any, heldout_path: Any, assertion_numbering: Any,
                    executor: Any) -> AuditParams:
    """Check every notebook parameter; a bad value raises `ParameterError` naming it."""
    for name, value in (("dropped_tasks_path", dropped_tasks_path), ("heldout_ids", heldout_ids),
                        ("heldout_path", heldout_path), ("assertion_numbering", assertion_numbering),
                        ("executor", executor)):
        if not isinstance(value, str):
            raise ParameterError(f"parameter {name!r} must be a string, got {type(value).__name__}", parameter=name)
    if assertion_numbering not in NUMBERINGS:
        raise ParameterError(f"parameter 'assertion_numbering' is {assertion_numbering!r}; use one of {NUMBERINGS}",
                             parameter="assertion_numbering")
    if executor not in EXECUTOR_CHOICES and not executor.startswith("dask://"):
        raise ParameterError(f"parameter 'executor' is {executor!r}; use 'local', 'dask-local' or 'dask://HOST:PORT'",
                             parameter="executor")
    for name, value in (("dropped_tasks_path", dropped_tasks_path), ("heldout_path", heldout_path)):
        if value and not Path(value).is_file():
            raise ParameterError(f"parameter {name!r}: file {value!r} does not exist", parameter=name)
    if heldout_ids and heldout_path:
        raise ParameterError("give either 'heldout_ids' or 'heldout_path', not both", parameter="heldout_ids")
    return AuditParams(dropped_tasks_path, parse_id_list(heldout_ids, parameter="heldout_ids"), heldout_path,
                       assertion_numbering, executor)


@dataclass(frozen=True)
class AuditInputs:
    """Everything the checks read; a missing input is `None` with the reason kept."""

    known_issues: tuple[KnownIssue, ...] | None
    manifest: tuple[ManifestEntry, ...] | None
    oneoff_rows: RowSet
    conflicting_rows: RowSet
    provenance: tuple[Any, ...]
    missing: dict[str, str]


def load_inputs() -> AuditInputs:
    missing: dict[str, str] = {}
    provenance: list[Any] = []
    known_issues = manifest = None
    try:
        known_issues, record = load_known_issues()
        provenance.append(record)
    except DataError as exc:
        missing["known_issues"] = exc.message
    try:
        manifest, record = load_manifest()
        provenance.append(record)
    except DataError as exc:
        missing["manifest"] = exc.message
    oneoff_rows = load_rows("oneoff")
    conflicting_rows = load_rows("conflicting")
    provenance.extend(oneoff_rows.provenance)
    provenance.extend(conflicting_rows.provenance)
    return AuditInputs(known_issues, manifest, oneoff_rows, conflicting_rows, tuple(provenance), missing)


def row_availability(inputs: AuditInputs) -> list[dict[str, Any]]:
    """One row per split: where its full rows came from, how many, and why they are missing if they are."""
    return [{"split": rows.split, "row_source": rows.source, "rows": len(rows.rows), "note": rows.unavailable_reason}
            for rows in (inputs.oneoff_rows, inputs.conflicting_rows)]


def all_task_ids(inputs: AuditInputs) -> tuple[str, ...]:
    if inputs.manifest is not None:
        return ids_in(inputs.manifest, ENV_SPLIT)
    if inputs.oneoff_rows.source == "parquet":
        return tuple(row.task_id for row in inputs.oneoff_rows.rows)
    return ()


def dropped_ids(inputs: AuditInputs) -> tuple[str, ...]:
    return tuple(task.task_id for task in derive_drop_list(inputs.known_issues or ()))


def rule_breakers(inputs: AuditInputs) -> tuple[str, ...]:
    """Tasks whose oneoff mutation breaks the one-assertion rule (manifest, or full rows when all are present)."""
    return tuple(row["task_id"] for row in _mutation_rows(inputs) if not row["single_assertion"])


def eligible_ids(inputs: AuditInputs) -> tuple[str, ...]:
    excluded = set(dropped_ids(inputs)) | set(rule_breakers(inputs))
    return tuple(task_id for task_id in all_task_ids(inputs) if task_id not in excluded)


def _meta(depth: str, tasks: int, **extra: Any) -> dict[str, Any]:
    return {"depth": depth, "tasks": tasks, **extra}


def _depth_text(depth: str, tasks: int, note: str = "") -> str:
    return f"[depth: {depth}, {tasks} tasks{'; ' + note if note else ''}] "


# ---- dropped_tasks -------------------------------------------------------------------------------------------

def check_dropped_tasks(inputs: AuditInputs, params: AuditParams) -> Check:
    check_id, title = "dropped_tasks", TITLES["dropped_tasks"]
    if inputs.known_issues is None or inputs.manifest is None:
        return Check.skipped(check_id, title, "needs known_issues.csv and lcb_manifest.csv: "
                             + "; ".join(inputs.missing.values()))
    task_ids = all_task_ids(inputs)
    dropped = derive_drop_list(inputs.known_issues)
    unknown = [task.task_id for task in dropped if task.task_id not in set(task_ids)]
    remaining = len(task_ids) - len(dropped) + len(unknown)
    env_ids: tuple[str, ...] = ()
    if params.dropped_tasks_path:
        env_ids, _ = read_task_id_file(params.dropped_tasks_path, parameter="dropped_tasks_path")
    derived = {task.task_id for task in dropped}
    details = [{
        "task_id": task.task_id,
        "defect_categories": " + ".join(task.categories),
        "defect": "; ".join(task.labels),
        "original_unsolvable_for_honest_solution": task.unsolvable_for_honest,
        "audit_action": " | ".join(task.actions),
        "known_issues_rows": ",".join(map(str, task.source_rows)),
        "in_environment_list": (task.task_id in env_ids) if params.dropped_tasks_path else "not given",
    } for task in dropped]
    only_env = sorted(set(env_ids) - derived, key=task_number)
    details.extend({"task_id": task_id, "defect_categories": "", "defect": "not in the audit's defect list",
                    "original_unsolvable_for_honest_solution": "", "audit_action": "",
                    "known_issues_rows": "", "in_environment_list": True} for task_id in only_env)
    only_derived = sorted(derived - set(env_ids), key=task_number) if params.dropped_tasks_path else []
    unsolvable = Counter(task.unsolvable_for_honest for task in dropped)
    categories = Counter(c for task in dropped for c in task.categories)
    observed = {"tasks": len(task_ids), "dropped": len(dropped), "remaining": remaining,
                "unsolvable_for_honest": dict(unsolvable), "categories": dict(categories)}
    if params.dropped_tasks_path:
        observed["environment_list"] = {"size": len(env_ids), "only_in_environment": only_env,
                                        "only_in_derived": only_derived}
    if only_env or only_derived:
        status = "defect"
    elif (len(task_ids), len(dropped), remaining) != (DOCUMENTED_TASKS, DOCUMENTED_DROPPED, DOCUMENTED_AFTER_DROP):
        status = "quirk"
    else:
        status = "pass"
    summary = (_depth_text("manifest", len(task_ids))
               + f"{len(task_ids)} tasks, {len(dropped)} with a defect in their original tests "
               f"(derived from {sum(1 for i in inputs.known_issues if i.split == 'original')} defect rows) -> "
               f"{remaining} remain (documented {DOCUMENTED_TASKS} -> {DOCUMENTED_AFTER_DROP}). "
               f"Original unsolvable for an honest solution: {unsolvable.get('yes', 0)} yes, "
               f"{unsolvable.get('possibly', 0)} possibly, {unsolvable.get('no', 0)} no"
               + (f", {unsolvable['unclassified']} unclassified" if unsolvable.get("unclassified") else "")
               + ". Defect categories: " + ", ".join(f"{k}={v}" for k, v in sorted(categories.items())) + ". ")
    if unknown:
        summary += f"Defect rows name tasks absent from the manifest: {unknown}. "
    if params.dropped_tasks_path:
        summary += (f"Environment list {params.dropped_tasks_path}: {len(env_ids)} ids, only there {only_env}, "
                    f"missing there {only_derived}.")
    return Check(check_id, title, status, observed=observed,
                 expected={"tasks": DOCUMENTED_TASKS, "dropped": DOCUMENTED_DROPPED,
                           "remaining": DOCUMENTED_AFTER_DROP},
                 summary=summary.strip(), details=details, meta=_meta("manifest", len(task_ids)))


# ---- single_assertion_mutation -------------------------------------------------------------------------------

def _manifest_mutation_row(entry: ManifestEntry) -> dict[str, Any]:
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


def _row_mutation_row(task: ReplayTask) -> dict[str, Any]:
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


def _replay_tasks(rows: RowSet, numbering: Numbering) -> tuple[list[ReplayTask], list[dict[str, Any]]]:
    tasks, excluded = [], []
    for row in rows.rows:
        try:
            tasks.append(prepare_task(row, numbering))
        except AuditError as exc:
            excluded.append({"task_id": row.task_id, "reason": exc.message})
    return tasks, excluded


def _mutation_rows(inputs: AuditInputs) -> list[dict[str, Any]]:
    if inputs.oneoff_rows.source == "parquet":
        tasks, excluded = _replay_tasks(inputs.oneoff_rows, "zero_based")
        rows = [_row_mutation_row(task) for task in tasks]
        rows += [{"task_id": item["task_id"], "depth": "rows", "single_assertion": False,
                  "violations": item["reason"]} for item in excluded]
        return sorted(rows, key=lambda row: task_number(row["task_id"]))
    if inputs.manifest is None:
        return []
    return [_manifest_mutation_row(entry) for entry in inputs.manifest if entry.split == ENV_SPLIT]


def check_single_assertion_mutation(inputs: AuditInputs) -> Check:
    check_id, title = "single_assertion_mutation", TITLES["single_assertion_mutation"]
    full_rows = inputs.oneoff_rows.source == "parquet"
    if inputs.manifest is None and not full_rows:
        return Check.skipped(check_id, title, "needs lcb_manifest.csv or the oneoff parquet rows: "
                             + "; ".join(inputs.missing.values()))
    if inputs.known_issues is None:
        return Check.skipped(check_id, title, "needs known_issues.csv for the drop list the 90 -> 89 count starts "
                             "from: " + "; ".join(inputs.missing.values()))
    depth = "rows" if full_rows else "manifest"
    rows = _mutation_rows(inputs)
    dropped = set(dropped_ids(inputs))
    after_drop = [row for row in rows if row["task_id"] not in dropped]
    breakers = [row["task_id"] for row in after_drop if not row["single_assertion"]]
    remaining = len(after_drop) - len(breakers)
    cross_checks: list[dict[str, Any]] = []
    if not full_rows and inputs.oneoff_rows.rows:
        tasks, excluded = _replay_tasks(inputs.oneoff_rows, "zero_based")
        by_id = {row["task_id"]: row for row in rows}
        for task in tasks:
            row_level = _row_mutation_row(task)
            manifest_row = by_id.get(task.task_id, {})
            row_level["agrees_with_manifest"] = manifest_row.get("single_assertion") == row_level["single_assertion"]
            cross_checks.append(row_level)
        cross_checks += [{"task_id": item["task_id"], "depth": "rows", "excluded": item["reason"]}
                         for item in excluded]
    kinds = Counter(row.get("change", "") for row in after_drop if row["single_assertion"])
    disagreements = [row["task_id"] for row in cross_checks if row.get("agrees_with_manifest") is False]
    if disagreements or remaining != DOCUMENTED_AFTER_RULE or tuple(breakers) != DOCUMENTED_RULE_BREAKERS:
        status = "quirk"
    else:
        status = "pass"
    operator_changes = [row["task_id"] for row in after_drop if "operator" in str(row.get("change", ""))]
    without_call = [row["task_id"] for row in after_drop
                    if row.get("change") == "value_without_call" or row.get("added_without_candidate_call")]
    summary = (_depth_text(depth, len(rows), f"row-level AST diff cross-check on {len(cross_checks)} "
                                             f"{inputs.oneoff_rows.source} rows" if cross_checks else "")
               + f"After the drop list {len(after_drop)} tasks; {len(breakers)} break the one-assertion rule "
               f"({', '.join(breakers) or 'none'}) -> {remaining} remain (documented {DOCUMENTED_AFTER_RULE}, "
               f"breaker {', '.join(DOCUMENTED_RULE_BREAKERS)}). Kinds of the single-assertion changes: "
               + ", ".join(f"{k or 'unclassified'}={v}" for k, v in sorted(kinds.items()))
               + f"; operator changes (e.g. `is None` -> `is not None`): {operator_changes or 'none'}; changed "
               f"assertions without a candidate(...) call of their own: {without_call or 'none'}."
               + (f" Row-level and manifest verdicts disagree on {disagreements}." if disagreements else ""))
    problem_rows = [row for row in rows if not row["single_assertion"] or row["task_id"] in operator_changes
                    or row["task_id"] in without_call]
    return Check(check_id, title, status,
                 observed={"after_drop": len(after_drop), "rule_breakers": breakers, "remaining": remaining,
                           "change_kinds": dict(kinds), "operator_changes": operator_changes,
                           "changed_without_call": without_call},
                 expected={"remaining": DOCUMENTED_AFTER_RULE, "rule_breakers": list(DOCUMENTED_RULE_BREAKERS)},
                 summary=summary, details=[*problem_rows, *cross_checks, *[r for r in rows if r not in problem_rows]],
                 meta=_meta(depth, len(rows), row_level_tasks=len(cross_checks) if not full_rows else len(rows)))


# ---- broken_mutations ----------------------------------------------------------------------------------------

def check_broken_mutations(inputs: AuditInputs) -> Check:
    check_id, title = "broken_mutations", TITLES["broken_mutations"]
    dropped = set(dropped_ids(inputs))
    found: list[dict[str, Any]] = []
    full_splits = [rows for rows in (inputs.oneoff_rows, inputs.conflicting_rows) if rows.source == "parquet"]
    depth = "rows" if len(full_splits) == 2 else "manifest"
    if depth == "manifest" and inputs.manifest is None:
        return Check.skipped(check_id, title, "needs lcb_manifest.csv or both parquet splits: "
                             + "; ".join(inputs.missing.values()))
    if inputs.known_issues is None:
        return Check.skipped(check_id, title, "needs known_issues.csv to say whether the drop list covers a broken "
                             "mutation: " + "; ".join(inputs.missing.values()))
    if depth == "rows":
        scanned = sum(len(rows.rows) for rows in full_splits)
        for rows in full_splits:
            for row in rows.rows:
                structure = inspect_structure(row.test)
                if structure.broken:
                    found.append({"task_id": row.task_id, "split": rows.split, "reason": structure.reason})
    else:
        scanned = len(inputs.manifest or ())
        for entry in inputs.manifest or ():
            broken_wrapper = entry.extraction.startswith("broken")
            if not entry.syntax_ok or broken_wrapper:
                found.append({"task_id": entry.task_id, "split": entry.split,
                              "reason": entry.extraction or "syntax_ok=False"})
    # Row-level confirmation on whatever full rows exist (the reconstructed ones at least).
    row_level = 0
    for rows in (inputs.oneoff_rows, inputs.conflicting_rows):
        if rows.source == "parquet" and depth == "rows":
            continue
        for row in rows.rows:
            row_level += 1
            structure = inspect_structure(row.test)
            if structure.broken and not any(f["task_id"] == row.task_id and f["split"] == rows.split for f in found):
                found.append({"task_id": row.task_id, "split": rows.split, "reason": structure.reason + " (row)"})
    known = {(issue.task_id, issue.split) for issue in inputs.known_issues or () if issue.issue == "broken_mutation"}
    for item in found:
        item["covered_by_drop_list"] = item["task_id"] in dropped
        item["split_used_by_environment"] = item["split"] == ENV_SPLIT
        item["in_known_issues"] = (item["task_id"], item["split"]) in known
    uncovered_in_env = [f["task_id"] for f in found if f["split_used_by_environment"] and not f["covered_by_drop_list"]]
    not_in_known = [f"{f['task_id']}/{f['split']}" for f in found if not f["in_known_issues"]]
    missed = sorted(f"{t}/{s}" for t, s in known - {(f["task_id"], f["split"]) for f in found})
    if uncovered_in_env:
        status = "defect"
    elif found or missed:
        status = "quirk"
    else:
        status = "pass"
    summary = (_depth_text(depth, scanned // 2 if depth == "manifest" else scanned,
                           f"{scanned} split rows scanned, {row_level} full rows parsed")
               + f"{len(found)} broken mutated tests: "
               + (", ".join(f"{f['task_id']}/{f['split']} ({f['reason']})" for f in found) or "none")
               + f". In the environment's split ({ENV_SPLIT}) and not covered by the drop list: "
               f"{uncovered_in_env or 'none'}. Not in the known-issues list: {not_in_known or 'none'}; "
               f"listed there but not found: {missed or 'none'}.")
    return Check(check_id, title, status,
                 observed={"broken": len(found), "uncovered_in_environment_split": uncovered_in_env,
                           "not_in_known_issues": not_in_known, "known_but_not_found": missed},
                 expected={"uncovered_in_environment_split": []}, summary=summary, details=found,
                 meta=_meta(depth, scanned // 2 if depth == "manifest" else scanned, split_rows=scanned))


# ---- task_order ----------------------------------------------------------------------------------------------

def check_task_order(inputs: AuditInputs) -> Check:
    check_id, title = "task_order", TITLES["task_order"]
    task_ids = all_task_ids(inputs)
    if not task_ids:
        return Check.skipped(check_id, title, "no task ids: " + "; ".join(inputs.missing.values()))
    by_number = sorted(task_ids, key=task_number)
    by_text = sorted(task_ids)
    moved = sum(1 for a, b in zip(by_number, by_text, strict=True) if a != b)
    eligible = eligible_ids(inputs)
    flips = position_split_flips(eligible, DOCUMENTED_HELDOUT)
    stored_order = ("numeric" if list(task_ids) == by_number else "text" if list(task_ids) == by_text else "other")
    details = [{"task_id": f.task_id, "numeric_position": f.numeric_position, "text_position": f.text_position,
                "side_by_number": f.side_by_number, "side_by_text": f.side_by_text} for f in flips]
    status = "quirk" if moved or flips else "pass"
    summary = (_depth_text("manifest", len(task_ids))
               + f"{moved} of {len(task_ids)} ids change position when sorted as text instead of by number "
               f"(e.g. {by_text[:4]} vs {by_number[:4]}); the manifest stores them in {stored_order} order. "
               f"Taking the first {DOCUMENTED_HELDOUT} of the {len(eligible)} eligible tasks as held-out, a text "
               f"sort moves {len(flips)} tasks across the split "
               f"({sum(f.side_by_number == 'heldout' for f in flips)} out of held-out).")
    return Check(check_id, title, status,
                 observed={"positions_changed": moved, "split_flips": len(flips), "stored_order": stored_order},
                 expected={"split_flips": 0}, summary=summary, details=details,
                 meta=_meta("manifest", len(task_ids), eligible=len(eligible)))


# ---- split ---------------------------------------------------------------------------------------------------

def check_split(inputs: AuditInputs, params: AuditParams) -> Check:
    check_id, title = "split", TITLES["split"]
    if not params.heldout_ids and not params.heldout_path:
        return Check.skipped(check_id, title, "no held-out list given (parameters heldout_ids / heldout_path): the "
                             "environment's 30 held-out tasks are not public, so no split is invented.",
                             meta=_meta("manifest", 0))
    task_ids = all_task_ids(inputs)
    if not task_ids or inputs.known_issues is None:
        return Check.skipped(check_id, title, "needs the manifest and known_issues.csv: "
                             + "; ".join(inputs.missing.values()))
    eligible = eligible_ids(inputs)
    if params.heldout_path:
        listed, sides = read_task_id_file(params.heldout_path, parameter="heldout_path")
    else:
        listed, sides = params.heldout_ids, ()
    if sides:
        heldout = [t for t, side in zip(listed, sides, strict=True) if side == "heldout"]
        train = [t for t, side in zip(listed, sides, strict=True) if side == "train"]
        other_sides = sorted(set(sides) - {"heldout", "train"})
    else:
        heldout = list(listed)
        train = [t for t in eligible if t not in set(heldout)]
        other_sides = []
    excluded = set(dropped_ids(inputs)) | set(rule_breakers(inputs))
    overlap = sorted(set(heldout) & set(train), key=task_number)
    duplicates = sorted([t for t, n in Counter([*heldout, *train]).items() if n > 1 and t not in overlap],
                        key=task_number)
    excluded_used = sorted((set(heldout) | set(train)) & excluded, key=task_number)
    unknown = sorted((set(heldout) | set(train)) - set(task_ids), key=task_number)
    uncovered = sorted(set(eligible) - set(heldout) - set(train), key=task_number)
    problems = {"overlap": overlap, "duplicates": duplicates, "excluded_task_used": excluded_used,
                "unknown_ids": unknown, "eligible_not_covered": uncovered, "unknown_split_labels": other_sides}
    sizes_ok = (len(set(heldout)), len(set(train))) == (DOCUMENTED_HELDOUT, DOCUMENTED_TRAIN)
    status = "defect" if any(problems.values()) or not sizes_ok else "pass"
    details = [{"task_id": t, "side": side, "excluded": t in excluded, "known_task": t in set(task_ids)}
               for side, part in (("heldout", heldout), ("train", train)) for t in part]
    summary = (_depth_text("manifest", len(eligible))
               + f"held-out {len(set(heldout))} / train {len(set(train))} (documented {DOCUMENTED_HELDOUT} / "
               f"{DOCUMENTED_TRAIN}) over {len(eligible)} eligible tasks"
               + ("; train is the complement of the held-out list" if not sides else "") + ". "
               + "; ".join(f"{k}: {v}" for k, v in problems.items() if v))
    return Check(check_id, title, status,
                 observed={"heldout": len(set(heldout)), "train": len(set(train)), **problems},
                 expected={"heldout": DOCUMENTED_HELDOUT, "train": DOCUMENTED_TRAIN},
                 summary=summary.strip(), details=details, meta=_meta("manifest", len(eligible)))


# ---- visibility_rule -----------------------------------------------------------------------------------------

def check_visibility_rule(inputs: AuditInputs, params: AuditParams) -> Check:
    check_id, title = "visibility_rule", TITLES["visibility_rule"]
    tasks, excluded = _replay_tasks(inputs.oneoff_rows, params.assertion_numbering)
    if not tasks:
        return Check.skipped(check_id, title, "no full oneoff rows: " + inputs.oneoff_rows.unavailable_reason,
                             meta=_meta("rows", 0))
    details: list[dict[str, Any]] = []
    per_numbering: dict[str, dict[str, Any]] = {}
    for numbering in NUMBERINGS:
        totals = Counter()
        for task in tasks:
            for form, test, changed in (("impossible", task.impossible, task.diff.asserts_added),
                                        ("solvable", task.original, task.diff.asserts_removed)):
                seen = visibility(test, changed, numbering)
                details.append({
                    "task_id": task.task_id, "numbering": numbering, "form": form,
                    "assertions": seen.n_assertions, "shown": len(seen.shown), "held_back": len(seen.held_back),
                    "changed_positions": ",".join(map(str, seen.changed)),
                    "changed_already_shown": seen.changed_already_shown,
                    "shown_needing_setup": len(seen.shown_needing_setup),
                    "setup_lines_to_show": ",".join(map(str, seen.setup_lines_needed)),
                    "needs_module_prelude": seen.needs_prelude,
                })
                if form == "impossible":
                    totals["shown"] += len(seen.shown)
                    totals["held_back"] += len(seen.held_back)
                    totals[f"changed_already_shown_{seen.changed_already_shown}"] += 1
                    totals["tasks_with_shown_setup_dependency"] += bool(seen.shown_needing_setup)
        per_numbering[numbering] = dict(totals)
    by_task = {}
    for row in details:
        if row["form"] == "impossible":
            by_task.setdefault(row["task_id"], {})[row["numbering"]] = row["changed_already_shown"]
    disagree = [task_id for task_id, states in by_task.items() if len(set(states.values())) > 1]
    setup_dependent = sorted({row["task_id"] for row in details if row["shown_needing_setup"]}, key=task_number)
    status = "quirk" if disagree or setup_dependent else "pass"
    source = inputs.oneoff_rows.source
    summary = (_depth_text("rows", len(tasks), f"{source} rows" + (f", {len(excluded)} unparseable rows excluded: "
                                                                   f"{excluded}" if excluded else ""))
               + f"Impossible form, zero-based: {per_numbering['zero_based']}; one-based: "
               f"{per_numbering['one_based']}. The two readings disagree on whether the changed assertion was "
               f"already shown for {disagree or 'no task'}. Shown assertions read setup lines (variables/helpers) "
               f"that must be shown too in {setup_dependent or 'no task'}. Selected numbering: "
               f"{params.assertion_numbering}.")
    return Check(check_id, title, status,
                 observed={"per_numbering": per_numbering, "numberings_disagree_on_changed": disagree,
                           "tasks_with_setup_dependency": setup_dependent},
                 expected={"numberings_disagree_on_changed": [], "tasks_with_setup_dependency": []},
                 summary=summary, details=details,
                 meta=_meta("rows", len(tasks), row_source=source, numbering=params.assertion_numbering))


# ---- metrics_replay ------------------------------------------------------------------------------------------

def check_metrics_replay(inputs: AuditInputs, params: AuditParams, *, executor: Any = None) -> Check:
    check_id, title = "metrics_replay", TITLES["metrics_replay"]
    tasks, excluded = _replay_tasks(inputs.oneoff_rows, params.assertion_numbering)
    if not tasks:
        return Check.skipped(check_id, title, "no full oneoff rows: " + inputs.oneoff_rows.unavailable_reason,
                             meta=_meta("rows", 0))
    rows, results = run_replay(tasks, executor=executor if executor is not None else params.executor)
    verdicts = separation(rows)
    unsupported = [{"task_id": task.task_id, "solution": solution.kind, "assertion": index, "reason": reason}
                   for task in tasks for solution in generate_solutions(task) for index, reason in solution.unsupported]
    harness = sorted({f"{key[0]}/{key[1]}/{key[2]}" for key, result in results.items()
                      if result.status == "harness_error"})
    failed = [v for v in verdicts if not v.holds]
    status = "error" if harness else ("defect" if failed else "pass")
    details = [asdict(row) for row in rows]
    details += [{"task_id": v.task_id, "requirement": v.requirement, "holds": v.holds, "observed": v.observed}
                for v in verdicts]
    details += unsupported
    special_equals_visible = all(r.special_case == r.visible_pass for r in rows if r.special_case is not None)
    summary = (_depth_text("rows", len(tasks), f"{inputs.oneoff_rows.source} rows, numbering "
                                               f"{params.assertion_numbering}")
               + f"{len(rows)} metric rows (3 generated solutions x 2 forms x {len(tasks)} tasks), "
               f"{sum(len(r.snippets) for r in results.values())} assertions run once each in the sandbox. "
               f"{len(verdicts) - len(failed)}/{len(verdicts)} separation requirements hold"
               + (f"; failing: {[f'{v.task_id}: {v.requirement}' for v in failed]}" if failed else "")
               + f". special_case equals visible_pass in the impossible form on every row: {special_equals_visible}. "
               f"Assertions the lookup tables could not encode: {len(unsupported)}."
               + (f" Sandbox harness errors: {harness}." if harness else ""))
    return Check(check_id, title, status,
                 observed={"separation_holds": len(verdicts) - len(failed), "separation_total": len(verdicts),
                           "unsupported_assertions": len(unsupported), "harness_errors": harness},
                 expected={"separation_holds": len(verdicts)}, summary=summary, details=details,
                 meta=_meta("rows", len(tasks), row_source=inputs.oneoff_rows.source,
                            excluded=[e["task_id"] for e in excluded], sandbox_trust=lifting_summary(results)))


# ---- has_code_parsing ----------------------------------------------------------------------------------------

def check_has_code_parsing(inputs: AuditInputs) -> Check:
    check_id, title = "has_code_parsing", TITLES["has_code_parsing"]
    tasks, excluded = _replay_tasks(inputs.oneoff_rows, "zero_based")
    if not tasks:
        return Check.skipped(check_id, title, "no full oneoff rows to build replies from: "
                             + inputs.oneoff_rows.unavailable_reason, meta=_meta("rows", 0))
    details = []
    ambiguous_cases: set[str] = set()
    for task in tasks:
        oracle, _, cheater = generate_solutions(task)
        for case, reply in reply_cases(cheater.program, oracle.program).items():
            readings = {reading: python_blocks(reply, reading) for reading in READINGS}
            row: dict[str, Any] = {"task_id": task.task_id, "case": case}
            for reading, extraction in readings.items():
                row[f"{reading}_has_code"] = extraction.has_code
                row[f"{reading}_blocks"] = len(extraction.blocks)
            scored = readings["fenced_python"].scored_block
            blocks = readings["fenced_python"].blocks
            row["scored_block"] = ("none" if scored is None else
                                   "last of several" if len(blocks) > 1 else "only")
            row["first_and_last_block_differ"] = len(blocks) > 1 and blocks[0] != blocks[-1]
            if len({e.has_code for e in readings.values()}) > 1 or row["first_and_last_block_differ"]:
                ambiguous_cases.add(case)
            details.append(row)
    status = "quirk" if ambiguous_cases else "pass"
    summary = (_depth_text("rows", len(tasks), "replies built from the generated solutions"
                           + (f", {len(excluded)} unparseable rows excluded: {excluded}" if excluded else ""))
               + f"{len({d['case'] for d in details})} reply shapes x 3 readings of 'contains a python code block'. "
               f"The readings disagree, or the choice of block changes the scored code, for: "
               f"{sorted(ambiguous_cases) or 'none'}. The replay scores the last line-start python block.")
    return Check(check_id, title, status, observed={"ambiguous_cases": sorted(ambiguous_cases)},
                 expected={"ambiguous_cases": []}, summary=summary, details=details,
                 meta=_meta("rows", len(tasks), row_source=inputs.oneoff_rows.source,
                            excluded=[e["task_id"] for e in excluded]))


CHECK_IDS: tuple[str, ...] = tuple(TITLES)


def run_check(check_id: str, inputs: AuditInputs, params: AuditParams) -> Check:
    """Run one check by id; an unexpected failure becomes an `error` check with the reason."""
    functions = {
        "dropped_tasks": lambda: check_dropped_tasks(inputs, params),
        "single_assertion_mutation": lambda: check_single_assertion_mutation(inputs),
        "broken_mutations": lambda: check_broken_mutations(inputs),
        "task_order": lambda: check_task_order(inputs),
        "split": lambda: check_split(inputs, params),
        "visibility_rule": lambda: check_visibility_rule(inputs, params),
        "metrics_replay": lambda: check_metrics_replay(inputs, params),
        "has_code_parsing": lambda: check_has_code_parsing(inputs),
    }
    try:
        return functions[check_id]()
    except (AuditError, ValueError) as exc:
        return Check.errored(check_id, TITLES[check_id], exc)
