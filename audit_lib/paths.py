"""Where the project keeps its cache, reports and notebooks, overridable by environment."""

from __future__ import annotations

import os
from pathlib import Path

PROJECT_MARKER = "pyproject.toml"


def project_root() -> Path:
    """The checkout root: `AUDIT_PROJECT_ROOT`, else the package's parent when it is a checkout, else cwd."""
    configured = os.environ.get("AUDIT_PROJECT_ROOT")
    if configured:
        return Path(configured).resolve()
    package_parent = Path(__file__).resolve().parent.parent
    if (package_parent / PROJECT_MARKER).is_file() and (package_parent / "notebooks").is_dir():
        return package_parent
    return Path.cwd().resolve()


def data_cache_dir() -> Path:
    """Verified downloads and imports live here (`AUDIT_DATA_CACHE` overrides)."""
    configured = os.environ.get("AUDIT_DATA_CACHE")
    return Path(configured).resolve() if configured else project_root() / "data_cache"


def reports_dir() -> Path:
    """Generated reports (`AUDIT_REPORTS_DIR` overrides)."""
    configured = os.environ.get("AUDIT_REPORTS_DIR")
    return Path(configured).resolve() if configured else project_root() / "reports"


def notebooks_dir() -> Path:
    """The audit notebooks: shipped inside the package (in a checkout, a link to notebooks/)."""
    return Path(__file__).resolve().parent / "notebooks"


def mirror_dir(explicit: str | os.PathLike[str] | None = None) -> Path | None:
    """The local mirror folder (`<dataset>/<file>`): an explicit path, else `AUDIT_MIRROR`, else none."""
    chosen = explicit if explicit is not None else os.environ.get("AUDIT_MIRROR")
    if not chosen:
        return None
    return Path(chosen).expanduser().resolve()
