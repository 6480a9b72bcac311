"""Batch runner: validate, lock the reports folder, run the audit notebooks, record the run.

Each notebook runs in a worker process; the index and summary are rewritten after each audit.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TextIO

from audit_lib import paths
from audit_lib.plugin import AuditPlugin
from audit_lib.runner.child import RESULT_MARKER, job_to_json, run_job_in_child, stop_running_children, worker_main
from audit_lib.runner.execute import AuditOutcome, outcome_to_json
from audit_lib.runner.gate import GATE_STATUSES, Gate
from audit_lib.runner.history import record_run
from audit_lib.runner.index_page import write_index_and_summary
from audit_lib.runner.junit import write_junit
from audit_lib.runner.lock import reports_lock
from audit_lib.runner.order import longest_first, previous_durations
from audit_lib.runner.plan import DEFAULT_CELL_TIMEOUT_S, STAGING_DIR_NAME, AuditJob, plan_jobs, staging_root_for
from audit_lib.runner.progress import ProgressDisplay
from audit_lib.runner import reuse
from audit_lib.stamp import StampClock
from audit_lib.verdict_cache import NO_CACHE_ENV, caching_enabled
from audit_lib.worker_budget import budget_size, create_budget

__all__ = ["EXIT_BAD_ARGUMENTS", "EXIT_BUSY", "EXIT_GATE", "EXIT_NOTEBOOK_FAILED", "EXIT_OK", "FAIL_ON_CHOICES",
           "RESULT_MARKER", "RunSummary", "job_to_json", "missing_inputs", "rejected_inputs", "run_audits",
           "run_job_in_child", "worker_main"]

FAIL_ON_CHOICES = GATE_STATUSES  # `--fail-on` takes any comma list of these (audit_lib.runner.gate)
EXIT_OK = 0
EXIT_NOTEBOOK_FAILED = 1  # wins over EXIT_GATE: a gate cannot pass judgement on an audit that did not finish
EXIT_BAD_ARGUMENTS = 2
EXIT_GATE = 3
EXIT_BUSY = 4  # `--no-wait` and another run holds the reports folder


def missing_inputs(checks_by_audit: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[str, list[str]]:
    """Files that skipped checks name in `meta.missing`, no copy found: file key -> audits that needed it.

    A file whose copy was found and refused is in `rejected_inputs` instead."""
    return {key: users for (key, code), users in _skipped_files(checks_by_audit).items() if code is None}


def rejected_inputs(checks_by_audit: Mapping[str, Sequence[Mapping[str, Any]]]
                    ) -> dict[str, tuple[str, list[str]]]:
    """Data files whose copy was found but refused (`meta.rejected`): file key -> (reason code, audits)."""
    return {key: (code, users) for (key, code), users in _skipped_files(checks_by_audit).items() if code is not None}


def _skipped_files(checks_by_audit: Mapping[str, Sequence[Mapping[str, Any]]]
                   ) -> dict[tuple[str, str | None], list[str]]:
    needed_by: dict[tuple[str, str | None], list[str]] = {}
    for audit, checks in checks_by_audit.items():
        for check in checks:
            if check.get("status") != "skipped":
                continue
            meta = check.get("meta") or {}
            rejected = check.get("rejected") or meta.get("rejected") or {}
            for key in check.get("missing") or meta.get("missing", ()):
                if ":" in str(key):  # "check:<id>", "param:<name>": not a file to supply
                    continue
                users = needed_by.setdefault((str(key), rejected.get(key)), [])
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

    @property
    def finished_checks(self) -> dict[str, tuple[Mapping[str, Any], ...]]:
        """Checks of the audits that finished in this run (a failed audit's shown checks are its last good run's)."""
        failed = {o.audit for o in self.failed}
        return {audit: checks for audit, checks in self.checks.items() if audit not in failed}

    def gate_hits(self, fail_on: Gate | str | None, *, include_synthetic: bool = False) -> dict[str, int]:
        """Per audit that finished, how many checks fail the gate (`fail_on`: a Gate or a comma list)."""
        gate = Gate.of(fail_on, include_synthetic=include_synthetic)
        return gate.hits(self.finished_checks) if gate else {}

    def gate_exempted(self, fail_on: Gate | str | None, *, include_synthetic: bool = False) -> dict[str, int]:
        """Per audit, checks with a gated status left out as findings on synthetic data."""
        gate = Gate.of(fail_on, include_synthetic=include_synthetic)
        return gate.exempted(self.finished_checks) if gate else {}

    def exit_code(self, fail_on: Gate | str | None = None, *, include_synthetic: bool = False) -> int:
        if self.failed:
            return EXIT_NOTEBOOK_FAILED
        if self.gate_hits(fail_on, include_synthetic=include_synthetic):
            return EXIT_GATE
        return EXIT_OK


def run_audits(names: Sequence[str] = (), raw_params: Iterable[tuple[str, str]] = (), *,
               mirror: str | os.PathLike[str] | None = None, executor: str | None = None, with_code: bool = False,
               jobs: int = 1, reports_dir: Path | None = None, kernel_name: str | None = None,
               cell_timeout_s: int | None = DEFAULT_CELL_TIMEOUT_S,
               plugins: Mapping[str, AuditPlugin[Any, Any]] | None = None,
               progress: TextIO | None = sys.stderr, junit: Path | None = None, include_synthetic: bool = False,
               wait_for_lock: bool = True, only: Sequence[str] = (), no_cache: bool = False,
               reuse_reports: bool = True) -> RunSummary:
    """Validate everything, take the reports folder's lock, then run the audits `jobs` at a time.

    The lock is waited for, or `ReportsFolderBusyError` raised without `wait_for_lock`; the index is rewritten after
    each audit. `only` names the checks to run (with what they need); empty runs every check. An audit whose code,
    data and parameters are unchanged since its last good report keeps that report (`runner.reuse`), and sandbox
    verdicts come from `audit_lib.verdict_cache`; `no_cache` does neither, `reuse_reports=False` only the first."""
    planned = plan_jobs(names, raw_params, mirror=mirror, executor=executor, with_code=with_code,
                        reports_dir=reports_dir, kernel_name=kernel_name, cell_timeout_s=cell_timeout_s,
                        plugins=plugins, only=only)
    if no_cache:
        planned = [replace(job, env={**job.env, NO_CACHE_ENV: "1"}) for job in planned]
    target = Path(planned[0].reports_dir) if planned else (reports_dir or paths.reports_dir()).resolve()
    command = "python -m audit_lib run " + " ".join(job.audit for job in planned)
    with reports_lock(target, wait=wait_for_lock, stream=progress, command=command):
        run_info = {"kernel": planned[0].kernel_name if planned else None,
                    "mirror": display_path(Path(mirror).resolve()) if mirror else
                    display_path(Path(os.environ["AUDIT_MIRROR"])) if os.environ.get("AUDIT_MIRROR") else None,
                    "executor": executor, "with_code": with_code, "jobs": jobs}
        return _run_locked(planned, target, run_info, jobs=max(1, jobs), progress=progress, junit=junit,
                           include_synthetic=include_synthetic, reuse_reports=reuse_reports and not no_cache,
                           record_reports=caching_enabled())


def _run_locked(planned: list[AuditJob], target: Path, run_info: dict[str, Any], *, jobs: int,
                progress: TextIO | None, junit: Path | None, include_synthetic: bool,
                reuse_reports: bool = True, record_reports: bool = True) -> RunSummary:
    staging = staging_root_for(target, planned[0].run_id if planned else "empty-run")
    workers = budget_size()
    run_info = dict(run_info, workers=workers)
    clock = StampClock(workers=workers)
    finished: list[AuditOutcome] = []
    memo: dict[str, str] = {}
    code = reuse.package_digest() if planned and record_reports else ""
    fingerprints = {job.audit: reuse.fingerprint(job, code_digest=code, memo=memo) for job in planned} \
        if record_reports else {}

    def publish_index(stamp: Mapping[str, Any] | None = None, **about_run: Any) -> tuple[Path, Path, dict[str, Any]]:
        return write_index_and_summary(target, [outcome_to_json(o) for o in finished], {**run_info, **about_run},
                                       stamp=stamp)

    def on_finished(outcome: AuditOutcome) -> None:
        if outcome.reused_from is None and record_reports:
            job = next(job for job in planned if job.audit == outcome.audit)
            if outcome.ok:
                reuse.remember(job, fingerprints[job.audit], outcome.files)
            else:
                reuse.forget(job)
        finished.append(outcome)
        publish_index()  # every report's "← index" link stays live, and the index shows what finished

    try:
        budget_env = create_budget(staging / "worker-budget", workers)
        planned = [replace(job, env={**job.env, **budget_env}) for job in planned]
        kept = {job.audit: reuse.reusable(job, fingerprints[job.audit]) for job in planned} \
            if reuse_reports and record_reports else {}
        for job in planned:
            report = kept.get(job.audit)
            if report is not None:
                if progress is not None:
                    print(f"reused  {job.audit}: nothing it depends on changed since run {report.run_id}",
                          file=progress)
                on_finished(AuditOutcome(job.audit, Path(job.notebook).stem, dict(job.params), True, 0.0,
                                         files=dict(report.files), reused_from=report.run_id))
        to_run = [job for job in planned if kept.get(job.audit) is None]
        # with notebooks side by side, the longest starts first so none is left to run alone at the end
        started_first = longest_first(to_run, previous_durations(target)) if jobs > 1 else to_run
        try:
            with _terminate_as_interrupt():
                _execute_all(started_first, jobs, ProgressDisplay(progress, started_first), on_finished)
        except KeyboardInterrupt:
            done = {outcome.audit for outcome in finished}
            publish_index(stamp=clock.finish(jobs=jobs).to_json(),
                          interrupted=[job.audit for job in planned if job.audit not in done])
            raise
    finally:
        remove_staging(staging)
    stamp = clock.finish(jobs=jobs)
    by_plan = {o.audit: o for o in finished}
    outcomes = [by_plan[job.audit] for job in planned]
    finished[:] = outcomes
    index_path, summary_path, checks = publish_index(stamp.to_json())
    # A failed audit's findings file is its last good run's: recorded there already, not a result of this run.
    record_run(target, stamp.started_at.replace(":", "-"), [o.audit for o in outcomes if o.ok])
    if junit is not None:
        write_junit(junit, [outcome_to_json(o) for o in outcomes], checks, include_synthetic=include_synthetic)
    return RunSummary(tuple(outcomes), target, index_path, summary_path, checks)


def remove_staging(staging: Path) -> None:
    """Remove this run's own staging folder, and `.staging/` itself once no run has one there."""
    shutil.rmtree(staging, ignore_errors=True)
    with contextlib.suppress(OSError):  # another run's folder is still inside: leave it
        staging.parent.rmdir()


@contextlib.contextmanager
def _terminate_as_interrupt() -> Iterator[None]:
    """SIGTERM raises KeyboardInterrupt in the body, so a killed batch cleans up as a Ctrl-C'd one does."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def display_path(path: Path) -> str:
    """A path as a report may show it: relative to the project, else only its last two parts."""
    root = paths.project_root().resolve()
    resolved = path.resolve()
    if resolved.is_relative_to(root):
        return str(resolved.relative_to(root))
    return "<outside the project>/" + "/".join(resolved.parts[-2:])


def _execute_all(planned: list[AuditJob], jobs: int, display: ProgressDisplay,
                 on_finished: Callable[[AuditOutcome], None]) -> None:
    """Run the jobs `jobs` at a time, calling `on_finished` as each ends.

    On interrupt: stop the running workers, start no other, and re-raise."""
    if not planned:
        return
    pool = ThreadPoolExecutor(max_workers=min(jobs, len(planned)), thread_name_prefix="audit")
    pending: dict[Future[AuditOutcome], AuditJob] = {pool.submit(run_job_in_child, job): job for job in planned}
    try:
        while pending:
            done, _ = wait(pending, timeout=display.poll_interval_s, return_when=FIRST_COMPLETED)
            for future in done:
                pending.pop(future)
                outcome = future.result()
                display.finished(outcome)
                on_finished(outcome)
            display.tick(list(pending.values()))
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        while not all(future.done() for future in pending):  # a worker started between two stops is stopped too
            stop_running_children()
            wait(pending, timeout=1.0)
        raise
    pool.shutdown(wait=True)
