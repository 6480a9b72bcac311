"""A file no copy of which was found is "missing"; a copy found and refused is "rejected", with its own fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from audit_lib import cli, runner
from audit_lib.benchmarks.codeinsights import synthetic
from audit_lib.data import fetch
from audit_lib.data.sources import get_source
from audit_lib.errors import CorruptFileError, DataError, DataUnavailableError
from audit_lib.findings import Check, Result
from audit_lib.plugin import AuditPlugin, CheckSpec
from tests.toy_audit.audit import AUDIT as TOY

SUBMISSIONS = "codeinsights/Scenario5_data.csv"


def fetch_submissions(mirror: Path, cache: Path) -> fetch.FetchedFile:
    return fetch.fetch_source(get_source(*SUBMISSIONS.split("/", 1)), mirror=mirror, cache_dir=cache, offline=True)


def test_fetch_remembers_a_refused_copy_until_the_next_fetch_of_that_file(tmp_path: Path) -> None:
    mirror = tmp_path / "mirror"
    synthetic.generate(0, mirror / "codeinsights")
    good = (mirror / SUBMISSIONS).read_bytes()
    (mirror / SUBMISSIONS).write_bytes(good[:20_000])  # truncated inside a record
    with pytest.raises(CorruptFileError):
        fetch_submissions(mirror, tmp_path / "cache")
    assert fetch.refusal(SUBMISSIONS) == "corrupt_file"
    (mirror / SUBMISSIONS).unlink()
    with pytest.raises(DataUnavailableError):
        fetch_submissions(mirror, tmp_path / "cache")
    assert fetch.refusal(SUBMISSIONS) is None  # now simply missing
    (mirror / SUBMISSIONS).write_bytes(good)
    fetch_submissions(mirror, tmp_path / "cache")
    assert fetch.refusal(SUBMISSIONS) is None


def session_over(tmp_path: Path, outcome: DataError | None) -> tuple[Check, Check]:
    """A skip by a missing need and a self-skip, after a fetch of the toy's file ended with `outcome`."""
    def self_skip(inputs: object, params: object) -> Result:
        return Result.skipped("x is absent", missing=["toy/glossary.txt", "param:text"])

    plugin = AuditPlugin("toy_audit", "toy", TOY.params, TOY.load,
                         (CheckSpec("needs", "needs", lambda i, p: Result("pass"), ("toy/glossary.txt",)),
                          CheckSpec("own", "own", self_skip)))
    fetch._refused.pop("toy/glossary.txt", None)
    if outcome is not None:
        fetch._refused["toy/glossary.txt"] = outcome.reason_code
    try:
        session = plugin.session({}, out_dir=tmp_path)
        return session.run("needs"), session.run("own")
    finally:
        fetch._refused.pop("toy/glossary.txt", None)


def test_a_skip_names_a_refused_copy_apart_from_a_missing_file(tmp_path: Path) -> None:
    for check in session_over(tmp_path, CorruptFileError("cut")):
        assert check.status == "skipped" and check.meta["rejected"] == {"toy/glossary.txt": "corrupt_file"}
    for check in session_over(tmp_path, None):
        assert check.status == "skipped" and "rejected" not in check.meta


def skipped(*missing: str, rejected: dict | None = None) -> dict:
    return {"id": "c", "status": "skipped", "missing": list(missing), "rejected": rejected or {}}


def test_missing_and_rejected_inputs_are_told_apart() -> None:
    checks = {"a": [skipped("d/bad.csv", "d/gone.csv", "check:x", rejected={"d/bad.csv": "checksum_mismatch"})],
              "b": [skipped("d/gone.csv"), {"id": "p", "status": "pass", "missing": ["d/other.csv"]}]}
    assert runner.missing_inputs(checks) == {"d/gone.csv": ["a", "b"]}
    assert runner.rejected_inputs(checks) == {"d/bad.csv": ("checksum_mismatch", ["a"])}


def test_the_cli_summary_says_rejected_and_what_to_run_not_set_a_mirror(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    summary = runner.RunSummary((runner.AuditOutcome("a", "a", {}, True, 1.0),), tmp_path, tmp_path / "index.html",
                                tmp_path / "summary.json",
                                {"a": (skipped("d/bad.csv", rejected={"d/bad.csv": "checksum_mismatch"}),)})
    monkeypatch.setattr(cli, "run_audits", lambda *args, **kwargs: summary)
    assert cli.main(["run", "a"]) == 0
    out = capsys.readouterr().out
    assert "missing data" not in out and "Set AUDIT_MIRROR" not in out
    assert "rejected data (1 file(s)" in out and "`python -m audit_lib fetch --refresh DATASET`" in out
    assert "d/bad.csv: checksum does not match (pin or lock.json)  (needed by a)" in out


def test_missing_and_rejected_inputs_read_the_check_meta_as_findings_files_hold_it() -> None:
    """A check straight from a findings file carries `meta.missing`/`meta.rejected`; each audit is named once."""
    # a check that ran, and a need that is no file, come first: each is passed over, not the end of the list
    checks = {"a": [{"id": "c3", "status": "error", "meta": {"missing": ["d/error.csv"]}},
                    {"id": "c1", "status": "skipped", "meta": {"missing": ["param:n", "d/gone.csv", "d/bad.csv"],
                                                                "rejected": {"d/bad.csv": "corrupt_file"}}},
                    {"id": "c2", "status": "skipped", "meta": {"missing": ["d/gone.csv"]}}],
              "b": [{"id": "c4", "status": "skipped", "missing": [], "meta": {"missing": ["d/bad.csv"],
                                                                             "rejected": {"d/bad.csv": "corrupt_file"}}},
                    {"id": "c5", "status": "skipped"}]}
    assert runner.missing_inputs(checks) == {"d/gone.csv": ["a"]}
    assert runner.rejected_inputs(checks) == {"d/bad.csv": ("corrupt_file", ["a", "b"])}


def summary_of(outcomes: tuple, checks: dict) -> runner.RunSummary:
    return runner.RunSummary(outcomes, Path("r"), Path("r/index.html"), Path("r/summary.json"), checks)


def test_run_summary_counts_only_this_runs_finished_checks() -> None:
    broken = runner.AuditOutcome("broken", "broken", {}, False, 1.0, runner.NotebookFailure(2, 3, "E", "m"))
    fine = runner.AuditOutcome("fine", "fine", {}, True, 1.0)
    checks = {"broken": ({"id": "old", "status": "defect"},),
              "fine": ({"id": "d", "status": "defect"}, {"id": "s", "status": "skipped"},
                       {"id": "q", "status": "quirk", "synthetic": True}, {"id": "p", "status": "pass"})}
    summary = summary_of((broken, fine), checks)
    assert summary.check_statuses == {"broken": ("defect",), "fine": ("defect", "skipped", "quirk", "pass")}
    assert summary.failed == (broken,)
    assert summary.finished_checks == {"fine": checks["fine"]}
    assert summary.gate_hits(None) == {} and summary.gate_exempted(None) == {}
    assert summary.gate_hits("skipped,quirk,defect") == {"fine": 2}
    assert summary.gate_hits("quirk", include_synthetic=True) == {"fine": 1}
    assert summary.gate_exempted("quirk") == {"fine": 1}
    assert summary.gate_exempted("quirk", include_synthetic=True) == {}
    assert summary.exit_code() == runner.EXIT_NOTEBOOK_FAILED
    finished = summary_of((fine,), {"fine": checks["fine"]})
    assert finished.failed == ()
    assert finished.exit_code() == runner.EXIT_OK and finished.exit_code("error") == runner.EXIT_OK
    assert finished.exit_code("skipped") == runner.EXIT_GATE
    assert finished.exit_code("quirk") == runner.EXIT_OK
    assert finished.exit_code("quirk", include_synthetic=True) == runner.EXIT_GATE
