"""`your_solutions`: a user's solutions scored on the environment's six metrics, as `metrics_replay` scores its own.

Each solution's code (the last python block of its reply) runs against every assertion of the task's original test
and of its impossible test in the sandbox, 6 s per assertion and 40 s per test run; the six metrics then follow
`metrics.score` for the form the row names. Rates are given per form, over all rows and over the rows of tasks the
environment keeps (its drop list and one-assertion rule), when those are known.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, replace
from typing import TYPE_CHECKING, Any

from audit_lib.benchmarks.impossible_lcb.codeblocks import extract_code
from audit_lib.benchmarks.impossible_lcb.data import RECONSTRUCTED_KEY, parquet_key
from audit_lib.benchmarks.impossible_lcb.depth import depth_meta, depth_text
from audit_lib.benchmarks.impossible_lcb.metrics import (
    FORMS,
    IMPOSSIBLE,
    METRICS,
    SOLVABLE,
    MetricRow,
    ReplayTask,
    judged_summary,
    score,
)
from audit_lib.benchmarks.impossible_lcb.timing_split import split_jobs
from audit_lib.benchmarks.impossible_lcb.user_solutions import UserSolution, read_solutions
from audit_lib.errors import DataUnavailableError, ParameterError
from audit_lib.findings import Result

if TYPE_CHECKING:
    from audit_lib.benchmarks.impossible_lcb.audit import Inputs, Params

TESTS = (("original", "original"), ("impossible", "impossible"))  # (key part, ParsedTest attribute)


def solution_jobs(tasks: Mapping[str, ReplayTask], rows: Sequence[UserSolution], limits: Any
                  ) -> tuple[list[Any], dict[tuple[str, str], bool]]:
    """Two `TestsJob`s per row, its code against the original and the impossible test.

    Keyed (task_id, "line N", "original"|"impossible"), with whether each reply held a python block.
    """
    from audit_lib.benchmarks.impossible_lcb.assertions import assertion_snippet
    from audit_lib.sandbox import TestsJob

    jobs, has_code = [], {}
    for row in rows:
        task = tasks[row.task_id]
        code = extract_code(row.solution)
        has_code[(row.task_id, row.label)] = code is not None
        for key_part, attribute in TESTS:
            test = getattr(task, attribute)
            snippets = tuple(assertion_snippet(test, i, task.entry_point) for i in range(len(test.assertions)))
            jobs.append(TestsJob(key=(row.task_id, row.label, key_part), program=code or "", snippets=snippets,
                                 entry_points=(task.entry_point,), limits=limits))
    return jobs, has_code


def metric_rows(tasks: Mapping[str, ReplayTask], rows: Sequence[UserSolution],
                results: Mapping[tuple[str, str, str], Any], has_code: Mapping[tuple[str, str], bool]
                ) -> list[MetricRow]:
    """The six metrics of each row, in the form the row names (`score` gives both forms; the other is dropped)."""
    statuses = {key: tuple(snippet.status for snippet in result.snippets) for key, result in results.items()}
    scored = {(r.task_id, r.solution, r.form): r
              for r in score([tasks[t] for t in dict.fromkeys(row.task_id for row in rows)], statuses, has_code)}
    return [scored[(row.task_id, row.label, row.form)] for row in rows]


def rates(rows: Sequence[MetricRow]) -> dict[str, dict[str, Any]]:
    """Per form: how many rows, and the share of them for which each applicable metric holds."""
    table: dict[str, dict[str, Any]] = {}
    for form in FORMS:
        chosen = [row for row in rows if row.form == form]
        if not chosen:
            continue
        entry: dict[str, Any] = {"rows": len(chosen)}
        for metric in METRICS:
            values = [getattr(row, metric) for row in chosen if getattr(row, metric) is not None]
            if values:
                entry[metric] = round(sum(bool(v) for v in values) / len(values), 6)
        table[form] = entry
    return table


def your_solutions_from(rows: Sequence[UserSolution], tasks: Mapping[str, ReplayTask],
                        results: Mapping[tuple[str, str, str], Any], has_code: Mapping[tuple[str, str], bool], *,
                        not_scored: Mapping[int, str], kept_by_environment: frozenset[str] | None,
                        timing_observed: Mapping[str, Any] | None = None,
                        timing_meta: Mapping[str, Any] | None = None) -> Result:
    """The metrics of every scored row, the rates per form, and the rows that could not be scored (and why)."""
    harness = sorted({"/".join(key) for key, result in results.items() if result.status == "harness_error"})
    if harness:
        return Result.errored(f"{len(harness)} sandbox harness error(s): {', '.join(harness[:10])}")
    scored_rows = [row for row in rows if row.line not in not_scored]
    metrics = metric_rows(tasks, scored_rows, results, has_code)
    details = []
    for row, metric in zip(scored_rows, metrics):
        entry = {"line": row.line, **asdict(metric)}
        entry.pop("solution")
        entry["kept_by_environment"] = None if kept_by_environment is None else row.task_id in kept_by_environment
        details.append(entry)
    details += [{"line": line, "task_id": next(r.task_id for r in rows if r.line == line), "not_scored": why}
                for line, why in sorted(not_scored.items())]
    overall = rates(metrics)
    kept = (rates([m for m in metrics if m.task_id in kept_by_environment])
            if kept_by_environment is not None else None)
    summary = (f"{len(metrics)} of {len(rows)} solution(s) scored on the environment's six metrics"
               + (f" ({len(not_scored)} not scored: {_not_scored_text(not_scored)})" if not_scored else "") + ". "
               + " ".join(_form_text(form, entry) for form, entry in overall.items())
               + ("" if kept is None else f" On the tasks the environment keeps: "
                  + " ".join(_form_text(form, entry) for form, entry in kept.items())))
    return Result("pass",
                 observed={"scored": len(metrics), "rows": len(rows), "not_scored": len(not_scored),
                           "rates": overall, "rates_on_kept_tasks": kept, **dict(timing_observed or {})},
                 expected="scored, nothing expected", summary=summary.strip(), details=details,
                 meta={"solutions_file": "<solutions_path>", "sandbox_trust": judged_summary(results),
                       "metrics": {SOLVABLE: [m for m in METRICS if m not in ("special_case", "impossible_all_pass")],
                                   IMPOSSIBLE: list(METRICS)},
                       "code_scored": "the last python code block at the start of a line of each reply",
                       **dict(timing_meta or {})})


def your_solutions(inputs: Inputs, params: Params) -> Result:
    """Read `-p solutions_path`, run every scorable row in the sandbox and score it (see the module docstring)."""
    from audit_lib.benchmarks.impossible_lcb.metrics import default_limits
    from audit_lib.sandbox import run_many

    if not params.solutions_path:
        return Result.skipped("no solutions given: pass -p solutions_path FILE (JSON lines with task_id, form and "
                              "solution)", missing=["param:solutions_path"], meta=depth_meta("rows", 0))
    try:
        rows = read_solutions(params.solutions_path)
    except ParameterError as exc:  # checked before the kernel started; the file changed since
        return Result.errored(exc.message, meta=depth_meta("rows", 0))
    parsed = inputs.replay(params.assertion_numbering)
    if not parsed.tasks:
        missing = list(inputs.oneoff_rows.missing) or [parquet_key("oneoff"), RECONSTRUCTED_KEY]
        return Result.skipped(f"no full oneoff rows to score against: {inputs.oneoff_rows.unavailable_reason}",
                              missing=missing, meta=depth_meta("rows", 0))
    tasks = {task.task_id: task for task in parsed.tasks}
    unparseable = {entry["task_id"]: entry["reason"] for entry in parsed.excluded}
    listed = set(inputs.task_ids) if inputs.manifest is not None else set()
    unknown = [row for row in rows if row.task_id not in tasks and row.task_id not in unparseable
               and row.task_id not in listed]
    if unknown:
        return Result.errored("solutions_path names task(s) the environment does not have: " + "; ".join(f"line {row.line}: {row.task_id!r}" for row in unknown[:10])
                              + f" (it has {len(listed) or len(tasks)} tasks, e.g. {next(iter(tasks))}); fix those "
                              "lines and run again", meta=depth_meta("rows", len(tasks)))
    not_scored = {row.line: (f"its row does not parse ({unparseable[row.task_id]})" if row.task_id in unparseable
                             else f"no full row for it ({inputs.oneoff_rows.source} rows only)")
                  for row in rows if row.task_id not in tasks}
    scorable = [row for row in rows if row.line not in not_scored]
    limits = default_limits()
    jobs, has_code = solution_jobs(tasks, scorable, limits)
    results = dict(run_many(jobs, params.executor, progress=True, progress_unit="test runs"))
    timing_observed, timing_meta, split = split_jobs(jobs, results, limits)
    try:
        kept: frozenset[str] | None = frozenset(inputs.eligible_ids)
    except DataUnavailableError:  # the drop list or the manifest is missing: rates over all rows only
        kept = None
    check = your_solutions_from(rows, tasks, results, has_code, not_scored=not_scored, kept_by_environment=kept,
                                timing_observed=timing_observed,
                                timing_meta={**timing_meta, "failure_headline": split.headline()})
    scored_tasks = len({row.task_id for row in scorable})
    return replace(check, summary=depth_text("rows", scored_tasks, f"{inputs.oneoff_rows.source} rows") + check.summary,
                   meta={**check.meta, **depth_meta("rows", scored_tasks, row_source=inputs.oneoff_rows.source)})


def _form_text(form: str, entry: Mapping[str, Any]) -> str:
    shares = ", ".join(f"{metric} {100 * entry[metric]:.0f} %" for metric in METRICS if metric in entry)
    return f"{form} form ({entry['rows']} row(s)): {shares}."


def _not_scored_text(not_scored: Mapping[int, str]) -> str:
    reasons: dict[str, list[int]] = {}
    for line, why in not_scored.items():
        reasons.setdefault(why, []).append(line)
    return "; ".join(f"line(s) {', '.join(map(str, lines[:8]))}: {why}" for why, lines in reasons.items())


__all__ = ["metric_rows", "rates", "solution_jobs", "your_solutions", "your_solutions_from"]
