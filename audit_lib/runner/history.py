"""Run history: each batch's summary and findings kept in `reports/runs/<timestamp>/`, and `diff` between runs."""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from audit_lib.errors import ParameterError

RUNS_DIR_NAME = "runs"
SUMMARY_NAME = "summary.json"


def record_run(reports_dir: Path, run_id: str, audits: Sequence[str]) -> Path:
    """Copy this run's summary and the findings of the audits it ran into `runs/<run_id>/`.

    A run whose id (a UTC time to the second) is taken already gets `<run_id>.002`, `.003`, ...: each sorts after
    the one before, and neither run's files mix with the other's.
    """
    (reports_dir / RUNS_DIR_NAME).mkdir(parents=True, exist_ok=True)
    folder, number = reports_dir / RUNS_DIR_NAME / run_id, 1
    while True:
        try:
            folder.mkdir()
            break
        except FileExistsError:
            number += 1
            folder = reports_dir / RUNS_DIR_NAME / f"{run_id}.{number:03d}"
    shutil.copy2(reports_dir / SUMMARY_NAME, folder / SUMMARY_NAME)
    for audit in audits:
        findings = reports_dir / f"{audit}.findings.json"
        if findings.is_file():
            shutil.copy2(findings, folder / findings.name)
    return folder


def run_folders(reports_dir: Path) -> list[Path]:
    """Recorded runs, oldest first (their names are UTC timestamps)."""
    root = reports_dir / RUNS_DIR_NAME
    return sorted(p for p in root.iterdir() if (p / SUMMARY_NAME).is_file()) if root.is_dir() else []


@dataclass(frozen=True)
class CheckChange:
    """A check whose status or observed value differs between two runs (or that exists in only one)."""

    audit: str
    check: str
    old_status: str | None
    new_status: str | None
    old_observed: Any = None
    new_observed: Any = None

    @property
    def status_changed(self) -> bool:
        return self.old_status != self.new_status

    @property
    def observed_changed(self) -> bool:
        return self.old_observed != self.new_observed

    def marker(self) -> str:
        """A short label for the index: `changed: quirk → defect`, `observed changed`, `new check`, `gone`."""
        if self.old_status is None:
            return "new check"
        if self.new_status is None:
            return f"gone (was {self.old_status})"
        return f"changed: {self.old_status} → {self.new_status}" if self.status_changed else "observed changed"

    def describe(self) -> str:
        where = f"{self.audit}.{self.check}"
        if self.old_status is None:
            return f"+ {where}: new check, {self.new_status}"
        if self.new_status is None:
            return f"- {where}: gone (was {self.old_status})"
        line = f"~ {where}: " + (f"{self.old_status} -> {self.new_status}" if self.status_changed
                                 else f"{self.new_status}, observed changed")
        if self.old_observed != self.new_observed:
            line += f"\n    observed: {_short(self.old_observed)}\n          -> {_short(self.new_observed)}"
        return line


def load_findings_by_audit(folder: Path) -> dict[str, Mapping[str, Any]]:
    """Audit -> findings JSON of a run folder or a reports folder."""
    found = {}
    for path in sorted(folder.glob("*.findings.json")):
        payload = read_findings_file(path)
        found[str(payload.get("audit", path.name.split(".")[0]))] = payload
    return found


def read_findings_file(path: Path) -> dict[str, Any]:
    """One findings JSON; an unreadable one raises `ParameterError` naming the file."""
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ParameterError(f"{path}: not a readable findings file ({exc})", file=str(path)) from exc
    if not isinstance(payload, dict):
        raise ParameterError(f"{path}: not a findings file (a JSON object is expected)", file=str(path))
    return payload


def latest_run_with(reports_dir: Path, audit: str) -> Path | None:
    """The most recent recorded run folder that holds `audit`'s findings."""
    for folder in reversed(run_folders(reports_dir)):
        if (folder / f"{audit}.findings.json").is_file():
            return folder
    return None


def diff_runs(old: Path, new: Path) -> list[CheckChange]:
    """Every check whose status or observed value changed from `old` to `new` (run or reports folders)."""
    return diff_findings(load_findings_by_audit(old), load_findings_by_audit(new))


def diff_findings(before: Mapping[str, Mapping[str, Any]],
                  after: Mapping[str, Mapping[str, Any]]) -> list[CheckChange]:
    """Every check whose status or observed value changed, per audit present on both sides (audit -> findings)."""
    changes: list[CheckChange] = []
    for audit in sorted(set(before) | set(after)):
        old_checks = {c["id"]: c for c in before.get(audit, {}).get("checks", [])}
        new_checks = {c["id"]: c for c in after.get(audit, {}).get("checks", [])}
        if audit not in before or audit not in after:  # an audit run only once is not a change of its checks
            continue
        for check_id in sorted(set(old_checks) | set(new_checks)):
            was, now = old_checks.get(check_id), new_checks.get(check_id)
            if was and now and was.get("status") == now.get("status") and was.get("observed") == now.get("observed"):
                continue
            changes.append(CheckChange(audit, check_id, was and was.get("status"), now and now.get("status"),
                                       was and was.get("observed"), now and now.get("observed")))
    return changes


def resolve_diff_folders(reports_dir: Path, old: str | None, new: str | None) -> tuple[Path, Path]:
    """Explicit folders (a run folder or a reports folder), else the last two recorded runs."""
    if old and new:
        pair = (Path(old), Path(new))
    elif old or new:
        raise ParameterError("give both OLD and NEW, or neither (the last two runs)", field="diff")
    else:
        runs = run_folders(reports_dir)
        if len(runs) < 2:
            raise ParameterError(f"fewer than two recorded runs in {reports_dir / RUNS_DIR_NAME}: give OLD and NEW",
                                 field="diff")
        pair = (runs[-2], runs[-1])
    for folder in pair:
        if not folder.is_dir():
            raise ParameterError(f"{folder}: no such folder", field="diff")
    return pair


def shown_folder(folder: Path, reports_dir: Path) -> str:
    """A run folder as `diff` prints it, never with this machine's absolute path.

    Relative to the reports folder (`runs/<time>`, `.`), else to the working directory, else only its name."""
    resolved = folder.resolve()
    for base in (reports_dir.resolve(), Path.cwd().resolve()):
        if resolved.is_relative_to(base):
            return resolved.relative_to(base).as_posix() or "."
    return resolved.name


def _short(value: Any, limit: int = 300) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit] + "…"
