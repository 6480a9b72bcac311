"""Tasks in notebooks and reports: the per-task drill-down under a check, and the notebooks' "Explore" cells.

`show_drilldown(audit, check_id)` shows, for each task a failing check's evidence names, the task's prompt, its
canonical solution(s), the check's rows for it and every input it fails (expected vs got), each task collapsed,
within a byte budget so a report stays small (the check's full evidence is embedded in the report anyway).
`explore_evidence` / `explore_task` show `audit.evidence(...)` / `audit.task(...)`, or say plainly why there is
nothing to show (a skipped check, data that is not there), so a batch run never fails on them.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from audit_lib.errors import AuditError
from audit_lib.report.show import ReportHTML, emit
from audit_lib.report.tables import table_markup
from audit_lib.report.values import esc
from audit_lib.report.task_view import TASK_VIEW_STYLE, TaskView, task_view_markup, text_block, verdict_table

DRILLDOWN_STATUSES = ("quirk", "defect", "error")
DRILLDOWN_BUDGET_BYTES = 150_000  # per check: three such checks keep a report well under ~2 MB
DRILLDOWN_MAX_TASKS = 40
ROWS_PER_TASK = 20
TEXT_KEPT_PER_VALUE = 600  # a value in the drill-down; the evidence download and `audit.task` hold it whole
UNUSABLE = ("skipped", "error")
EXPLORE_ROWS = 10


def drilldown_markup(audit: Any, check_id: str, *, solutions: Collection[str] | None = None,
                     budget_bytes: int = DRILLDOWN_BUDGET_BYTES, max_tasks: int = DRILLDOWN_MAX_TASKS) -> str:
    """The drill-down of one check (empty for a passing check or one whose rows name no task).

    `solutions`: the verdict rows shown are those whose `solution` starts with one of these (None: every
    solution's failing rows; empty: none, only the prompt, solutions and the check's rows)."""
    check = audit.run(check_id)
    task_ids = audit.task_ids_in(check_id)
    if check.status not in DRILLDOWN_STATUSES or not task_ids:
        return ""
    sections: list[str] = []
    used = 0
    for task_id in task_ids[:max_tasks]:
        rows = [{k: v for k, v in row.items() if k != "task_id"} for row in check.details
                if str(row.get("task_id")) == task_id]
        section = _task_section(audit, task_id, rows, solutions)
        size = len(section.encode("utf-8"))
        if sections and used + size > budget_bytes:
            break
        sections.append(section)
        used += size
    omitted = len(task_ids) - len(sections)
    tail = (f'<p class="note">{omitted:,} more task{"s" if omitted != 1 else ""} not shown here (this report keeps '
            f"{len(sections):,} to stay small); every task is in this check's evidence download, and "
            f'<code>audit.task("…")</code> in the notebook shows any of them.</p>' if omitted else "")
    return (f'<details class="task-drilldown" data-check="{esc(check_id)}"><summary>Per task: '
            f"{len(task_ids):,} task{'s' if len(task_ids) != 1 else ''} — prompt, canonical solution and failing "
            f"inputs, expected vs got (collapsed)</summary>{''.join(sections)}{tail}</details>")


def show_drilldown(audit: Any, check_id: str, *, solutions: Collection[str] | None = None,
                   budget_bytes: int = DRILLDOWN_BUDGET_BYTES, max_tasks: int = DRILLDOWN_MAX_TASKS) -> ReportHTML:
    """Display the check's per-task drill-down (nothing for a passing check)."""
    markup = drilldown_markup(audit, check_id, solutions=solutions, budget_bytes=budget_bytes, max_tasks=max_tasks)
    return emit(TASK_VIEW_STYLE + markup) if markup else ReportHTML("")


def _task_section(audit: Any, task_id: str, check_rows: list[dict[str, Any]],
                  solutions: Collection[str] | None) -> str:
    try:
        view: TaskView = audit.task(task_id)
    except AuditError as exc:  # a row naming a task outside the selection, or data that is not there
        return (f'<details class="task"><summary><code>{esc(task_id)}</code></summary>'
                f'{table_markup(check_rows[:ROWS_PER_TASK])}<p class="note">No task view: {esc(exc)}</p></details>')
    failing = view.failing
    if solutions is not None:
        failing = failing.loc[failing["solution"].astype(str).str.startswith(tuple(solutions)).astype(bool)]
    kinds = ", ".join(f"{count:,} {kind}" for kind, count in failing["kind"].value_counts().items())
    label = f"{len(failing):,} failing input{'s' if len(failing) != 1 else ''} ({kinds})" if len(failing) else \
        f"{len(check_rows):,} row{'s' if len(check_rows) != 1 else ''} in this check"
    parts = [table_markup(check_rows[:ROWS_PER_TASK]) if check_rows else "",
             text_block("prompt", view.prompt)]
    parts += [text_block(f"solution: {name}", source) for name, source in view.solutions.items()]
    parts += [text_block(name, text) for name, text in view.context.items()]
    parts += [f'<p class="note">{esc(note)}</p>' for note in view.notes]
    if len(failing):
        parts.append(verdict_table(failing, max_rows=ROWS_PER_TASK, kept=TEXT_KEPT_PER_VALUE))
    return (f'<details class="task"><summary><code>{esc(task_id)}</code> — {esc(label)}</summary>'
            f"{''.join(parts)}</details>")


# ---------------------------------------------------------------------------------------------- Explore cells


def explore_evidence(audit: Any, check_id: str, rows: int = EXPLORE_ROWS) -> Any:
    """Show `audit.evidence(check_id)` (its first `rows` rows) and return the frame.

    A note instead when the check did not run (skipped or error) or found no rows."""
    call = f'<p><code>audit.evidence("{esc(check_id)}")</code>'
    if check_id not in audit.check_ids:
        only = getattr(audit, "only", ())
        emit(f"{call}: not run in this run of --only {esc(','.join(only))}</p>" if only else
             f"{call}: this audit has no such check; its checks: {esc(', '.join(audit.check_ids))}</p>")
        return None
    check = audit.run(check_id)
    if check.status in UNUSABLE:
        emit(f'{call}: nothing to explore, the check is <b>{esc(check.status)}</b> — {esc(check.summary)}</p>')
        return None
    frame = audit.evidence(check_id)
    if not len(frame):
        emit(f"{call}: the check ({esc(check.status)}) recorded no evidence rows.</p>")
        return frame
    shown = frame.head(rows)
    emit(f"{call} → a DataFrame of {_count(len(frame), 'row')} × {_count(len(frame.columns), 'column')}; the first "
          f"{len(shown):,}:</p>{table_markup(shown.to_dict(orient='records'), columns=list(map(str, frame.columns)))}")
    return frame


def _count(number: int, noun: str) -> str:
    return f"{number:,} {noun}{'s' if number != 1 else ''}"


def explore_task(audit: Any, task_id: str) -> TaskView | None:
    """Show `audit.task(task_id)` and return it; a note instead when the audit cannot show that task."""
    call = f'<p><code>audit.task("{esc(task_id)}")</code>'
    try:
        view = audit.task(task_id)
    except AuditError as exc:
        emit(f"{call}: nothing to show — {esc(exc)}</p>")
        return None
    emit(f"{call} →</p>{TASK_VIEW_STYLE}<div class=\"task-view\">{task_view_markup(view)}</div>")
    return view


__all__ = ["DRILLDOWN_BUDGET_BYTES", "drilldown_markup", "explore_evidence", "explore_task", "show_drilldown"]
