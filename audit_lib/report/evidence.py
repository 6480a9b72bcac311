"""Evidence that travels with a report: each check's full table, embedded, and a per-task view.

Tables are embedded as gzip + base64 CSV, downloaded by a few lines of inline JS, and capped so one report stays small;
checks whose rows name tasks get a per-task view.
"""

from __future__ import annotations

import base64
import csv
import gzip
import io
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from audit_lib.findings import evidence_csv_path, to_jsonable
from audit_lib.report.tables import table_markup
from audit_lib.report.values import esc, redact_paths

EMBED_BUDGET_BYTES = 1_200_000  # encoded evidence per report; with the page itself a report stays under ~2 MB
DRILLDOWN_TASKS = 200
DRILLDOWN_ROWS_PER_TASK = 20
DRILLDOWN_STATUSES = ("quirk", "defect", "error")
TASK_COLUMN = "task_id"
SHORT_VALUE = 80  # a task whose evidence values are all this short is shown as a small table

# Decompresses an embedded blob and saves it as a CSV; works offline (DecompressionStream is built in).
DOWNLOAD_SCRIPT = """<script>
(function(){
if(window.__baEvidence)return;window.__baEvidence=true;
document.addEventListener('click',function(e){
 var a=e.target.closest&&e.target.closest('a.evidence-download');if(!a)return;e.preventDefault();
 var blob=document.getElementById(a.getAttribute('data-blob'));if(!blob)return;
 var bytes=Uint8Array.from(atob(blob.textContent.trim()),function(c){return c.charCodeAt(0);});
 var stream=new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
 new Response(stream).blob().then(function(csv){
  var url=URL.createObjectURL(new Blob([csv],{type:'text/csv'}));
  var link=document.createElement('a');link.href=url;link.download=a.getAttribute('data-name');
  document.body.appendChild(link);link.click();link.remove();
  setTimeout(function(){URL.revokeObjectURL(url);},10000);});
});
})();
</script>"""


@dataclass(frozen=True)
class Evidence:
    """One check's evidence rows (all of them when the CSV beside the findings was found)."""

    check_id: str
    rows: tuple[Mapping[str, Any], ...]
    total: int
    complete: bool  # False: only the rows the findings JSON keeps


def load_evidence(findings: Mapping[str, Any], folder: Path) -> dict[str, Evidence]:
    """Each check's evidence rows: its full CSV, else the rows kept in the findings JSON.

    The CSV is `<audit>/<id>.csv` beside the findings (`<audit>.<id>.csv` in reports folders written before the
    per-audit folders)."""
    audit = str(findings.get("audit"))
    names = {audit, str(findings.get("notebook_audit") or audit)}
    loaded: dict[str, Evidence] = {}
    for check in findings.get("checks", []):
        check_id = str(check.get("id"))
        total = int(check.get("details_total") or len(check.get("details") or []))
        if not total:
            continue
        rows: list[Mapping[str, Any]] | None = None
        for name in names:
            for candidate in (evidence_csv_path(folder, name, check_id), folder / f"{name}.{check_id}.csv"):
                if candidate.is_file():
                    with candidate.open(encoding="utf-8", newline="") as handle:
                        rows = list(csv.DictReader(handle))
                    break
            if rows is not None:
                break
        if rows is None:
            loaded[check_id] = Evidence(check_id, tuple(check.get("details") or ()), total, False)
        else:
            loaded[check_id] = Evidence(check_id, tuple(rows), max(total, len(rows)), True)
    return loaded


def csv_text(rows: Sequence[Mapping[str, Any]]) -> str:
    columns: list[str] = []
    for row in rows:
        for key in row:
            if str(key) not in columns:
                columns.append(str(key))
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({str(k): _cell(v) for k, v in row.items()})
    return buffer.getvalue()


def _cell(value: Any) -> Any:
    plain = to_jsonable(value)
    text = json.dumps(plain) if isinstance(plain, (list, dict)) else plain
    return redact_paths(text) if isinstance(text, str) else text


def _encoded(rows: Sequence[Mapping[str, Any]]) -> str:
    return base64.b64encode(gzip.compress(csv_text(rows).encode("utf-8"), mtime=0)).decode("ascii")


@dataclass(frozen=True)
class Embedded:
    """What the report carries for one check: the blob element and the link that downloads it."""

    link: str
    blob: str


def embed_all(evidence: Mapping[str, Evidence], *, audit: str,
              budget: int = EMBED_BUDGET_BYTES) -> dict[str, Embedded]:
    """Blobs for every check, smallest first so a huge table cannot crowd out the others.

    A table that does not fit is embedded up to what remains (halving its rows), and its link says how many rows it
    carries."""
    embedded: dict[str, Embedded] = {}
    remaining = budget
    for item in sorted(evidence.values(), key=lambda e: len(e.rows)):
        rows = list(item.rows)
        blob = _encoded(rows)
        while len(blob) > remaining and len(rows) > 1:
            rows = rows[: len(rows) // 2]
            blob = _encoded(rows)
        if len(blob) > remaining:
            embedded[item.check_id] = Embedded(f'<p class="note">Evidence ({item.total:,} rows) is too large to '
                                               f"embed; it is <code>{esc(audit)}/{esc(item.check_id)}.csv</code> "
                                               "beside this report.</p>", "")
            continue
        remaining -= len(blob)
        blob_id = f"evidence-blob-{item.check_id}"
        name = f"{audit}.{item.check_id}.csv"
        carried = len(rows)
        if carried == item.total:
            label = f"Download the full evidence ({item.total:,} rows, CSV)"
            note = ""
        else:
            label = f"Download the evidence ({carried:,} of {item.total:,} rows, CSV)"
            reason = "the report's size cap" if item.complete else "only those were recorded in the findings"
            note = (f" <span class=\"note\">(capped: {esc(reason)}; the full table is "
                    f"<code>{esc(audit)}/{esc(item.check_id)}.csv</code> beside the report)</span>")
        link = (f'<p><a class="evidence-download" href="#{esc(blob_id)}" data-blob="{esc(blob_id)}" '
                f'data-name="{esc(name)}" download="{esc(name)}">{esc(label)}</a>{note}</p>')
        embedded[item.check_id] = Embedded(link, f'<script type="application/gzip+base64" id="{esc(blob_id)}">'
                                                 f"{blob}</script>")
    return embedded


def drilldown_markup(evidence: Evidence, status: str) -> str:
    """Per task, collapsed: each evidence row of that task as `column: value` lines (inputs, expected vs got)."""
    if status not in DRILLDOWN_STATUSES or not evidence.rows or TASK_COLUMN not in evidence.rows[0]:
        return ""
    by_task: dict[str, list[Mapping[str, Any]]] = {}
    for row in evidence.rows:
        by_task.setdefault(str(row.get(TASK_COLUMN)), []).append(row)
    # Short values read best as a small table per task, long inputs as `column: value` lines; one choice per check.
    compact = all(len(str(v)) <= SHORT_VALUE for row in evidence.rows for k, v in row.items() if k != TASK_COLUMN)
    sections = []
    for task, rows in list(by_task.items())[:DRILLDOWN_TASKS]:
        blocks = []
        shown = [{k: v for k, v in row.items() if k != TASK_COLUMN} for row in rows[:DRILLDOWN_ROWS_PER_TASK]]
        if compact:
            blocks.append(table_markup(shown))
        for row in shown if not blocks else ():
            lines = "".join(f'<div class="kv"><span class="k">{esc(k)}</span>: <code>{esc(_short(v))}</code></div>'
                            for k, v in row.items() if v not in (None, ""))
            blocks.append(f'<div class="task-row">{lines}</div>')
        more = (f'<p class="note">{len(rows) - DRILLDOWN_ROWS_PER_TASK:,} more rows in the evidence download.</p>'
                if len(rows) > DRILLDOWN_ROWS_PER_TASK else "")
        sections.append(f'<details class="task"><summary><code>{esc(task)}</code> — {len(rows):,} '
                        f"row{'s' if len(rows) != 1 else ''}</summary>{''.join(blocks)}{more}</details>")
    hidden = len(by_task) - DRILLDOWN_TASKS
    tail = f'<p class="note">{hidden:,} more tasks in the evidence download.</p>' if hidden > 0 else ""
    return (f'<details class="drilldown"><summary>Per task ({len(by_task):,} task'
            f"{'s' if len(by_task) != 1 else ''}, collapsed)</summary>{''.join(sections)}{tail}</details>")


def _short(value: Any, limit: int = 600) -> str:
    text = str(to_jsonable(value))
    return text if len(text) <= limit else text[: limit - 1] + "…"


DRILLDOWN_STYLE = """<style>
.ba details.task{margin:2px 0 2px 14px}
.ba .task-row{border-left:2px solid #d0d7de;padding:2px 8px;margin:4px 0}
.ba .task-row code{white-space:pre-wrap;overflow-wrap:anywhere}
</style>"""

__all__ = ["DOWNLOAD_SCRIPT", "DRILLDOWN_STYLE", "EMBED_BUDGET_BYTES", "Embedded", "Evidence", "csv_text",
           "drilldown_markup", "embed_all", "load_evidence"]
