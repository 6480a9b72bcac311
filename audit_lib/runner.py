"""Batch runner: validate, execute audit notebooks with papermill in parallel, export HTML, write the index."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TextIO

from audit_lib import paths
from audit_lib.catalogue import discover_audits, resolve_parameters, select_audits
from audit_lib.errors import ParameterError
from audit_lib.atomic_files import atomic_write_text
from audit_lib.findings import SEVERITY
from audit_lib.index_page import write_index_and_summary

PROJECT_KERNEL = "benchaudit"
FALLBACK_KERNEL = "python3"
DEFAULT_CELL_TIMEOUT_S = 3600
STAGING_DIR_NAME = ".staging"
FAIL_ON_CHOICES = ("defect", "quirk")
REPORT_FILE_MODE = 0o644  # reports are for sharing, whatever wrote them (papermill, nbconvert, our writers)
ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")

EXIT_OK = 0
EXIT_NOTEBOOK_FAILED = 1
EXIT_BAD_ARGUMENTS = 2
EXIT_GATE = 3


@dataclass(frozen=True)
class AuditJob:
    """Everything a worker process needs to execute one audit (plain, picklable values)."""

    audit: str
    notebook: str
    params: Mapping[str, Any]
    kernel_name: str
    reports_dir: str
    env: Mapping[str, str]
    with_code: bool
    cell_timeout_s: int | None

    @property
    def staging_dir(self) -> Path:
        return Path(self.reports_dir) / STAGING_DIR_NAME / self.audit

    @property
    def staging_notebook(self) -> Path:
        return self.staging_dir / f"{self.audit}.ipynb"


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


MISSING_FILE_PATTERN = re.compile(r"(\S+/\S+) is not available")


def missing_inputs(checks_by_audit: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[str, list[str]]:
    """Registered files that skipped checks name as unavailable: file key -> audits that needed it."""
    needed_by: dict[str, list[str]] = {}
    for audit, checks in checks_by_audit.items():
        for check in checks:
            if check.get("status") != "skipped":
                continue
            for key in MISSING_FILE_PATTERN.findall(str(check.get("summary", ""))):
                users = needed_by.setdefault(key, [])
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


# ----------------------------------------------------------------------------------------------- planning


def available_kernels() -> set[str]:
    from jupyter_client.kernelspec import KernelSpecManager

    return set(KernelSpecManager().find_kernel_specs())


def choose_kernel(requested: str | None = None) -> str:
    """The project's kernel when registered, else `python3`; an explicit name must exist."""
    kernels = available_kernels()
    if requested:
        if requested not in kernels:
            raise ParameterError(f"kernel {requested!r} is not registered (available: {', '.join(sorted(kernels))}); "
                                 "`make audit` registers the project's kernel", field="kernel")
        return requested
    return PROJECT_KERNEL if PROJECT_KERNEL in kernels else FALLBACK_KERNEL


def plan_jobs(names: Sequence[str], raw_params: Iterable[tuple[str, str]] = (), *,
              mirror: str | os.PathLike[str] | None = None, executor: str | None = None, with_code: bool = False,
              reports_dir: Path | None = None, kernel_name: str | None = None,
              cell_timeout_s: int | None = DEFAULT_CELL_TIMEOUT_S,
              notebooks_dir: Path | None = None) -> list[AuditJob]:
    """Validate audits, parameters, mirror and kernel, before any kernel starts."""
    catalogue = discover_audits(notebooks_dir)
    audits = select_audits(names, catalogue)
    mirror_path = None
    if mirror is not None:
        mirror_path = Path(mirror).expanduser().resolve()
        if not mirror_path.is_dir():
            raise ParameterError(f"--mirror {mirror}: no such folder (expected <dataset>/<file> inside)",
                                 field="mirror")
    injected = {"executor": executor, "mirror": str(mirror_path) if mirror_path else None}
    params = resolve_parameters(audits, list(raw_params), injected)
    kernel = choose_kernel(kernel_name)
    target = (reports_dir or paths.reports_dir()).resolve()
    base_env = {"AUDIT_PROJECT_ROOT": str(paths.project_root()), "AUDIT_DATA_CACHE": str(paths.data_cache_dir())}
    # Kernels run with cwd notebooks/, so a relative AUDIT_MIRROR from the caller is made absolute here.
    env_mirror = paths.mirror_dir(mirror_path)
    if env_mirror is not None:
        base_env["AUDIT_MIRROR"] = str(env_mirror)
    if executor:
        base_env["AUDIT_EXECUTOR"] = executor
    python_path = [str(paths.project_root())] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    base_env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(python_path))
    jobs = []
    for audit in audits:
        env = dict(base_env, AUDIT_REPORTS_DIR=str(target / STAGING_DIR_NAME / audit.name))
        jobs.append(AuditJob(audit.name, str(audit.notebook), params[audit.name], kernel, str(target), env,
                             with_code, cell_timeout_s))
    return jobs


# ----------------------------------------------------------------------------------------------- execution


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


REPORT_TEMPLATE_NAME = "benchaudit_report.html.j2"
# The lab template, without the scripts it loads from CDNs: a report must open offline without console errors.
REPORT_TEMPLATE = """{%- extends 'index.html.j2' -%}
{%- block html_head_js -%}{%- endblock html_head_js -%}
{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
{%- block body_header -%}
{{ super() }}
<nav style="font:13px system-ui,sans-serif;padding:6px 12px;border-bottom:1px solid #d0d7de">
<a href="index.html">&larr; all audits</a> &middot; {{ resources.benchaudit_nav | escape }}</nav>
{%- endblock body_header -%}
"""


def export_html(notebook_path: Path, html_path: Path, *, with_code: bool, title: str) -> Path:
    """A self-contained HTML report: images inline, no external scripts, code hidden unless `with_code`."""
    import jinja2
    import nbformat
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(template_name="lab", extra_loaders=[jinja2.DictLoader({REPORT_TEMPLATE_NAME:
                                                                                   REPORT_TEMPLATE})])
    exporter.template_file = REPORT_TEMPLATE_NAME
    exporter.exclude_input = not with_code
    exporter.exclude_input_prompt = not with_code
    exporter.exclude_output_prompt = True
    exporter.embed_images = True
    notebook = nbformat.read(str(notebook_path), as_version=4)
    notebook.metadata["title"] = f"benchaudit · {title}"
    generated = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    resources = {"metadata": {"name": title}, "benchaudit_nav": f"audit {title} · generated {generated}"}
    body, _ = exporter.from_notebook_node(notebook, resources=resources)
    atomic_write_text(html_path, body)
    return html_path


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


# ----------------------------------------------------------------------------------------------- batch


def run_audits(names: Sequence[str] = (), raw_params: Iterable[tuple[str, str]] = (), *,
               mirror: str | os.PathLike[str] | None = None, executor: str | None = None, with_code: bool = False,
               jobs: int = 1, reports_dir: Path | None = None, kernel_name: str | None = None,
               cell_timeout_s: int | None = DEFAULT_CELL_TIMEOUT_S, notebooks_dir: Path | None = None,
               progress: TextIO | None = sys.stderr) -> RunSummary:
    """Validate everything, then execute the audits `jobs` at a time and write the index and summary."""
    planned = plan_jobs(names, raw_params, mirror=mirror, executor=executor, with_code=with_code,
                        reports_dir=reports_dir, kernel_name=kernel_name, cell_timeout_s=cell_timeout_s,
                        notebooks_dir=notebooks_dir)
    target = Path(planned[0].reports_dir) if planned else (reports_dir or paths.reports_dir()).resolve()
    target.mkdir(parents=True, exist_ok=True)
    display = ProgressDisplay(progress, planned)
    outcomes = _execute_all(planned, max(1, jobs), display)
    run_info = {"kernel": planned[0].kernel_name if planned else None,
                "mirror": str(Path(mirror).resolve()) if mirror else os.environ.get("AUDIT_MIRROR"),
                "executor": executor, "with_code": with_code, "jobs": jobs}
    index_path, summary_path, checks = write_index_and_summary(target, [outcome_to_json(o) for o in outcomes],
                                                                 run_info)
    shutil.rmtree(target / STAGING_DIR_NAME, ignore_errors=True)
    return RunSummary(tuple(outcomes), target, index_path, summary_path, checks)


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
    command = [sys.executable, "-m", "audit_lib.runner_worker"]
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


def outcome_from_json(payload: Mapping[str, Any]) -> AuditOutcome:
    failure = payload.get("failure")
    return AuditOutcome(payload["audit"], payload["notebook"], dict(payload["params"]), bool(payload["ok"]),
                        float(payload["duration_s"]), NotebookFailure(**failure) if failure else None,
                        dict(payload.get("files") or {}))


def worker_main() -> None:
    """`python -m audit_lib.runner_worker`: read one job as JSON on stdin, print its outcome as the last line."""
    job = AuditJob(**json.loads(sys.stdin.read()))
    outcome = execute_job(job)
    print(RESULT_MARKER + json.dumps(outcome_to_json(outcome)), flush=True)


class ProgressDisplay:
    """Progress lines: each audit's start and end, and every few seconds the cells done by the running ones."""

    poll_interval_s = 1.0
    heartbeat_s = 10.0  # at most one "running" line this often, when a cell finished
    quiet_limit_s = 60.0  # and at least one this often while anything runs

    def __init__(self, stream: TextIO | None, planned: Sequence[AuditJob]) -> None:
        self.stream = stream
        self.total = len(planned)
        self.done = 0
        self.started_at = time.monotonic()
        self._last_line = self.started_at
        self._cells: dict[str, tuple[int, int]] = {}
        self._audit_started: dict[str, float] = {}
        if stream and planned:
            self._write(f"running {self.total} audit(s) on kernel {planned[0].kernel_name!r}: "
                        + ", ".join(job.audit for job in planned))

    def _write(self, line: str) -> None:
        if self.stream:
            elapsed = time.monotonic() - self.started_at
            print(f"[{elapsed:6.1f}s] {line}", file=self.stream, flush=True)
            self._last_line = time.monotonic()

    def tick(self, running: Sequence[AuditJob]) -> None:
        now = time.monotonic()
        changed = False
        states = []
        for job in running:
            cells = _cell_progress(job.staging_notebook)
            if cells is None:
                continue
            if job.audit not in self._audit_started:
                self._audit_started[job.audit] = now
                self._write(f"{job.audit}: started ({cells[1]} code cells)")
            changed |= self._cells.get(job.audit) != cells
            self._cells[job.audit] = cells
            states.append(f"{job.audit} {cells[0]}/{cells[1]} cells ({now - self._audit_started[job.audit]:.0f}s)")
        quiet_for = now - self._last_line
        if states and ((changed and quiet_for >= self.heartbeat_s) or quiet_for >= self.quiet_limit_s):
            self._write("running: " + ", ".join(states))

    def finished(self, outcome: AuditOutcome) -> None:
        self.done += 1
        prefix = f"({self.done}/{self.total}) {outcome.audit}"
        if outcome.ok:
            self._write(f"{prefix}: ok in {outcome.duration_s:.1f}s")
        else:
            assert outcome.failure is not None
            self._write(f"{prefix}: FAILED after {outcome.duration_s:.1f}s at {outcome.failure.describe()}")


def _cell_progress(notebook_path: Path) -> tuple[int, int] | None:
    """(completed, total) code cells of a notebook papermill is writing, or None before it exists."""
    try:
        payload = json.loads(notebook_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    code_cells = [c for c in payload.get("cells", []) if c.get("cell_type") == "code"]
    completed = sum(1 for c in code_cells if c.get("metadata", {}).get("papermill", {}).get("status") == "completed")
    return completed, len(code_cells)


def outcome_to_json(outcome: AuditOutcome) -> dict[str, Any]:
    payload = asdict(outcome)
    payload["status"] = "ok" if outcome.ok else "failed"
    payload["files"] = dict(outcome.files)
    payload["params"] = dict(outcome.params)
    return payload
