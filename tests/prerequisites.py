"""What a test needs from its environment: skipped with the reason on a workstation, a failure under CI=true.

CI (`.ci/run`) installs Chromium and points AUDIT_MIRROR at the real data, so there a missing one is a broken run,
not a reason to go green with every real-data test skipped. A package that pyproject.toml declares is part of the
install (`make install` takes every extra), so one that does not import is a failure everywhere.
"""

from __future__ import annotations

import importlib
import os
import re
import tomllib
from pathlib import Path
from types import ModuleType
from typing import NoReturn

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = Path("/usr/bin/chromium")
_TRUE = {"1", "true", "yes", "on"}


def in_ci() -> bool:
    """CI=true (or 1/yes/on) is how GitHub Actions, GitLab and `.ci/run` say a run is CI."""
    return os.environ.get("CI", "").strip().lower() in _TRUE


def missing(reason: str) -> NoReturn:
    """A prerequisite is absent: skip with `reason`, or fail when CI must have it."""
    if in_ci():
        pytest.fail(f"CI=true, and a prerequisite CI must provide is missing: {reason}", pytrace=False)
    pytest.skip(reason)


def mirror_problem(configured: str | None) -> str | None:
    """Why AUDIT_MIRROR cannot serve as the real-data mirror, or None when it can."""
    if not configured:
        return ("no real-data mirror: set AUDIT_MIRROR to a folder laid out as <dataset>/<file> "
                "(CI uses ../shared/data)")
    folder = Path(configured)
    if not folder.is_dir():
        return f"AUDIT_MIRROR={configured} is not a folder"
    from audit_lib.data.sources import REGISTRY

    if not any((folder / source.dataset / source.file).is_file() for source in REGISTRY.values()):
        return f"AUDIT_MIRROR={configured} holds none of the registered files (<dataset>/<file>)"
    return None


def require_mirror() -> Path:
    problem = mirror_problem(os.environ.get("AUDIT_MIRROR"))
    if problem is not None:
        missing(problem)
    return Path(os.environ["AUDIT_MIRROR"]).resolve()


def require_chromium(path: Path = CHROMIUM) -> Path:
    if not (path.is_file() and os.access(path, os.X_OK)):
        missing(f"Debian's chromium is not installed at {path} (.ci/run installs it: apt-get install chromium)")
    return path


def _distribution_name(requirement: str) -> str:
    return re.sub(r"[-_.]+", "-", re.split(r"[\s\[<>=!~;]", requirement.strip(), maxsplit=1)[0]).lower()


def declared_distributions(pyproject: Path = REPO_ROOT / "pyproject.toml") -> dict[str, str]:
    """Every distribution pyproject.toml declares -> where ('dependencies' or the extra's name)."""
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    declared = {_distribution_name(r): "dependencies" for r in project.get("dependencies", [])}
    for extra, requirements in project.get("optional-dependencies", {}).items():
        for requirement in requirements:
            declared.setdefault(_distribution_name(requirement), extra)
            for name in re.findall(r"\[([^\]]*)\]", requirement)[:1]:  # dask[distributed] declares distributed
                for sub in name.split(","):
                    declared.setdefault(_distribution_name(sub), extra)
    return declared


def import_declared(module: str, distribution: str) -> ModuleType:
    """Import `module` from a declared distribution; an import failure is a failure, never a skip."""
    where = declared_distributions().get(_distribution_name(distribution))
    if where is None:
        raise AssertionError(f"{distribution} is not declared in pyproject.toml; declare it before a test needs it")
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        extra = "" if where == "dependencies" else f" (extra [{where}])"
        pytest.fail(f"{module} does not import, but pyproject.toml declares {distribution}{extra}: {exc}. "
                    "Run `make install`.", pytrace=False)


__all__ = ["CHROMIUM", "declared_distributions", "import_declared", "in_ci", "mirror_problem", "missing",
           "require_chromium", "require_mirror"]
