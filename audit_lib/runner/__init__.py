"""Batch runner: plan (validate before any kernel starts), execute notebooks, export HTML, write the index."""

from audit_lib.runner.batch import (
    EXIT_BAD_ARGUMENTS,
    EXIT_BUSY,
    EXIT_GATE,
    EXIT_NOTEBOOK_FAILED,
    EXIT_OK,
    FAIL_ON_CHOICES,
    RunSummary,
    missing_inputs,
    rejected_inputs,
    run_audits,
    run_job_in_child,
)
from audit_lib.runner.execute import AuditOutcome, NotebookFailure, execute_job
from audit_lib.runner.gate import Gate, parse_fail_on
from audit_lib.runner.html import export_html
from audit_lib.runner.lock import ReportsFolderBusyError
from audit_lib.runner.plan import DEFAULT_CELL_TIMEOUT_S, STAGING_DIR_NAME, AuditJob, plan_jobs

__all__ = [
    "DEFAULT_CELL_TIMEOUT_S", "EXIT_BAD_ARGUMENTS", "EXIT_BUSY", "EXIT_GATE", "EXIT_NOTEBOOK_FAILED", "EXIT_OK",
    "FAIL_ON_CHOICES", "STAGING_DIR_NAME", "AuditJob", "AuditOutcome", "Gate", "NotebookFailure",
    "ReportsFolderBusyError", "RunSummary", "execute_job", "export_html", "missing_inputs", "parse_fail_on",
    "plan_jobs", "rejected_inputs", "run_audits", "run_job_in_child",
]
