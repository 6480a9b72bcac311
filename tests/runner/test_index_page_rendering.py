"""What the reports index tells a user: the digest of each audit's findings, the totals, and the page's words."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from audit_lib.report import page
from audit_lib.report.show import status_badge
from audit_lib.report.split import split_markup
from audit_lib.report.values import CELL_TEXT_LIMIT, esc, value_lines, value_text
from audit_lib.runner import index_changes, index_page
from audit_lib.runner.history import CheckChange
from audit_lib.runner.index_page import render_index, write_index_and_summary


def _write(path: Path, payload: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(payload if isinstance(payload, str) else json.dumps(payload), encoding="utf-8")


@pytest.fixture()
def reports(tmp_path: Path) -> Path:
    folder = tmp_path / "reports"
    folder.mkdir()
    return folder


FINDINGS = {
    "synthetic": False, "params": {"dataset": "humaneval", "samples_path": ""},
    "provenance": [{"file": "a", "synthetic": True}, {"file": "b", "synthetic": False}, "not a mapping"],
    "stamp": {"cpus": 2, "load_start": 5.0, "load_end": 1.0},
    "checks": [
        {"id": "alpha", "title": "Alpha", "status": "defect", "observed": 3, "expected": 0,
         "summary": "Three tasks are wrong. More text.", "details_total": 1234,
         "meta": {"missing": ["file:x"], "rejected": {"y": "bad"}, "cost": {"cpu_s": 1.0},
                  "verdict_cache": {"hits": 2}}},
        {"id": "beta", "status": "pass", "finding": "Fine.", "summary": "All good. Really.", "synthetic": True},
        {"id": "gamma", "status": "pass", "meta": None},
    ],
}


def test_an_audits_findings_are_digested_field_by_field(reports: Path) -> None:
    _write(reports / "demo.findings.json", FINDINGS)
    _write(reports / "demo" / "alpha.csv", "a\n1\n")
    digest = index_page._findings_digest(reports, {"audit": "demo", "files": {"findings": "demo.findings.json"}})
    assert digest["checks"][0] == {
        "id": "alpha", "title": "Alpha", "status": "defect", "observed": 3, "expected": 0,
        "summary": "Three tasks are wrong. More text.", "finding": "Three tasks are wrong.", "synthetic": False,
        "details_total": 1234, "missing": ["file:x"], "rejected": {"y": "bad"}, "cost": {"cpu_s": 1.0},
        "verdict_cache": {"hits": 2}, "csv": "demo/alpha.csv"}
    assert digest["checks"][1] == {
        "id": "beta", "title": "", "status": "pass", "observed": None, "expected": None,
        "summary": "All good. Really.", "finding": "Fine.", "synthetic": True, "details_total": 0,
        "missing": [], "rejected": {}, "cost": None, "verdict_cache": None, "csv": None}
    assert (digest["checks"][2]["finding"], digest["checks"][2]["summary"]) == ("", "")
    assert digest["status_counts"] == {"pass": 2, "quirk": 0, "defect": 1, "error": 0, "skipped": 0}
    assert (digest["synthetic"], digest["provenance_files"], digest["effective_params"]) == (
        False, 3, {"dataset": "humaneval", "samples_path": ""})
    assert (digest["overload"], digest["stamped"]) == ([5.0, 2], True)


def test_every_check_is_synthetic_when_every_input_is(reports: Path) -> None:
    findings = dict(FINDINGS, provenance=[{"synthetic": True}, {"synthetic": True}], stamp=None, synthetic=True)
    _write(reports / "demo.findings.json", findings)
    digest = index_page._findings_digest(reports, {"audit": "demo", "files": {"last_good_findings":
                                                                                "demo.findings.json"}})
    assert [c["synthetic"] for c in digest["checks"]] == [True, True, True]
    assert (digest["synthetic"], digest["overload"], digest["stamped"]) == (True, None, False)
    _write(reports / "none.findings.json", dict(FINDINGS, provenance=[]))
    digest = index_page._findings_digest(reports, {"audit": "none", "files": {"findings": "none.findings.json"}})
    assert [c["synthetic"] for c in digest["checks"]] == [False, True, False]


def test_an_audit_without_findings_has_no_checks(reports: Path) -> None:
    empty = {"checks": [], "status_counts": {}, "synthetic": False, "provenance_files": 0, "effective_params": None}
    assert index_page._findings_digest(reports, {"audit": "gone", "files": {"findings": "gone.json"}}) == empty
    assert index_page._findings_digest(reports, {"audit": "gone"}) == empty
    _write(reports / "bare.findings.json", {"synthetic": True})
    bare = index_page._findings_digest(reports, {"audit": "bare", "files": {"findings": "bare.findings.json"}})
    assert (bare["checks"], bare["synthetic"]) == ([], True)


def test_totals_add_every_audits_counts() -> None:
    totals = index_page._totals([{"status": "failed", "status_counts": {"defect": 2, "pass": 1}},
                                 {"status": "ok", "status_counts": {"defect": 1, "odd": 4}}, {}])
    assert totals == {"pass": 1, "quirk": 0, "defect": 3, "error": 0, "skipped": 0, "audits": 3,
                      "failed_audits": 1, "odd": 4}


def _outcome(audit: str, **extra: Any) -> dict[str, Any]:
    return dict({"audit": audit, "notebook": f"nb_{audit}", "params": {}, "duration_s": 1.25, "failure": None,
                 "files": {"findings": f"{audit}.findings.json", "html": f"{audit}.html"}, "status": "ok"}, **extra)


def test_the_summary_keeps_earlier_audits_whose_reports_remain(reports: Path) -> None:
    _write(reports / "summary.json", {"audits": [
        {"audit": "kept", "files": {"html": "kept.html"}, "status": "ok"},
        {"audit": "dropped", "files": {"html": "dropped.html"}}, {"no audit": 1}]})
    _write(reports / "kept.html", "<html></html>")
    _write(reports / "now.findings.json", {"checks": [{"id": "c", "status": "quirk", "summary": "Odd."}]})
    _write(reports / "bad.findings.json", {"checks": []})
    outcomes = [_outcome("now"), _outcome("bad", status="failed")]
    index_path, summary_path, checks = write_index_and_summary(reports, outcomes, {"kernel": "k"})
    assert (index_path.name, summary_path.name) == ("index.html", "summary.json")
    summary = json.loads(summary_path.read_text())
    assert [a["audit"] for a in summary["audits"]] == ["bad", "kept", "now"]
    assert [a["from_earlier_run"] for a in summary["audits"]] == [False, True, False]
    assert (summary["audits_run"], summary["failed"], summary["run"], summary["stamp"]) == (
        ["now", "bad"], ["bad"], {"kernel": "k"}, None)
    assert summary["totals"] == {"pass": 0, "quirk": 1, "defect": 0, "error": 0, "skipped": 0, "audits": 3,
                                 "failed_audits": 1}
    assert list(checks) == ["now", "bad"] and [c["id"] for c in checks["now"]] == ["c"] and checks["bad"] == ()
    assert summary["generated_at"] == summary["audits"][2]["generated_at"]
    assert "generated_at" not in summary["audits"][1]


def test_a_damaged_summary_is_no_earlier_run(reports: Path) -> None:
    for damaged in ("{", "[]", '{"audits": 3}', '{"audits": ["audit", 3]}', '"audit"'):
        _write(reports / "summary.json", damaged)
        assert index_page._load_previous(reports / "summary.json") == {}
    assert index_page._load_previous(reports / "absent.json") == {}


def _summary(audits: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return dict({"generated_at": "2026-01-02T03:04:05Z", "run": {"kernel": "benchaudit"}, "audits": audits,
                 "totals": index_page._totals(audits)}, **extra)


def _check(check_id: str, status: str, **extra: Any) -> dict[str, Any]:
    return dict({"id": check_id, "title": f"T {check_id}", "status": status, "summary": f"{check_id} says.",
                 "finding": f"{check_id} says.", "observed": None, "expected": None}, **extra)


def test_the_header_counts_audits_and_names_kernel_and_mirror(reports: Path) -> None:
    audit = {"audit": "a", "status": "ok", "checks": [_check("x", "defect")], "status_counts": {"defect": 1}}
    html = render_index(_summary([audit]), reports)
    assert ("Generated 2026-01-02T03:04:05Z · kernel <code>benchaudit</code> · mirror <code>none (cache and "
            f"download only)</code> · 1 audit, 0 failed · checks: {status_badge('defect')}&nbsp;1</p>") in html
    html = render_index(_summary([audit, dict(audit, audit="b", status="failed")], run={"mirror": "/m"}), reports)
    assert "kernel <code>?</code> · mirror <code>&lt;mirror&gt;</code> · 2 audits, 1 failed" in html
    assert "SYNTHETIC" not in html and "This run was interrupted" not in html
    assert "0 audits, 0 failed · checks: </p>" in render_index({}, reports)


def test_an_interrupted_run_names_what_it_did_not_finish(reports: Path) -> None:
    html = render_index(_summary([], run={"interrupted": ["a<b", "c"]}), reports)
    assert ('<div class="failure"><b>This run was interrupted.</b> Audits it did not finish: <code>a&lt;b</code>, '
            "<code>c</code>; any report of theirs shown here is from an earlier run.</div>") in html
    assert "did not finish: none;" in render_index(_summary([], run={"interrupted": []}), reports)


def _overview_row(html: str, audit: str) -> str:
    start = html.index(f'<tr><td><a href="#audit-{audit}">')
    return html[start:html.index("</tr>", start)]


def test_the_overview_row_gives_worst_status_counts_time_and_files(reports: Path) -> None:
    _write(reports / "a.html", "")
    _write(reports / "a.findings.json", "{}")
    _write(reports / "a.old.html", "")
    audits = [
        {"audit": "a", "status": "ok", "duration_s": 2.25, "synthetic": True, "from_earlier_run": True,
         "reused_from": "R1", "checks": [_check("x", "quirk"), _check("y", "pass")],
         "status_counts": {"pass": 1, "quirk": 1},
         "files": {"html": "a.html", "findings": "a.findings.json", "notebook": "missing.ipynb",
                   "last_good_html": "a.old.html"}},
        {"audit": "b", "status": "failed", "checks": [_check("x", "pass")], "status_counts": {}},
        {"audit": "c", "status": "ok", "checks": []},
        {"audit": "data_inventory", "status": "ok", "checks": [_check("file.1", "defect")] * 2,
         "status_counts": {"defect": 2}},
    ]
    html = render_index(_summary(audits), reports)
    row = _overview_row(html, "a")
    assert row == (
        '<tr><td><a href="#audit-a"><code>a</code></a> <b class="synthetic">SYNTHETIC</b></td>'
        f'<td data-v="2">{status_badge("quirk")}</td><td>2 checks: {status_badge("pass")}&nbsp;1 '
        f'{status_badge("quirk")}&nbsp;1</td><td data-v="2.25">2.2 s (earlier run) (report reused: unchanged)</td>'
        '<td><a class="file-html" href="a.html">report</a> · <a class="file-findings" href="a.findings.json">findings '
        'JSON</a> · <a class="file-last_good_html" href="a.old.html">last good report (STALE)</a></td>')
    assert (f'<td data-v="5">{status_badge("failed")}</td><td>1 checks: —</td><td data-v="0.0">0.0 s</td>'
            "<td>—</td>") in _overview_row(html, "b")
    assert f'<td data-v="1">{status_badge("skipped")}</td><td>0 checks: —</td>' in _overview_row(html, "c")
    assert "<td>2 files: " in _overview_row(html, "data_inventory")
    assert "Audits marked SYNTHETIC use generated data where no real data is public" in html


def test_the_inventory_is_recognised_by_name_or_by_many_file_checks() -> None:
    files = [{"id": f"file.{n}"} for n in range(21)]
    assert index_page._is_inventory({"audit": "data_inventory"})
    assert index_page._is_inventory({"audit": "x", "checks": files})
    assert not index_page._is_inventory({"audit": "x", "checks": files[:20]})
    assert not index_page._is_inventory({"audit": "x", "checks": files + [{"id": "other"}]})


def _section(html: str, audit: str) -> str:
    start = html.index(f'<details class="audit" id="audit-{audit}"')
    return html[start:]


def test_a_failed_audit_section_opens_on_its_failure(reports: Path) -> None:
    failure = {"cell": 4, "execution_count": 7, "error_type": "ValueError", "message": "x < y",
               "cell_source": "raise ValueError()"}
    audit = {"audit": "f", "status": "failed", "notebook": "nb_f", "failure": failure, "checks": [],
             "params": {"dataset": "mbpp", "path": ""}}
    section = _section(render_index(_summary([audit]), reports), "f")
    assert section.startswith(f'<details class="audit" id="audit-f" open><summary><code>f</code> '
                              f"{status_badge('failed')} </summary>")
    assert ('<p class="note">notebook <code>nb_f.ipynb</code> · parameters: dataset: mbpp · path: — · —</p>'
            '<div class="failure"><b>The notebook failed at cell 4 (In [7]):</b> <code>ValueError: x &lt; y</code>'
            "<pre>raise ValueError()</pre></div></details>") in section
    outside = dict(audit, failure=dict(failure, cell=None, execution_count=None, cell_source=""),
                   effective_params={})
    section = _section(render_index(_summary([outside]), reports), "f")
    assert ("parameters: defaults · —</p><div class=\"failure\"><b>The notebook failed at outside any cell:</b> "
            "<code>ValueError: x &lt; y</code></div></details>") in section
    assert "No checks recorded." not in section


def test_passing_checks_are_collapsed_and_attention_comes_first(reports: Path) -> None:
    _write(reports / "p" / "q.csv", "")
    audit = {"audit": "p", "status": "ok", "notebook": "nb", "synthetic": True, "reused_from": "R<1>",
             "effective_params": {"n": 3}, "status_counts": {"pass": 2, "quirk": 1},
             "checks": [_check("ok1", "pass"), _check("q", "quirk", csv="p/q.csv", details_total=1234, synthetic=True,
                                                       observed={"n": 2}, expected={"n": 0}),
                        _check("ok2", "pass")]}
    section = _section(render_index(_summary([audit]), reports), "p")
    assert section.startswith(f'<details class="audit" id="audit-p"><summary><code>p</code>  <b>SYNTHETIC DATA</b> '
                              f"{status_badge('pass')}&nbsp;2 {status_badge('quirk')}&nbsp;1</summary>")
    assert ("parameters: n: 3 · — · <b>report reused from run R&lt;1&gt;</b>: its code, data and parameters are "
            "unchanged, so the notebook was not run again (<code>run --no-cache</code> runs it)</p>") in section
    attention, passing = section.split("<details><summary>2 passing checks</summary>")
    assert "<code>q</code><br>T q" in attention and "ok1" not in attention
    assert "<code>ok1</code><br>T ok1" in passing and "<code>ok2</code>" in passing
    assert (f'<td data-v="2">{status_badge("quirk")} <b>synthetic</b></td>') in attention
    assert ('<a class="check-link" href="#audit-p#check-q">report</a> · '
            '<a class="csv" href="p/q.csv" title="1,234 rows">CSV</a></td></tr>') in attention
    assert "<td>q says.</td>" in attention
    one = dict(audit, checks=audit["checks"][:2], synthetic=False, reused_from=None)
    section = _section(render_index(_summary([one]), reports), "p")
    assert "<details><summary>1 passing check</summary>" in section and "report reused" not in section
    assert "SYNTHETIC DATA" not in section


def test_an_audit_without_checks_or_failure_says_so(reports: Path) -> None:
    html = render_index(_summary([{"audit": "e", "status": "ok"}]), reports)
    assert '<p class="note">No checks recorded.</p></details>' in _section(html, "e")
    assert '<p class="note">notebook <code>.ipynb</code> · parameters: defaults · —</p>' in _section(html, "e")
    assert '<tr><td><a href="#audit-e"><code>e</code></a></td>' in html
    assert index_page._interrupted_markup(None) == ""
    assert "<table class=\"findings" not in _section(html, "e")


def test_the_inventory_lists_every_file_check_in_one_table(reports: Path) -> None:
    _write(reports / "inv.html", "")
    checks = [_check(f"file.{n}", "pass") for n in range(3)] + [_check("file.9", "defect")]
    audit = {"audit": "data_inventory", "status": "ok", "checks": checks, "files": {"html": "inv.html"}}
    section = _section(render_index(_summary([audit]), reports), "data_inventory")
    assert "passing check" not in section and section.count("<tr>") == 5
    assert 'href="inv.html#check-file.0"' in section


SPLIT = {"unit": "tasks", "deterministic": 17, "timing_confirmed": 5, "timing_borderline": 1, "timing_not_failing": 3}
LOADED = {"cpus": 2, "load_start": 1.5, "load_end": 3.25}


def _since(audit: str, *changes: CheckChange) -> dict[str, Any]:
    return {"audits": {audit: {"changes": [vars(c) for c in changes]}}}


def test_the_page_passes_each_part_what_it_says(reports: Path) -> None:
    _write(reports / "b.html", "")
    changed = CheckChange("a", "calm", "quirk", "pass", 1, 0)
    checks_a = [_check("calm", "pass"), _check("bad", "defect", observed={"n": 2}, expected={"n": 0},
                                                 failure_split=SPLIT),
                _check("odd", "quirk"), _check("err", "error"), _check("skip", "skipped")]
    audits = [
        {"audit": "a", "status": "ok", "checks": checks_a, "status_counts": {"pass": 1, "defect": 1}, "stamped": True,
         "overload": [3.25, 2], "files": {"last_good_findings": "a.old.json"}},
        {"audit": "b", "status": "failed", "checks": [_check("q", "quirk")], "files": {"html": "b.html"},
         "reused_from": "R1"},
    ]
    since = _since("a", changed)
    summary = _summary(audits, since_previous=since, stamp=LOADED)
    html = render_index(summary, reports)
    alerts = (page.alerts_for(checks_a, audit="a", href="#audit-a#check-{id}")
              + page.alerts_for(audits[1]["checks"], audit="b (its last good run; the latest failed)",
                                href="b.html#check-{id}"))
    assert page.alerts_markup(alerts, not_run={"error": 1, "skipped": 1}, failed=["b"], finished=1) in html
    assert page.stamp_markup(LOADED, ran_checks=True) in html
    assert index_changes.since_previous_markup(since) in html
    assert '<span class="changed">1 changed</span></td>' in _overview_row(html, "a")
    section = _section(html, "a")
    assert "<span class=changed>1 changed</span></summary>" in section
    attention = section[:section.index("</table>")]
    assert "<code>calm</code><br>T calm" + index_changes.check_change_markup(changed) in attention
    row = attention[attention.index("<code>bad</code>"):]
    row = row[:row.index("</tr>")]
    split = split_markup(SPLIT, where="a.old.json, check bad", overload=(3.25, 2))
    assert f"<td>bad says.{split}</td><td>{value_lines({'n': 2}, 160)}</td><td>{value_lines({'n': 0}, 160)}</td>" \
        in row
    assert "<code>q</code><br>T q" in _section(html, "b")
    bad_split = dict(SPLIT, timing_confirmed=None)
    for files, where in (({"findings": "a.json", "last_good_findings": "a.old.json"}, "a.json"),
                         ({"last_good_findings": "a.old.json"}, "a.old.json"), ({}, "a.findings.json")):
        broken = dict(audits[0], files=files, checks=[_check("bad", "defect", failure_split=bad_split)])
        html = render_index(_summary([broken]), reports)
        assert split_markup(bad_split, where=f"{where}, check bad") in html
        assert f"{where}, check bad: unreadable" in html
    # an unstamped audit of this run takes the batch's load; one from an earlier run keeps its own
    unstamped = dict(audits[0], stamped=False, overload=None, files={"findings": "a.json"})
    html = render_index(_summary([unstamped], stamp=LOADED), reports)
    assert split_markup(SPLIT, where="a.json, check bad", overload=(3.25, 2)) in html
    earlier = dict(unstamped, from_earlier_run=True, files={})
    html = render_index(_summary([earlier], stamp=LOADED), reports)
    assert split_markup(SPLIT, where="a.findings.json, check bad", overload=None) in html


def test_a_run_that_reused_every_report_says_its_load_decided_nothing(reports: Path) -> None:
    reused = {"audit": "a", "status": "ok", "checks": [], "reused_from": "R1"}
    html = render_index(_summary([reused], run={"stamp": LOADED}), reports)
    assert page.stamp_markup(LOADED, ran_checks=False) in html
    assert page.stamp_markup(LOADED, ran_checks=False) != page.stamp_markup(LOADED, ran_checks=True)
    assert page.stamp_markup(LOADED, ran_checks=True) in render_index(_summary([], run={"stamp": LOADED}), reports)


def test_a_check_row_shows_the_raw_values_and_defaults(reports: Path) -> None:
    long_value = {"text": "x" * 400}
    check = {"id": "c", "status": "strange", "observed": long_value, "expected": [1, 2], "csv": "c.csv"}
    table = index_page._checks_table([check], "r.html", {}, None, "f.json")
    long_finding = "A finding. " * 60
    other = {"id": "d", "status": "pass", "finding": long_finding, "expected": long_value}
    two = index_page._checks_table([check, other], "r.html", {}, None, "f.json")
    assert "</tr><tr>" in two
    assert f"<td>{esc(value_text(long_finding, CELL_TEXT_LIMIT))}</td><td>{value_lines(None, 160)}</td>" \
        f"<td>{value_lines(long_value, 160)}</td>" in two
    assert value_text(long_finding, CELL_TEXT_LIMIT) != value_text(long_finding)
    assert f'<td data-v="0">{status_badge("strange")}</td><td><code>c</code><br></td>' in table
    assert f"<td>{value_lines(long_value, 160)}</td><td>{value_lines([1, 2], 160)}</td>" in table
    assert 'title="0 rows">CSV</a>' in table
    assert table.startswith('<div class="table-wrap"><table class="findings sortable"><thead><tr><th>status</th>'
                            "<th>check</th><th>finding</th><th>observed</th><th>expected</th><th>evidence</th>"
                            "</tr></thead><tbody><tr>")
    assert table.endswith("</tr></tbody></table></div>")
    assert index_page._checks_table([], "r.html", {}, None, "f.json") == ""


def test_the_overview_links_every_file_kind_and_keeps_the_table_frame(reports: Path) -> None:
    for name in ("a.html", "a.ipynb", "a.json", "a.old.html", "a.failed.html"):
        _write(reports / name, "")
    entry = {"audit": "a", "files": {"html": "a.html", "notebook": "a.ipynb", "findings": "a.json",
                                     "last_good_html": "a.old.html", "failed_html": "a.failed.html"}}
    assert index_page._file_links(entry, reports) == (
        '<a class="file-html" href="a.html">report</a> · <a class="file-notebook" href="a.ipynb">notebook</a> · '
        '<a class="file-findings" href="a.json">findings JSON</a> · <a class="file-last_good_html" '
        'href="a.old.html">last good report (STALE)</a> · <a class="file-failed_html" href="a.failed.html">failed '
        "run</a>")
    table = index_page._overview_table([dict(entry, checks=[]), dict(entry, audit="b", checks=[])], reports, None)
    assert table.startswith('<div class="table-wrap"><table class="audits sortable"><thead><tr><th>audit</th>'
                            "<th>worst</th><th>checks</th><th>run time</th><th>files</th></tr></thead><tbody><tr>")
    assert "</tr><tr>" in table and table.endswith("</tr></tbody></table></div>")
    assert index_page._shown_params({"params": {"p": "y" * 130}}) == f"p: {'y' * 119}…"


def test_real_findings_alert_before_synthetic_ones_and_the_inventory_last(reports: Path) -> None:
    audits = [{"audit": "data_inventory", "status": "ok", "checks": [_check("file.1", "defect")]},
              {"audit": "made_up", "status": "ok", "synthetic": True, "checks": [_check("s", "defect")]},
              {"audit": "real", "status": "ok", "checks": [_check("r", "quirk")]}]
    html = render_index(_summary(audits, totals={"audits": 3, "quirk": 1, "defect": 2}), reports)
    alerts = (page.alerts_for(audits[2]["checks"], audit="real", href="#audit-real#check-{id}")
              + page.alerts_for(audits[1]["checks"], audit="made_up", href="#audit-made_up#check-{id}")
              + page.alerts_for(audits[0]["checks"], audit="data_inventory",
                                href="#audit-data_inventory#check-{id}"))
    assert page.alerts_markup(alerts, not_run={"error": 0, "skipped": 0}, failed=[], finished=3) in html
    assert (f"checks: {status_badge('quirk')}&nbsp;1 {status_badge('defect')}&nbsp;2</p>") in html
    assert "<h2>Audits</h2><div class=\"table-wrap\"><table class=\"audits sortable\">" in html


def test_the_summary_is_stamped_with_the_utc_time_it_was_written(reports: Path) -> None:
    _, summary_path, _ = write_index_and_summary(reports, [], {})
    summary = json.loads(summary_path.read_text())
    assert re.fullmatch(r"20\d\d-[01]\d-[0-3]\dT[0-2]\d:[0-5]\d:[0-5]\dZ", summary["generated_at"])
    assert f"Generated {summary['generated_at']} · kernel" in (reports / "index.html").read_text()


def test_with_no_alert_the_page_says_whether_any_audit_finished(reports: Path) -> None:
    ok = {"audit": "ok", "status": "ok", "checks": [_check("p", "pass")]}
    broken = {"audit": "broken", "status": "failed", "checks": []}
    some = render_index(_summary([ok, broken]), reports)
    assert "No defects or quirks found in the audits that finished." in some
    assert "No audit finished: nothing was judged." not in some
    assert "No audit finished: nothing was judged." in render_index(_summary([broken]), reports)
