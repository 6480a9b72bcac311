"""Run history: what a run records, how `diff` pairs runs and words each change, and its refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from audit_lib.errors import ParameterError
from audit_lib.runner.history import (
    CheckChange,
    diff_findings,
    diff_runs,
    latest_run_with,
    load_findings_by_audit,
    read_findings_file,
    record_run,
    resolve_diff_folders,
    run_folders,
    shown_folder,
)


def findings(audit: str, *checks: dict) -> dict:
    return {"audit": audit, "checks": list(checks)}


def test_a_run_records_its_summary_and_only_the_findings_of_the_audits_it_ran(tmp_path: Path) -> None:
    (tmp_path / "summary.json").write_text('{"run": 1}')
    for audit in ("ran", "other"):
        (tmp_path / f"{audit}.findings.json").write_text(json.dumps(findings(audit)))
    folder = record_run(tmp_path, "2026-01-01T00-00-00Z", ["ran", "failed_without_findings"])
    assert folder == tmp_path / "runs" / "2026-01-01T00-00-00Z"
    assert sorted(p.name for p in folder.iterdir()) == ["ran.findings.json", "summary.json"]
    assert (folder / "summary.json").read_text() == '{"run": 1}'
    assert record_run(tmp_path, "2026-01-01T00-00-00Z", []) == tmp_path / "runs" / "2026-01-01T00-00-00Z.002"
    assert record_run(tmp_path, "2026-01-01T00-00-00Z", []) == tmp_path / "runs" / "2026-01-01T00-00-00Z.003"
    assert [p.name for p in run_folders(tmp_path)] == [
        "2026-01-01T00-00-00Z", "2026-01-01T00-00-00Z.002", "2026-01-01T00-00-00Z.003"]


def test_run_folders_are_oldest_first_and_need_a_summary(tmp_path: Path) -> None:
    assert run_folders(tmp_path) == []
    for name in ("2026-01-02", "2026-01-01", "2026-01-03"):
        (tmp_path / "runs" / name).mkdir(parents=True)
        if name != "2026-01-03":
            (tmp_path / "runs" / name / "summary.json").write_text("{}")
    assert [p.name for p in run_folders(tmp_path)] == ["2026-01-01", "2026-01-02"]


def test_the_latest_run_holding_an_audit(tmp_path: Path) -> None:
    for name, audits in (("1", ["a", "b"]), ("2", ["a"]), ("3", ["c"])):
        folder = tmp_path / "runs" / name
        folder.mkdir(parents=True)
        (folder / "summary.json").write_text("{}")
        for audit in audits:
            (folder / f"{audit}.findings.json").write_text(json.dumps(findings(audit)))
    assert latest_run_with(tmp_path, "a") == tmp_path / "runs" / "2"
    assert latest_run_with(tmp_path, "b") == tmp_path / "runs" / "1"
    assert latest_run_with(tmp_path, "z") is None


@pytest.mark.parametrize(("change", "marker", "described"), [
    (CheckChange("a", "c", None, "defect"), "new check", "+ a.c: new check, defect"),
    (CheckChange("a", "c", "quirk", None), "gone (was quirk)", "- a.c: gone (was quirk)"),
    (CheckChange("a", "c", "quirk", "defect"), "changed: quirk → defect", "~ a.c: quirk -> defect"),
    (CheckChange("a", "c", "pass", "pass", {"n": 1}, {"n": 2}), "observed changed",
     '~ a.c: pass, observed changed\n    observed: {"n": 1}\n          -> {"n": 2}'),
    (CheckChange("a", "c", "pass", "defect", {"b": 1, "a": "é"}, None), "changed: pass → defect",
     '~ a.c: pass -> defect\n    observed: {"a": "é", "b": 1}\n          -> null'),
])
def test_each_change_is_marked_and_described(change: CheckChange, marker: str, described: str) -> None:
    assert change.marker() == marker and change.describe() == described


def test_a_long_observed_value_is_cut_at_300_characters() -> None:
    exact, long = "x" * 298, "y" * 299  # 300 and 301 characters once quoted
    text = CheckChange("a", "c", "pass", "pass", exact, long).describe()
    assert f'observed: "{exact}"\n' in text and text.endswith(f'-> "{"y" * 299}…')


def test_diff_lists_new_gone_and_changed_checks_of_audits_on_both_sides() -> None:
    before = {"a": findings("a", {"id": "same", "status": "pass", "observed": 1},
                            {"id": "status", "status": "pass"}, {"id": "value", "status": "quirk", "observed": 1},
                            {"id": "gone", "status": "defect"}),
              "only_before": findings("only_before", {"id": "x", "status": "pass"})}
    after = {"a": findings("a", {"id": "same", "status": "pass", "observed": 1}, {"id": "status", "status": "quirk"},
                           {"id": "value", "status": "quirk", "observed": 2}, {"id": "new", "status": "error"}),
             "only_after": findings("only_after", {"id": "y", "status": "pass"})}
    assert diff_findings(before, after) == [
        CheckChange("a", "gone", "defect", None, None, None),
        CheckChange("a", "new", None, "error", None, None),
        CheckChange("a", "status", "pass", "quirk", None, None),
        CheckChange("a", "value", "quirk", "quirk", 1, 2)]


def test_an_audit_on_one_side_only_does_not_end_the_comparison() -> None:
    one_sided = findings("a_first", {"id": "x", "status": "pass"})  # sorts before the audit on both sides
    before = {"a_first": one_sided, "b": findings("b", {"id": "c", "status": "pass"})}
    after = {"b": findings("b", {"id": "c", "status": "defect"})}
    assert diff_findings(before, after) == [CheckChange("b", "c", "pass", "defect", None, None)]


def test_findings_are_keyed_by_audit_and_an_unreadable_file_is_named(tmp_path: Path) -> None:
    (tmp_path / "x.findings.json").write_text(json.dumps({"audit": "named", "checks": []}))
    (tmp_path / "anon.v2.findings.json").write_text(json.dumps({"checks": [{"id": "c", "status": "pass"}]}))
    (tmp_path / "notes.json").write_text("not findings")
    assert load_findings_by_audit(tmp_path) == {"anon": {"checks": [{"id": "c", "status": "pass"}]},
                                                "named": {"audit": "named", "checks": []}}
    broken = tmp_path / "broken.findings.json"
    broken.write_text("{")
    with pytest.raises(ParameterError, match=r"broken\.findings\.json: not a readable findings file \(") as refused:
        read_findings_file(broken)
    assert refused.value.fields["file"] == str(broken)
    broken.write_text("[1]")
    with pytest.raises(ParameterError) as refused:
        read_findings_file(broken)
    assert refused.value.message == f"{broken}: not a findings file (a JSON object is expected)"
    assert refused.value.fields["file"] == str(broken)


def test_diff_runs_reads_two_folders(tmp_path: Path) -> None:
    for name, status in (("old", "pass"), ("new", "defect")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "a.findings.json").write_text(json.dumps(findings("a", {"id": "c", "status": status})))
    assert diff_runs(tmp_path / "old", tmp_path / "new") == [CheckChange("a", "c", "pass", "defect")]


def test_diff_folders_are_both_given_or_the_last_two_runs(tmp_path: Path) -> None:
    (tmp_path / "x").mkdir()
    assert resolve_diff_folders(tmp_path, str(tmp_path / "x"), str(tmp_path)) == (tmp_path / "x", tmp_path)
    for old, new in ((str(tmp_path), None), (None, str(tmp_path))):
        with pytest.raises(ParameterError) as refused:
            resolve_diff_folders(tmp_path, old, new)
        assert refused.value.message == "give both OLD and NEW, or neither (the last two runs)"
        assert refused.value.fields["field"] == "diff"
    with pytest.raises(ParameterError) as refused:
        resolve_diff_folders(tmp_path, str(tmp_path / "absent"), str(tmp_path))
    assert refused.value.message == f"{tmp_path / 'absent'}: no such folder"
    assert refused.value.fields["field"] == "diff"
    for name in ("1", "2"):
        (tmp_path / "runs" / name).mkdir(parents=True)
        (tmp_path / "runs" / name / "summary.json").write_text("{}")
        if name == "1":
            with pytest.raises(ParameterError) as refused:
                resolve_diff_folders(tmp_path, None, None)
            assert refused.value.message == (f"fewer than two recorded runs in {tmp_path / 'runs'}: give OLD and NEW")
            assert refused.value.fields["field"] == "diff"
    assert resolve_diff_folders(tmp_path, None, None) == (tmp_path / "runs" / "1", tmp_path / "runs" / "2")


def test_a_folder_is_shown_relative_to_the_reports_then_the_working_directory_else_by_name(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reports = tmp_path / "work" / "reports"
    (reports / "runs" / "r1").mkdir(parents=True)
    (tmp_path / "elsewhere" / "run").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "work")
    assert shown_folder(reports / "runs" / "r1", reports) == "runs/r1"
    assert shown_folder(reports, reports) == "."
    assert shown_folder(tmp_path / "work", reports) == "."
    assert shown_folder(tmp_path / "elsewhere" / "run", reports) == "run"
    monkeypatch.chdir(tmp_path)
    assert shown_folder(tmp_path / "elsewhere" / "run", reports) == "elsewhere/run"
