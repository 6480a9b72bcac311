"""Offline and without a mirror, audits complete and report every data check as `skipped` with the reason."""

from __future__ import annotations

import pytest

from tests.notebook_helpers import execute_notebook


@pytest.fixture()
def offline_no_mirror(isolated_cache, monkeypatch):
    monkeypatch.delenv("AUDIT_MIRROR", raising=False)
    monkeypatch.setenv("AUDIT_OFFLINE", "1")
    return isolated_cache


def test_intentspec_checks_are_skipped_naming_the_missing_file(offline_no_mirror):
    from audit_lib.benchmarks.intentspec.audit import AUDIT

    checks = AUDIT.session({}).run_all()
    assert [check.id for check in checks] == [spec.id for spec in AUDIT.checks]
    for check in checks:
        assert check.status == "skipped" and "intentspec/spec_pairs.jsonl" in check.meta["missing"]
        assert "intentspec/spec_pairs.jsonl is not available" in check.summary and "AUDIT_MIRROR" in check.summary


def test_mbpp_plus_data_checks_are_skipped_but_the_data_free_pass_at_k_still_runs(offline_no_mirror):
    from audit_lib.benchmarks.humaneval_plus import views
    from audit_lib.benchmarks.humaneval_plus.audit import MBPP_AUDIT

    audit = MBPP_AUDIT.session({})
    ground_truth, amplification, pass_at_k = (audit.run("ground_truth"), audit.run("amplification"),
                                              audit.run("pass_at_k"))
    assert ground_truth.status == amplification.status == "skipped"
    assert "humaneval_plus/mbpp_plus/MbppPlus.jsonl.gz is not available" in ground_truth.summary
    assert ground_truth.meta["missing"] == ["humaneval_plus/mbpp_plus/MbppPlus.jsonl.gz"]
    assert pass_at_k.status == "pass"
    assert views.amplification_figure(audit) is None
    assert {check.status for check in audit.run_all() if check.id != "pass_at_k"} == {"skipped"}


@pytest.mark.notebook
def test_intentspec_notebook_completes_offline_without_a_mirror(offline_no_mirror, tmp_path):
    findings = execute_notebook("intentspec", {}, tmp_path / "reports")
    assert {check["status"] for check in findings["checks"]} == {"skipped"}
    assert (tmp_path / "reports" / "intentspec.findings.json").is_file()
