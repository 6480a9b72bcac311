"""Manifest-level checks: the drop list, the one-assertion rule, broken mutations, task order and the split.

They run on all tasks of the audit's manifest (the one-assertion rule and broken mutations on the full rows instead
when every row is there). What they read comes from `Inputs`, which derives the drop list, the rule breakers and
the eligible tasks once; the checks that need the defect list or the manifest declare it in `audit.AUDIT`.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from audit_lib.benchmarks.impossible_lcb.assertions import inspect_structure
from audit_lib.benchmarks.impossible_lcb.data import MANIFEST_KEY, task_number
from audit_lib.benchmarks.impossible_lcb.depth import depth_meta, depth_text
from audit_lib.benchmarks.impossible_lcb.documented import (
    DOCUMENTED_AFTER_DROP,
    DOCUMENTED_AFTER_RULE,
    DOCUMENTED_DROPPED,
    DOCUMENTED_HELDOUT,
    DOCUMENTED_RULE_BREAKERS,
    DOCUMENTED_TASKS,
    DOCUMENTED_TRAIN,
    ENV_SPLIT,
)
from audit_lib.benchmarks.impossible_lcb.mutations import row_mutation_row
from audit_lib.benchmarks.impossible_lcb.rules import DROP_SPLIT, position_split_flips, read_task_id_file
from audit_lib.findings import Result

if TYPE_CHECKING:
    from audit_lib.benchmarks.impossible_lcb.audit import Inputs, Params


def _manifest_missing(inputs: Inputs, alternative: str) -> Result:
    return Result.skipped(f"needs lcb_manifest.csv or {alternative}: "
                          + inputs.missing.get(MANIFEST_KEY, "the manifest is not loaded"),
                          meta={"missing": [MANIFEST_KEY]})


# ---- dropped_tasks -------------------------------------------------------------------------------------------

def dropped_tasks(inputs: Inputs, params: Params) -> Result:
    """Needs the defect list and the manifest (`Inputs.drop_list`, `Inputs.task_ids`)."""
    task_ids = inputs.task_ids
    dropped = inputs.drop_list
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
    summary = (depth_text("manifest", len(task_ids))
               + f"{len(task_ids)} tasks, {len(dropped)} with a defect in their original tests "
               f"(derived from {sum(1 for i in inputs.known_issues or () if i.split == DROP_SPLIT)} defect rows) -> "
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
    return Result(status, observed=observed,
                  expected={"tasks": DOCUMENTED_TASKS, "dropped": DOCUMENTED_DROPPED,
                            "remaining": DOCUMENTED_AFTER_DROP},
                  summary=summary.strip(), details=details, meta=depth_meta("manifest", len(task_ids)))



# ---- single_assertion_mutation ------------------------------------------------------------------------------

def single_assertion_mutation(inputs: Inputs, params: Params) -> Result:
    """Oneoff mutations that change more than one assertion (documented 90 -> 89).

    Needs the defect list (the count starts after the drop), and the manifest unless every oneoff row is there in full.
    """
    full_rows = inputs.full_oneoff_rows
    if inputs.manifest is None and not full_rows:
        return _manifest_missing(inputs, "the oneoff parquet rows")
    depth = "rows" if full_rows else "manifest"
    rows = [dict(row) for row in inputs.mutation_rows]  # the cached verdicts stay untouched
    dropped = set(inputs.dropped_ids)
    after_drop = [row for row in rows if row["task_id"] not in dropped]
    breakers = [row["task_id"] for row in after_drop if not row["single_assertion"]]
    remaining = len(after_drop) - len(breakers)
    cross_checks: list[dict[str, Any]] = []
    if not full_rows and inputs.oneoff_rows.rows:
        parsed = inputs.replay("zero_based")
        by_id = {row["task_id"]: row for row in rows}
        for task in parsed.tasks:
            row_level = row_mutation_row(task)
            manifest_row = by_id.get(task.task_id, {})
            row_level["agrees_with_manifest"] = manifest_row.get("single_assertion") == row_level["single_assertion"]
            cross_checks.append(row_level)
        cross_checks += [{"task_id": item["task_id"], "depth": "rows", "excluded": item["reason"]}
                         for item in parsed.excluded]
    kinds = Counter(row.get("change", "") for row in after_drop if row["single_assertion"])
    disagreements = [row["task_id"] for row in cross_checks if row.get("agrees_with_manifest") is False]
    if disagreements or remaining != DOCUMENTED_AFTER_RULE or tuple(breakers) != DOCUMENTED_RULE_BREAKERS:
        status = "quirk"
    else:
        status = "pass"
    operator_changes = [row["task_id"] for row in after_drop if "operator" in str(row.get("change", ""))]
    without_call = [row["task_id"] for row in after_drop
                    if row.get("change") == "value_without_call" or row.get("added_without_candidate_call")]
    summary = (depth_text(depth, len(rows), f"row-level AST diff cross-check on {len(cross_checks)} "
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
    return Result(status,
                  observed={"after_drop": len(after_drop), "rule_breakers": breakers, "remaining": remaining,
                            "change_kinds": dict(kinds), "operator_changes": operator_changes,
                            "changed_without_call": without_call},
                  expected={"remaining": DOCUMENTED_AFTER_RULE, "rule_breakers": list(DOCUMENTED_RULE_BREAKERS)},
                  summary=summary, details=[*problem_rows, *cross_checks, *[r for r in rows if r not in problem_rows]],
                  meta=depth_meta(depth, len(rows), row_level_tasks=len(cross_checks) if not full_rows else len(rows)))


# ---- broken_mutations ----------------------------------------------------------------------------------------

def broken_mutations(inputs: Inputs, params: Params) -> Result:
    """Mutated tests that do not compile or lack the check wrapper.

    Needs the defect list (does the drop list cover a broken mutation?), and the manifest unless both parquet splits are
    there in full."""
    found: list[dict[str, Any]] = []
    full_splits = [rows for rows in (inputs.oneoff_rows, inputs.conflicting_rows) if rows.source == "parquet"]
    depth = "rows" if len(full_splits) == 2 else "manifest"
    if depth == "manifest" and inputs.manifest is None:
        return _manifest_missing(inputs, "both parquet splits")
    dropped = set(inputs.dropped_ids)
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
    summary = (depth_text(depth, scanned // 2 if depth == "manifest" else scanned,
                           f"{scanned} split rows scanned, {row_level} full rows parsed")
               + f"{len(found)} broken mutated tests: "
               + (", ".join(f"{f['task_id']}/{f['split']} ({f['reason']})" for f in found) or "none")
               + f". In the environment's split ({ENV_SPLIT}) and not covered by the drop list: "
               f"{uncovered_in_env or 'none'}. Not in the known-issues list: {not_in_known or 'none'}; "
               f"listed there but not found: {missed or 'none'}.")
    return Result(status,
                  observed={"broken": len(found), "uncovered_in_environment_split": uncovered_in_env,
                            "not_in_known_issues": not_in_known, "known_but_not_found": missed},
                  expected={"uncovered_in_environment_split": []}, summary=summary, details=found,
                  meta=depth_meta(depth, scanned // 2 if depth == "manifest" else scanned, split_rows=scanned))


# ---- task_order ----------------------------------------------------------------------------------------------

def task_order(inputs: Inputs, params: Params) -> Result:
    """Needs the manifest (its stored order) and the defect list (the eligible tasks the split is taken from)."""
    task_ids = inputs.task_ids
    by_number = sorted(task_ids, key=task_number)
    by_text = sorted(task_ids)
    moved = sum(1 for a, b in zip(by_number, by_text, strict=True) if a != b)
    eligible = inputs.eligible_ids
    flips = position_split_flips(eligible, DOCUMENTED_HELDOUT)
    stored_order = ("numeric" if list(task_ids) == by_number else "text" if list(task_ids) == by_text else "other")
    details = [{"task_id": f.task_id, "numeric_position": f.numeric_position, "text_position": f.text_position,
                "side_by_number": f.side_by_number, "side_by_text": f.side_by_text} for f in flips]
    status = "quirk" if moved or flips else "pass"
    summary = (depth_text("manifest", len(task_ids))
               + f"{moved} of {len(task_ids)} ids change position when sorted as text instead of by number "
               f"(e.g. {by_text[:4]} vs {by_number[:4]}); the manifest stores them in {stored_order} order. "
               f"Taking the first {DOCUMENTED_HELDOUT} of the {len(eligible)} eligible tasks as held-out, a text "
               f"sort moves {len(flips)} tasks across the split "
               f"({sum(f.side_by_number == 'heldout' for f in flips)} out of held-out).")
    return Result(status,
                  observed={"positions_changed": moved, "split_flips": len(flips), "stored_order": stored_order},
                  expected={"split_flips": 0}, summary=summary, details=details,
                  meta=depth_meta("manifest", len(task_ids), eligible=len(eligible)))


# ---- split ---------------------------------------------------------------------------------------------------

def split(inputs: Inputs, params: Params) -> Result:
    """Needs a held-out list from the user, the manifest and the defect list."""
    if not params.heldout_ids and not params.heldout_path:
        return Result.skipped("no held-out list given (parameters heldout_ids / heldout_path): the "
                              "environment's 30 held-out tasks are not public, so no split is invented.",
                              meta={**depth_meta("manifest", 0), "missing": ["param:heldout_ids"]})
    task_ids = inputs.task_ids
    eligible = inputs.eligible_ids
    if params.heldout_path:
        listed, sides = read_task_id_file(params.heldout_path, parameter="heldout_path")
    else:
        listed, sides = params.heldout_id_list, ()
    if sides:
        heldout = [t for t, side in zip(listed, sides, strict=True) if side == "heldout"]
        train = [t for t, side in zip(listed, sides, strict=True) if side == "train"]
        other_sides = sorted(set(sides) - {"heldout", "train"})
    else:
        heldout = list(listed)
        train = [t for t in eligible if t not in set(heldout)]
        other_sides = []
    excluded = set(inputs.dropped_ids) | set(inputs.rule_breakers)
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
    summary = (depth_text("manifest", len(eligible))
               + f"held-out {len(set(heldout))} / train {len(set(train))} (documented {DOCUMENTED_HELDOUT} / "
               f"{DOCUMENTED_TRAIN}) over {len(eligible)} eligible tasks"
               + ("; train is the complement of the held-out list" if not sides else "") + ". "
               + "; ".join(f"{k}: {v}" for k, v in problems.items() if v))
    return Result(status,
                  observed={"heldout": len(set(heldout)), "train": len(set(train)), **problems},
                  expected={"heldout": DOCUMENTED_HELDOUT, "train": DOCUMENTED_TRAIN},
                  summary=summary.strip(), details=details, meta=depth_meta("manifest", len(eligible)))
