"""What an exported report adds around its notebook: header, embedded evidence, scripts.

The header opens with the alerts and the legend; each check's slot gets its full evidence and per-task view.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from audit_lib.findings import STATUSES
from audit_lib.report.show import EVIDENCE_SLOT, STYLE, status_badge
from audit_lib.report.evidence import DOWNLOAD_SCRIPT, DRILLDOWN_STYLE, drilldown_markup, embed_all, load_evidence
from audit_lib.report.page import PAGE_STYLE, Alert, alerts_for, alerts_markup, legend_markup, not_judged, stamp_markup
from audit_lib.report.tables import TABLE_SCRIPT
from audit_lib.report.values import esc

INDEX_LINK = ('<a class="index-link" href="index.html" title="works when the report sits beside index.html">'
              "← index of all audits</a> (when opened beside it)")


@dataclass(frozen=True)
class ReportParts:
    header: str
    footer: str
    slots: Mapping[str, str]  # the evidence slot's markup in the notebook output -> what replaces it


def report_parts(findings: Mapping[str, Any] | None, evidence_dir: Path, *, title: str, audit: str,
                 body: str) -> ReportParts:
    """Header, footer and slot replacements for one report; `body` is the exported notebook (to find slots)."""
    generated = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    header = [STYLE, PAGE_STYLE, DRILLDOWN_STYLE, '<div class="ba report-header" style="padding:8px 16px 0">',
              f'<nav class="note">{INDEX_LINK} · audit <code>{esc(audit)}</code> · generated {esc(generated)}</nav>',
              f"<h1>{esc(title)}</h1>"]
    if findings is None:
        header.append('<p class="note">This notebook wrote no findings; see its output below.</p>'
                      f"{legend_markup()}</div>")
        return ReportParts("".join(header), TABLE_SCRIPT, {})
    checks = list(findings.get("checks", []))
    header.append(stamp_markup(findings.get("stamp")))
    if findings.get("synthetic"):
        header.append('<div class="synthetic-warning">⚠ SYNTHETIC DATA: part of this audit runs on generated data '
                      "(see the banner below and each marked check); those figures show that a check works, "
                      "not what the real benchmark contains.</div>")
    slotted = {str(c.get("id")) for c in checks if EVIDENCE_SLOT.format(id=esc(c.get("id"))) in body}
    anchors = {str(c.get("id")) for c in checks if f'id="check-{esc(c.get("id"))}"' in body}
    alerts = alerts_for(checks, audit=audit, href="#check-{id}")
    alerts = [a if a.href[len("#check-"):] in anchors else _to_evidence(a) for a in alerts]
    header.append(legend_markup())
    header.append(alerts_markup(alerts, heading="Alerts", show_audit=False, not_run=not_judged(checks)))
    header.append(_tally(checks))
    header.append("</div>")

    evidence = load_evidence(findings, evidence_dir)
    embedded = embed_all(evidence, audit=audit)
    slots: dict[str, str] = {}
    appendix = []
    for check in checks:
        check_id = str(check.get("id"))
        if check_id not in embedded:
            continue
        content = embedded[check_id].link
        if f'class="task-drilldown" data-check="{esc(check_id)}"' not in body:  # the notebook showed a richer one
            content += drilldown_markup(evidence[check_id], str(check.get("status")))
        if check_id in slotted:
            slots[EVIDENCE_SLOT.format(id=esc(check_id))] = f'<div class="evidence" id="evidence-{esc(check_id)}">' \
                                                           f"{content}</div>"
        else:
            appendix.append(f'<div class="evidence" id="evidence-{esc(check_id)}"><h3><code>{esc(check_id)}</code> '
                            f"{esc(check.get('title', ''))}</h3>{content}</div>")
    footer = []
    if appendix:
        footer.append('<section class="ba" id="evidence" style="padding:0 16px"><h2>Evidence</h2>'
                      + "".join(appendix) + "</section>")
    footer.extend(item.blob for item in embedded.values() if item.blob)
    footer.append(TABLE_SCRIPT + DOWNLOAD_SCRIPT)
    return ReportParts("".join(header), "".join(footer), slots)


def _to_evidence(alert: Alert) -> Alert:
    return replace(alert, href="#evidence-" + alert.href[len("#check-"):])


def _tally(checks: list[Mapping[str, Any]]) -> str:
    counts = {s: sum(1 for c in checks if c.get("status") == s) for s in STATUSES}
    shown = " ".join(f"{status_badge(s)}&nbsp;{n}" for s, n in counts.items() if n)
    return f'<p class="note">{len(checks)} checks: {shown}</p>'


__all__ = ["ReportParts", "report_parts", "INDEX_LINK"]
