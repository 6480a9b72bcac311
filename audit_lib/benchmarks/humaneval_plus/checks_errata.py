"""The community errata of OpenAI HumanEval: what it changes, and whether HumanEval+ inputs tell old from new."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

from audit_lib.benchmarks.humaneval_plus.audit import Inputs, Params
from audit_lib.benchmarks.humaneval_plus.data import Dataset, HumanEvalTask, PlusTask, task_sort_key
from audit_lib.benchmarks.humaneval_plus.groundtruth import GroundTruth
from audit_lib.benchmarks.humaneval_plus.programs import check_snippet
from audit_lib.benchmarks.humaneval_plus.replay import InputVerdict, run_candidates, run_original_tests, score_split
from audit_lib.benchmarks.humaneval_plus.runs import SPLITS, Split, SplitRun, inputs_of
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
                     gt: GroundTruth | None, test_results: Mapping[str, Any] | None = None) -> Result:
    """For each task whose canonical or test the errata changes: do HumanEval+ inputs separate old from new?

    Both canonicals are judged against the ground truth under EvalPlus's rules; an input separates them when one
    passes it and the other does not (what a HumanEval+ score can see). Only inputs the errata's canonical was judged
    on count: its runs stop at their first failing input (`fast_check`)."""
    by_id = {task.task_id: task for task in tasks}
    rows = []
    for change in changes:
        task_id = change["task_id"]
        task = by_id.get(task_id)
        row: dict[str, Any] = {"task_id": task_id, "fields": ",".join(change["fields"]),
                               "prompt_whitespace_only": change["prompt_whitespace_only"]}
        if task is not None and "canonical_solution" in change["fields"]:
            separating, judged = [], 0
            for split in SPLITS:
                old, new = old_runs.get((task_id, split)), new_runs.get((task_id, split))
                if old is None or new is None or gt is None:
                    continue
                expected = gt.run(task_id, split)
                pairs = zip(score_split(task, dataset, old, expected), score_split(task, dataset, new, expected))
                for old_verdict, new_verdict in pairs:
                    if new_verdict.kind == "not_run":
                        continue
                    judged += 1
                    if old_verdict.passed != new_verdict.passed:
                        separating.append((split, old_verdict, new_verdict))
            row["errata_inputs_judged"] = judged
            row["inputs_separating_canonicals"] = len(separating)
            row["canonicals_distinguishable"] = bool(separating)
            if separating:
                split, old_verdict, new_verdict = separating[0]
                row["first_separating_input"] = repr(inputs_of(task, split)[new_verdict.index])[:200]
                row["first_difference"] = (f"errata {_verdict_text(new_verdict)}; "
                                           f"original {_verdict_text(old_verdict)}")[:300]
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
                  summary=summary, details=sorted(rows, key=_errata_row_order),
                  meta={"separation": "an input one canonical passes and the other fails under EvalPlus's rules "
                                      "(ground truth, per-input limits); the errata's canonical is scored as "
                                      "evalplus.evaluate scores a sample (fast_check: each split stops at its "
                                      "first failing input), the original's runs are the replay's"})


def _verdict_text(verdict: InputVerdict) -> str:
    return "passes" if verdict.passed else f"fails ({verdict.kind}): {verdict.detail}"


def _errata_row_order(row: Mapping[str, Any]) -> tuple[int, tuple[int, str]]:
    fields = row["fields"]
    rank = 0 if "canonical_solution" in fields else 1 if "test" in fields else \
        3 if fields == "prompt" and row["prompt_whitespace_only"] else 2
    return rank, task_sort_key(row["task_id"])


def errata_diff(inputs: Inputs, params: Params) -> Result:
    """Whether HumanEval+ inputs tell the errata's canonicals and tests from the originals.

    OpenAI's canonical is not run again: its runs are the replay's (`Inputs.original_canonical_runs`, shared with
    `original_canonical_vs_plus` and `variants`), unless HumanEval+ changed the task's prompt. The errata's
    canonical is scored like a sample, judged against the ground truth; EvalPlus's canonical runs against both
    versions of every changed test. Then `errata_diff_from`."""
    tasks, originals, errata, executor = inputs.tasks, inputs.originals, inputs.errata, params.executor
    wanted = {task.task_id for task in tasks}
    changes = [row for row in errata_changes(originals, errata) if row["task_id"] in wanted]
    changed_ids = {change["task_id"] for change in changes if "canonical_solution" in change["fields"]}
    changed_canonical = [task for task in tasks if task.task_id in changed_ids]
    old_runs: dict[tuple[str, Split], SplitRun] = {}
    new_runs: dict[tuple[str, Split], SplitRun] = {}
    if changed_canonical:
        gt = inputs.ground_truth
        # the replay ran HumanEval+'s prompt + OpenAI's body: the same program where the two prompts agree
        shared = [task for task in changed_canonical if task.prompt == originals[task.task_id].prompt]
        replay_runs = inputs.original_canonical_runs if shared else {}
        old_runs.update({(task.task_id, split): replay_runs[(task.task_id, split)]
                         for task in shared for split in SPLITS if (task.task_id, split) in replay_runs})
        shared_ids = {task.task_id for task in shared}
        own = [(task.task_id, task, _program(originals[task.task_id])) for task in changed_canonical
               if task.task_id not in shared_ids]
        if own:
            old_runs.update(_by_task(run_candidates(own, inputs.dataset, gt, min_time_limit=params.min_time_limit,
                                                    executor=executor, progress_desc="errata: original")))
        new_units = [(task.task_id, task, _program(errata[task.task_id])) for task in changed_canonical]
        new_runs = _by_task(run_candidates(new_units, inputs.dataset, gt, min_time_limit=params.min_time_limit,
                                           executor=executor, fast_check=True, progress_desc="errata"))
    by_id = {task.task_id: task for task in tasks}
    test_jobs = [(f"{which}_test::{change['task_id']}", by_id[change["task_id"]].program,
                  check_snippet(source[change["task_id"]].test, by_id[change["task_id"]].entry_point),
                  by_id[change["task_id"]].entry_point)
                 for change in changes if "test" in change["fields"]
                 for which, source in (("old", originals), ("new", errata))]
    test_results = run_original_tests(test_jobs, executor=executor) if test_jobs else {}
    return errata_diff_from(tasks, inputs.dataset, changes, old_runs, new_runs,
                            inputs.ground_truth if changed_canonical else None, test_results)


def _program(task: HumanEvalTask) -> str:
    return task.prompt + task.canonical_solution


def _by_task(runs: Mapping[tuple[Hashable, Split], SplitRun]) -> dict[tuple[str, Split], SplitRun]:
    return {(str(key), split): run for (key, split), run in runs.items()}


__all__ = ["ERRATA_FIELDS", "errata_changes", "errata_diff", "errata_diff_from"]
