"""Executing one audit notebook with papermill and publishing its files under the audit's name."""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from audit_lib.runner.html import export_html
from audit_lib.runner.plan import AuditJob

REPORT_FILE_MODE = 0o644  # reports are for sharing, whatever wrote them (papermill, nbconvert, our writers)
ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


@dataclass(frozen=True)
class NotebookFailure:
    """Where and how a notebook stopped: its code cell number (1-based), exception type and message."""

    cell: int | None
    execution_count: int | None
    error_type: str
    message: str
    cell_source: str = ""

    def describe(self) -> str:
        where = f"cell {self.cell}" if self.cell is not None else "before any cell ran"
        if self.execution_count is not None:
            where += f" (In [{self.execution_count}])"
        return f"{where}: {self.error_type}: {self.message}"


@dataclass(frozen=True)
class AuditOutcome:
    """The result of running one audit notebook."""

    audit: str
    notebook: str
    params: Mapping[str, Any]
    ok: bool
    duration_s: float
    failure: NotebookFailure | None = None
    files: Mapping[str, str] = field(default_factory=dict)  # kind -> file name inside the reports dir
    # The run whose report this is when nothing the audit depends on changed since (`runner.reuse`): not re-run.
    reused_from: str | None = None


def execute_job(job: AuditJob) -> AuditOutcome:
    """Run one notebook (in a worker process), publish its files under the audit's name, export HTML."""
    import papermill
    from papermill.exceptions import PapermillExecutionError

    shutil.rmtree(job.staging_dir, ignore_errors=True)
    job.staging_dir.mkdir(parents=True)
    os.environ.update(job.env)
    started = time.monotonic()
    failure: NotebookFailure | None = None
    try:
        papermill.execute_notebook(
            job.notebook, str(job.staging_notebook), parameters=dict(job.params), kernel_name=job.kernel_name,
            cwd=str(Path(job.notebook).parent), progress_bar=False, start_timeout=120,
            execution_timeout=job.cell_timeout_s)
    except PapermillExecutionError as exc:
        failure = NotebookFailure(_code_cell_number(job.notebook, exc.source), exc.exec_count, exc.ename,
                                  _clean(exc.evalue), _clean(exc.source)[:2000])
    except Exception as exc:  # kernel death, cell timeout, missing kernel: report, never crash the batch
        failure = NotebookFailure(None, None, type(exc).__name__, _clean(str(exc)))
    duration = time.monotonic() - started
    staged = _staged_files(job)
    if failure is None and "findings" not in staged:
        failure = NotebookFailure(None, None, "MissingFindings",
                                  "the notebook finished but wrote no <audit>.findings.json "
                                  "(its last cell must call audit.write())")
    if job.staging_notebook.is_file():
        try:
            export_html(job.staging_notebook, job.staging_dir / f"{job.audit}.html", with_code=job.with_code,
                        title=job.audit, findings_path=staged.get("findings"), display_title=job.title or None)
        except Exception as exc:  # an export failure must not hide the notebook's own result
            if failure is None:
                failure = NotebookFailure(None, None, f"HTMLExportError.{type(exc).__name__}", _clean(str(exc)))
    files = publish_outputs(job, succeeded=failure is None)
    shutil.rmtree(job.staging_dir, ignore_errors=True)
    return AuditOutcome(job.audit, Path(job.notebook).stem, dict(job.params), failure is None, round(duration, 2),
                        failure, files)


FAILED_SUFFIX = ".failed"


def _staged_files(job: AuditJob) -> dict[str, Path]:
    found: dict[str, Path] = {}
    if job.staging_notebook.is_file():
        found["notebook"] = job.staging_notebook
    staged_findings = sorted(job.staging_dir.glob("*.findings.json"))
    if len(staged_findings) == 1:
        found["findings"] = staged_findings[0]
    return found


def publish_outputs(job: AuditJob, *, succeeded: bool) -> dict[str, str]:
    """Move the staged files into the reports dir under the audit's name, only when the run succeeded.

    A failed run never replaces the last good report: its notebook and HTML land beside it as
    `<audit>.failed.ipynb` / `<audit>.failed.html`, and the last good files (if any) stay as they were.
    """
    reports = Path(job.reports_dir)
    if not succeeded:
        files: dict[str, str] = {}
        for kind, name in (("notebook", f"{job.audit}.ipynb"), ("html", f"{job.audit}.html")):
            staged = job.staging_dir / name
            if staged.is_file():
                failed_name = f"{job.audit}{FAILED_SUFFIX}{Path(name).suffix}"
                _place(staged, reports / failed_name)
                files[f"failed_{kind}"] = failed_name
        for kind, name in (("html", f"{job.audit}.html"), ("findings", f"{job.audit}.findings.json")):
            if (reports / name).is_file():
                files[f"last_good_{kind}"] = name
        return files
    staged_findings = sorted(job.staging_dir.glob("*.findings.json"))
    written_as = staged_findings[0].name[: -len(".findings.json")] if len(staged_findings) == 1 else job.audit
    incoming = [staged for staged in sorted(job.staging_dir.iterdir()) if staged.is_file()]
    # evidence CSVs from before the per-audit folders, and the failed run's files this success replaces
    for stale in [*reports.glob(f"{job.audit}.*.csv"), *reports.glob(f"{job.audit}{FAILED_SUFFIX}.*")]:
        stale.unlink(missing_ok=True)
    _place_folder(job.staging_dir / written_as, reports / job.audit)
    files = {}
    for staged in incoming:
        name = staged.name
        if name.startswith(written_as + ".") and written_as != job.audit:
            name = job.audit + name[len(written_as):]
        if name.endswith(".findings.json") and written_as != job.audit:
            payload = json.loads(staged.read_text(encoding="utf-8"))
            payload["notebook_audit"] = payload.get("audit")
            payload["audit"] = job.audit
            staged.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
        _place(staged, reports / name)
        kind = {f"{job.audit}.ipynb": "notebook", f"{job.audit}.findings.json": "findings",
                f"{job.audit}.html": "html"}.get(name)
        if kind:
            files[kind] = name
    return files


def _place_folder(staged: Path, target: Path) -> None:
    """Swap in the run's evidence folder (`<audit>/`).

    The old one is renamed aside, then removed; a run without evidence leaves no folder behind."""
    if target.is_dir():
        aside = target.with_name(f".{target.name}.replaced-{os.getpid()}")
        shutil.rmtree(aside, ignore_errors=True)
        os.replace(target, aside)
        shutil.rmtree(aside, ignore_errors=True)
    if staged.is_dir():
        os.replace(staged, target)
        for path in (target, *target.rglob("*")):
            path.chmod(REPORT_FILE_MODE | (0o111 if path.is_dir() else 0))


def _place(staged: Path, target: Path) -> None:
    os.replace(staged, target)  # same filesystem (staging lives inside the reports dir): atomic
    target.chmod(REPORT_FILE_MODE)


def _code_cell_number(notebook_path: str, failing_source: str) -> int | None:
    """1-based position of the failing cell among the original notebook's code cells."""
    import nbformat

    try:
        notebook = nbformat.read(notebook_path, as_version=4)
    except Exception:
        return None
    code_cells = [c for c in notebook.cells if c.get("cell_type") == "code"]
    for number, cell in enumerate(code_cells, start=1):
        if str(cell.source).strip() == str(failing_source).strip():
            return number
    return None


def _clean(text: str) -> str:
    return ANSI_ESCAPE.sub("", str(text)).strip()


def outcome_to_json(outcome: AuditOutcome) -> dict[str, Any]:
    payload = asdict(outcome)
    payload["status"] = "ok" if outcome.ok else "failed"
    payload["files"] = dict(outcome.files)
    payload["params"] = dict(outcome.params)
    return payload


def outcome_from_json(payload: Mapping[str, Any]) -> AuditOutcome:
    failure = payload.get("failure")
    return AuditOutcome(payload["audit"], payload["notebook"], dict(payload["params"]), bool(payload["ok"]),
                        float(payload["duration_s"]), NotebookFailure(**failure) if failure else None,
                        dict(payload.get("files") or {}), payload.get("reused_from"))
