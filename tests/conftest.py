"""Shared fixtures: the real-data mirror (skipped with a reason when absent, a failure in CI) and isolated dirs."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.prerequisites import require_mirror

REPO_ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def mirror_dir() -> Path:
    """The real-data mirror folder: tests that need real data skip without it, and fail under CI=true."""
    return require_mirror()


@pytest.fixture(autouse=True)
def no_result_reuse(monkeypatch: pytest.MonkeyPatch) -> None:
    """No verdict cache and no report reuse unless a test turns them on: every test runs its sandbox jobs and
    notebooks (the cache's own tests set `AUDIT_CACHE` themselves)."""
    monkeypatch.setenv("AUDIT_CACHE", "off")


@pytest.fixture()
def isolated_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh, empty data cache so a test never sees or pollutes the project's `data_cache/`."""
    cache = tmp_path / "data_cache"
    cache.mkdir()
    monkeypatch.setenv("AUDIT_DATA_CACHE", str(cache))
    return cache


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--regression", action="store_true",
                     help="also run the full HumanEval+/MBPP+ golden runs (`make regression`)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Full-length regression runs are deselected (not skipped) unless --regression is given."""
    if config.getoption("--regression"):
        return
    kept = [item for item in items if item.get_closest_marker("regression") is None]
    if len(kept) != len(items):
        config.hook.pytest_deselected(items=[item for item in items if item not in kept])
        items[:] = kept
