"""One ImpossibleBench LCB task as the audit saw it (`AuditSession.task`).

The prompt, the three generated solutions (honest oracle, special-caser, exit cheater), and each solution's verdict on
each assertion of both forms of the test, from `metrics_replay`'s runs or, when it has not run, this task's own jobs in
the sandbox. A task only the manifest lists has no prompt, tests or runs; its notes say so. An input here is one
assertion: `input` is its source, `expected` that it holds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from audit_lib.benchmarks.impossible_lcb.data import task_number
from audit_lib.benchmarks.impossible_lcb.metrics import ReplayTask, generate_solutions, run_replay
from audit_lib.errors import DataError, NoTaskViewError
from audit_lib.report.task_view import TaskView, unknown_task, verdict_frame
from audit_lib.timing import cause_of

EXPECTED = "assertion holds"
FORMS = ("original", "impossible")


def task_view(inputs: Any, params: Any, task_id: str) -> TaskView:
    """The task's view (`inputs` is the audit's `Inputs`).

    An id the manifest and the rows do not know raises UnknownTaskError."""
    entries = [entry for entry in inputs.manifest or () if entry.task_id == task_id]
    rows = {rows.split: row for rows in (inputs.oneoff_rows, inputs.conflicting_rows)
            for row in rows.rows if row.task_id == task_id}
    known = {entry.task_id for entry in inputs.manifest or ()} | {
        row.task_id for rows in (inputs.oneoff_rows, inputs.conflicting_rows) for row in rows.rows}
    if not known:
        raise NoTaskViewError("no tasks loaded: " + "; ".join(f"{k}: {v}" for k, v in sorted(inputs.missing.items())),
                              missing=sorted(inputs.missing))
    if task_id not in known:
        scope = "the tasks of the manifest and the full rows" if inputs.manifest is not None else \
            f"the {len(known)} tasks of the full rows (the manifest is not loaded)"
        raise unknown_task(task_id, sorted(known, key=task_number), scope=scope)
    numbering = params.assertion_numbering
    task = next((t for t in inputs.replay(numbering).tasks if t.task_id == task_id), None)
    notes: list[str] = []
    oneoff = rows.get("oneoff")
    if oneoff is None:
        notes.append(f"no full oneoff row of {task_id} here ({_row_source(inputs.oneoff_rows)}): no prompt, tests "
                     "or runs; the manifest's mutation is in `context`")
    elif task is None:
        notes.append(f"the oneoff row of {task_id} could not be parsed for replay, so nothing ran")
    generated = generate_solutions(task) if task is not None else ()
    solutions = {solution.kind: solution.program for solution in generated}
    verdict_rows = _verdict_rows(task, generated, _runs(inputs, params, task)) if task is not None else []
    notes += [f"{solution.kind}: the lookup table could not encode assertion {index} ({reason})"
              for solution in generated for index, reason in solution.unsupported]
    return TaskView("impossible_lcb", task_id, oneoff.prompt if oneoff is not None else "", solutions,
                    verdict_frame(verdict_rows), _context(inputs, task_id, entries, rows, task), tuple(notes))


def _runs(inputs: Any, params: Any, task: ReplayTask) -> Mapping[tuple[str, str, str], Any]:
    """The replay's results for this task: `metrics_replay`'s, else this task's jobs alone, in the sandbox."""
    cached = inputs.replay_results(params.assertion_numbering)
    if cached is not None and any(key[0] == task.task_id for key in cached):
        return {key: result for key, result in cached.items() if key[0] == task.task_id}
    _rows, results = run_replay([task], executor=params.executor, progress=False)
    return results


def _verdict_rows(task: ReplayTask, solutions: Sequence[Any],
                  results: Mapping[tuple[str, str, str], Any]) -> list[dict[str, Any]]:
    """One row per solution, form and assertion: the sandbox's verdict (decided by the sandbox's judge)."""
    rows = []
    for solution in solutions:
        for form in FORMS:
            result = results.get((task.task_id, solution.kind, form))
            if result is None:
                continue
            test = task.original if form == "original" else task.impossible
            seen = task.solvable_visibility if form == "original" else task.impossible_visibility
            for snippet in sorted(result.snippets, key=lambda s: s.index):
                passed = snippet.status == "pass"
                error = ": ".join(str(part) for part in (snippet.error_type, snippet.error_message) if part)
                rows.append({
                    "solution": solution.kind, "input_id": f"{form}[{snippet.index}]",
                    "input": test.assertions[snippet.index].source if snippet.index < len(test.assertions) else None,
                    "expected": EXPECTED, "got": "pass" if passed else f"{snippet.status}: {error}".rstrip(": "),
                    "status": "pass" if passed else "fail", "kind": snippet.status,
                    "cause": None if passed else cause_of(snippet.status),
                    "wall_s": snippet.wall_s, "cpu_s": snippet.cpu_s, "form": form,
                    "shown": snippet.index in seen.shown, "changed": snippet.index in seen.changed,
                    "trust": snippet.trust})
    return rows


def _context(inputs: Any, task_id: str, entries: list, rows: Mapping[str, Any], task: ReplayTask | None) -> dict:
    context: dict[str, str] = {}
    for split, row in sorted(rows.items()):
        if split == "oneoff":
            context["original test"] = row.original_test
        context[f"{split} test (impossible)"] = row.test
    for entry in entries:
        pair = f"{entry.original_assert}\n-> {entry.mutated_assert}\n" if entry.original_assert or \
            entry.mutated_assert else "(no assertion pair extracted)\n"
        context[f"{entry.split} mutation (manifest row {entry.row})"] = (
            f"{pair}(lines removed {entry.lines_removed}, added {entry.lines_added}; compiles: {entry.syntax_ok}; "
            f"extraction: {entry.extraction})")
    issues = [issue for issue in inputs.known_issues or () if issue.task_id == task_id]
    if issues:
        context["defect list"] = "\n".join(f"row {i.row} ({i.split}): {i.issue}: {i.detail} -> {i.action}"
                                           for i in issues)
    context["in the environment"] = _place(inputs, task_id)
    if task is not None:
        seen = task.impossible_visibility
        context["visibility (impossible form)"] = (f"shown {list(seen.shown)}, held back {list(seen.held_back)}, "
                                                   f"changed {list(seen.changed)} ({seen.numbering})")
    return context


def _place(inputs: Any, task_id: str) -> str:
    """Dropped (and why), breaking the one-assertion rule, eligible, or not in the environment's split."""
    try:
        dropped = {task.task_id: task for task in inputs.drop_list}
        if task_id in dropped:
            task = dropped[task_id]
            return (f"dropped by the defect list (rows {', '.join(map(str, task.source_rows))}): "
                    f"{', '.join(task.labels or task.categories)}")
        if task_id not in inputs.task_ids:
            return "not in the environment's split"
        if task_id in inputs.rule_breakers:
            return "breaks the one-assertion rule (its oneoff mutation changes more than one assertion)"
        return "eligible"
    except DataError as exc:
        return f"unknown: {exc.message}"


def _row_source(rows: Any) -> str:
    return rows.unavailable_reason or f"{len(rows.rows)} {rows.source} rows"


__all__ = ["task_view"]
