"""Row-level checks: the visibility rule, the six metrics replayed in the sandbox, and has_code parsing.

They run on whichever full oneoff rows are available (the pinned parquet file, else the two reconstructed rows)
and say which in `meta.row_source` and in their summary: the depth is part of the finding.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from audit_lib.benchmarks.impossible_lcb.codeblocks import READINGS, python_blocks, reply_cases
from audit_lib.benchmarks.impossible_lcb.data import RECONSTRUCTED_KEY, parquet_key, task_number
from audit_lib.benchmarks.impossible_lcb.depth import depth_meta, depth_text
from audit_lib.benchmarks.impossible_lcb.metrics import (
    default_limits,
    generate_solutions,
    judged_summary,
    run_replay,
    separation,
)
from audit_lib.benchmarks.impossible_lcb.timing_split import split_observed
from audit_lib.benchmarks.impossible_lcb.visibility import NUMBERINGS, visibility
from audit_lib.findings import Result

if TYPE_CHECKING:
    from audit_lib.benchmarks.impossible_lcb.audit import Inputs, Params


def _without_rows(inputs: Inputs, what: str) -> Result:
    """Skipped when no oneoff row could be fetched; an error when rows were fetched but none parses."""
    rows = inputs.oneoff_rows
    if rows.rows:
        excluded = inputs.replay("zero_based").excluded
        return Result.errored(f"none of the {len(rows.rows)} {rows.source} oneoff rows parses: "
                              f"{list(excluded)}", meta=depth_meta("rows", 0, row_source=rows.source))
    missing = list(rows.missing) or [parquet_key("oneoff"), RECONSTRUCTED_KEY]
    return Result.skipped(f"{what}: {rows.unavailable_reason}",
                          meta={**depth_meta("rows", 0), "missing": missing})


# ---- visibility_rule -----------------------------------------------------------------------------------------

def visibility_rule(inputs: Inputs, params: Params) -> Result:
    parsed = inputs.replay(params.assertion_numbering)
    if not parsed.tasks:
        return _without_rows(inputs, "no full oneoff rows")
    tasks, excluded = list(parsed.tasks), list(parsed.excluded)
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
    summary = (depth_text("rows", len(tasks), f"{source} rows" + (f", {len(excluded)} unparseable rows excluded: "
                                                                   f"{excluded}" if excluded else ""))
               + f"Counted from 0 and from 1, the rule disagrees on whether the changed assertion was already "
               f"shown for {', '.join(disagree) or 'no task'}; shown assertions read setup lines (variables/helpers) "
               f"that must be shown too in {', '.join(setup_dependent) or 'no task'}. Impossible form, zero-based: "
               f"{_counts_text(per_numbering['zero_based'])}; one-based: {_counts_text(per_numbering['one_based'])}. "
               f"Selected numbering: {params.assertion_numbering}.")
    return Result(status,
                  observed={"per_numbering": per_numbering, "numberings_disagree_on_changed": disagree,
                            "tasks_with_setup_dependency": setup_dependent},
                  expected={"numberings_disagree_on_changed": [], "tasks_with_setup_dependency": []},
                  summary=summary, details=details,
                  meta=depth_meta("rows", len(tasks), row_source=source, numbering=params.assertion_numbering))


# ---- metrics_replay ------------------------------------------------------------------------------------------

def metrics_replay(inputs: Inputs, params: Params) -> Result:
    parsed = inputs.replay(params.assertion_numbering)
    if not parsed.tasks:
        return _without_rows(inputs, "no full oneoff rows")
    tasks, excluded = list(parsed.tasks), list(parsed.excluded)
    limits = default_limits()
    rows, results = run_replay(tasks, executor=params.executor, limits=limits)
    inputs.remember_results(params.assertion_numbering, results)
    timing_observed, timing_meta, split = split_observed(tasks, results, limits)
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
    summary = (depth_text("rows", len(tasks), f"{inputs.oneoff_rows.source} rows, numbering "
                                               f"{params.assertion_numbering}")
               + f"{len(rows)} metric rows (3 generated solutions x 2 forms x {len(tasks)} tasks), "
               f"{sum(len(r.snippets) for r in results.values())} assertions run once each in the sandbox. "
               f"{len(verdicts) - len(failed)}/{len(verdicts)} separation requirements hold"
               + (f"; failing: {[f'{v.task_id}: {v.requirement}' for v in failed]}" if failed else "")
               + f". special_case equals visible_pass in the impossible form on every row: {special_equals_visible}. "
               f"Assertions the lookup tables could not encode: {len(unsupported)}. Failing assertion runs: "
               f"{split.headline()}."
               + (f" Sandbox harness errors: {harness}." if harness else ""))
    return Result(status,
                  observed={"separation_holds": len(verdicts) - len(failed), "separation_total": len(verdicts),
                            "unsupported_assertions": len(unsupported), "harness_errors": harness,
                            **timing_observed},
                  expected={"separation_holds": len(verdicts)}, summary=summary, details=details,
                  meta=depth_meta("rows", len(tasks), row_source=inputs.oneoff_rows.source,
                                  excluded=[e["task_id"] for e in excluded], sandbox_trust=judged_summary(results),
                                  **timing_meta))


# ---- has_code_parsing ----------------------------------------------------------------------------------------

def has_code_parsing(inputs: Inputs, params: Params) -> Result:
    parsed = inputs.replay("zero_based")
    if not parsed.tasks:
        return _without_rows(inputs, "no full oneoff rows to build replies from")
    tasks, excluded = list(parsed.tasks), list(parsed.excluded)
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
    summary = (depth_text("rows", len(tasks), "replies built from the generated solutions"
                           + (f", {len(excluded)} unparseable rows excluded: {excluded}" if excluded else ""))
               + "Three readings of 'contains a python code block' disagree, or the choice of block changes the "
               f"scored code, for {len(ambiguous_cases)} of {len({d['case'] for d in details})} reply shapes: "
               f"{', '.join(sorted(ambiguous_cases)) or 'none'}. The replay scores the last line-start python "
               "block.")
    return Result(status, observed={"ambiguous_cases": sorted(ambiguous_cases)},
                  expected={"ambiguous_cases": []}, summary=summary, details=details,
                  meta=depth_meta("rows", len(tasks), row_source=inputs.oneoff_rows.source,
                                  excluded=[e["task_id"] for e in excluded]))


def _counts_text(counts: Mapping[str, Any]) -> str:
    return ", ".join(f"{key} {value}" for key, value in counts.items())
