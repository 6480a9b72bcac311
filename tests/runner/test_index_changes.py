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
from audit_lib.report.values import value_lines
from audit_lib.runner import index_changes
from audit_lib.runner.history import CheckChange, record_run
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


def test_with_no_recorded_run_nothing_is_compared(reports: Path) -> None:
    assert index_changes.changes_since_previous(reports, {}, ["alpha"]) == {"previous_run": None, "audits": {},
                                                                           "gone_audits": []}


def test_every_audit_run_now_gets_its_own_state_in_order(reports: Path) -> None:
    batch(reports, "2024-01-01T00-00-01Z", [published(reports, a, [check("x", "quirk", 1)])
                                            for a in ("broken", "same", "stale")])
    (reports / "runs" / "2024-01-01T00-00-01Z" / "broken.findings.json").write_text("{truncated")
    entries = {"stale": failed(reports, "stale"), "broken": published(reports, "broken", [check("x", "quirk", 1)]),
               "fresh": published(reports, "fresh", [check("y", "pass")]),
               "same": published(reports, "same", [check("x", "defect", 1)])}
    # each kind of audit comes before another: one audit's state never ends the loop for the rest
    since = index_changes.changes_since_previous(reports, entries, ["stale", "fresh", "unlisted", "broken", "same"])
    audits = since["audits"]
    assert list(audits) == ["stale", "fresh", "unlisted", "broken", "same"]
    assert audits["stale"] == {"state": "failed"} and audits["fresh"] == audits["unlisted"] == {"state": "new"}
    assert audits["broken"]["baseline_run"] == "2024-01-01T00-00-01Z"
    assert audits["broken"]["reason"].startswith("ParameterError: ")
    assert audits["same"] == {"state": "compared", "baseline_run": "2024-01-01T00-00-01Z", "changes": [
        {"audit": "same", "check": "x", "old_status": "quirk", "new_status": "defect", "old_observed": 1,
         "new_observed": 1}]}
    assert since["gone_audits"] == []


def test_a_run_folder_name_is_shown_as_its_time_and_any_other_name_as_it_is() -> None:
    assert index_changes.run_time_label("2024-05-01T12-34-56Z") == "2024-05-01 12:34:56 UTC"
    assert index_changes.run_time_label("2024-05-01T12-34-56Z.002") == "2024-05-01T12-34-56Z.002"


SINCE = {"previous_run": "2024-05-01T12-34-56Z", "gone_audits": ["zeta"], "audits": {
    "alpha": {"state": "compared", "baseline_run": "2024-05-01T12-34-56Z", "changes": [
        {"audit": "alpha", "check": "a1", "old_status": "quirk", "new_status": "defect"},
        {"audit": "alpha", "check": "a2", "old_status": "pass", "new_status": "pass", "old_observed": 1,
         "new_observed": 2}]},
    "beta": {"state": "compared", "baseline_run": "2024-05-01T12-34-56Z", "changes": [
        {"audit": "beta", "check": "b<1>", "old_status": None, "new_status": "quirk"}]},
    "gamma": {"state": "new"}, "delta": {"state": "failed"},
    "eps": {"state": "unreadable", "baseline_run": "2024-05-01T12-34-56Z", "reason": "ParameterError: <bad>"},
    "quiet": {"state": "compared", "baseline_run": "2024-05-01T12-34-56Z", "changes": []}}}


def test_the_since_line_counts_changes_names_audits_by_state_and_lists_each_change() -> None:
    status = '<span class="changed status" title="since the previous run">'
    assert index_changes.since_previous_markup(SINCE) == (
        '<section class="since" id="since-previous"><p><b>Since the previous run (2024-05-01 12:34:56 UTC):</b> '
        "3 checks changed in 2 audits · new audits: gamma · failed this run (last good findings shown): delta · "
        "history unreadable: eps · no longer listed: zeta</p><details><summary>which checks</summary><ul>"
        f'<li><a href="#audit-alpha"><code>alpha</code></a> <code>a1</code> {status}changed: quirk → defect</span></li>'
        '<li><a href="#audit-alpha"><code>alpha</code></a> <code>a2</code> '
        '<span class="changed" title="since the previous run">observed changed</span></li>'
        f'<li><a href="#audit-beta"><code>beta</code></a> <code>b&lt;1&gt;</code> {status}new check</span></li>'
        "<li><code>eps</code>: ParameterError: &lt;bad&gt;</li></ul></details></section>")


def test_one_change_in_one_audit_and_no_change_at_all() -> None:
    one = {"previous_run": "2024-05-01T12-34-56Z", "audits": {"beta": SINCE["audits"]["beta"],
                                                              "quiet": SINCE["audits"]["quiet"]}}
    assert "<b>Since the previous run (2024-05-01 12:34:56 UTC):</b> 1 check changed</p><details>" in \
        index_changes.since_previous_markup(one)
    none = {"previous_run": "2024-05-01T12-34-56Z", "audits": {"quiet": SINCE["audits"]["quiet"]}}
    assert index_changes.since_previous_markup(none) == (
        '<section class="since" id="since-previous"><p><b>Since the previous run (2024-05-01 12:34:56 UTC):</b> '
        "no check changed</p></section>")
    assert index_changes.since_previous_markup(None) == (
        '<section class="since" id="since-previous"><p><b>Since the previous run:</b> no previous run is '
        "recorded (first run): nothing to compare yet.</p></section>")


def test_a_check_s_change_shows_old_and_new_status_and_observed() -> None:
    assert index_changes.check_change_markup(None) == ""
    new = CheckChange("a", "c", None, "quirk", None, {"n": 1})
    assert index_changes.check_change_markup(new) == (
        '<br><span class="changed status" title="since the previous run">new check</span> '
        '<details class="change-detail"><summary>old → new</summary><div>status: — → quirk</div>'
        "<div>observed was:</div>" + value_lines(None, 160) + "<div>observed now:</div>"
        + value_lines({"n": 1}, 160) + "</details>")
    gone = CheckChange("a", "c", "defect", None)
    assert "<div>status: defect → —</div></details>" in index_changes.check_change_markup(gone)


def test_observed_mappings_differ_key_by_key_with_absent_keys_named() -> None:
    long_text = "x" * 300
    old = {"kept": 1, "moved": 2, "dropped": 3, "long": "a"}
    new = {"kept": 1, "moved": 4, "long": long_text, "added": 5}
    markup = index_changes.check_change_markup(CheckChange("a", "c", "pass", "pass", old, new))
    assert markup.endswith(
        '<details class="change-detail"><summary>old → new</summary><div>observed:</div>'
        '<div class="kv"><span class="k">moved</span>: 2 → 4</div>'
        '<div class="kv"><span class="k">dropped</span>: 3 → (absent)</div>'
        f'<div class="kv"><span class="k">long</span>: a → {"x" * 159}…</div>'
        '<div class="kv"><span class="k">added</span>: (absent) → 5</div></details>')
    # a mapping that became a number is no key-by-key change
    assert "<div>observed was:</div>" in index_changes.check_change_markup(CheckChange("a", "c", "pass", "pass",
                                                                                       old, 7))


def test_an_audit_s_note_says_what_it_was_compared_with_and_what_changed() -> None:
    note = index_changes.audit_change_note
    assert note(None, "alpha") == "" and note({"previous_run": None, "audits": {}}, "alpha") == ""
    assert note(SINCE, "not_run_now") == ""
    assert note(SINCE, "gamma") == "new since the previous run: nothing to compare"
    assert note(SINCE, "delta") == "failed this run: the last good findings are shown, nothing new to compare"
    assert note(SINCE, "eps") == "its recorded findings could not be read: ParameterError: <bad>"
    assert note({"previous_run": "r", "audits": {"x": {"state": "unreadable"}}}, "x") == \
        "its recorded findings could not be read: "
    assert note(SINCE, "alpha") == "2 checks changed since the previous run"
    assert note(SINCE, "quiet") == "no check changed since the previous run"
    older = {"previous_run": "2024-05-02T00-00-00Z", "audits": {"beta": {
        "state": "compared", "baseline_run": "2024-05-01T12-34-56Z", "changes": [
            {"audit": "beta", "check": "b1", "old_status": "quirk", "new_status": None},
            {"audit": "beta", "check": "b2", "old_status": "quirk", "new_status": None},
            {"audit": "beta", "check": "b3", "old_status": None, "new_status": "quirk"}]},
        "one": {"state": "compared", "baseline_run": "2024-05-02T00-00-00Z",
                "changes": [{"audit": "one", "check": "c", "old_status": "pass", "new_status": "quirk"}]}}}
    assert note(older, "beta") == "3 checks changed since its last recorded run (2024-05-01 12:34:56 UTC); gone: b1, b2"
    assert note(older, "one") == "1 check changed since the previous run"
    assert note({"previous_run": "r", "audits": {"x": {"state": "compared", "baseline_run": "r"}}}, "x") == \
        "no check changed since the previous run"


def test_several_audits_in_one_state_are_listed_together() -> None:
    since = {"previous_run": "2024-05-01T12-34-56Z",
             "audits": {"a": {"state": "new"}, "b": {"state": "new"}, "c": {"state": "unreadable"}}}
    assert index_changes.since_previous_markup(since) == (
        '<section class="since" id="since-previous"><p><b>Since the previous run (2024-05-01 12:34:56 UTC):</b> '
        "no check changed · new audits: a, b · history unreadable: c</p><details><summary>which checks</summary>"
        "<ul><li><code>c</code>: </li></ul></details></section>")


def test_a_long_observed_value_is_cut_at_the_change_limit() -> None:
    markup = index_changes.check_change_markup(CheckChange("a", "c", "pass", "pass", "y" * 300, "z" * 300))
    # shown cut, the whole value in the hover title
    assert '">' + "y" * 159 + "…</span>" in markup and '">' + "z" * 159 + "…</span>" in markup
