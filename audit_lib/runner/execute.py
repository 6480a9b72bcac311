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
    files = publish_outputs(job)
    if failure is None and "findings" not in files:
        failure = NotebookFailure(None, None, "MissingFindings",
                                  "the notebook finished but wrote no <audit>.findings.json "
                                  "(its last cell must call builder.write())")
    if "notebook" in files:
        try:
            html_name = f"{job.audit}.html"
            export_html(Path(job.reports_dir) / files["notebook"], Path(job.reports_dir) / html_name,
                        with_code=job.with_code, title=job.audit)
            files = dict(files, html=html_name)
        except Exception as exc:  # an export failure must not hide the notebook's own result
            if failure is None:
                failure = NotebookFailure(None, None, f"HTMLExportError.{type(exc).__name__}", _clean(str(exc)))
    shutil.rmtree(job.staging_dir, ignore_errors=True)
    return AuditOutcome(job.audit, Path(job.notebook).stem, dict(job.params), failure is None, round(duration, 2),
                        failure, files)


def publish_outputs(job: AuditJob) -> dict[str, str]:
    """Move the staged files into the reports dir, named after the audit (an alias renames its base's files)."""
    reports = Path(job.reports_dir)
    for stale in [reports / f"{job.audit}.findings.json", *reports.glob(f"{job.audit}.*.csv")]:
        stale.unlink(missing_ok=True)
    files: dict[str, str] = {}
    staged_findings = sorted(job.staging_dir.glob("*.findings.json"))
    written_as = staged_findings[0].name[: -len(".findings.json")] if len(staged_findings) == 1 else job.audit
    for staged in sorted(job.staging_dir.iterdir()):
        if not staged.is_file():
            continue
        name = staged.name
        if name.startswith(written_as + ".") and written_as != job.audit:
            name = job.audit + name[len(written_as):]
        if name.endswith(".findings.json") and written_as != job.audit:
            payload = json.loads(staged.read_text(encoding="utf-8"))
            payload["notebook_audit"] = payload.get("audit")
            payload["audit"] = job.audit
            staged.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
        os.replace(staged, reports / name)
        (reports / name).chmod(REPORT_FILE_MODE)
        if name == f"{job.audit}.ipynb":
            files["notebook"] = name
        elif name == f"{job.audit}.findings.json":
            files["findings"] = name
    return files


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
                        dict(payload.get("files") or {}))
