"""Page-level blocks shared by every report and the index: alerts first, the status legend, the run stamp."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from audit_lib.findings import SEVERITY
from audit_lib.report.show import check_finding, status_badge
from audit_lib.report.values import esc, number_text

ALERT_STATUSES = ("defect", "quirk")
ALERT_TEXT_LIMIT = 260
# On the index, more alerts than this are folded per audit (one line each, opened on a click), so the audits
# table follows within the first screen; fewer stay open.
ALERTS_SHOWN_OPEN = 8

# One line per status; the README's legend says the same.
LEGEND: tuple[tuple[str, str], ...] = (
    ("pass", "the benchmark behaves as documented."),
    ("quirk", "it behaves differently from its documentation, with evidence."),
    ("defect", "its data or metric is wrong."),
    ("error", "the check could not run; the reason is shown."),
    ("skipped", "an input it needs is absent; meta.missing names it."),
)

PAGE_STYLE = """<style>
.ba .alerts{border:1px solid #d0d7de;border-radius:6px;padding:6px 12px;margin:8px 0;background:#fff}
.ba .alerts h2{font-size:16px;margin:2px 0 6px;border:0}
.ba .alerts ul{margin:0;padding-left:0;list-style:none}
.ba .alerts li{margin:3px 0;line-height:1.45}
.ba .alerts li.alert-audit{margin-top:6px}
.ba .alerts li.alert-audit>ul{padding-left:14px}
.ba .alerts .audit-name{font-weight:600}
.ba .alerts li.alert-audit summary{cursor:pointer}
.ba .legend{display:flex;flex-wrap:wrap;gap:2px 18px;font-size:12px;color:#424a53;margin:6px 0;padding:0;
  list-style:none}
.ba .legend li{white-space:nowrap}
.ba .stamp{font-size:12px;color:#57606a;margin:3px 0}
.ba .overload{background:#fff8c5;border:1px solid #bf8700;padding:4px 8px;margin:4px 0;font-weight:600}
</style>"""


# A link to a collapsed section (`#audit-x`) opens it.
OPEN_TARGET_SCRIPT = """<script>
(function(){
function openTarget(){var id=decodeURIComponent(location.hash.slice(1)),el=id&&document.getElementById(id);
 if(el&&el.tagName==='DETAILS'){el.open=true;el.scrollIntoView();}}
window.addEventListener('hashchange',openTarget);openTarget();
})();
</script>"""


@dataclass(frozen=True)
class Alert:
    """One defect or quirk as a reader sees it first: where, what was found, and where its evidence is."""

    audit: str
    status: str
    finding: str
    href: str
    synthetic: bool = False


def alerts_for(checks: Sequence[Mapping[str, Any]], *, audit: str, href: str) -> list[Alert]:
    """The audit's defects then quirks, in check order; `href` is formatted with the check id."""
    found = [c for c in checks if c.get("status") in ALERT_STATUSES]
    found.sort(key=lambda c: -SEVERITY.get(str(c.get("status")), 0))
    return [Alert(audit, str(c.get("status")), check_finding(c) or str(c.get("title") or c.get("id")),
                  href.format(id=c.get("id")), bool(c.get("synthetic"))) for c in found]


def alerts_markup(alerts: Sequence[Alert], *, heading: str = "Alerts", show_audit: bool = True,
                  not_run: Mapping[str, int] | None = None, failed: Sequence[str] = (),
                  finished: int | None = None) -> str:
    """One line per alert, grouped under their audit's name on the index.

    `not_run` counts the checks that could not say anything (error, skipped): they are no alert, but a reader should
    know. `failed` names the audits whose notebook failed (of `finished` + len(failed) on the index): they judged
    nothing."""
    counts = {s: sum(1 for a in alerts if a.status == s) for s in ALERT_STATUSES}
    tally = ", ".join(f"{n} {s}{'s' if n != 1 else ''}" for s, n in counts.items())
    unknown = ", ".join(f"{n} {s}" for s, n in (not_run or {}).items() if n)
    footnote = (f'<p class="note">Not judged: {esc(unknown)} (see the legend; their reasons are in the checks).</p>'
                if unknown else "")
    failures = ""
    if failed:
        links = ", ".join(f'<a href="#audit-{esc(audit)}">{esc(audit)}</a>' for audit in failed)
        many = len(failed) != 1
        failures = (f'<p class="failed-audits">{status_badge("failed")} {len(failed)} audit{"s" if many else ""} '
                    f"failed and judged nothing in {'their' if many else 'its'} latest run: {links} (the failure "
                    f"is shown in {'their sections' if many else 'its section'} below).</p>")
    if not alerts:
        if failed and not finished:
            verdict = "No audit finished: nothing was judged."
        elif failed:
            verdict = "No defects or quirks found in the audits that finished."
        else:
            verdict = "No defects or quirks found."
        return (f'<section class="alerts" id="alerts"><h2>{esc(heading)}</h2>{failures}'
                f'<p class="note">{verdict}</p>{footnote}</section>')
    groups: dict[str, list[Alert]] = {}
    for alert in alerts:
        groups.setdefault(alert.audit if show_audit else "", []).append(alert)
    blocks = []
    for audit, members in groups.items():
        mixed = not all(a.synthetic for a in members)  # all synthetic: the page's banner already says so
        items = "".join(_alert_item(alert, mark_synthetic=not show_audit and mixed) for alert in members)
        if show_audit:
            synthetic = " <b>(synthetic data)</b>" if any(a.synthetic for a in members) else ""
            found = {s: sum(1 for a in members if a.status == s) for s in ALERT_STATUSES}
            badges = " ".join(f"{status_badge(s)}&nbsp;{n}" for s, n in found.items() if n)
            opened = " open" if len(alerts) <= ALERTS_SHOWN_OPEN else ""
            blocks.append(f'<li class="alert-audit"><details{opened}><summary><span class="audit-name">{esc(audit)}'
                          f"</span>{synthetic} {badges}</summary><ul>{items}</ul></details></li>")
        else:
            blocks.append(items)
    return (f'<section class="alerts" id="alerts"><h2>{esc(heading)} — {esc(tally)}</h2>{failures}'
            f"<ul>{''.join(blocks)}</ul>{footnote}</section>")


def not_judged(checks: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    return {s: sum(1 for c in checks if c.get("status") == s) for s in ("error", "skipped")}


def shortened(text: str, limit: int = ALERT_TEXT_LIMIT) -> str:
    """`text` whole when it fits, else cut at the last space before `limit` (never inside a word) with "…"."""
    if len(text) <= limit:
        return text
    head = text[:limit - 1]
    cut = head.rsplit(" ", 1)[0] if " " in head else head
    return cut.rstrip(" ,;:(") + " …"


def _alert_item(alert: Alert, *, mark_synthetic: bool) -> str:
    text = shortened(alert.finding)
    synthetic = " <b>(synthetic data)</b>" if alert.synthetic and mark_synthetic else ""
    return (f'<li class="alert">{status_badge(alert.status)} {esc(text)}{synthetic} '
            f'<a class="alert-evidence" href="{esc(alert.href)}">evidence&nbsp;→</a></li>')


def legend_markup() -> str:
    items = "".join(f"<li>{status_badge(status)} {esc(text)}</li>" for status, text in LEGEND)
    return f'<ul class="legend" aria-label="status legend">{items}</ul>'


def stamp_markup(stamp: Mapping[str, Any] | None, *, ran_checks: bool = True) -> str:
    """The run stamp line (version, commit, machine, load, wall time).

    With a warning when the machine was busier than its CPUs: timings and timeout verdicts from such a run may not
    reproduce. A run that checked nothing itself (`ran_checks=False`: every report kept from an earlier run) says
    so instead, since its load decided no verdict."""
    if not stamp:
        return ""
    parts = []
    if stamp.get("version"):
        parts.append(f"benchaudit {stamp['version']}")
    if stamp.get("commit"):
        parts.append(f"commit {str(stamp['commit'])[:10]}{' (dirty)' if stamp.get('dirty') else ''}")
    if stamp.get("python"):
        parts.append(f"Python {stamp['python']}")
    cpus = stamp.get("cpus")
    machine = " × ".join(str(x) for x in (stamp.get("cpu_model"), f"{cpus} CPUs" if cpus else None) if x)
    if machine:
        parts.append(machine)
    loads = [stamp.get("load_start"), stamp.get("load_end")]
    if any(load is not None for load in loads):
        parts.append("load " + " → ".join("?" if x is None else number_text(float(x)) for x in loads))
    if stamp.get("workers") is not None:
        parts.append(f"{stamp['workers']} workers")
    if stamp.get("wall_s") is not None:
        parts.append(f"{number_text(float(stamp['wall_s']))} s wall")
    markup = f'<p class="stamp">Run: {esc(" · ".join(parts))}</p>'
    busy = [float(x) for x in loads if isinstance(x, (int, float))]
    if not ran_checks:
        markup += ('<p class="note">No audit ran again: every report was kept from an earlier run, so its '
                   "timings and verdicts are that run's (each report shows its own stamp).</p>")
    elif isinstance(cpus, (int, float)) and cpus > 0 and any(load > cpus for load in busy):
        markup += (f'<p class="overload">⚠ The machine was overloaded during this run (load '
                   f"{esc(number_text(max(busy)))} on {esc(cpus)} CPUs): timings and timeout-based verdicts may "
                   "differ on a quiet machine.</p>")
    return markup


__all__ = ["Alert", "LEGEND", "OPEN_TARGET_SCRIPT", "PAGE_STYLE", "alerts_for", "alerts_markup", "legend_markup",
           "not_judged", "stamp_markup"]
