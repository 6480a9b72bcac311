"""Report reuse's rules without running a notebook: the fingerprint's inputs, the record, what stops a reuse."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from notebook_factory import write_notebook

from audit_lib.runner import reuse
from audit_lib.runner.plan import AuditJob

CELLS = [
    "from audit_lib.findings import Check, FindingsBuilder\n"
    "builder = FindingsBuilder('steady', {'limit': limit})\n"
    "builder.add(Check('count', 'count', 'pass', observed=limit))\n"
    "builder.write()",
]


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


# ------------------------------------------------------------------------------------------------ the record's rules


def published(tmp_path: Path, checks: list | None = None, **files: str) -> tuple[AuditJob, Path]:
    """A report in `reports/` (findings plus the named files) and its job."""
    reports = tmp_path / "reports"
    reports.mkdir(exist_ok=True)
    (reports / "steady.findings.json").write_text(json.dumps({"audit": "steady", "checks": checks or []}))
    for name, text in files.items():
        (reports / name).write_text(text)
    return job(tmp_path), reports


def test_a_reused_report_names_its_files_by_kind_and_the_run_that_wrote_them(tmp_path: Path) -> None:
    audit, reports = published(tmp_path, **{"steady.html": "<html>", "steady.ipynb": "{}"})
    reuse.remember(audit, "print", {"findings": "steady.findings.json", "html": "steady.html",
                                    "notebook": "steady.ipynb", "csv": "steady.csv"})
    record = json.loads(reuse.record_path(reports, "steady").read_text())
    assert record["format"] == 1 and record["audit"] == "steady" and record["run_id"] == "RUN-1"
    assert sorted(record["files"]) == ["steady.findings.json", "steady.html", "steady.ipynb"]
    assert record["absent_inputs"] == {}
    reused = reuse.reusable(audit, "print")
    assert reused == reuse.ReusedReport("steady", "RUN-1", {"findings": "steady.findings.json", "html": "steady.html",
                                                            "notebook": "steady.ipynb"})


def test_a_report_whose_files_cannot_all_be_recorded_is_forgotten(tmp_path: Path) -> None:
    audit, reports = published(tmp_path, **{"steady.html": "<html>"})
    reuse.remember(audit, "print", {"findings": "steady.findings.json", "html": "steady.html"})
    assert reuse.record_path(reports, "steady").is_file()
    reuse.remember(audit, "print", {"findings": "steady.findings.json", "html": "steady.gone.html"})
    assert not reuse.record_path(reports, "steady").exists()
    reuse.remember(audit, "print", {"findings": "steady.findings.json", "html": "steady.html"})
    reuse.remember(audit, "print", {"html": "steady.html"})  # no findings: nothing to check a reuse against
    assert not reuse.record_path(reports, "steady").exists()
    (reports / "steady.findings.json").write_text("[1, 2]")  # findings that are not an object
    reuse.remember(audit, "print", {"findings": "steady.findings.json"})
    assert not reuse.record_path(reports, "steady").exists()


@pytest.mark.parametrize("damage", [
    "not json", "[1]", '{"format": 2}', '{"files": {}}', '{"files": ["steady.findings.json"]}',
    '{"files": {"steady.findings.json": "0000"}}'])
def test_a_record_of_another_format_or_with_no_or_changed_files_is_not_reused(tmp_path: Path, damage: str) -> None:
    audit, reports = published(tmp_path)
    reuse.remember(audit, "print", {"findings": "steady.findings.json"})
    record = json.loads(reuse.record_path(reports, "steady").read_text())
    assert reuse.reusable(audit, "print") is not None
    try:
        parsed = json.loads(damage)
    except ValueError:
        text = damage
    else:
        text = json.dumps({**record, **parsed} if isinstance(parsed, dict) else parsed)
    reuse.record_path(reports, "steady").write_text(text)
    assert reuse.reusable(audit, "print") is None


def test_only_a_file_a_skipped_check_lacked_or_refused_is_watched(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "data_cache"
    (cache / "ds").mkdir(parents=True)
    monkeypatch.setenv("AUDIT_DATA_CACHE", str(cache))
    (cache / "ds" / "refused.csv").write_text("bad copy")
    checks = [{"status": "skipped", "meta": {"missing": ["ds/absent.csv", "param:samples"],
                                             "rejected": {"ds/refused.csv": "checksum"}}},
              {"status": "fail", "meta": {"missing": ["ds/other.csv"]}},
              {"status": "skipped", "meta": None}, {"status": "skipped"}]
    absent = reuse._absent_inputs({"checks": checks})
    assert absent == {"ds/absent.csv": None, "ds/refused.csv": reuse.sha256_of(cache / "ds" / "refused.csv")}
    assert list(absent) == ["ds/absent.csv", "ds/refused.csv"]
    audit, _reports = published(tmp_path, checks)
    reuse.remember(audit, "print", {"findings": "steady.findings.json"})
    (cache / "ds" / "other.csv").write_text("a check that ran on it")
    assert reuse.reusable(audit, "print") is not None
    (cache / "ds" / "refused.csv").write_text("a new copy")
    assert reuse.reusable(audit, "print") is None


def test_a_provenance_entry_without_a_location_or_sha256_is_not_checked(tmp_path: Path) -> None:
    audit, reports = published(tmp_path)
    findings = {"audit": "steady", "checks": [], "provenance": [
        {"file": "a", "location": str(tmp_path / "gone"), "sha256": None},
        {"file": "b", "location": None, "sha256": "00"}]}
    (reports / "steady.findings.json").write_text(json.dumps(findings))
    reuse.remember(audit, "print", {"findings": "steady.findings.json"})
    assert reuse.reusable(audit, "print") is not None
    findings["provenance"].append({"file": "c", "location": str(tmp_path / "gone"), "sha256": "00"})
    (reports / "steady.findings.json").write_text(json.dumps(findings))
    reuse.remember(audit, "print", {"findings": "steady.findings.json"})
    assert reuse.reusable(audit, "print") is None  # the input is gone


def test_the_fingerprint_follows_the_kernel_the_behaviour_env_and_files_nested_in_parameters(tmp_path: Path) -> None:
    nested = tmp_path / "deep" / "list.txt"
    nested.parent.mkdir()
    nested.write_text("a")
    base = job(tmp_path, params={"groups": {"names": ["x", str(nested)]}, "relative": "deep/list.txt"})
    before = reuse.fingerprint(base, code_digest="code")
    assert reuse.fingerprint(job(tmp_path, params=base.params, kernel_name="other"), code_digest="code") != before
    for name in reuse.BEHAVIOUR_ENV:
        changed = job(tmp_path, params=base.params, env={**base.env, name: "other"})
        assert reuse.fingerprint(changed, code_digest="code") != before, name
    same_env = job(tmp_path, params=base.params, env={**base.env, "AUDIT_STAGING": "elsewhere"})
    assert reuse.fingerprint(same_env, code_digest="code") == before
    assert reuse.fingerprint(job(tmp_path, params=base.params, audit="other"), code_digest="code") != before
    nested.write_text("b")
    assert reuse.fingerprint(base, code_digest="code") != before
    memo: dict[str, str] = {}
    first = reuse.fingerprint(base, code_digest="code", memo=memo)
    assert str(nested.resolve()) in memo
    nested.write_text("c")  # a folder read once per run: the memo answers
    assert reuse.fingerprint(base, code_digest="code", memo=memo) == first
    assert list(reuse._strings(({"a": ("b", 1)}, ["c"], "d", 2))) == ["b", "c", "d"]


def test_the_package_digest_follows_pyproject(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    monkeypatch.setattr(reuse.paths, "project_root", lambda: tmp_path)
    before = reuse.package_digest()
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'y'\n")
    assert reuse.package_digest() != before
