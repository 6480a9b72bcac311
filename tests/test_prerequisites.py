"""A missing mirror, Chromium or declared package: a skip with its reason on a workstation, a failure under CI=true."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests import prerequisites
from tests.prerequisites import (
    declared_distributions,
    import_declared,
    in_ci,
    mirror_problem,
    require_chromium,
    require_mirror,
)

REPO_ROOT = Path(__file__).resolve().parent.parent
SKIPPED = pytest.skip.Exception
FAILED = pytest.fail.Exception


def stopped_by(call: Callable[[], object]) -> tuple[type[BaseException], str]:
    """How `call` stopped the test: the Skipped or Failed outcome it raised (caught, so a skip cannot hide a miss)."""
    try:
        call()
    except (SKIPPED, FAILED) as exc:
        return type(exc), str(exc)
    raise AssertionError("the call neither skipped nor failed")


@pytest.mark.parametrize(("value", "expected"), [("true", True), ("TRUE", True), ("1", True), ("yes", True),
                                                 ("", False), ("false", False), ("0", False)])
def test_ci_is_read_from_the_ci_variable(monkeypatch: pytest.MonkeyPatch, value: str, expected: bool) -> None:
    monkeypatch.setenv("CI", value)
    assert in_ci() is expected


def test_ci_unset_is_not_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    assert in_ci() is False


def _mirror_with_one_file(tmp_path: Path) -> Path:
    mirror = tmp_path / "mirror"
    (mirror / "humaneval").mkdir(parents=True)
    (mirror / "humaneval" / "HumanEval.jsonl.gz").write_bytes(b"")
    return mirror


def test_mirror_problems_name_what_is_wrong(tmp_path: Path) -> None:
    assert "set AUDIT_MIRROR" in mirror_problem(None)
    assert "is not a folder" in mirror_problem(str(tmp_path / "absent"))
    (tmp_path / "empty").mkdir()
    assert "holds none of the registered files" in mirror_problem(str(tmp_path / "empty"))
    assert mirror_problem(str(_mirror_with_one_file(tmp_path))) is None


@pytest.mark.parametrize("ci", ["", "true"])
def test_missing_mirror_skips_outside_ci_and_fails_in_ci(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                         ci: str) -> None:
    monkeypatch.setenv("CI", ci)
    monkeypatch.delenv("AUDIT_MIRROR", raising=False)
    kind, message = stopped_by(require_mirror)
    assert kind is (FAILED if ci else SKIPPED) and "no real-data mirror" in message
    monkeypatch.setenv("AUDIT_MIRROR", str(tmp_path / "absent"))
    kind, message = stopped_by(require_mirror)
    assert kind is (FAILED if ci else SKIPPED) and "is not a folder" in message
    mirror = _mirror_with_one_file(tmp_path)
    monkeypatch.setenv("AUDIT_MIRROR", str(mirror))
    assert require_mirror() == mirror.resolve()


@pytest.mark.parametrize("ci", ["", "true"])
def test_missing_chromium_skips_outside_ci_and_fails_in_ci(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                           ci: str) -> None:
    monkeypatch.setenv("CI", ci)
    kind, message = stopped_by(lambda: require_chromium(tmp_path / "chromium"))
    assert kind is (FAILED if ci else SKIPPED) and "chromium is not installed" in message
    not_executable = tmp_path / "chromium"
    not_executable.write_text("", encoding="utf-8")
    assert stopped_by(lambda: require_chromium(not_executable))[0] is (FAILED if ci else SKIPPED)
    not_executable.chmod(0o755)
    assert require_chromium(not_executable) == not_executable


@pytest.mark.parametrize("ci", ["", "true"])
def test_a_declared_package_that_does_not_import_fails_even_outside_ci(monkeypatch: pytest.MonkeyPatch,
                                                                        ci: str) -> None:
    monkeypatch.setenv("CI", ci)
    monkeypatch.setitem(sys.modules, "playwright.sync_api", None)  # what a broken install looks like to import
    kind, message = stopped_by(lambda: import_declared("playwright.sync_api", "playwright"))
    assert kind is FAILED and "pyproject.toml declares playwright (extra [dev])" in message


def test_only_declared_packages_can_be_required() -> None:
    declared = declared_distributions()
    assert declared["pandas"] == "dependencies" and declared["playwright"] == "dev"
    assert declared["dask"] == "dask" and declared["distributed"] == "dask"
    assert import_declared("pandas", "pandas").__name__ == "pandas"
    with pytest.raises(AssertionError, match="not declared"):
        import_declared("sqlite3", "pysqlite")


MIRROR_PROBE = """
def test_needs_real_data(mirror_dir):
    assert mirror_dir.is_dir()
"""


@pytest.mark.parametrize(("ci", "outcome"), [("", "1 skipped"), ("true", "1 error")])
def test_a_real_data_test_run_without_the_mirror(tmp_path: Path, ci: str, outcome: str) -> None:
    """End to end through the project's conftest: skipped on a workstation, an error (exit 1) under CI=true."""
    (tmp_path / "conftest.py").write_text("from tests.conftest import mirror_dir  # noqa: F401\n", encoding="utf-8")
    (tmp_path / "test_probe.py").write_text(MIRROR_PROBE, encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if key not in ("AUDIT_MIRROR", "CI")}
    env.update({"CI": ci, "PYTHONPATH": str(REPO_ROOT)})
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs", "test_probe.py"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert outcome in run.stdout, run.stdout + run.stderr
    assert "no real-data mirror" in run.stdout
    assert run.returncode == (1 if ci else 0)


def test_every_helper_is_exported() -> None:
    assert set(prerequisites.__all__) >= {"require_mirror", "require_chromium", "import_declared", "missing"}
