"""What notebooks show: the provenance banner, checks, tables and figures, as small escaped HTML.

Each helper returns a `ReportHTML`. Inside a running kernel it is displayed at once (so helpers work inside
loops), and being the last expression of a cell does not show it a second time.
"""

from __future__ import annotations

import base64
import dataclasses
import html
import io
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from audit_lib.findings import SEVERITY, STATUSES, Check, Findings, FindingsBuilder, to_jsonable

VALUE_TEXT_LIMIT = 400
CELL_TEXT_LIMIT = 300

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
.ba dd{margin:0}
</style>"""


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


def _emit(markup: str) -> ReportHTML:
    shown = ReportHTML(f'{STYLE}<div class="ba">{markup}</div>')
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython ships with ipykernel
        return shown
    shell = get_ipython()
    if shell is not None and type(shell).__name__ == "ZMQInteractiveShell":
        shown._ipython_display_()
    return shown


def esc(value: Any) -> str:
    """HTML-escape any value's text form."""
    return html.escape(str(value), quote=True)


def value_text(value: Any, limit: int = VALUE_TEXT_LIMIT) -> str:
    """A compact, one-line text form of an observed/expected value or a table cell."""
    if value is None:
        return "—"
    plain = to_jsonable(value)
    if isinstance(plain, str):
        text = plain
    elif isinstance(plain, float):
        text = f"{plain:.6g}"
    elif isinstance(plain, (list, dict)):
        text = json.dumps(plain, ensure_ascii=False, default=str)
    else:
        text = str(plain)
    return text if len(text) <= limit else text[: limit - 1] + "…"


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
            parts.append('<p class="note">Parameters: <span class="mono">'
                         f"{esc(value_text(payload['params']))}</span></p>")
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
        return _emit("".join(parts))
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
    parts.append('<table class="provenance"><thead><tr><th>file</th><th>source</th><th>sha256</th><th>pinned</th>'
                 "<th>synthetic</th><th>upstream</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>")
    return _emit("".join(parts))


def findings_table(source: FindingsBuilder | Findings | Mapping[str, Any]) -> ReportHTML:
    """Every check of an audit: status badge, id, title, observed vs expected, summary."""
    payload = _as_findings_json(source)
    checks = payload.get("checks", [])
    counts = {status: sum(1 for c in checks if c.get("status") == status) for status in STATUSES}
    tally = " ".join(f"{status_badge(s)}&nbsp;{n}" for s, n in counts.items() if n)
    rows = []
    for check in checks:
        rows.append(
            "<tr>"
            f"<td>{status_badge(str(check.get('status')))}"
            f"{' <b>synthetic</b>' if check.get('synthetic') else ''}</td>"
            f"<td><code>{esc(check.get('id'))}</code></td>"
            f"<td>{esc(check.get('title', ''))}</td>"
            f'<td class="mono">{esc(value_text(check.get("observed"), CELL_TEXT_LIMIT))}</td>'
            f'<td class="mono">{esc(value_text(check.get("expected"), CELL_TEXT_LIMIT))}</td>'
            f"<td>{esc(value_text(check.get('summary') or '', CELL_TEXT_LIMIT))}</td>"
            "</tr>"
        )
    markup = (f"<h3>Findings — <code>{esc(payload.get('audit', '?'))}</code></h3>"
              f'<p class="note">{len(checks)} checks {tally}</p>')
    if rows:
        markup += ('<table class="findings"><thead><tr><th>status</th><th>check</th><th>title</th>'
                   "<th>observed</th><th>expected</th><th>summary</th></tr></thead><tbody>"
                   + "".join(rows) + "</tbody></table>")
    return _emit(markup)


def show_check(check: Check | Mapping[str, Any], max_rows: int = 20, *, audit: str | None = None) -> ReportHTML:
    """One check: title, status, observed vs expected, summary and its first `max_rows` evidence rows."""
    payload = _check_json(check)
    status = str(payload.get("status"))
    border = STATUS_COLOURS.get(status, ("#57606a", ""))[0]
    details = list(payload.get("details") or [])
    total = int(payload.get("details_total", len(details)))
    markup = [f'<div class="check" style="border-left-color:{border}">',
              f"<h3>{status_badge(status)} {esc(payload.get('title', ''))}</h3>",
              f'<p class="note">check <code>{esc(payload.get("id"))}</code>'
              f"{' · <b>uses SYNTHETIC data</b>' if payload.get('synthetic') else ''}</p>",
              "<dl>",
              f'<dt>observed</dt><dd class="mono">{esc(value_text(payload.get("observed")))}</dd>',
              f'<dt>expected</dt><dd class="mono">{esc(value_text(payload.get("expected")))}</dd>',
              "</dl>"]
    if payload.get("summary"):
        markup.append(f"<p>{esc(payload['summary'])}</p>")
    if details:
        markup.append(_table_markup(details[:max_rows], columns=None, caption=None))
        if total > max_rows:
            # The runner may publish a notebook under another name (mbpp_plus), so name the CSV by its suffix.
            csv_name = f"{audit}.{payload.get('id')}.csv" if audit else f"….{payload.get('id')}.csv"
            markup.append(f'<p class="note">Showing {min(max_rows, len(details))} of {total} evidence rows; '
                          f"the full table is the CSV <code>{esc(csv_name)}</code> beside this report "
                          "(linked from the index).</p>")
    markup.append("</div>")
    return _emit("".join(markup))


def show_table(data: Any, max_rows: int = 30, caption: str | None = None) -> ReportHTML:
    """A pandas/polars frame, a list of row dicts or a mapping, capped at `max_rows` rows."""
    rows, columns = _rows_and_columns(data)
    markup = _table_markup(rows[:max_rows], columns=columns, caption=caption)
    if len(rows) > max_rows:
        markup += f'<p class="note">Showing {max_rows} of {len(rows)} rows.</p>'
    elif not rows:
        markup += '<p class="note">(no rows)</p>'
    return _emit(markup)


def show_figure(fig: Any, *, dpi: int = 100, alt: str = "figure") -> ReportHTML:
    """Embed a matplotlib figure as an inline PNG and close it; `None` (no data to plot) shows a note instead."""
    import matplotlib.pyplot as plt

    if fig is None:
        return _emit('<p class="note">(no figure: its input data is not available; see the skipped checks)</p>')

    buffer = io.BytesIO()
    try:
        fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
    finally:
        plt.close(fig)
    encoded = base64.b64encode(buffer.getvalue()).decode("ascii")
    return _emit(f'<img class="figure" alt="{esc(alt)}" style="max-width:100%" '
                 f'src="data:image/png;base64,{encoded}">')


# ---------------------------------------------------------------------------------------------- tables


def _rows_and_columns(data: Any) -> tuple[list[Mapping[str, Any]], list[str] | None]:
    if hasattr(data, "to_dicts") and hasattr(data, "columns"):  # polars
        return list(data.to_dicts()), [str(c) for c in data.columns]
    if hasattr(data, "to_dict") and hasattr(data, "columns") and hasattr(data, "index"):  # pandas
        frame = data
        named_index = any(name is not None for name in getattr(frame.index, "names", [None]))
        if named_index:
            frame = frame.reset_index()
        return frame.to_dict(orient="records"), [str(c) for c in frame.columns]
    if isinstance(data, Mapping):
        return [{"key": k, "value": v} for k, v in data.items()], ["key", "value"]
    if isinstance(data, Sequence) and not isinstance(data, (str, bytes)):
        rows = []
        for row in data:
            if dataclasses.is_dataclass(row) and not isinstance(row, type):
                rows.append(dataclasses.asdict(row))
            elif isinstance(row, Mapping):
                rows.append(row)
            else:
                raise TypeError(f"show_table: row {len(rows) + 1} is a {type(row).__name__}, not a mapping")
        return rows, None
    raise TypeError(f"show_table: cannot tabulate a {type(data).__name__}")


def _table_markup(rows: Sequence[Mapping[str, Any]], *, columns: list[str] | None, caption: str | None) -> str:
    if columns is None:
        columns = []
        for row in rows:
            for key in row:
                if str(key) not in columns:
                    columns.append(str(key))
    head = "".join(f"<th>{esc(c)}</th>" for c in columns)
    body = []
    for row in rows:
        lookup = {str(k): v for k, v in row.items()}
        cells = "".join(f"<td>{esc(value_text(lookup.get(c, ''), CELL_TEXT_LIMIT))}</td>" for c in columns)
        body.append(f"<tr>{cells}</tr>")
    if not rows:  # a caption on an empty table renders as a one-word-wide column
        return f'<p class="note"><b>{esc(caption)}</b></p>' if caption else ""
    caption_markup = f"<caption>{esc(caption)}</caption>" if caption else ""
    return (f'<table class="data">{caption_markup}<thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table>")


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


__all__ = ["ReportHTML", "banner", "findings_table", "show_check", "show_table", "show_figure", "status_badge",
           "value_text", "esc", "STATUS_COLOURS", "SEVERITY"]
