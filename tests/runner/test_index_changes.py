"""The index marks what changed since the previous run (status or observed value), per audit against its last
recorded run, and says so when there is nothing to compare: first run, new audit, failed (stale) audit, refused run."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from audit_lib import runner
from audit_lib.errors import UnknownAuditError
from audit_lib.runner.history import record_run
from audit_lib.runner.index_page import write_index_and_summary


def check(check_id: str, status: str, observed: Any = None) -> dict[str, Any]:
    return {"id": check_id, "title": f"title of {check_id}", "status": status, "observed": observed}


def published(reports: Path, audit: str, checks: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """An audit that ran fine now: its findings file in the reports folder and its outcome as the runner has it."""
    (reports / f"{audit}.findings.json").write_text(json.dumps({"audit": audit, "checks": list(checks)}))
    (reports / f"{audit}.html").write_text("<html></html>")
    return {"audit": audit, "notebook": audit, "params": {}, "ok": True, "duration_s": 1.0, "failure": None,
            "files": {"findings": f"{audit}.findings.json", "html": f"{audit}.html"}, "status": "ok"}


def failed(reports: Path, audit: str) -> dict[str, Any]:
    """An audit that failed now: its last good findings stay where they were."""
    files = {f"last_good_{kind}": f"{audit}.{suffix}" for kind, suffix in (("findings", "findings.json"), ("html", "html"))
             if (reports / f"{audit}.{suffix}").is_file()}
    return {"audit": audit, "notebook": audit, "params": {}, "ok": False, "duration_s": 1.0,
            "failure": {"cell": 2, "execution_count": 2, "error_type": "RuntimeError", "message": "boom",
                        "cell_source": ""}, "files": files, "status": "failed"}


def batch(reports: Path, run_id: str, outcomes: Sequence[Mapping[str, Any]]) -> tuple[dict[str, Any], str]:
    """What `run_audits` does after the notebooks: write the index and summary, then record the run."""
    write_index_and_summary(reports, outcomes, {"kernel": "python3"})
    record_run(reports, run_id, [str(o["audit"]) for o in outcomes])
    summary = json.loads((reports / "summary.json").read_text())
    return summary, (reports / "index.html").read_text()


def row_of(html: str, audit: str, check_id: str) -> str:
    """The index's table row of one check, inside its audit's section."""
    section = html[html.index(f'id="audit-{audit}"'):]
    section = section[: section.index("</details>\n") if "</details>\n" in section else len(section)]
    rows = [row for row in re.findall(r"<tr>.*?</tr>", section, flags=re.DOTALL) if f"<code>{check_id}</code><br>" in row]
    assert len(rows) == 1, (check_id, len(rows))
    return rows[0]


def headline(html: str) -> str:
    match = re.search(r'<section class="since" id="since-previous"><p>(.*?)</p>', html, flags=re.DOTALL)
    assert match, "no 'since the previous run' line"
    return re.sub(r"<[^>]+>", "", match.group(1))


@pytest.fixture()
def reports(tmp_path: Path) -> Path:
    folder = tmp_path / "reports"
    folder.mkdir()
    return folder


def test_first_run_has_nothing_to_compare(reports: Path) -> None:
    summary, html = batch(reports, "2024-01-01T00-00-01Z", [published(reports, "alpha", [check("x", "quirk", 1)])])
    assert summary["since_previous"]["previous_run"] is None
    assert "no previous run is recorded (first run)" in headline(html)
    assert 'class="changed' not in html


def test_changed_status_and_observed_are_marked_and_unchanged_checks_are_not(reports: Path) -> None:
    first = [check("status_moves", "quirk", 1), check("value_moves", "defect", {"tasks": 17}),
             check("steady", "defect", [1, 2]), check("fixed", "defect", 3), check("dropped", "pass"),
             check("list_moves", "quirk", [3])]
    batch(reports, "2024-01-01T00-00-01Z", [published(reports, "alpha", first)])
    second = [check("status_moves", "defect", 1), check("value_moves", "defect", {"tasks": 22}),
              check("steady", "defect", [1, 2]), check("fixed", "pass", 3), check("added", "quirk"),
              check("list_moves", "quirk", [4])]
    summary, html = batch(reports, "2024-01-01T00-00-02Z", [published(reports, "alpha", second)])
    assert headline(html) == "Since the previous run (2024-01-01 00:00:01 UTC): 6 checks changed"
    assert "changed: quirk → defect" in row_of(html, "alpha", "status_moves")
    value_row = row_of(html, "alpha", "value_moves")
    assert "observed changed" in value_row and "changed: " not in value_row
    assert '<span class="k">tasks</span>: 17 → 22' in value_row
    assert re.search(r"observed was:.*3.*observed now:.*4", row_of(html, "alpha", "list_moves"), flags=re.DOTALL)
    assert 'class="changed' not in row_of(html, "alpha", "steady")
    assert "changed: defect → pass" in row_of(html, "alpha", "fixed")  # shown, though passing now
    assert "new check" in row_of(html, "alpha", "added")
    assert "gone: dropped" in html and "gone (was pass)" in html
    changes = summary["since_previous"]["audits"]["alpha"]["changes"]
    assert sorted(c["check"] for c in changes) == ["added", "dropped", "fixed", "list_moves", "status_moves",
                                                    "value_moves"]
    # The same findings again: nothing is marked.
    _, html = batch(reports, "2024-01-01T00-00-03Z", [published(reports, "alpha", second)])
    assert headline(html) == "Since the previous run (2024-01-01 00:00:02 UTC): no check changed"
    assert 'class="changed' not in html


def test_new_gone_and_stale_audits(reports: Path) -> None:
    batch(reports, "2024-01-01T00-00-01Z", [published(reports, "alpha", [check("x", "quirk", 1)]),
                                            published(reports, "gamma", [check("z", "pass")])])
    for name in ("gamma.findings.json", "gamma.html"):  # its report is gone: the index no longer lists it
        (reports / name).unlink()
    summary, html = batch(reports, "2024-01-01T00-00-02Z",
                          [published(reports, "alpha", [check("x", "defect", 2)]),
                           published(reports, "beta", [check("y", "defect", 5)])])
    line = headline(html)
    assert "1 check changed" in line and "new audits: beta" in line and "no longer listed: gamma" in line
    assert 'class="changed' not in row_of(html, "beta", "y")
    assert "new since the previous run" in html
    # alpha fails now: its last good findings are shown STALE, not compared, and nothing is marked changed.
    summary, html = batch(reports, "2024-01-01T00-00-03Z", [failed(reports, "alpha")])
    assert summary["since_previous"]["audits"]["alpha"] == {"state": "failed"}
    assert "STALE" in html
    assert headline(html) == ("Since the previous run (2024-01-01 00:00:02 UTC): no check changed · "
                              "failed this run (last good findings shown): alpha")
    assert 'class="changed' not in row_of(html, "alpha", "x")
    # alpha runs again: compared with the last good findings it had (kept in the failed run's folder too).
    _, html = batch(reports, "2024-01-01T00-00-04Z", [published(reports, "alpha", [check("x", "pass", 0)])])
    assert "changed: defect → pass" in row_of(html, "alpha", "x")
    assert 'class="changed' not in row_of(html, "beta", "y")  # not run now: its findings did not change


def test_an_audit_absent_from_the_previous_run_is_compared_with_its_own_last_run(reports: Path) -> None:
    batch(reports, "2024-01-01T00-00-01Z", [published(reports, "alpha", [check("x", "quirk", 1)]),
                                            published(reports, "beta", [check("y", "quirk", 1)])])
    batch(reports, "2024-01-01T00-00-02Z", [published(reports, "alpha", [check("x", "quirk", 1)])])
    _, html = batch(reports, "2024-01-01T00-00-03Z", [published(reports, "beta", [check("y", "quirk", 2)])])
    assert "observed changed" in row_of(html, "beta", "y")
    assert "1 check changed since its last recorded run (2024-01-01 00:00:01 UTC)" in html


def test_a_refused_run_changes_nothing_and_is_not_a_previous_run(reports: Path) -> None:
    batch(reports, "2024-01-01T00-00-01Z", [published(reports, "alpha", [check("x", "quirk", 1)])])
    before = {p.name: p.read_bytes() for p in reports.rglob("*") if p.is_file()}
    with pytest.raises(UnknownAuditError):
        runner.run_audits(["no_such_audit"], reports_dir=reports, progress=None)
    assert {p.name: p.read_bytes() for p in reports.rglob("*") if p.is_file()} == before
    _, html = batch(reports, "2024-01-01T00-00-02Z", [published(reports, "alpha", [check("x", "defect", 1)])])
    assert headline(html) == "Since the previous run (2024-01-01 00:00:01 UTC): 1 check changed"


def test_damaged_history_is_shown_not_fatal(reports: Path) -> None:
    batch(reports, "2024-01-01T00-00-01Z", [published(reports, "alpha", [check("x", "quirk", 1)])])
    (reports / "runs" / "2024-01-01T00-00-01Z" / "alpha.findings.json").write_text("{truncated")
    summary, html = batch(reports, "2024-01-01T00-00-02Z", [published(reports, "alpha", [check("x", "quirk", 2)])])
    state = summary["since_previous"]["audits"]["alpha"]
    assert state["state"] == "unreadable" and "not a readable findings file" in state["reason"]
    assert "history unreadable: alpha" in headline(html)


def test_two_runs_in_the_same_second_are_kept_apart(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    reports.mkdir()
    batch(reports, "2026-12-01T10-00-00Z", [published(reports, "alpha", [check("a1", "pass")])])
    _, html = batch(reports, "2026-12-01T10-00-00Z", [published(reports, "beta", [check("b1", "defect")])])
    first, second = runner.history.run_folders(reports)
    assert (first.name, second.name) == ("2026-12-01T10-00-00Z", "2026-12-01T10-00-00Z.002")
    assert sorted(p.name for p in first.glob("*.findings.json")) == ["alpha.findings.json"]
    assert sorted(p.name for p in second.glob("*.findings.json")) == ["beta.findings.json"]
    assert (second / "summary.json").read_text() == (reports / "summary.json").read_text()
    assert "beta" not in (first / "summary.json").read_text()
