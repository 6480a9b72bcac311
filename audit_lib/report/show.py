"""A check, the provenance banner, tables and figures, as small escaped HTML (the report's display core).

Each helper returns a `ReportHTML`. Inside a running kernel it is displayed at once (so helpers work inside
loops), and being the last expression of a cell does not show it a second time.
"""

from __future__ import annotations

import base64
import dataclasses
import io
from collections.abc import Iterable, Mapping
from typing import Any

from audit_lib.check_cost import CheckCost
from audit_lib.verdict_cache.tally import CacheCounts
from audit_lib.findings import SEVERITY, STATUSES, Check, Findings, FindingsBuilder
from audit_lib.report.split import SPLIT_STYLE, failure_split_of, split_markup
from audit_lib.report.tables import TABLE_STYLE, rows_and_columns, table_markup
from audit_lib.report.values import CELL_TEXT_LIMIT, VALUE_TEXT_LIMIT, esc, inline_text, value_lines, value_text

PROVENANCE_ROWS_OPEN = 8  # more input files than this are listed in a collapsed section
FINDINGS_ROWS_OPEN = 12  # with more checks than this, the passing ones are collapsed
# Where the exported report puts a check's full evidence (download link, per-task view); see `evidence.py`.
EVIDENCE_SLOT = '<div class="evidence-slot" data-check="{id}"></div>'

STATUS_COLOURS: dict[str, tuple[str, str]] = {  # status -> (background, text)
    "pass": ("#1a7f37", "#ffffff"),
    "quirk": ("#bf8700", "#ffffff"),
    "defect": ("#cf222e", "#ffffff"),
    "error": ("#8250df", "#ffffff"),
    "skipped": ("#6e7781", "#ffffff"),
    "failed": ("#cf222e", "#ffffff"),  # a notebook that did not finish (runner/index only)
}

STYLE = """<style>
.ba{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;font-size:13px;color:#1f2328;margin:6px 0 14px}
.ba h3{font-size:15px;margin:4px 0 6px}
.ba table{border-collapse:collapse;margin:4px 0;max-width:100%}
.ba table th,.ba table td{border:1px solid #d0d7de!important;padding:3px 7px!important;text-align:left!important;
  vertical-align:top!important;max-width:32em}
.ba table th{background:#f6f8fa;font-weight:600}
.ba td.mono{word-break:break-all;max-width:22em}
.ba tr:nth-child(even) td{background:#fbfcfd}
.ba td code,.ba .mono{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12px}
.ba caption{caption-side:top;text-align:left;font-weight:600;padding:2px 0}
.ba .badge{display:inline-block;border-radius:10px;padding:1px 8px;font-size:11px;font-weight:700;
  text-transform:uppercase;letter-spacing:.03em}
.ba .note{color:#57606a;font-size:12px;margin:3px 0}
.ba .synthetic-warning{background:#fff1e5;border:2px solid #bc4c00;color:#7a2e00;padding:8px 10px;
  font-weight:700;margin:6px 0}
.ba .check{border-left:4px solid #d0d7de;padding:2px 0 2px 10px}
.ba dl{display:grid;grid-template-columns:max-content auto;gap:2px 12px;margin:4px 0}
.ba dt{font-weight:600;color:#57606a}
.ba dd{margin:0;overflow-wrap:break-word;min-width:0}
.ba .kv .k{color:#57606a}
.ba td code{overflow-wrap:anywhere}
.ba details>summary{cursor:pointer;margin:3px 0}
.ba .finding{font-weight:600;margin:4px 0}
""" + TABLE_STYLE + "</style>"


class ReportHTML:
    """An HTML fragment shown once in a notebook; `.html` holds the markup."""

    def __init__(self, markup: str) -> None:
        self.html = markup
        self._shown = False

    def _repr_html_(self) -> str:
        return self.html

    def _ipython_display_(self) -> None:
        if self._shown:
            return
        self._shown = True
        from IPython.display import HTML, display

        display(HTML(self.html))

    def __str__(self) -> str:
        return self.html


def emit(markup: str) -> ReportHTML:
    """Show an HTML fragment in the report's style now (in a notebook) and return it."""
    style = STYLE + (SPLIT_STYLE if 'class="split' in markup else "")
    shown = ReportHTML(f'{style}<div class="ba">{markup}</div>')
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython ships with ipykernel
        return shown
    shell = get_ipython()
    if shell is not None and type(shell).__name__ == "ZMQInteractiveShell":
        shown._ipython_display_()
    return shown


def status_badge(status: str) -> str:
    background, colour = STATUS_COLOURS.get(status, ("#57606a", "#ffffff"))
    return (f'<span class="badge status-{esc(status)}" style="background:{background};color:{colour}">'
            f"{esc(status)}</span>")


# ---------------------------------------------------------------------------------------------- inputs


def _as_findings_json(source: FindingsBuilder | Findings | Mapping[str, Any]) -> dict[str, Any]:
    if isinstance(source, FindingsBuilder):
        return source.findings().to_json()
    if isinstance(source, Findings):
        return source.to_json()
    if isinstance(source, Mapping):
        return dict(source)
    raise TypeError(f"expected a FindingsBuilder, Findings or findings JSON mapping, got {type(source).__name__}")


def _provenance_records(source: Any) -> list[dict[str, Any]]:
    if isinstance(source, (FindingsBuilder, Findings, Mapping)):
        return [dict(p) for p in _as_findings_json(source).get("provenance", [])]
    records = []
    for record in source:
        if dataclasses.is_dataclass(record) and not isinstance(record, type):
            records.append(dataclasses.asdict(record))
        else:
            records.append(dict(record))
    return records


def _check_json(check: Check | Mapping[str, Any]) -> dict[str, Any]:
    if isinstance(check, Check):
        payload = check.to_json(details_cap=len(check.details))
        return payload
    return dict(check)


# ---------------------------------------------------------------------------------------------- helpers


def banner(source: FindingsBuilder | Findings | Mapping[str, Any] | Iterable[Any]) -> ReportHTML:
    """Provenance of every input file (source, sha256, pinned, synthetic, upstream), warning on synthetic data."""
    records = _provenance_records(source)
    parts = []
    if isinstance(source, (FindingsBuilder, Findings, Mapping)):
        payload = _as_findings_json(source)
        parts.append(f"<h3>Audit <code>{esc(payload.get('audit', '?'))}</code> — data provenance</h3>")
        if payload.get("params"):
            shown = " · ".join(f"{key}: {inline_text(value, 120) if value != '' else '—'}"
                               for key, value in payload["params"].items())
            parts.append(f'<p class="note">Parameters: {esc(shown)}</p>')
        loaded = CheckCost.from_meta({"cost": payload.get("load_cost")})
        if loaded is not None:
            cached = CacheCounts.from_meta(payload.get("load_cost"))
            parts.append(f'<p class="note"><span class="cost" title="{esc(MEASURED_HERE)}">inputs loaded in '
                         f"{esc(loaded.text())}{esc(' · ' + cached.text()) if cached else ''}</span></p>")
        synthetic_checks = [c.get("id") for c in payload.get("checks", []) if c.get("synthetic")]
    else:
        parts.append("<h3>Data provenance</h3>")
        synthetic_checks = []
    synthetic_files = [_file_label(r) for r in records if r.get("synthetic")]
    if synthetic_files or synthetic_checks:
        named = ", ".join(synthetic_files + [f"check {c}" for c in synthetic_checks])
        parts.append('<div class="synthetic-warning">⚠ SYNTHETIC DATA: this report uses generated data, not the '
                     f"benchmark's real rows ({esc(named)}). Figures from it show that a check works, "
                     "not what the real benchmark contains.</div>")
    if not records:
        parts.append('<p class="note">No data files recorded yet.</p>')
        return emit("".join(parts))
    rows = []
    for record in records:
        sha = str(record.get("sha256") or "")
        pinned = record.get("pinned")
        rows.append(
            "<tr>"
            f"<td><code>{esc(_file_label(record))}</code></td>"
            f"<td>{esc(record.get('source', '?'))}</td>"
            f'<td class="mono" title="{esc(sha)}">{esc(sha[:12]) if sha else "—"}</td>'
            f"<td>{'yes' if pinned else '<b>no (unpinned)</b>'}</td>"
            f"<td>{'<b>SYNTHETIC</b>' if record.get('synthetic') else 'no'}</td>"
            f"<td>{_link_or_text(record.get('upstream'))}</td>"
            "</tr>"
        )
    table = ('<div class="table-wrap"><table class="provenance sortable"><thead><tr><th>file</th><th>source</th>'
             "<th>sha256</th><th>pinned</th><th>synthetic</th><th>upstream</th></tr></thead><tbody>"
             + "".join(rows) + "</tbody></table></div>")
    if len(records) > PROVENANCE_ROWS_OPEN:
        unpinned = sum(1 for r in records if not r.get("pinned"))
        synthetic = sum(1 for r in records if r.get("synthetic"))
        table = (f"<details><summary>{len(records):,} data files: {len(records) - unpinned:,} pinned, "
                 f"{unpinned:,} unpinned, {synthetic:,} synthetic</summary>{table}</details>")
    parts.append(table)
    return emit("".join(parts))


def findings_table(source: FindingsBuilder | Findings | Mapping[str, Any]) -> ReportHTML:
    """Every check of an audit: status badge, id, title, finding, observed vs expected."""
    payload = _as_findings_json(source)
    checks = payload.get("checks", [])
    counts = {status: sum(1 for c in checks if c.get("status") == status) for status in STATUSES}
    tally = " ".join(f"{status_badge(s)}&nbsp;{n}" for s, n in counts.items() if n)
    rows: list[str] = []
    passing: list[str] = []
    for check in checks:
        many_passing = check.get("status") == "pass" and len(checks) > FINDINGS_ROWS_OPEN
        (passing if many_passing else rows).append(
            "<tr>"
            f'<td data-v="{SEVERITY.get(str(check.get("status")), 0)}">{status_badge(str(check.get("status")))}'
            f"{' <b>synthetic</b>' if check.get('synthetic') else ''}</td>"
            f"<td><a href=\"#check-{esc(check.get('id'))}\"><code>{esc(check.get('id'))}</code></a></td>"
            f"<td>{esc(check.get('title', ''))}</td>"
            f"<td>{esc(value_text(check_finding(check), CELL_TEXT_LIMIT))}</td>"
            f"<td>{value_lines(check.get('observed'), 120)}</td>"
            f"<td>{value_lines(check.get('expected'), 120)}</td>"
            "</tr>"
        )
    markup = (f"<h3>Findings — <code>{esc(payload.get('audit', '?'))}</code></h3>"
              f'<p class="note">{len(checks)} checks {tally}</p>')
    head = ('<div class="table-wrap"><table class="findings sortable"><thead><tr><th>status</th>'
            "<th>check</th><th>title</th><th>finding</th><th>observed</th><th>expected</th></tr></thead><tbody>")
    if rows:
        markup += head + "".join(rows) + "</tbody></table></div>"
    if passing:
        markup += (f"<details><summary>{len(passing):,} passing checks</summary>{head}{''.join(passing)}"
                   "</tbody></table></div></details>")
    return emit(markup)


def check_finding(check: Mapping[str, Any]) -> str:
    """The check's one-sentence finding (findings written before the field existed: the summary's first)."""
    from audit_lib.findings import first_sentence

    return str(check.get("finding") or first_sentence(str(check.get("summary") or "")))


def show_check(check: Check | Mapping[str, Any], max_rows: int = 20, *, audit: str | None = None) -> ReportHTML:
    """One check: title, status, its finding, observed vs expected, summary and its first `max_rows` evidence rows.

    The exported report replaces the evidence slot with a download of the full evidence (and, for tasks,
    a per-task view); the `audit` argument is kept for notebooks that pass it."""
    payload = _check_json(check)
    status = str(payload.get("status"))
    check_id = str(payload.get("id"))
    border = STATUS_COLOURS.get(status, ("#57606a", ""))[0]
    details = list(payload.get("details") or [])
    total = int(payload.get("details_total", len(details)))
    finding = check_finding(payload)
    summary = str(payload.get("summary") or "")
    markup = [f'<div class="check" id="check-{esc(check_id)}" style="border-left-color:{border}">',
              f"<h3>{status_badge(status)} {esc(payload.get('title', ''))}</h3>",
              f'<p class="note">check <code>{esc(check_id)}</code>'
              f"{' · <b>uses SYNTHETIC data</b>' if payload.get('synthetic') else ''}{cost_markup(payload)}</p>"]
    body = [f"<dl><dt>observed</dt><dd>{value_lines(payload.get('observed'))}</dd>"
            f"<dt>expected</dt><dd>{value_lines(payload.get('expected'))}</dd></dl>"]
    rest = summary
    if status != "pass" and finding and " ".join(summary.split()).find(finding) >= 0:
        # The finding is shown in bold above; the summary's other sentences follow it.
        flat = " ".join(summary.split())
        rest = flat[flat.find(finding) + len(finding):].strip()  # what precedes it is only a qualifier
    if rest:
        body.append(f"<p>{esc(rest)}</p>")
    if details:
        shown = min(max_rows, len(details))
        label = f"Evidence: {shown:,} of {total:,} rows" if total > shown else f"Evidence: {total:,} rows"
        opened = " open" if status in ("quirk", "defect") else ""
        body.append(f"<details{opened}><summary>{label}</summary>"
                    f"{table_markup(details[:max_rows], total=total)}</details>")
    body.append(EVIDENCE_SLOT.format(id=esc(check_id)))
    if status == "pass":  # a pass is one line; its figures and evidence are a click away
        markup.append(f'<details class="check-body"><summary>{esc(finding or "details")}</summary>'
                      f"{''.join(body)}</details>")
    else:
        if finding:
            markup.append(f'<p class="finding">{esc(finding)}</p>')
        markup.append(split_markup(failure_split_of(payload), where=f"check {check_id}"))
        markup.extend(body)
    markup.append("</div>")
    return emit("".join(markup))


MEASURED_HERE = "measured on this machine in this run, not a property of the benchmark"


def cost_markup(check: Mapping[str, Any]) -> str:
    """` · time 12.3 s wall · 20.1 s CPU · 164 sandbox jobs` from `meta.cost`, marked as this machine's; or ""."""
    cost = CheckCost.from_meta(check.get("meta"))
    if cost is None:
        return ""
    about = (f"{MEASURED_HERE}: CPU {cost.cpu_s:.1f} s in the kernel + {cost.children_cpu_s:.1f} s in its child "
             "processes (the sandbox)")
    cached = CacheCounts.from_meta(check.get("meta"))
    reuse = f" · {cached.text()}" if cached else ""
    return f' · <span class="cost" title="{esc(about)}">time {esc(cost.text() + reuse)}</span>'


def check(audit: Any, check_id: str, max_rows: int = 20) -> ReportHTML:
    """Run one check of a notebook's session (`audit.run`) and show it: the notebook's one line per check.

    A check the run leaves out (`run --only`) shows nothing.
    """
    if check_id not in audit.check_ids:
        return ReportHTML("")
    return show_check(audit.run(check_id), max_rows, audit=audit.plugin.name)


def show_table(data: Any, max_rows: int = 30, caption: str | None = None) -> ReportHTML:
    """A pandas/polars frame, a list of row dicts or a mapping, capped at `max_rows` rows."""
    rows, columns = rows_and_columns(data)
    markup = table_markup(rows[:max_rows], columns=columns, caption=caption, total=len(rows))
    if len(rows) > max_rows:
        markup += f'<p class="note">Showing {max_rows} of {len(rows):,} rows.</p>'
    elif not rows:
        markup += '<p class="note">(no rows)</p>'
    return emit(markup)


def show_figure(fig: Any, *, dpi: int = 100, alt: str = "figure") -> ReportHTML:
    """Embed a matplotlib figure as an inline PNG and close it; `None` (no data to plot) shows a note instead."""
    import matplotlib.pyplot as plt

    if fig is None:
        return emit('<p class="note">(no figure: its input data is not available; see the skipped checks)</p>')

    buffer = io.BytesIO()
    try:
        fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
    finally:
        plt.close(fig)
    encoded = base64.b64encode(buffer.getvalue()).decode("ascii")
    return emit(f'<img class="figure" alt="{esc(alt)}" style="max-width:100%" '
                 f'src="data:image/png;base64,{encoded}">')


def _file_label(record: Mapping[str, Any]) -> str:
    dataset, file = record.get("dataset"), record.get("file")
    return f"{dataset}/{file}" if dataset and file else str(file or record.get("location") or "?")


def _link_or_text(target: Any) -> str:
    """A link whose text is the host and the file name (the full address is the link and its tooltip)."""
    if not target:
        return "—"
    text = str(target)
    if text.startswith("https://") or text.startswith("http://"):
        host = text.split("/")[2]
        tail = text.rstrip("/").rsplit("/", 1)[-1]
        return f'<a href="{esc(text)}" title="{esc(text)}">{esc(host)}/…/{esc(tail)}</a>'
    return esc(text)


__all__ = ["ReportHTML", "banner", "check", "emit", "findings_table", "show_check", "show_table", "show_figure",
           "status_badge", "check_finding", "value_text", "value_lines", "esc", "STATUS_COLOURS", "SEVERITY",
           "EVIDENCE_SLOT", "VALUE_TEXT_LIMIT", "CELL_TEXT_LIMIT"]
