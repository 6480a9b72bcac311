"""One task of a benchmark as the audit saw it: prompt, canonical solution(s) and every per-input verdict.

An audit with tasks sets `AuditPlugin.task_view`; `AuditSession.task(task_id)` returns a `TaskView`. The verdicts
come from runs the audit made in the sandbox (or makes there for this one task): nothing runs in the caller's
process. This module stays light to import (pandas only where a frame is built).
"""

from __future__ import annotations

import difflib
import html
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from audit_lib.errors import UnknownTaskError
from audit_lib.report.values import esc, number_text, redact_paths

if TYPE_CHECKING:
    import pandas as pd

# Every verdict table has these columns, in this order; an audit may add its own after them.
VERDICT_COLUMNS: tuple[str, ...] = ("solution", "input_id", "input", "expected", "got", "status", "kind", "cause",
                                    "wall_s", "cpu_s")
PASSING_STATUSES = frozenset({"pass"})
ROWS_SHOWN = 30  # rows of the verdict table shown in a notebook; the frame holds all of them
TEXT_SHOWN = 80  # a longer value is shown collapsed (`<details>`), its first characters as the summary
TEXT_KEPT = 4000  # a collapsed value shows at most this much (the frame holds more)
NEAR_MATCHES = 5
TIMES_NOTE = ("wall_s and cpu_s were measured on the machine that ran the audit (machine-dependent), not properties "
              "of the benchmark.")

TASK_VIEW_STYLE = """<style>
.ba .task-view pre,.ba .task-drilldown pre{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;white-space:pre-wrap;overflow-wrap:anywhere;background:#f6f8fa;border:1px solid #d0d7de;
  padding:6px 8px;margin:3px 0;font-size:12px;max-height:28em;overflow-y:auto}
.ba .task-view td details>summary,.ba .task-drilldown td details>summary{margin:0}
.ba .task-view td,.ba .task-drilldown td{max-width:28em}
.ba .task-view td code,.ba .task-drilldown td code{white-space:pre-wrap}
.ba .task-drilldown details.task{margin:2px 0 2px 14px}
</style>"""


@dataclass(frozen=True, eq=False)
class TaskView:
    """A task's prompt, canonical solution(s) (label -> source), and one verdict row per solution and input.

    `verdicts` has `VERDICT_COLUMNS` (status `pass` or `fail`; `kind` says how; `cause` is `deterministic` or
    `timing` where the audit knows; times in seconds where measured); `evidence` holds this task's rows from every
    check the session has run (a `check` column first); `context` other texts of the task (a contract, a gold
    prompt); `notes` what the view could not include and why."""

    audit: str
    task_id: str
    prompt: str
    solutions: Mapping[str, str]
    verdicts: pd.DataFrame
    context: Mapping[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    evidence: pd.DataFrame | None = None

    @property
    def failing(self) -> pd.DataFrame:
        """The verdict rows that did not pass."""
        return self.verdicts[~self.verdicts["status"].isin(PASSING_STATUSES)]

    def summary(self) -> str:
        total, failing = len(self.verdicts), len(self.failing)
        solutions = self.verdicts["solution"].nunique() if total else 0
        return (f"{self.audit} {self.task_id}: {total:,} verdict{'s' if total != 1 else ''} over {solutions} "
                f"solution{'s' if solutions != 1 else ''}, {failing:,} not passing")

    def _repr_html_(self) -> str:
        return f'{TASK_VIEW_STYLE}<div class="ba task-view">{task_view_markup(self)}</div>'

    def __str__(self) -> str:
        import pandas as pd

        lines = [self.summary(), "", "prompt:", _indented(self.prompt, 12)]
        for label, source in self.solutions.items():
            lines += [f"solution {label}:", _indented(source, 12)]
        lines += [f"note: {note}" for note in self.notes]
        failing = self.failing
        if len(failing):
            shown = failing[["solution", "input_id", "expected", "got", "kind"]].head(ROWS_SHOWN)
            with pd.option_context("display.max_colwidth", 60, "display.width", 160):
                lines += ["", f"not passing ({len(failing):,}; .failing / .verdicts hold all):",
                          shown.to_string(index=False)]
        return "\n".join(lines)

    __repr__ = __str__


def verdict_frame(rows: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """Rows as a frame with `VERDICT_COLUMNS` first (absent ones empty), then the audit's own columns."""
    import pandas as pd

    extra = [str(key) for row in rows for key in row if key not in VERDICT_COLUMNS]
    columns = [*VERDICT_COLUMNS, *dict.fromkeys(extra)]
    return pd.DataFrame([{column: row.get(column) for column in columns} for row in rows], columns=columns)


def evidence_frame(rows: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame([dict(row) for row in rows])


def near_matches(task_id: str, known: Sequence[str], count: int = NEAR_MATCHES) -> list[str]:
    """The known ids closest to `task_id`: same number first (`HumanEval/32` for `humaneval/32`), then by spelling."""
    folded = {k.lower(): k for k in known}
    exact_fold = [folded[task_id.lower()]] if task_id.lower() in folded else []
    digits = "".join(ch for ch in task_id if ch.isdigit())
    same_number = [k for k in known if digits and "".join(ch for ch in k if ch.isdigit()) == digits]
    close = difflib.get_close_matches(task_id, list(known), n=count, cutoff=0.6)
    return list(dict.fromkeys([*exact_fold, *same_number, *close]))[:count]


def unknown_task(task_id: str, known: Sequence[str], *, scope: str) -> UnknownTaskError:
    """The error for an id that is not among `known` (`scope` says which tasks those are)."""
    matches = near_matches(task_id, known)
    hint = f"; near matches: {', '.join(matches)}" if matches else ""
    sample = ", ".join(list(known)[:3]) + (", …" if len(known) > 3 else "")
    return UnknownTaskError(f"no task {task_id!r} among {scope} ({len(known):,} tasks: {sample}){hint}",
                            task_id=task_id, near_matches=matches)


# ---------------------------------------------------------------------------------------------- markup


def task_view_markup(view: TaskView, *, rows: pd.DataFrame | None = None, max_rows: int = ROWS_SHOWN,
                     heading: bool = True) -> str:
    """Prompt and solutions (collapsed), notes, and the verdict rows (not passing first, `max_rows` at most)."""
    parts = [f"<h3>Task <code>{esc(view.task_id)}</code> <span class=\"note\">({esc(view.summary())})</span></h3>"
             if heading else ""]
    parts.append(text_block("prompt", view.prompt))
    for label, source in view.solutions.items():
        parts.append(text_block(f"solution: {label}", source))
    for label, text in view.context.items():
        parts.append(text_block(label, text))
    parts += [f'<p class="note">{esc(note)}</p>' for note in view.notes]
    table = rows if rows is not None else _failing_first(view.verdicts)
    parts.append(verdict_table(table, max_rows=max_rows, total=len(view.verdicts) if rows is None else None))
    parts.append(evidence_markup(view.evidence))
    return "".join(parts)


def evidence_markup(evidence: pd.DataFrame | None, *, max_rows: int = ROWS_SHOWN) -> str:
    """The task's rows in the session's checks, one table per check (only that check's columns)."""
    if evidence is None or not len(evidence):
        return ""
    from audit_lib.report.tables import table_markup

    parts = []
    for check_id, group in evidence.groupby("check", sort=False):
        kept = group.drop(columns=["check", "task_id"], errors="ignore").dropna(axis=1, how="all")
        parts.append(table_markup(kept.head(max_rows).to_dict(orient="records"), columns=list(kept.columns),
                                  caption=f"check {check_id}: {len(group):,} row{'s' if len(group) != 1 else ''}"))
    return f"<details><summary>This task in the checks run so far</summary>{''.join(parts)}</details>"


def text_block(label: str, text: str, *, opened: bool = False) -> str:
    lines = text.count("\n") + 1 if text else 0
    return (f"<details{' open' if opened else ''}><summary>{esc(label)} <span class=\"note\">({lines:,} line"
            f"{'s' if lines != 1 else ''})</span></summary><pre>{esc(_capped(text, TEXT_KEPT * 4))}</pre></details>")


def verdict_table(frame: pd.DataFrame, *, max_rows: int = ROWS_SHOWN, total: int | None = None,
                  kept: int = TEXT_KEPT) -> str:
    """A sortable table of verdict rows; long values collapsed; empty columns left out."""
    if not len(frame):
        return '<p class="note">(no verdict rows)</p>'
    columns = [c for c in frame.columns if frame[c].map(_present).any()]
    head = "".join(f"<th>{esc(c)}</th>" for c in columns)
    body = []
    for record in frame.head(max_rows).to_dict(orient="records"):
        body.append("<tr>" + "".join(_cell(record.get(c), kept) for c in columns) + "</tr>")
    shown = min(max_rows, len(frame))
    count = total if total is not None else len(frame)
    note = (f'<p class="note">Showing {shown:,} of {count:,} rows (not passing first); the frame holds all.</p>'
            if count > shown else "")
    if {"wall_s", "cpu_s"} & set(columns):
        note += f'<p class="note">{esc(TIMES_NOTE)}</p>'

    return (f'<div class="table-wrap"><table class="data sortable"><thead><tr>{head}</tr></thead><tbody>'
            f"{''.join(body)}</tbody></table></div>{note}")


def _failing_first(frame: pd.DataFrame) -> pd.DataFrame:
    order = (~frame["status"].isin(PASSING_STATUSES)).astype(int)
    return frame.assign(_order=-order).sort_values("_order", kind="stable").drop(columns="_order")


def _present(value: Any) -> bool:
    return value is not None and value != "" and not (isinstance(value, float) and math.isnan(value))


def _cell(value: Any, kept: int) -> str:
    if not _present(value):
        return "<td></td>"
    if isinstance(value, float):
        return f'<td class="num" data-v="{value!r}">{esc(number_text(value))}</td>'
    text = redact_paths(str(value))
    if len(text) <= TEXT_SHOWN and "\n" not in text:
        return f"<td>{html.escape(text)}</td>"
    first = text.split("\n", 1)[0][:TEXT_SHOWN]
    return (f"<td><details><summary><code>{html.escape(first)}…</code></summary>"
            f"<code>{html.escape(_capped(text, kept))}</code></details></td>")


def _capped(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"\n… ({len(text) - limit:,} more characters)"


def _indented(text: str, max_lines: int) -> str:
    lines = text.rstrip("\n").split("\n")
    shown = [f"    {line}" for line in lines[:max_lines]]
    if len(lines) > max_lines:
        shown.append(f"    … ({len(lines) - max_lines} more lines)")
    return "\n".join(shown)


__all__ = ["ROWS_SHOWN", "TASK_VIEW_STYLE", "VERDICT_COLUMNS", "TaskView", "evidence_frame", "evidence_markup",
           "near_matches", "task_view_markup", "text_block", "unknown_task", "verdict_frame", "verdict_table"]
