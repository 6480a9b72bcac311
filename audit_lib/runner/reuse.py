"""Reuse an audit's last report when nothing it depends on changed: same code, data and parameters.

Before a notebook starts, `fingerprint(job)` hashes every file of the package (notebooks included) and
pyproject.toml, the interpreter and installed distributions, the audit's name, parameters and run options, the
mirror's files (names and bytes) and every file or folder a parameter names. After a successful run the runner
records it in `<reports>/.reuse/<audit>.json` with the sha256 of the findings written and the run's id. The next
run reuses that report, without starting a kernel, only when the fingerprint is equal, the findings, notebook and
HTML are the recorded ones, every input file the findings' provenance names still has its recorded sha256, no
check ended in `error`, and each file a check was skipped for (missing or refused) is as absent, or the same copy,
in the data cache as it was. `--no-cache` never reuses; a failed run drops the record.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from audit_lib import paths
from audit_lib.atomic_files import atomic_write_text
from audit_lib.data.fetch import sha256_of
from audit_lib.runner.plan import AuditJob
from audit_lib.verdict_cache.keys import environment_text, tree_digest

REUSE_DIR_NAME = ".reuse"
RECORD_FORMAT = 1
# Environment that changes what a notebook does (the rest of a job's env names its own staging folders).
BEHAVIOUR_ENV = ("AUDIT_MIRROR", "AUDIT_EXECUTOR", "AUDIT_ONLY", "AUDIT_WORKERS")


@dataclass(frozen=True)
class ReusedReport:
    """A report kept from an earlier run: its files in the reports folder and the run that wrote them."""

    audit: str
    run_id: str
    files: Mapping[str, str]


def record_path(reports_dir: Path, audit: str) -> Path:
    return reports_dir / REUSE_DIR_NAME / f"{audit}.json"


def fingerprint(job: AuditJob, *, code_digest: str | None = None, memo: dict[str, str] | None = None) -> str:
    """sha256 of everything the audit's report depends on before it runs (see the module's docstring).

    `memo` shares folder digests between the audits of one run (the mirror is read once)."""
    memo = {} if memo is None else memo
    digest = hashlib.sha256()
    about = {"audit": job.audit, "params": _jsonable(job.params), "with_code": job.with_code,
             "kernel": job.kernel_name, "env": {name: job.env.get(name) for name in BEHAVIOUR_ENV},
             "notebook": sha256_of(Path(job.notebook))}
    digest.update(json.dumps(about, sort_keys=True, default=str).encode())
    digest.update((code_digest or package_digest()).encode())
    mirror = job.env.get("AUDIT_MIRROR")
    if mirror:
        digest.update(_memo_digest(Path(mirror), memo).encode())
    for value in _strings(job.params):
        if os.path.isabs(value) and os.path.exists(value):
            digest.update(value.encode() + b"\0" + _memo_digest(Path(value), memo).encode())
    return digest.hexdigest()


def _memo_digest(path: Path, memo: dict[str, str]) -> str:
    key = str(path.resolve())
    if key not in memo:
        memo[key] = tree_digest(path)
    return memo[key]


def package_digest() -> str:
    """The package's files, pyproject.toml and the environment the kernels run in."""
    root = paths.project_root()
    digest = hashlib.sha256(tree_digest(Path(__file__).resolve().parent.parent).encode())
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        digest.update(sha256_of(pyproject).encode())
    digest.update(environment_text().encode())
    return digest.hexdigest()


def reusable(job: AuditJob, current: str) -> ReusedReport | None:
    """The earlier report of this audit when its record matches `current` and its files and inputs are unchanged."""
    reports = Path(job.reports_dir)
    try:
        record = json.loads(record_path(reports, job.audit).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("format") != RECORD_FORMAT or record.get("fingerprint") != current:
        return None
    files = record.get("files")
    if not isinstance(files, dict) or not files:
        return None
    for name, sha256 in files.items():
        target = reports / str(name)
        if not target.is_file() or sha256_of(target) != sha256:
            return None
    findings = _read_findings(reports / f"{job.audit}.findings.json")
    if findings is None or any(check.get("status") == "error" for check in findings.get("checks", [])):
        return None  # an error may be transient: run it again
    if _absent_inputs(findings) != record.get("absent_inputs"):
        return None  # a file a check skipped for lack of (or refused) is now there, or another copy
    for item in findings.get("provenance") or []:
        location, sha256 = item.get("location"), item.get("sha256")
        if location and sha256 and (not Path(location).is_file() or sha256_of(Path(location)) != sha256):
            return None
    kinds = {f"{job.audit}.findings.json": "findings", f"{job.audit}.html": "html", f"{job.audit}.ipynb": "notebook"}
    return ReusedReport(job.audit, str(record.get("run_id")), {kinds[name]: name for name in files if name in kinds})


def remember(job: AuditJob, current: str, files: Mapping[str, str]) -> None:
    """Record a successful run's report for the next run to reuse."""
    reports = Path(job.reports_dir)
    names = [name for kind, name in files.items() if kind in ("findings", "html", "notebook")]
    digests = {name: sha256_of(reports / name) for name in names if (reports / name).is_file()}
    findings = _read_findings(reports / files["findings"]) if "findings" in files else None
    if findings is None or len(digests) != len(names):
        forget(job)
        return
    atomic_write_text(record_path(reports, job.audit), json.dumps(
        {"format": RECORD_FORMAT, "audit": job.audit, "fingerprint": current, "run_id": job.run_id,
         "files": digests, "absent_inputs": _absent_inputs(findings)}, indent=1) + "\n")


def _read_findings(path: Path) -> dict[str, Any] | None:
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return payload if isinstance(payload, dict) else None


def _absent_inputs(findings: Mapping[str, Any]) -> dict[str, str | None]:
    """Each file a skipped check lacked or refused (`dataset/file`), with its data cache copy's sha256 (or None)."""
    named: set[str] = set()
    for check in findings.get("checks", []):
        meta = check.get("meta") or {}
        if check.get("status") == "skipped":
            named.update(str(key) for key in meta.get("missing") or () if ":" not in str(key))
            named.update(str(key) for key in meta.get("rejected") or {})
    cache = paths.data_cache_dir()
    return {key: sha256_of(cache / key) if (cache / key).is_file() else None for key in sorted(named)}


def forget(job: AuditJob) -> None:
    record_path(Path(job.reports_dir), job.audit).unlink(missing_ok=True)


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _strings(item)


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, sort_keys=True, default=str))
