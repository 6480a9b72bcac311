"""`reports/summary.json` and `reports/index.html`: every audit, its checks with status badges, and links."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from audit_lib.atomic_files import atomic_write_text
from audit_lib.check_cost import COST_META_KEY
from audit_lib.findings import SEVERITY, STATUSES, evidence_csv_path, first_sentence, worst_status
from audit_lib.report.show import STYLE, check_finding, status_badge
from audit_lib.verdict_cache.tally import CACHE_META_KEY
from audit_lib.report.page import (
    OPEN_TARGET_SCRIPT,
    PAGE_STYLE,
    alerts_for,
    alerts_markup,
    legend_markup,
    not_judged,
    stamp_markup,
)
from audit_lib.report.split import SPLIT_STYLE, failure_split_of, overload_of, split_markup
from audit_lib.report.tables import TABLE_SCRIPT
from audit_lib.report.values import CELL_TEXT_LIMIT, esc, inline_text, value_lines, value_text
from audit_lib.runner.history import CheckChange
from audit_lib.runner.index_changes import (
    CHANGES_STYLE,
    audit_change_note,
    changes_since_previous,
    check_change_markup,
    check_changes,
    since_previous_markup,
)

INDEX_VALUE_LIMIT = 160  # observed/expected are abbreviated here; the report and the JSON hold them whole
SUMMARY_NAME = "summary.json"
INDEX_NAME = "index.html"


def write_index_and_summary(reports_dir: Path, outcomes: Sequence[Mapping[str, Any]], run_info: Mapping[str, Any],
                            *, stamp: Mapping[str, Any] | None = None
                            ) -> tuple[Path, Path, dict[str, tuple[dict[str, Any], ...]]]:
    """Merge this run's outcomes into the summary and render the index.

    Earlier audits whose reports remain are kept. Returns both paths and, per audit run now, its checks as the index
    digested them."""
    now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    previous = _load_previous(reports_dir / SUMMARY_NAME)
    entries: dict[str, dict[str, Any]] = {}
    for audit, entry in previous.items():
        if any((reports_dir / name).is_file() for name in entry.get("files", {}).values()):
            entries[audit] = dict(entry, from_earlier_run=True)
    checks: dict[str, tuple[dict[str, Any], ...]] = {}
    run_now = [str(outcome["audit"]) for outcome in outcomes]
    for outcome in outcomes:
        entries[outcome["audit"]] = dict(outcome, generated_at=now, from_earlier_run=False)
    for audit, entry in entries.items():
        entry.update(_findings_digest(reports_dir, entry))
    for audit in run_now:
        checks[audit] = tuple(entries[audit].get("checks", []))
    ordered = dict(sorted(entries.items()))
    summary = {
        "generated_at": now,
        "since_previous": changes_since_previous(reports_dir, ordered, run_now),
        "stamp": dict(stamp) if stamp else None,
        "run": dict(run_info),
        "audits_run": run_now,
        "failed": [str(o["audit"]) for o in outcomes if o.get("status") == "failed"],
        "totals": _totals(ordered.values()),
        "audits": list(ordered.values()),
    }
    summary_path = reports_dir / SUMMARY_NAME
    atomic_write_text(summary_path, json.dumps(summary, indent=2) + "\n")
    index_path = reports_dir / INDEX_NAME
    atomic_write_text(index_path, render_index(summary, reports_dir))
    return index_path, summary_path, checks


def _load_previous(path: Path) -> dict[str, dict[str, Any]]:
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
        audits = payload.get("audits", []) if isinstance(payload, Mapping) else []
        return {entry["audit"]: entry for entry in audits if isinstance(entry, Mapping) and "audit" in entry}
    except (OSError, ValueError, TypeError, KeyError):
        return {}


def _findings_digest(reports_dir: Path, entry: Mapping[str, Any]) -> dict[str, Any]:
    """Checks, counts and synthetic flag read from the audit's findings file (absent when it failed early)."""
    files = entry.get("files", {})
    name = files.get("findings") or files.get("last_good_findings")  # a failed run shows the last good findings
    if not name or not (reports_dir / name).is_file():
        return {"checks": [], "status_counts": {}, "synthetic": False, "provenance_files": 0,
                "effective_params": None}
    findings = json.loads((reports_dir / name).read_text(encoding="utf-8"))
    checks = []
    overload = overload_of(findings.get("stamp"))
    provenance = [p for p in findings.get("provenance", []) if isinstance(p, Mapping)]
    # No real input at all: every check ran on generated data, whether or not it says so itself.
    all_inputs_synthetic = bool(provenance) and all(p.get("synthetic") for p in provenance)
    for check in findings.get("checks", []):
        csv_name = evidence_csv_path(Path(), str(entry["audit"]), str(check.get("id"))).as_posix()
        checks.append({
            "id": check.get("id"), "title": check.get("title", ""), "status": check.get("status"),
            "observed": check.get("observed"), "expected": check.get("expected"),
            "summary": check.get("summary", ""), "finding": check.get("finding") or first_sentence(
                str(check.get("summary") or "")), "synthetic": bool(check.get("synthetic")) or all_inputs_synthetic,
            "details_total": check.get("details_total", 0),
            "missing": list((check.get("meta") or {}).get("missing", [])),
            "rejected": dict((check.get("meta") or {}).get("rejected", {})),
            "cost": (check.get("meta") or {}).get(COST_META_KEY),  # machine-dependent: this run on this machine
            CACHE_META_KEY: (check.get("meta") or {}).get(CACHE_META_KEY),  # verdicts this run took from the cache
            "csv": csv_name if (reports_dir / csv_name).is_file() else None,
        })
        split = failure_split_of(check)
        if split is not None:
            checks[-1]["failure_split"] = split
    counts = {s: sum(1 for c in checks if c["status"] == s) for s in STATUSES}
    return {"checks": checks, "status_counts": counts, "synthetic": bool(findings.get("synthetic")),
            "provenance_files": len(findings.get("provenance", [])), "effective_params": findings.get("params"),
            "overload": list(overload) if overload else None, "stamped": bool(findings.get("stamp"))}


def _totals(entries: Any) -> dict[str, int]:
    totals = {s: 0 for s in STATUSES}
    totals["audits"] = 0
    totals["failed_audits"] = 0
    for entry in entries:
        totals["audits"] += 1
        totals["failed_audits"] += entry.get("status") == "failed"
        for status, count in entry.get("status_counts", {}).items():
            totals[status] = totals.get(status, 0) + count
    return totals


# ----------------------------------------------------------------------------------------------- HTML


def render_index(summary: Mapping[str, Any], reports_dir: Path) -> str:
    """The index page: alerts first, the legend, one row per audit, then each audit's checks.

    Every defect and quirk of every audit is an alert; passing checks are collapsed, and the data inventory is one row
    with its files collapsed."""
    run = summary.get("run", {})
    audits = summary.get("audits", [])
    totals = summary.get("totals", {})
    tally = " ".join(f"{status_badge(s)}&nbsp;{totals.get(s, 0)}" for s in STATUSES if totals.get(s))
    mirror = "&lt;mirror&gt;" if run.get("mirror") else "none (cache and download only)"
    alerts = []
    # Real data first, synthetic after, the data inventory last: the first screen shows real findings.
    for entry in sorted(audits, key=lambda e: (_is_inventory(e), bool(e.get("synthetic")))):
        # A failed audit shows its last good run's checks: their alerts are that run's, and say so.
        label = str(entry.get("audit")) + (" (its last good run; the latest failed)"
                                           if entry.get("status") == "failed" else "")
        alerts.extend(alerts_for(entry.get("checks", []), audit=label,
                                 href=_report_href(entry, reports_dir) + "#check-{id}"))
    parts = [
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">",
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">",
        "<title>benchaudit — audit reports</title>", STYLE, PAGE_STYLE, CHANGES_STYLE, SPLIT_STYLE,
        "<style>body{margin:20px auto;max-width:1200px;padding:0 16px}"
        ".ba h1{font-size:22px;margin:4px 0}.ba h2{font-size:17px;margin-top:22px;border-bottom:1px solid #d0d7de}"
        ".ba details.audit>summary{font-size:15px;font-weight:600;margin:18px 0 4px;padding:4px 0;"
        "border-bottom:1px solid #d0d7de}"
        ".ba table.findings{width:100%}.ba table.findings td:nth-child(3){min-width:16em}"
        ".ba table.findings td:nth-child(4),.ba table.findings td:nth-child(5){max-width:19em;overflow-wrap:anywhere}"
        ".ba table.findings td:nth-child(6){white-space:nowrap}"
        ".failure{background:#ffebe9;border:1px solid #cf222e;padding:8px;margin:6px 0}"
        ".failure pre{white-space:pre-wrap;font-size:12px}</style></head><body><div class=\"ba\">",
        "<h1>benchaudit — audit reports</h1>",
        f"<p class=\"note\">Generated {esc(summary.get('generated_at', ''))} · kernel "
        f"<code>{esc(run.get('kernel') or '?')}</code> · mirror <code>{mirror}</code> · "
        f"{totals.get('audits', 0)} audit{'s' if totals.get('audits', 0) != 1 else ''}, "
        f"{totals.get('failed_audits', 0)} failed · checks: {tally}</p>",
        stamp_markup(summary.get("stamp") or run.get("stamp"),
                     ran_checks=not audits or not all(entry.get("reused_from") for entry in audits)),
        _interrupted_markup(run.get("interrupted")),
        since_previous_markup(summary.get("since_previous")),
    ]
    if any(e.get("synthetic") for e in audits):
        parts.append('<div class="synthetic-warning">⚠ Audits marked SYNTHETIC use generated data where no '
                     "real data is public; their figures show that the checks work, not what the benchmark "
                     "contains.</div>")
    parts.append(legend_markup())
    failed = [str(e.get("audit")) for e in audits if e.get("status") == "failed"]
    parts.append(alerts_markup(alerts, not_run=not_judged([c for e in audits for c in e.get("checks", [])]),
                               failed=failed, finished=len(audits) - len(failed)))
    since = summary.get("since_previous")
    parts.append("<h2>Audits</h2>" + _overview_table(audits, reports_dir, since))
    batch_overload = overload_of(summary.get("stamp"))
    for entry in audits:
        parts.append(_audit_section(entry, reports_dir, since, batch_overload))
    parts.append(f"</div>{TABLE_SCRIPT}{OPEN_TARGET_SCRIPT}</body></html>\n")
    return "".join(parts)


def _interrupted_markup(unfinished: Sequence[str] | None) -> str:
    """The run was stopped (Ctrl-C, SIGTERM) before these audits finished: what the index shows of them is older."""
    if unfinished is None:
        return ""
    names = ", ".join(f"<code>{esc(audit)}</code>" for audit in unfinished) or "none"
    return (f'<div class="failure"><b>This run was interrupted.</b> Audits it did not finish: {names}; any report '
            "of theirs shown here is from an earlier run.</div>")


def _is_inventory(entry: Mapping[str, Any]) -> bool:
    """The data inventory (one check per registered file) is summarised, not listed, on the index."""
    checks = entry.get("checks", [])
    return entry.get("audit") == "data_inventory" or (
        len(checks) > 20 and all(str(c.get("id", "")).startswith("file.") for c in checks))


def _report_href(entry: Mapping[str, Any], reports_dir: Path) -> str:
    name = entry.get("files", {}).get("html")
    return str(name) if name and (reports_dir / name).is_file() else f"#audit-{entry.get('audit')}"


def _overview_table(audits: Sequence[Mapping[str, Any]], reports_dir: Path, since: Mapping[str, Any] | None) -> str:
    synthetic_mark = ' <b class="synthetic">SYNTHETIC</b>'
    rows = []
    for entry in audits:
        audit = str(entry.get("audit"))
        counts = entry.get("status_counts", {})
        tally = " ".join(f"{status_badge(s)}&nbsp;{counts[s]}" for s in STATUSES if counts.get(s))
        worst = "failed" if entry.get("status") == "failed" else (
            worst_status([c["status"] for c in entry.get("checks", [])]) if entry.get("checks") else "skipped")
        what = f"{len(entry.get('checks', [])):,} files" if _is_inventory(entry) else \
            f"{len(entry.get('checks', [])):,} checks"
        changed = len(check_changes(since, audit))
        tally += f' <span class="changed">{changed} changed</span>' if changed else ""
        rows.append(
            "<tr>"
            f"<td><a href=\"#audit-{esc(audit)}\"><code>{esc(audit)}</code></a>"
            f"{synthetic_mark if entry.get('synthetic') else ''}</td>"
            f'<td data-v="{SEVERITY.get(worst, 5)}">{status_badge(worst)}</td><td>{what}: {tally or "—"}</td>'
            f"<td data-v=\"{float(entry.get('duration_s') or 0)}\">{float(entry.get('duration_s') or 0):.1f} s"
            f"{' (earlier run)' if entry.get('from_earlier_run') else ''}"
            f"{' (report reused: unchanged)' if entry.get('reused_from') else ''}</td>"
            f"<td>{_file_links(entry, reports_dir)}</td>"
            "</tr>")
    return ('<div class="table-wrap"><table class="audits sortable"><thead><tr><th>audit</th><th>worst</th>'
            "<th>checks</th><th>run time</th><th>files</th></tr></thead><tbody>" + "".join(rows)
            + "</tbody></table></div>")


def _file_links(entry: Mapping[str, Any], reports_dir: Path) -> str:
    links = []
    for kind, label in (("html", "report"), ("notebook", "notebook"), ("findings", "findings JSON"),
                        ("last_good_html", "last good report (STALE)"), ("failed_html", "failed run")):
        name = entry.get("files", {}).get(kind)
        if name and (reports_dir / name).is_file():
            links.append(f'<a class="file-{kind}" href="{esc(name)}">{esc(label)}</a>')
    return " · ".join(links) or "—"


def _shown_params(entry: Mapping[str, Any]) -> str:
    """The parameters the notebook recorded in its findings (defaults included), else those the runner passed."""
    effective = entry.get("effective_params")
    params = effective if effective is not None else (entry.get("params") or {})
    return " · ".join(f"{key}: {inline_text(value, 120) if value != '' else '—'}"
                      for key, value in params.items()) or "defaults"


def _reuse_note(entry: Mapping[str, Any]) -> str:
    """Says that this run kept the audit's report from an earlier run instead of running it (`runner.reuse`)."""
    run = entry.get("reused_from")
    if not run:
        return ""
    return (f" · <b>report reused from run {esc(run)}</b>: its code, data and parameters are unchanged, so the "
            "notebook was not run again (<code>run --no-cache</code> runs it)")


def _audit_section(entry: Mapping[str, Any], reports_dir: Path, since: Mapping[str, Any] | None,
                   batch_overload: tuple[float, int] | None) -> str:
    audit = str(entry.get("audit"))
    changes = check_changes(since, audit)
    note = audit_change_note(since, audit)
    # The audit's own stamp says how loaded its run was; an unstamped audit of this run takes the batch's.
    overload = entry.get("overload") if entry.get("stamped") or entry.get("from_earlier_run") else batch_overload
    checks = list(entry.get("checks", []))
    counts = entry.get("status_counts", {})
    tally = " ".join(f"{status_badge(s)}&nbsp;{counts[s]}" for s in STATUSES if counts.get(s))
    inventory = _is_inventory(entry)
    opened = " open" if entry.get("status") == "failed" else ""  # the alerts and the overview come first
    parts = [f'<details class="audit" id="audit-{esc(audit)}"{opened}><summary><code>{esc(audit)}</code> '
             f"{status_badge('failed') if entry.get('status') == 'failed' else ''}"
             f"{' <b>SYNTHETIC DATA</b>' if entry.get('synthetic') else ''} {tally}"
             f"{f' <span class=changed>{len(changes)} changed</span>' if changes else ''}</summary>",
             f'<p class="note">notebook <code>{esc(entry.get("notebook", ""))}.ipynb</code> · parameters: '
             f"{esc(_shown_params(entry))} · {_file_links(entry, reports_dir)}"
             f"{f' · {esc(note)}' if note else ''}{_reuse_note(entry)}</p>"]
    failure = entry.get("failure")
    if failure:
        where = f"cell {failure.get('cell')}" if failure.get("cell") is not None else "outside any cell"
        if failure.get("execution_count") is not None:
            where += f" (In [{failure['execution_count']}])"
        parts.append(f'<div class="failure"><b>The notebook failed at {esc(where)}:</b> '
                     f"<code>{esc(failure.get('error_type'))}: {esc(failure.get('message'))}</code>")
        if failure.get("cell_source"):
            parts.append(f"<pre>{esc(failure['cell_source'])}</pre>")
        parts.append("</div>")
    report = _report_href(entry, reports_dir)
    # A passing check that changed is shown with those that need attention: a reader should see it.
    attention = [c for c in checks if c.get("status") != "pass" or c.get("id") in changes]
    passing = [c for c in checks if c not in attention]
    table = {"report": report, "changes": changes, "overload": overload, "findings": entry.get("files", {}).get(
        "findings") or entry.get("files", {}).get("last_good_findings") or f"{audit}.findings.json"}
    if inventory:
        parts.append(_checks_table(checks, **table))
    else:
        parts.append(_checks_table(attention, **table))
        if passing:
            parts.append(f"<details><summary>{len(passing)} passing check{'s' if len(passing) != 1 else ''}"
                         f"</summary>{_checks_table(passing, **table)}</details>")
    if not checks and not failure:
        parts.append('<p class="note">No checks recorded.</p>')
    parts.append("</details>")
    return "".join(parts)


def _checks_table(checks: Sequence[Mapping[str, Any]], report: str, changes: Mapping[str, CheckChange],
                  overload: Sequence[float] | None, findings: str) -> str:
    if not checks:
        return ""
    rows = []
    for check in checks:
        links = [f'<a class="check-link" href="{esc(report)}#check-{esc(check.get("id"))}">report</a>']
        if check.get("csv"):
            links.append(f'<a class="csv" href="{esc(check["csv"])}" title="{check.get("details_total", 0):,} rows">'
                         "CSV</a>")
        status = str(check.get("status"))
        check_id = str(check.get("id"))
        split = split_markup(check.get("failure_split"), where=f"{findings}, check {check_id}",
                             overload=(float(overload[0]), int(overload[1])) if overload else None)
        rows.append(
            "<tr>"
            f'<td data-v="{SEVERITY.get(status, 0)}">{status_badge(status)}'
            f"{' <b>synthetic</b>' if check.get('synthetic') else ''}</td>"
            f"<td><code>{esc(check_id)}</code><br>{esc(check.get('title', ''))}"
            f"{check_change_markup(changes.get(check_id))}</td>"
            f"<td>{esc(value_text(check_finding(check), CELL_TEXT_LIMIT))}{split}</td>"
            f"<td>{value_lines(check.get('observed'), INDEX_VALUE_LIMIT)}</td>"
            f"<td>{value_lines(check.get('expected'), INDEX_VALUE_LIMIT)}</td>"
            f"<td>{' · '.join(links)}</td></tr>")
    return ('<div class="table-wrap"><table class="findings sortable"><thead><tr><th>status</th><th>check</th>'
            "<th>finding</th><th>observed</th><th>expected</th><th>evidence</th></tr></thead><tbody>"
            + "".join(rows) + "</tbody></table></div>")
