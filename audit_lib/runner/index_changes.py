"""What changed since the previous run, as the index shows it.

Each audit run now is compared with the last recorded run that holds its findings (`history.diff_findings`); the summary
keeps the result.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from audit_lib.errors import ParameterError
from audit_lib.report.values import esc, inline_text, value_lines
from audit_lib.runner.history import (
    SUMMARY_NAME,
    CheckChange,
    diff_findings,
    latest_run_with,
    read_findings_file,
    run_folders,
)

CHANGE_VALUE_LIMIT = 160
RUN_FOLDER_TIME = re.compile(r"^(\d{4}-\d\d-\d\d)T(\d\d)-(\d\d)-(\d\d)Z$")

# Per audit run now, one of these states (summary.json `since_previous.audits.<audit>.state`).
COMPARED = "compared"  # its findings were compared with its last recorded run's
NEW = "new"  # no recorded run holds its findings
FAILED = "failed"  # it failed now: the index shows its last good findings, nothing new to compare
UNREADABLE = "unreadable"  # its recorded findings could not be read; the reason is kept

CHANGES_STYLE = """<style>
.ba .since{margin:6px 0;font-size:13px}
.ba .since>p{margin:2px 0}
.ba .since li{margin:2px 0}
.ba .changed{display:inline-block;background:#ddf4ff;border:1px solid #54aeff;border-radius:10px;padding:0 7px;
  font-size:11px;font-weight:600;color:#0969da;white-space:nowrap}
.ba .changed.status{background:#fff8c5;border-color:#bf8700;color:#7d4e00}
.ba details.change-detail{font-size:12px;overflow-wrap:anywhere}
.ba details.change-detail>summary{display:inline;color:#57606a}
</style>"""


def changes_since_previous(reports_dir: Path, entries: Mapping[str, Mapping[str, Any]],
                           run_now: Sequence[str]) -> dict[str, Any]:
    """Call before this run is recorded: the previous run, and per audit run now its state and changed checks."""
    runs = run_folders(reports_dir)
    if not runs:
        return {"previous_run": None, "audits": {}, "gone_audits": []}
    previous = runs[-1]
    per_audit: dict[str, dict[str, Any]] = {}
    for audit in run_now:
        entry = entries.get(audit, {})
        if entry.get("status") == "failed":
            per_audit[audit] = {"state": FAILED}
            continue
        baseline = latest_run_with(reports_dir, audit)
        findings_name = (entry.get("files") or {}).get("findings")
        if baseline is None or not findings_name:
            per_audit[audit] = {"state": NEW}
            continue
        try:
            before = read_findings_file(baseline / f"{audit}.findings.json")
            after = read_findings_file(reports_dir / findings_name)
            changes = diff_findings({audit: before}, {audit: after})
        except (ParameterError, KeyError, TypeError, AttributeError) as exc:  # a damaged history is shown, not fatal
            per_audit[audit] = {"state": UNREADABLE, "baseline_run": baseline.name,
                                "reason": f"{type(exc).__name__}: {exc}"}
            continue
        per_audit[audit] = {"state": COMPARED, "baseline_run": baseline.name,
                            "changes": [asdict(change) for change in changes]}
    return {"previous_run": previous.name, "audits": per_audit,
            "gone_audits": sorted(set(_audits_of(previous)) - set(entries))}


def _audits_of(run_folder: Path) -> list[str]:
    """The audits the index listed at the end of a recorded run (from its summary)."""
    try:
        summary = json.loads((run_folder / SUMMARY_NAME).read_text(encoding="utf-8"))
        return [str(entry["audit"]) for entry in summary.get("audits", []) if "audit" in entry]
    except (OSError, ValueError, TypeError, AttributeError):  # then no audit is reported gone
        return []


def check_changes(since: Mapping[str, Any] | None, audit: str) -> dict[str, CheckChange]:
    """Check id -> its change since the previous run, for one audit (empty when nothing was compared)."""
    state = ((since or {}).get("audits") or {}).get(audit) or {}
    return {str(c["check"]): CheckChange(**c) for c in state.get("changes", [])}


def changed_count(since: Mapping[str, Any] | None) -> int:
    return sum(len(state.get("changes", [])) for state in ((since or {}).get("audits") or {}).values())


def run_time_label(folder_name: str) -> str:
    """`2024-05-01T12-00-00Z` (a run folder's name) as `2024-05-01 12:00:00 UTC`."""
    match = RUN_FOLDER_TIME.match(folder_name)
    return f"{match[1]} {match[2]}:{match[3]}:{match[4]} UTC" if match else folder_name


# ----------------------------------------------------------------------------------------------- HTML


def since_previous_markup(since: Mapping[str, Any] | None) -> str:
    """The one line near the top of the index, with the changed checks listed in a collapsed section."""
    if not since or not since.get("previous_run"):
        return ('<section class="since" id="since-previous"><p><b>Since the previous run:</b> no previous run is '
                "recorded (first run): nothing to compare yet.</p></section>")
    audits = since.get("audits") or {}
    count = changed_count(since)
    in_audits = sum(1 for state in audits.values() if state.get("changes"))
    line = (f"{count} check{'s' if count != 1 else ''} changed" + (f" in {in_audits} audits" if in_audits > 1 else "")
            if count else "no check changed")
    notes = [f"{label}: {', '.join(names)}" for label, names in (
        ("new audits", [a for a, s in audits.items() if s.get("state") == NEW]),
        ("failed this run (last good findings shown)", [a for a, s in audits.items() if s.get("state") == FAILED]),
        ("history unreadable", [a for a, s in audits.items() if s.get("state") == UNREADABLE]),
        ("no longer listed", list(since.get("gone_audits") or ())),
    ) if names]
    text = f"<b>Since the previous run ({esc(run_time_label(str(since['previous_run'])))}):</b> {esc(line)}"
    if notes:
        text += " · " + esc(" · ".join(notes))
    items = []
    for audit, state in audits.items():
        for change in check_changes(since, audit).values():
            items.append(f'<li><a href="#audit-{esc(audit)}"><code>{esc(audit)}</code></a> '
                         f"<code>{esc(change.check)}</code> {change_marker(change)}</li>")
        if state.get("state") == UNREADABLE:
            items.append(f"<li><code>{esc(audit)}</code>: {esc(state.get('reason', ''))}</li>")
    listing = (f"<details><summary>which checks</summary><ul>{''.join(items)}</ul></details>" if items else "")
    return f'<section class="since" id="since-previous"><p>{text}</p>{listing}</section>'


def change_marker(change: CheckChange) -> str:
    kind = " status" if change.status_changed else ""
    return f'<span class="changed{kind}" title="since the previous run">{esc(change.marker())}</span>'


def check_change_markup(change: CheckChange | None) -> str:
    """Beside a check on the index: its marker, and the old → new status and observed value collapsed."""
    if change is None:
        return ""
    rows = []
    if change.status_changed:
        rows.append(f"<div>status: {esc(change.old_status or '—')} → {esc(change.new_status or '—')}</div>")
    if change.observed_changed:
        rows.append(_observed_delta(change.old_observed, change.new_observed))
    return (f'<br>{change_marker(change)} <details class="change-detail"><summary>old → new</summary>'
            f"{''.join(rows)}</details>")


def _observed_delta(old: Any, new: Any) -> str:
    """Two mappings: one `key: old → new` line per key that differs; other values: was, then now."""
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        lines = []
        for key in [*old, *(k for k in new if k not in old)]:
            if old.get(key) != new.get(key):
                was = inline_text(old[key], CHANGE_VALUE_LIMIT) if key in old else "(absent)"
                now = inline_text(new[key], CHANGE_VALUE_LIMIT) if key in new else "(absent)"
                lines.append(f'<div class="kv"><span class="k">{esc(key)}</span>: {esc(was)} → {esc(now)}</div>')
        return "<div>observed:</div>" + "".join(lines)
    return (f"<div>observed was:</div>{value_lines(old, CHANGE_VALUE_LIMIT)}"
            f"<div>observed now:</div>{value_lines(new, CHANGE_VALUE_LIMIT)}")


def audit_change_note(since: Mapping[str, Any] | None, audit: str) -> str:
    """A short note for an audit's section: what it was compared with, and what changed."""
    if not since or not since.get("previous_run"):
        return ""
    state = (since.get("audits") or {}).get(audit)
    if state is None:
        return ""  # not run now: its findings are those of the run that produced them
    kind = state.get("state")
    if kind == NEW:
        return "new since the previous run: nothing to compare"
    if kind == FAILED:
        return "failed this run: the last good findings are shown, nothing new to compare"
    if kind == UNREADABLE:
        return f"its recorded findings could not be read: {state.get('reason', '')}"
    changes = state.get("changes", [])
    gone = [c["check"] for c in changes if c.get("new_status") is None]
    text = f"{len(changes)} check{'s' if len(changes) != 1 else ''} changed" if changes else "no check changed"
    if state.get("baseline_run") != since.get("previous_run"):
        text += f" since its last recorded run ({run_time_label(str(state.get('baseline_run')))})"
    else:
        text += " since the previous run"
    if gone:
        text += f"; gone: {', '.join(gone)}"
    return text


__all__ = ["CHANGES_STYLE", "audit_change_note", "changed_count", "changes_since_previous", "check_change_markup",
           "check_changes", "run_time_label", "since_previous_markup"]
