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
