"""Reusing an unchanged audit's last report: only when code, data, parameters and the report itself are unchanged."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from notebook_factory import plugin_for, write_notebook

from audit_lib import runner
from audit_lib.runner import reuse
from audit_lib.runner.plan import AuditJob

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
    # (another parameter, the code, the data: test_the_fingerprint_follows_...)


def job(tmp_path: Path, **changes: object) -> AuditJob:
    notebook = tmp_path / "nb" / "steady.ipynb"
    if not notebook.is_file():  # written once: each writing gives its cells new ids
        write_notebook(tmp_path / "nb", "steady", "limit = 1\n", CELLS)
    fields = dict(audit="steady", notebook=str(notebook),
                  params={"limit": 1}, kernel_name="python3", reports_dir=str(tmp_path / "reports"),
                  env={"AUDIT_MIRROR": str(tmp_path / "mirror")}, with_code=False, cell_timeout_s=None,
                  run_id="RUN-1")
    return AuditJob(**{**fields, **changes})


def test_the_fingerprint_follows_code_notebook_parameters_mirror_and_parameter_files(tmp_path: Path) -> None:
    (tmp_path / "mirror" / "humaneval").mkdir(parents=True)
    data = tmp_path / "mirror" / "humaneval" / "HumanEval.jsonl"
    data.write_text("one\n")
    samples = tmp_path / "samples.jsonl"
    samples.write_text("a\n")
    base = job(tmp_path, params={"limit": 1, "samples": str(samples)})
    before = reuse.fingerprint(base, code_digest="code")
    assert reuse.fingerprint(base, code_digest="code") == before
    assert reuse.fingerprint(base, code_digest="code, edited") != before
    assert reuse.fingerprint(job(tmp_path, params={"limit": 2, "samples": str(samples)}), code_digest="code") \
        != before
    assert reuse.fingerprint(job(tmp_path, params=base.params, with_code=True), code_digest="code") != before
    for changed in (data, samples, Path(base.notebook)):
        original = changed.read_bytes()
        changed.write_bytes(original + b" ")
        assert reuse.fingerprint(base, code_digest="code") != before, changed
        changed.write_bytes(original)
    assert reuse.fingerprint(base, code_digest="code") == before
    assert reuse.package_digest() == reuse.package_digest()


def test_a_changed_input_file_named_in_the_provenance_runs_the_audit_again(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    reports.mkdir()
    copied = tmp_path / "data_cache" / "humaneval.jsonl"
    copied.parent.mkdir()
    copied.write_text("rows\n")
    import hashlib  # noqa: PLC0415

    provenance = [{"file": "humaneval.jsonl", "location": str(copied),
                   "sha256": hashlib.sha256(copied.read_bytes()).hexdigest()}]
    (reports / "steady.findings.json").write_text(json.dumps({"audit": "steady", "provenance": provenance}))
    (reports / "steady.html").write_text("<html></html>")
    audit = job(tmp_path)
    reuse.remember(audit, "print", {"findings": "steady.findings.json", "html": "steady.html"})
    assert reuse.reusable(audit, "print") is not None
    assert reuse.reusable(audit, "another print") is None
    copied.write_text("other rows\n")
    assert reuse.reusable(audit, "print") is None
    copied.write_text("rows\n")
    (reports / "steady.html").unlink()
    assert reuse.reusable(audit, "print") is None
    reuse.forget(audit)
    assert not reuse.record_path(reports, "steady").exists()


def test_a_report_with_an_error_or_a_skip_for_a_file_that_has_since_arrived_runs_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "data_cache"
    monkeypatch.setenv("AUDIT_DATA_CACHE", str(cache))
    reports = tmp_path / "reports"
    reports.mkdir()
    checks = [{"id": "rows", "status": "skipped", "meta": {"missing": ["lcb/rows.parquet", "param:samples"]}},
              {"id": "count", "status": "pass"}]
    findings = reports / "steady.findings.json"
    findings.write_text(json.dumps({"audit": "steady", "provenance": [], "checks": checks}))
    audit = job(tmp_path)
    reuse.remember(audit, "print", {"findings": "steady.findings.json"})
    assert reuse.reusable(audit, "print") is not None  # the file is still missing: the same report
    (cache / "lcb").mkdir(parents=True)
    (cache / "lcb" / "rows.parquet").write_bytes(b"rows")
    assert reuse.reusable(audit, "print") is None  # fetched since: run the check on it
    checks[0] = {"id": "rows", "status": "error", "summary": "ValueError"}
    findings.write_text(json.dumps({"audit": "steady", "provenance": [], "checks": checks}))
    reuse.remember(audit, "print", {"findings": "steady.findings.json"})
    assert reuse.reusable(audit, "print") is None
