"""Reusing an unchanged audit's last report end to end (the rules one by one: test_reuse_rules.py)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from notebook_factory import plugin_for, write_notebook

from audit_lib import runner
from audit_lib.runner import reuse

CELLS = [
    "from audit_lib.findings import Check, FindingsBuilder\n"
    "builder = FindingsBuilder('steady', {'limit': limit})\n"
    "builder.add(Check('count', 'count', 'pass', observed=limit))\n"
    "builder.write()",
]


@pytest.fixture()
def plugins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    monkeypatch.delenv("AUDIT_CACHE", raising=False)  # the suite turns reuse off
    notebook = write_notebook(tmp_path / "nb", "steady", "limit = 1\n", CELLS)
    return {"steady": plugin_for(notebook)}


def run(plugins: dict, reports: Path, *, no_cache: bool = False, **params: str) -> runner.AuditOutcome:
    summary = runner.run_audits(["steady"], list(params.items()), reports_dir=reports, plugins=plugins,
                                progress=io.StringIO(), no_cache=no_cache)
    assert not summary.failed
    return summary.outcomes[0]


def test_an_unchanged_audit_keeps_its_report_and_any_change_or_no_cache_runs_it(plugins: dict,
                                                                                tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    first = run(plugins, reports, limit="2")
    assert first.reused_from is None
    written = (reports / "steady.findings.json").read_bytes()
    record = json.loads(reuse.record_path(reports, "steady").read_text())
    again = run(plugins, reports, limit="2")
    assert again.reused_from == record["run_id"] and again.files["findings"] == "steady.findings.json"
    assert (reports / "steady.findings.json").read_bytes() == written
    summary = json.loads((reports / "summary.json").read_text())
    assert [entry["reused_from"] for entry in summary["audits"] if entry["audit"] == "steady"] == [record["run_id"]]
    assert f"report reused from run {record['run_id']}" in (reports / "index.html").read_text()
    assert run(plugins, reports, limit="2", no_cache=True).reused_from is None
    findings = reports / "steady.findings.json"
    findings.write_text(findings.read_text().replace('"observed": 2', '"observed": 4'))  # the report was edited
    assert run(plugins, reports, limit="2").reused_from is None
    assert json.loads(findings.read_text())["checks"][0]["observed"] == 2
    # (another parameter, the code, the data: test_reuse_rules.py)
