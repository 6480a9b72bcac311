"""Planning a batch: validate audits, parameters, mirror and kernel before any kernel starts."""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from audit_lib import paths
from audit_lib.errors import ParameterError
from audit_lib.plugin import ONLY_ENV, AuditPlugin
from audit_lib.runner.catalogue import discover_audits, resolve_parameters, select_audits
from audit_lib.work_progress import PROGRESS_FILE_ENV

PROJECT_KERNEL = "benchaudit"
FALLBACK_KERNEL = "python3"
DEFAULT_CELL_TIMEOUT_S = 3600
STAGING_DIR_NAME = ".staging"


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
    title: str = ""
    run_id: str = ""

    @property
    def staging_root(self) -> Path:
        return staging_root_for(Path(self.reports_dir), self.run_id)

    @property
    def staging_dir(self) -> Path:
        return self.staging_root / self.audit

    @property
    def staging_notebook(self) -> Path:
        return self.staging_dir / f"{self.audit}.ipynb"

    @property
    def progress_file(self) -> Path:
        return progress_file_for(self.staging_root, self.audit)


def new_run_id() -> str:
    """A run's own name: UTC time and pid, so two runs on one reports folder never share a staging folder."""
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()) + f"-{os.getpid()}"


def staging_root_for(reports_dir: Path, run_id: str) -> Path:
    """The staging folder private to one run: `reports/.staging/<run-id>/`."""
    return reports_dir / STAGING_DIR_NAME / run_id


def progress_file_for(staging_root: Path, audit: str) -> Path:
    """Where an audit's kernel reports progress within a cell (outside its staging folder: never published)."""
    return staging_root / ".progress" / f"{audit}.json"  # no audit is named ".progress"


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


def absolute_paths(values: Mapping[str, Any], path_names: Sequence[str], cwd: Path | None = None) -> dict[str, Any]:
    """`values` with each relative path parameter that names something in `cwd` made absolute.

    Kernels run in `notebooks/`, so `-p grades_path mine.jsonl` would otherwise name another file there (or none)."""
    here = cwd or Path.cwd()
    resolved = dict(values)
    for name in path_names:
        value = resolved.get(name)
        if isinstance(value, str) and value and not Path(value).expanduser().is_absolute():
            candidate = here / Path(value).expanduser()
            if candidate.exists():
                resolved[name] = str(candidate.resolve())
    return resolved


def plan_jobs(names: Sequence[str], raw_params: Iterable[tuple[str, str]] = (), *,
              mirror: str | os.PathLike[str] | None = None, executor: str | None = None, with_code: bool = False,
              reports_dir: Path | None = None, kernel_name: str | None = None,
              cell_timeout_s: int | None = DEFAULT_CELL_TIMEOUT_S,
              plugins: Mapping[str, AuditPlugin[Any, Any]] | None = None, run_id: str | None = None,
              only: Sequence[str] = ()) -> list[AuditJob]:
    """Validate audits, parameter names, types and values, mirror and kernel, before any kernel starts.

    `only` names checks: each audit then runs those (each must be one of its checks) and what they need.
    """
    audits = select_audits(names, discover_audits(plugins, names))
    mirror_path = None
    if mirror is not None:
        mirror_path = Path(mirror).expanduser().resolve()
        if mirror_path.exists() and not mirror_path.is_dir():
            raise ParameterError(f"--mirror {mirror}: is a file, not a folder; give the folder laid out as "
                                 "<dataset>/<file> (e.g. the folder holding humaneval/)", field="mirror")
        if not mirror_path.is_dir():
            raise ParameterError(f"--mirror {mirror}: no such folder (expected <dataset>/<file> inside)",
                                 field="mirror")
    if executor is not None:
        from audit_lib.sandbox import resolve_executor_name

        resolve_executor_name(executor)
    injected = {"executor": executor, "mirror": str(mirror_path) if mirror_path else None}
    params = resolve_parameters(audits, list(raw_params), injected)
    for audit in audits:
        if audit.plugin is not None:
            params[audit.name] = absolute_paths(params[audit.name], audit.plugin.path_parameters())
            typed = audit.plugin.validate({k: v for k, v in params[audit.name].items()
                                           if k not in audit.fixed_params})
            if audit.plugin.check_names is not None:
                try:
                    audit.plugin.check_names(typed, paths.mirror_dir(mirror_path))
                except ParameterError as exc:  # the hook does not know which audit it serves (mbpp_plus shares it)
                    raise ParameterError(f"{audit.name}: {exc.message}", **{**exc.fields, "audit": audit.name}
                                         ) from None
            declared = [spec.id for spec in audit.plugin.check_specs(typed)]
            unknown = [check_id for check_id in only if check_id not in declared]
            if unknown:
                raise ParameterError(f"--only {','.join(only)}: {audit.name} has no check {', '.join(unknown)}; its "
                                     f"checks: {', '.join(declared)}", audit=audit.name, field="only")
        elif only:
            raise ParameterError(f"--only: {audit.name} declares no checks to choose from", audit=audit.name,
                                 field="only")
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
    run_id = run_id or new_run_id()
    staging = staging_root_for(target, run_id)
    jobs = []
    for audit in audits:
        env = dict(base_env, AUDIT_REPORTS_DIR=str(staging / audit.name), AUDIT_RUN_AS=audit.name,
                   AUDIT_RUN_ID=run_id)  # the verdict cache stamps what this run computed with it
        if only:
            env[ONLY_ENV] = ",".join(only)
        env[PROGRESS_FILE_ENV] = str(progress_file_for(staging, audit.name))
        jobs.append(AuditJob(audit.name, str(audit.notebook), params[audit.name], kernel, str(target), env,
                             with_code, cell_timeout_s, audit.title, run_id))
    return jobs
