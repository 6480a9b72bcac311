"""Batch runner: validate, execute audit notebooks in parallel worker processes, write the index and summary."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, TextIO

from audit_lib import paths
from audit_lib.findings import SEVERITY
from audit_lib.plugin import AuditPlugin
from audit_lib.runner.execute import AuditOutcome, NotebookFailure, execute_job, outcome_from_json, outcome_to_json
from audit_lib.runner.history import record_run
from audit_lib.runner.index_page import write_index_and_summary
from audit_lib.runner.junit import write_junit
from audit_lib.runner.plan import DEFAULT_CELL_TIMEOUT_S, STAGING_DIR_NAME, AuditJob, plan_jobs
from audit_lib.runner.progress import ProgressDisplay
from audit_lib.stamp import StampClock
from audit_lib.worker_budget import budget_size, create_budget

# `--fail-on LEVEL` fails the run when any check is at LEVEL or above, in SEVERITY order
# (pass < skipped < quirk < error < defect): `skipped` is how CI says "all data must be there".
FAIL_ON_CHOICES = ("skipped", "quirk", "error", "defect")
EXIT_OK = 0
EXIT_NOTEBOOK_FAILED = 1
EXIT_BAD_ARGUMENTS = 2
EXIT_GATE = 3
def missing_inputs(checks_by_audit: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[str, list[str]]:
    """Data files that skipped checks name in `meta.missing`: file key -> audits that needed it."""
    needed_by: dict[str, list[str]] = {}
    for audit, checks in checks_by_audit.items():
        for check in checks:
            if check.get("status") != "skipped":
                continue
            for key in check.get("missing") or (check.get("meta") or {}).get("missing", ()):
                if ":" in str(key):  # "check:<id>", "param:<name>": not a file to supply
                    continue
                users = needed_by.setdefault(str(key), [])
                if audit not in users:
                    users.append(audit)
    return needed_by


@dataclass(frozen=True)
class RunSummary:
    """A finished batch: every outcome and where the reports are."""

    outcomes: tuple[AuditOutcome, ...]
    reports_dir: Path
    index_path: Path
    summary_path: Path
    checks: Mapping[str, tuple[Mapping[str, Any], ...]]  # audit -> its checks (id, status, summary, ...)

    @property
    def check_statuses(self) -> dict[str, tuple[str, ...]]:
        return {audit: tuple(str(c.get("status")) for c in checks) for audit, checks in self.checks.items()}

    @property
    def failed(self) -> tuple[AuditOutcome, ...]:
        return tuple(o for o in self.outcomes if not o.ok)

    def gate_hits(self, fail_on: str | None) -> dict[str, int]:
        """Per audit, how many checks are at least as severe as `fail_on`."""
        if fail_on is None:
            return {}
        threshold = SEVERITY[fail_on]
        hits = {audit: sum(1 for s in statuses if SEVERITY.get(s, 0) >= threshold)
                for audit, statuses in self.check_statuses.items()}
        return {audit: count for audit, count in hits.items() if count}

    def exit_code(self, fail_on: str | None = None) -> int:
        if self.failed:
            return EXIT_NOTEBOOK_FAILED
        if self.gate_hits(fail_on):
            return EXIT_GATE
        return EXIT_OK


def run_audits(names: Sequence[str] = (), raw_params: Iterable[tuple[str, str]] = (), *,
               mirror: str | os.PathLike[str] | None = None, executor: str | None = None, with_code: bool = False,
               jobs: int = 1, reports_dir: Path | None = None, kernel_name: str | None = None,
               cell_timeout_s: int | None = DEFAULT_CELL_TIMEOUT_S,
               plugins: Mapping[str, AuditPlugin[Any, Any]] | None = None,
               progress: TextIO | None = sys.stderr, junit: Path | None = None) -> RunSummary:
    """Validate everything, then execute the audits `jobs` at a time and write the index and summary."""
    planned = plan_jobs(names, raw_params, mirror=mirror, executor=executor, with_code=with_code,
                        reports_dir=reports_dir, kernel_name=kernel_name, cell_timeout_s=cell_timeout_s,
                        plugins=plugins)
    target = Path(planned[0].reports_dir) if planned else (reports_dir or paths.reports_dir()).resolve()
    target.mkdir(parents=True, exist_ok=True)
    workers = budget_size()
    clock = StampClock(workers=workers)
    budget_env = create_budget(target / STAGING_DIR_NAME / "worker-budget", workers)
    planned = [replace(job, env={**job.env, **budget_env}) for job in planned]
    display = ProgressDisplay(progress, planned)
    outcomes = _execute_all(planned, max(1, jobs), display)
    stamp = clock.finish(jobs=jobs)
    run_info = {"kernel": planned[0].kernel_name if planned else None,
                "mirror": display_path(Path(mirror).resolve()) if mirror else
                display_path(Path(os.environ["AUDIT_MIRROR"])) if os.environ.get("AUDIT_MIRROR") else None,
                "executor": executor, "with_code": with_code, "jobs": jobs, "workers": workers}
    outcome_json = [outcome_to_json(o) for o in outcomes]
    index_path, summary_path, checks = write_index_and_summary(target, outcome_json, run_info,
                                                                 stamp=stamp.to_json())
    # A failed audit's findings file is its last good run's: recorded there already, not a result of this run.
    record_run(target, stamp.started_at.replace(":", "-"), [o.audit for o in outcomes if o.ok])
    if junit is not None:
        write_junit(junit, outcome_json, checks)
    shutil.rmtree(target / STAGING_DIR_NAME, ignore_errors=True)
    return RunSummary(tuple(outcomes), target, index_path, summary_path, checks)


def display_path(path: Path) -> str:
    """A path as a report may show it: relative to the project, else only its last two parts."""
    root = paths.project_root().resolve()
    resolved = path.resolve()
    if resolved.is_relative_to(root):
        return str(resolved.relative_to(root))
    return "<outside the project>/" + "/".join(resolved.parts[-2:])


def _execute_all(planned: list[AuditJob], jobs: int, display: ProgressDisplay) -> list[AuditOutcome]:
    if not planned:
        return []
    outcomes: dict[str, AuditOutcome] = {}
    with ThreadPoolExecutor(max_workers=min(jobs, len(planned)), thread_name_prefix="audit") as pool:
        pending: dict[Future[AuditOutcome], AuditJob] = {pool.submit(run_job_in_child, job): job for job in planned}
        while pending:
            done, _ = wait(pending, timeout=display.poll_interval_s, return_when=FIRST_COMPLETED)
            for future in done:
                job = pending.pop(future)
                outcome = future.result()
                outcomes[job.audit] = outcome
                display.finished(outcome)
            display.tick(list(pending.values()))
    return [outcomes[job.audit] for job in planned]


RESULT_MARKER = "BENCHAUDIT-OUTCOME "


def run_job_in_child(job: AuditJob) -> AuditOutcome:
    """Execute one job in a fresh interpreter: papermill changes the working directory and each kernel needs
    its own environment, so notebooks never share a process (and a crash stays local)."""
    started = time.monotonic()
    command = [sys.executable, "-m", "audit_lib.runner.worker"]
    completed = subprocess.run(command, input=json.dumps(job_to_json(job)), capture_output=True, text=True,
                               env={**os.environ, **job.env}, check=False)
    for line in reversed(completed.stdout.splitlines()):
        if line.startswith(RESULT_MARKER):
            return outcome_from_json(json.loads(line[len(RESULT_MARKER):]))
    tail = "\n".join((completed.stderr or completed.stdout).strip().splitlines()[-15:])
    failure = NotebookFailure(None, None, "WorkerCrashed",
                              f"the runner's worker process exited with code {completed.returncode}: {tail}")
    return AuditOutcome(job.audit, Path(job.notebook).stem, dict(job.params), False,
                        round(time.monotonic() - started, 2), failure)


def job_to_json(job: AuditJob) -> dict[str, Any]:
    payload = asdict(job)
    payload["params"] = dict(job.params)
    payload["env"] = dict(job.env)
    return payload


def worker_main() -> None:
    """`python -m audit_lib.runner.worker`: read one job as JSON on stdin, print its outcome as the last line."""
    job = AuditJob(**json.loads(sys.stdin.read()))
    outcome = execute_job(job)
    print(RESULT_MARKER + json.dumps(outcome_to_json(outcome)), flush=True)
