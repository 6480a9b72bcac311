"""Batch runner: plan (validate before any kernel starts), execute notebooks, export HTML, write the index."""

from audit_lib.runner.batch import (
    EXIT_BAD_ARGUMENTS,
    EXIT_GATE,
    EXIT_NOTEBOOK_FAILED,
    EXIT_OK,
    FAIL_ON_CHOICES,
    RunSummary,
    missing_inputs,
    run_audits,
    run_job_in_child,
)
from audit_lib.runner.execute import AuditOutcome, NotebookFailure, execute_job
from audit_lib.runner.html import export_html
from audit_lib.runner.plan import DEFAULT_CELL_TIMEOUT_S, STAGING_DIR_NAME, AuditJob, plan_jobs

__all__ = [
    "DEFAULT_CELL_TIMEOUT_S", "EXIT_BAD_ARGUMENTS", "EXIT_GATE", "EXIT_NOTEBOOK_FAILED", "EXIT_OK", "FAIL_ON_CHOICES",
    "STAGING_DIR_NAME", "AuditJob", "AuditOutcome", "NotebookFailure", "RunSummary", "execute_job", "export_html",
    "missing_inputs", "plan_jobs", "run_audits", "run_job_in_child",
]
