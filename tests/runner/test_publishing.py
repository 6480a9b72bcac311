"""Publishing: a failed run never destroys a good report; run history, `diff`, JUnit output and the run stamp."""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from notebook_factory import plugin_for, write_notebook

from audit_lib import cli, runner
from audit_lib.runner import execute
from audit_lib.runner.history import diff_runs, run_folders
from audit_lib.runner.plan import plan_jobs

CELLS = [
    "from audit_lib.findings import Check, FindingsBuilder\n"
    "if fail:\n    raise RuntimeError('this run fails')\n"
    "builder = FindingsBuilder('flaky', {'fail': fail, 'limit': limit})\n"
    "builder.add(Check('count', 'count', 'defect' if limit > 2 else 'pass', observed=limit,\n"
    "                  details=[{'n': n} for n in range(limit)] if limit > 2 else []))\n"
    "builder.add(Check('absent', 'absent', 'skipped', summary='flaky/x.csv is not available',\n"
    "                  meta={'missing': ['flaky/x.csv']}))\n"
    "builder.add(Check('broken', 'broken', 'error', summary='ValueError: no'))\n"
    "builder.write()",
]


@pytest.fixture()
def plugins(tmp_path: Path) -> dict:
    notebook = write_notebook(tmp_path / "nb", "flaky", "fail = False\nlimit = 1\n", CELLS)
    return {"flaky": plugin_for(notebook)}


def run(plugins: dict, reports: Path, **params: str) -> runner.RunSummary:
    return runner.run_audits(["flaky"], list(params.items()), reports_dir=reports, plugins=plugins,
                             progress=io.StringIO())


def test_a_failed_run_keeps_the_last_good_report_and_marks_it_stale(plugins: dict, tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    good = run(plugins, reports, limit="3")
    assert not good.failed
    kept = {name: (reports / name).read_bytes() for name in ("flaky.html", "flaky.findings.json", "flaky.ipynb")}
    failed = run(plugins, reports, fail="true")
    assert failed.failed and failed.exit_code() == runner.EXIT_NOTEBOOK_FAILED
    assert {name: (reports / name).read_bytes() for name in kept} == kept
    assert (reports / "flaky.failed.html").is_file()
    outcome = failed.outcomes[0]
    assert outcome.files["last_good_html"] == "flaky.html" and outcome.files["failed_html"] == "flaky.failed.html"
    index = (reports / "index.html").read_text()
    assert "STALE" in index and "this run fails" in index
    again = run(plugins, reports, limit="1")
    assert not again.failed and not (reports / "flaky.failed.html").exists()


def alerts_section(reports: Path) -> str:
    index = (reports / "index.html").read_text()
    return index[index.index('<section class="alerts"'):index.index("</section>", index.index('class="alerts"'))]


def test_the_index_never_says_nothing_was_found_when_the_audit_failed(plugins: dict, tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    run(plugins, reports, fail="true")
    alerts = alerts_section(reports)
    assert "No defects or quirks found" not in alerts
    assert "No audit finished: nothing was judged." in alerts
    assert '1 audit failed and judged nothing in its latest run: <a href="#audit-flaky">flaky</a>' in alerts
    assert sorted(path.name for path in reports.iterdir()) == [  # a run leaves nothing behind: no lock, no staging
        "flaky.failed.html", "flaky.failed.ipynb", "index.html", "runs", "summary.json"]
    run(plugins, reports, limit="3")  # a defect
    run(plugins, reports, fail="true")
    alerts = alerts_section(reports)
    assert "flaky (its last good run; the latest failed)" in alerts and "1 defect" in alerts
    assert "1 audit failed" in alerts


def test_an_html_export_failure_never_replaces_the_last_good_report(plugins: dict, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    reports = tmp_path / "reports"
    run(plugins, reports, limit="3")
    kept = {name: (reports / name).read_bytes() for name in ("flaky.html", "flaky.findings.json", "flaky.ipynb")}
    [job] = plan_jobs(["flaky"], [("limit", "1")], reports_dir=reports, plugins=plugins)

    def export_fails(*args: object, **kwargs: object) -> None:
        raise OSError("nbconvert ran out of disk")

    monkeypatch.setattr(execute, "export_html", export_fails)
    for name, value in job.env.items():  # execute_job runs in a worker process normally; restore after it
        monkeypatch.setenv(name, value)
    outcome = execute.execute_job(job)
    assert not outcome.ok and outcome.failure is not None
    assert outcome.failure.error_type == "HTMLExportError.OSError" and "out of disk" in outcome.failure.message
    assert {name: (reports / name).read_bytes() for name in kept} == kept
    assert outcome.files == {"failed_notebook": "flaky.failed.ipynb", "last_good_html": "flaky.html",
                             "last_good_findings": "flaky.findings.json"}


def test_evidence_lives_in_a_per_audit_folder_replaced_only_by_a_good_run(plugins: dict, tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    run(plugins, reports, limit="4")
    evidence = reports / "flaky" / "count.csv"
    assert evidence.read_text().splitlines() == ["n", "0", "1", "2", "3"]
    assert not list(reports.glob("*.csv"))  # nothing loose in reports/
    assert 'href="flaky/count.csv"' in (reports / "index.html").read_text()
    run(plugins, reports, fail="true")
    assert evidence.read_text().splitlines() == ["n", "0", "1", "2", "3"]  # the last good run's evidence stays
    run(plugins, reports, limit="3")
    assert evidence.read_text().splitlines() == ["n", "0", "1", "2"]
    run(plugins, reports, limit="1")  # this run has no evidence: none of the previous run's is left to mislead
    assert not (reports / "flaky").exists()


def test_each_run_is_recorded_and_diff_shows_what_changed(plugins: dict, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    reports = tmp_path / "reports"
    run(plugins, reports, limit="1")
    run(plugins, reports, limit="3")
    folders = run_folders(reports)
    assert len(folders) == 2 and all((f / "flaky.findings.json").is_file() for f in folders)
    [change] = diff_runs(*folders)
    assert (change.check, change.old_status, change.new_status) == ("count", "pass", "defect")
    assert (change.old_observed, change.new_observed) == (1, 3)
    assert cli.main(["diff", "--reports-dir", str(reports)]) == 0
    out = capsys.readouterr().out
    assert "1 check(s) changed" in out and "~ flaky.count: pass -> defect" in out
    assert cli.main(["diff", str(folders[0]), str(folders[0])]) == 0
    assert "0 check(s) changed" in capsys.readouterr().out


def test_diff_without_two_runs_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["diff", "--reports-dir", str(tmp_path)]) == runner.EXIT_BAD_ARGUMENTS
    assert "fewer than two recorded runs" in capsys.readouterr().err


def test_junit_has_one_testcase_per_check(plugins: dict, tmp_path: Path) -> None:
    junit = tmp_path / "out" / "junit.xml"
    runner.run_audits(["flaky"], [("limit", "3")], reports_dir=tmp_path / "r", plugins=plugins,
                      progress=io.StringIO(), junit=junit)
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None and suite.get("name") == "flaky"
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors"), suite.get("skipped")) == ("3", "1", "1", "1")
    cases = {case.get("name"): case for case in suite.iter("testcase")}
    assert cases["count"].find("failure") is not None
    assert cases["broken"].find("error") is not None
    skipped = cases["absent"].find("skipped")
    assert skipped is not None and "flaky/x.csv" in skipped.get("message", "")


def test_a_failed_notebook_is_a_junit_error(plugins: dict, tmp_path: Path) -> None:
    junit = tmp_path / "junit.xml"
    runner.run_audits(["flaky"], [("fail", "true")], reports_dir=tmp_path / "r", plugins=plugins,
                      progress=io.StringIO(), junit=junit)
    [case] = ET.parse(junit).getroot().iter("testcase")
    error = case.find("error")
    assert case.get("name") == "notebook" and error is not None and "this run fails" in error.get("message", "")


def test_summary_carries_the_run_stamp(plugins: dict, tmp_path: Path) -> None:
    summary = run(plugins, tmp_path / "r")
    stamp = json.loads(summary.summary_path.read_text())["stamp"]
    for key in ("version", "commit", "dirty", "python", "cpu_model", "cpus", "workers", "load_start", "load_end",
                "wall_s", "packages", "overloaded"):
        assert key in stamp, key
    assert stamp["cpus"] >= 1 and stamp["workers"] >= 1 and stamp["wall_s"] > 0
    assert json.loads(summary.summary_path.read_text())["run"]["workers"] == stamp["workers"]
