"""The community errata of OpenAI HumanEval: what it changes, and whether HumanEval+ inputs tell old from new."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from audit_lib.benchmarks.humaneval_plus.audit import Inputs, Params
from audit_lib.benchmarks.humaneval_plus.data import Dataset, HumanEvalTask, PlusTask, task_sort_key
from audit_lib.benchmarks.humaneval_plus.programs import CallableProgram, check_snippet
from audit_lib.benchmarks.humaneval_plus.replay import evalplus_time_limits_for, run_original_tests, score_split
from audit_lib.benchmarks.humaneval_plus.runs import (
    EVALPLUS_SAMPLE_BUDGET,
    SPLITS,
    Split,
    SplitRun,
    inputs_of,
    run_programs,
)
from audit_lib.findings import Result

ERRATA_FIELDS = ("prompt", "canonical_solution", "test", "entry_point")


def errata_changes(originals: Mapping[str, HumanEvalTask], errata: Mapping[str, HumanEvalTask]) -> list[dict[str, Any]]:
    """Per task, which fields the errata changes (a prompt change that only strips whitespace is marked so)."""
    rows = []
    for task_id in sorted(set(originals) & set(errata), key=task_sort_key):
        before, after = originals[task_id], errata[task_id]
        changed = [name for name in ERRATA_FIELDS if getattr(before, name) != getattr(after, name)]
        if not changed:
            continue
        whitespace_only = "prompt" in changed and _squash(before.prompt) == _squash(after.prompt)
        rows.append({"task_id": task_id, "fields": changed, "prompt_whitespace_only": whitespace_only})
    return rows


def _squash(text: str) -> str:
    return " ".join(text.split())


def errata_diff_from(tasks: Sequence[PlusTask], dataset: Dataset, changes: Sequence[Mapping[str, Any]],
                     old_runs: Mapping[tuple[str, Split], SplitRun], new_runs: Mapping[tuple[str, Split], SplitRun],
                     test_results: Mapping[str, Any] | None = None) -> Result:
    """For each task whose canonical or test the errata changes: do HumanEval+ inputs separate old from new?"""
    by_id = {task.task_id: task for task in tasks}
    rows = []
    for change in changes:
        task_id = change["task_id"]
        task = by_id.get(task_id)
        row: dict[str, Any] = {"task_id": task_id, "fields": ",".join(change["fields"]),
                               "prompt_whitespace_only": change["prompt_whitespace_only"]}
        if task is not None and "canonical_solution" in change["fields"]:
            separating = []
            for split in SPLITS:
                old, new = old_runs.get((task_id, split)), new_runs.get((task_id, split))
                if old is None or new is None:
                    continue
                separating += [(split, v) for v in score_split(task, dataset, new, old) if not v.passed]
            row["inputs_separating_canonicals"] = len(separating)
            row["canonicals_distinguishable"] = bool(separating)
            if separating:
                split, first = separating[0]
                row["first_separating_input"] = repr(inputs_of(task, split)[first.index])[:200]
                row["first_difference"] = f"errata {first.detail}"[:300]
        for which in ("old", "new"):
            result = (test_results or {}).get(f"{which}_test::{task_id}")
            if result is not None:
                snippet = result.snippets[0] if result.snippets else None
                row[f"{which}_test_vs_evalplus_canonical"] = snippet.status if snippet else result.status
        rows.append(row)
    substantive = [row for row in rows if not (row["fields"] == "prompt" and row["prompt_whitespace_only"])]
    canonical_rows = [row for row in rows if "canonical_solution" in row["fields"]]
    indistinct = [row["task_id"] for row in canonical_rows if not row.get("canonicals_distinguishable")]
    test_changed = [row for row in rows if "test" in row["fields"]]
    summary = (f"The errata changes {len(rows)} task(s), {len(substantive)} beyond prompt whitespace; "
               f"{len(canonical_rows)} canonical solution(s) changed, and HumanEval+ inputs separate old from new "
               f"in {len(canonical_rows) - len(indistinct)} of them (not in: {', '.join(indistinct) or 'none'}); "
               f"{len(test_changed)} test(s) changed.")
    return Result("quirk" if substantive else "pass",
                  observed={"tasks_changed": len(rows), "substantive": len(substantive),
                            "canonical_changed": len(canonical_rows), "canonical_indistinguishable": indistinct,
                            "tests_changed": len(test_changed)},
                  expected="errata changes listed; each canonical change visible on HumanEval+ inputs",
                  summary=summary, details=sorted(rows, key=_errata_row_order))


def _errata_row_order(row: Mapping[str, Any]) -> tuple[int, tuple[int, str]]:
    fields = row["fields"]
    rank = 0 if "canonical_solution" in fields else 1 if "test" in fields else \
        3 if fields == "prompt" and row["prompt_whitespace_only"] else 2
    return rank, task_sort_key(row["task_id"])


def errata_diff(inputs: Inputs, params: Params) -> Result:
    """Whether HumanEval+ inputs tell the errata's canonicals and tests from the originals.

    Runs both canonicals of every task whose canonical the errata changes, and EvalPlus's canonical against both
    versions of every changed test; then `errata_diff_from`."""
    tasks, originals, errata, executor = inputs.tasks, inputs.originals, inputs.errata, params.executor
    wanted = {task.task_id for task in tasks}
    changes = [row for row in errata_changes(originals, errata) if row["task_id"] in wanted]
    changed_canonical = [task for task in tasks if any(change["task_id"] == task.task_id and "canonical_solution" in
                                                       change["fields"] for change in changes)]

    def canonical_of(source: Mapping[str, HumanEvalTask]) -> Callable[[PlusTask], CallableProgram]:
        return lambda task: CallableProgram(source[task.task_id].prompt + source[task.task_id].canonical_solution,
                                            task.entry_point)

    limits = evalplus_time_limits_for(inputs.ground_truth, min_time_limit=params.min_time_limit)
    # Both canonicals are scored like samples: EvalPlus's per-input limits and its 60 s whole-sample budget.
    old_runs = run_programs(changed_canonical, canonical_of(originals), limits, executor=executor,
                            budget=EVALPLUS_SAMPLE_BUDGET)
    new_runs = run_programs(changed_canonical, canonical_of(errata), limits, executor=executor,
                            budget=EVALPLUS_SAMPLE_BUDGET)
    by_id = {task.task_id: task for task in tasks}
    test_jobs = [(f"{which}_test::{change['task_id']}", by_id[change["task_id"]].program,
                  check_snippet(source[change["task_id"]].test, by_id[change["task_id"]].entry_point),
                  by_id[change["task_id"]].entry_point)
                 for change in changes if "test" in change["fields"]
                 for which, source in (("old", originals), ("new", errata))]
    test_results = run_original_tests(test_jobs, executor=executor) if test_jobs else {}
    return errata_diff_from(tasks, inputs.dataset, changes, old_runs, new_runs, test_results)


__all__ = ["ERRATA_FIELDS", "errata_changes", "errata_diff", "errata_diff_from"]
