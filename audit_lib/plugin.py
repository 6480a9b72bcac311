"""The audit contract: one `AuditPlugin` per benchmark, each check declared once, run by a notebook's session.

A `CheckSpec` names a check's id, title, needs and function (`".checks_<topic>:<id>"`, imported when it first runs).
The session runs each check once: an unmet need makes it `skipped` with `meta.missing` naming the file, check
(`"check:<id>"`), derived `Need` or parameter (`"param:<name>"`), an exception makes it `error`, and the function's
`Result` gets the declared id and title. A check function with a keyword parameter `needed` is also given the
results of its `check:` needs (id -> Check). `audit.py` stays light to import: `list` and `validate` read it first.
The runner calls `AUDIT.validate(raw)`, then `AUDIT.check_names` where set, before any kernel starts.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import os
import traceback
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Protocol

from audit_lib import paths
from audit_lib.audit_params import param, validated_value
from audit_lib.check_cost import COST_META_KEY, CheckCost, CostMeter
from audit_lib.errors import NoTaskViewError, ParameterError, UnknownTaskError
from audit_lib.check_spec import (
    CHECK_NEED_PREFIX,
    CheckCycleError,
    CheckSpec,
    ChecksNamedBy,
    I,
    Need,
    P,
    Unmet,
)
from audit_lib.findings import Check, FindingsBuilder, Result
from audit_lib.stamp import StampClock
from audit_lib.verdict_cache.tally import CACHE_META_KEY, CacheSpans

if typing.TYPE_CHECKING:
    from audit_lib.report.task_view import TaskView

RUN_AS_ENV = "AUDIT_RUN_AS"  # set by the runner: the audit a kernel runs as
ONLY_ENV = "AUDIT_ONLY"  # set by the runner for `run --only CHECK[,CHECK]`: those checks and what they need
UNUSABLE_STATUSES = frozenset({"error", "skipped"})  # a check need in one of these is not met


class AuditInputs(Protocol):
    """What `load` returns: the data the checks read, where it came from, and which files are missing."""

    @property
    def provenance(self) -> Sequence[Any]: ...

    @property
    def missing(self) -> Mapping[str, str]: ...  # "<dataset>/<file>" -> why it is not there


@dataclass(frozen=True)
class AuditPlugin(Generic[I, P]):
    """One audit: its parameters (the notebook's parameters cell), how to load its inputs, and its checks."""

    name: str
    title: str
    params: type[P]
    load: Callable[[P], I]
    checks: tuple[CheckSpec[I, P], ...]
    notebook: Path | None = None  # default: notebooks/<name>.ipynb
    fixed_params: Mapping[str, Any] = field(default_factory=dict)  # for an audit that reuses another's notebook
    # For an audit with tasks: `task_view(inputs, params, task_id) -> TaskView` from the audit's sandboxed runs
    # (never running code in the caller's process); an unknown id raises `task_view.unknown_task(...)`.
    task_view: Callable[[I, P, str], TaskView] | None = None
    # For an audit whose parameters name things inside its data (task ids): `check_names(params, mirror)` reads a
    # local copy (cache or mirror, never a download) before any kernel starts and raises ParameterError naming
    # each unknown value. Without a local copy it checks nothing and `load` refuses the value instead.
    check_names: Callable[[P, Path | None], None] | None = None
    # A report title naming what the parameters chose (which dataset and release); default: `title`.
    titled: Callable[[P], str] | None = None

    def notebook_path(self) -> Path:
        return self.notebook if self.notebook is not None else paths.notebooks_dir() / f"{self.name}.ipynb"

    @property
    def package(self) -> str:
        """The audit's package: where a relative `run` ("`.checks_x:name`") is looked up."""
        return self.params.__module__.rpartition(".")[0]

    def check_specs(self, params: P) -> tuple[CheckSpec[I, P], ...]:
        """The checks this run includes, in declared order."""
        return tuple(spec for spec in self.checks if spec.when is None or spec.when(params))

    def parameter_names(self) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(self.params))  # type: ignore[arg-type]

    def validate(self, raw: Mapping[str, Any]) -> P:
        """The typed `Params`, or ParameterError naming the audit, the parameter, the value and the rule."""
        names = self.parameter_names()
        unknown = sorted(set(raw) - set(names))
        if unknown:
            raise ParameterError(f"{self.name}: unknown parameter(s) {', '.join(unknown)}; declared: "
                                 f"{', '.join(names)}", audit=self.name, field=unknown[0])
        merged = {**dict(raw), **dict(self.fixed_params)}
        hints = typing.get_type_hints(self.params)
        values = {}
        for spec in dataclasses.fields(self.params):  # type: ignore[arg-type]
            if spec.name not in merged:
                continue
            values[spec.name] = validated_value(self.name, spec, hints[spec.name], merged[spec.name])
        return self.params(**values)

    def title_for(self, params: Mapping[str, Any]) -> str:
        """The title of a report run with `params` (as its findings record them); `title` when they do not say."""
        if self.titled is None:
            return self.title
        try:
            return self.titled(self.validate({k: v for k, v in params.items() if k in self.parameter_names()}))
        except ParameterError:  # findings of an older parameter set: the general title
            return self.title

    def path_parameters(self) -> tuple[str, ...]:
        """The parameters declared with `param(..., path=True)`."""
        return tuple(f.name for f in dataclasses.fields(self.params)  # type: ignore[arg-type]
                     if f.metadata.get("path"))

    def params_as_dict(self, params: P) -> dict[str, Any]:
        return dataclasses.asdict(params)  # type: ignore[call-overload]

    def session(self, namespace: Mapping[str, Any], *, out_dir: str | Path | None = None) -> AuditSession[I, P]:
        """A notebook's session: the parameters are read from its namespace (the parameters cell's names).

        Under the runner (`AUDIT_RUN_AS`), a notebook shared by two audits runs as the audit the runner named,
        so its findings carry that audit's name (mbpp_plus runs the humaneval_plus notebook).
        """
        run_as = os.environ.get(RUN_AS_ENV)
        if run_as and run_as != self.name:
            # An audit that reuses this notebook is declared beside this one, in the module of its Params.
            for other in vars(importlib.import_module(self.params.__module__)).values():
                if (isinstance(other, AuditPlugin) and other.name == run_as
                        and other.notebook_path().resolve() == self.notebook_path().resolve()):
                    return other.session(namespace, out_dir=out_dir)
        raw = {name: namespace[name] for name in self.parameter_names() if name in namespace}
        return AuditSession(self, self.validate(raw), out_dir=out_dir)


class AuditSession(Generic[I, P]):
    """Runs an audit's checks in a notebook: each once, needs enforced, failures kept as findings."""

    def __init__(self, plugin: AuditPlugin[I, P], params: P, *, out_dir: str | Path | None = None) -> None:
        self.plugin = plugin
        self.params = params
        self.out_dir = out_dir
        self.builder = FindingsBuilder(plugin.name, plugin.params_as_dict(params))
        self._clock = StampClock()
        self._specs = {spec.id: spec for spec in plugin.check_specs(params)}
        self.only: tuple[str, ...] = tuple(part for part in os.environ.get(ONLY_ENV, "").split(",") if part)
        self._selected = self.needed_closure(self.only) if self.only else frozenset(self._specs)
        self._results: dict[str, Check] = {}
        self._running: set[str] = set()
        self._meter = CostMeter()
        self._cache_spans = CacheSpans()
        self._load_error: str | None = None
        self._inputs: I | None = None
        self._meter.start()
        self._cache_spans.start()
        try:
            self._inputs = plugin.load(params)
        except ParameterError:
            raise
        except Exception as exc:  # every check then reports the load failure as its error; the report is written
            self._load_error = _error_text(exc)
        finally:
            spent = self._meter.stop()
            cached = self._cache_spans.stop()
        self.builder.load_cost = {**CheckCost.of(spent, jobs_counted=self._jobs_counted_here).to_meta(),
                                  **({CACHE_META_KEY: cached.to_meta()} if cached.looked_up else {})}
        if self._inputs is not None:
            self.builder.add_provenance(*getattr(self._inputs, "provenance", ()))

    @property
    def inputs(self) -> I:
        if self._load_error is not None:
            raise RuntimeError(f"{self.plugin.name}: loading the inputs failed: {self._load_error}")
        return self._inputs  # type: ignore[return-value]

    @property
    def check_ids(self) -> tuple[str, ...]:
        """The checks this run includes, in declared order (with `only`: those and what they need)."""
        return tuple(check_id for check_id in self._specs if check_id in self._selected)

    def needed_closure(self, check_ids: Sequence[str]) -> frozenset[str]:
        """`check_ids` and every check they need, directly or not (ids this run does not declare are left out)."""
        found: set[str] = set()
        pending = [check_id for check_id in check_ids if check_id in self._specs]
        while pending:
            check_id = pending.pop()
            if check_id in found:
                continue
            found.add(check_id)
            pending += [need[len(CHECK_NEED_PREFIX):] for need in self.needs_of(self._specs[check_id])
                        if isinstance(need, str) and need.startswith(CHECK_NEED_PREFIX)
                        and need[len(CHECK_NEED_PREFIX):] in self._specs]
        return frozenset(found)

    def run(self, check_id: str) -> Check:
        """The check's result, computed once and added to the findings (its needs first).

        A check this run leaves out (`run --only`) is not computed: it comes back `skipped`, and is not part of the
        findings.
        """
        if check_id in self._results:
            return self._results[check_id]
        spec = self._specs.get(check_id)
        if spec is None:
            raise KeyError(f"{self.plugin.name} has no check {check_id!r}; checks: {', '.join(self._specs)}")
        if check_id not in self._selected:
            return Check.of(spec.id, spec.title, Result.skipped(f"not run: this run is --only {','.join(self.only)}",
                                                                missing=[f"only:{','.join(self.only)}"]))
        if check_id in self._running:
            raise CheckCycleError(f"{self.plugin.name}: checks {sorted(self._running)} need each other")
        self._running.add(check_id)
        try:
            check = self._run_spec(spec)
        finally:
            self._running.discard(check_id)
        self._results[check_id] = self.builder.add(check)
        return check

    def _run_spec(self, spec: CheckSpec[I, P]) -> Check:
        """The check's result with what it cost in `meta["cost"]` (the checks it needs are charged to themselves)."""
        self._meter.start()
        self._cache_spans.start()
        try:
            result = _naming_refused_copies(self._result_of(spec))
        finally:
            spent = self._meter.stop()
            cached = self._cache_spans.stop()
        cost = CheckCost.of(spent, jobs_counted=self._jobs_counted_here).to_meta()
        meta = {**result.meta, COST_META_KEY: cost, **({CACHE_META_KEY: cached.to_meta()} if cached.looked_up else {})}
        return Check.of(spec.id, spec.title, dataclasses.replace(result, meta=meta))

    @property
    def _jobs_counted_here(self) -> bool:
        """Whether this process sees the sandbox jobs start: not when a Dask cluster runs them."""
        from audit_lib.sandbox import resolve_executor_name

        try:
            return resolve_executor_name(getattr(self.params, "executor", None)) == "local"
        except ParameterError:
            return False

    def _result_of(self, spec: CheckSpec[I, P]) -> Result:
        if self._load_error is not None:
            return Result.errored(f"loading the inputs failed: {self._load_error}")
        try:
            missing, reasons = self._missing_needs(spec)
            if missing:
                return Result.skipped("; ".join(reasons), missing=missing,
                                      synthetic=bool(getattr(self.inputs, "synthetic", False)))
            function = spec.function(self.plugin.package)
            if _reads_needed(function):
                needed = {need[len(CHECK_NEED_PREFIX):]: self._results[need[len(CHECK_NEED_PREFIX):]]
                          for need in self.needs_of(spec) if isinstance(need, str)
                          and need.startswith(CHECK_NEED_PREFIX)}
                result = function(self.inputs, self.params, needed=needed)
            else:
                result = function(self.inputs, self.params)
        except (ParameterError, KeyboardInterrupt, CheckCycleError):
            raise
        except Exception as exc:  # the report must still be written; the error is the finding
            return Result.errored(_error_text(exc))
        if not isinstance(result, Result):
            return Result.errored(f"the check function returned {type(result).__name__}, not a findings.Result")
        if result.status == "skipped" and not result.meta.get("missing"):
            return Result.errored(f"the check was skipped without naming what is missing (meta.missing): "
                                  f"{result.summary}")
        return result

    def _missing_needs(self, spec: CheckSpec[I, P]) -> tuple[list[str], list[str]]:
        """What of the check's needs is not met (`meta.missing` names), and why, in declared order."""
        missing: list[str] = []
        reasons: list[str] = []
        absent_files: Mapping[str, str] = getattr(self.inputs, "missing", {})
        for need in self.needs_of(spec):
            if isinstance(need, Need):
                unmet = need.unmet(self.inputs)
                if unmet is not None:
                    missing.extend(name for name in unmet.missing if name not in missing)
                    reasons.append(unmet.reason)
            elif need.startswith(CHECK_NEED_PREFIX):
                needed = self.run(need[len(CHECK_NEED_PREFIX):])
                if needed.status in UNUSABLE_STATUSES:
                    missing.append(need)
                    reasons.append(f"check {needed.id!r} is {needed.status}: {needed.summary}")
            elif need in absent_files:
                missing.append(need)
                reasons.append(absent_files[need])
        return missing, reasons

    def needs_of(self, spec: CheckSpec[I, P]) -> list[str | Need]:
        """The check's needs for this run's parameters, in declared order (`ChecksNamedBy` made `check:<id>`)."""
        expanded: list[str | Need] = []
        for need in spec.needs:
            if isinstance(need, ChecksNamedBy):
                expanded.extend(f"{CHECK_NEED_PREFIX}{check_id}" for check_id in need.checks(self.params))
            else:
                expanded.append(need)
        return expanded

    def run_all(self) -> tuple[Check, ...]:
        return tuple(self.run(check_id) for check_id in self.check_ids)

    def evidence(self, check_id: str) -> Any:
        """A check's full evidence rows as a pandas DataFrame (for exploring in JupyterLab)."""
        import pandas as pd

        return pd.DataFrame([dict(row) for row in self.run(check_id).details])

    def task(self, task_id: str) -> TaskView:
        """One task: prompt, canonical solution(s), per-input verdicts, and its rows in the checks run so far."""
        from audit_lib.report.task_view import evidence_frame

        if self.only:
            raise NoTaskViewError(f"{self.plugin.name}: no task view in a run of --only {','.join(self.only)}",
                                  audit=self.plugin.name)
        if self.plugin.task_view is None:
            raise NoTaskViewError(f"{self.plugin.name} offers no per-task view (its plugin sets no task_view); "
                                  f"explore its checks with evidence(check_id): {', '.join(self._specs)}",
                                  audit=self.plugin.name)
        if self._load_error is not None:
            raise NoTaskViewError(f"{self.plugin.name}: no task view, loading the inputs failed: {self._load_error}",
                                  audit=self.plugin.name)
        try:
            view = self.plugin.task_view(self.inputs, self.params, task_id)
        except (UnknownTaskError, NoTaskViewError) as exc:  # the hook does not know which audit it serves
            raise type(exc)(f"{self.plugin.name}: {exc}", **{**exc.fields, "audit": self.plugin.name}) from None
        rows = [{"check": check.id, **row} for check in self._results.values() for row in check.details
                if str(row.get("task_id")) == task_id]
        return dataclasses.replace(view, audit=self.plugin.name, evidence=evidence_frame(rows))

    def task_ids_in(self, check_id: str) -> tuple[str, ...]:
        """The task ids a check's evidence rows name (`task_id` column), in row order, each once."""
        return tuple(dict.fromkeys(str(row["task_id"]) for row in self.run(check_id).details if "task_id" in row))

    def write(self) -> Path:
        """Write the findings; a declared check the notebook did not run is run first, so none goes missing."""
        self.run_all()
        self.builder.stamp = self._clock.finish().to_json()
        return self.builder.write(self.out_dir if self.out_dir is not None else default_out_dir())


PUBLISH_ENV = "AUDIT_PUBLISH"


def default_out_dir() -> Path:
    """Where a session writes: `reports/` under the runner or with AUDIT_PUBLISH=1, else a scratch folder.

    Exploring a notebook by hand so never overwrites a published report's findings."""
    if os.environ.get("AUDIT_REPORTS_DIR") or os.environ.get(PUBLISH_ENV, "").lower() in ("1", "true", "yes"):
        return paths.reports_dir()
    return paths.reports_dir() / "scratch"


def _reads_needed(function: Callable[..., Any]) -> bool:
    """Whether a check function takes the results of its `check:` needs (a keyword parameter `needed`)."""
    try:
        return "needed" in inspect.signature(function).parameters
    except (TypeError, ValueError):  # a callable without a signature takes only (inputs, params)
        return False


def _naming_refused_copies(check: Result) -> Result:
    """A skipped result with `meta.rejected` naming its missing files whose copy was refused.

    A copy found but refused (checksum, does not parse) gets its reason code: "replace this copy" is another fix
    than "supply this file"."""
    if check.status != "skipped":
        return check
    from audit_lib.data import fetch

    rejected = {str(key): code for key in check.meta.get("missing", ()) if (code := fetch.refusal(str(key)))}
    return dataclasses.replace(check, meta={**check.meta, "rejected": rejected}) if rejected else check


def _error_text(exc: BaseException) -> str:
    """`Type: message (at file:line)`, naming the innermost frame of our own code."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if "audit_lib" in f.filename]
    where = ""
    if frames:
        frame = frames[-1]
        where = f" (at {Path(frame.filename).name}:{frame.lineno} in {frame.name})"
    return f"{type(exc).__name__}: {exc}{where}"


def load_plugin_attribute(module: str, attribute: str = "AUDIT") -> AuditPlugin[Any, Any]:
    plugin = getattr(importlib.import_module(module), attribute)
    if not isinstance(plugin, AuditPlugin):
        raise TypeError(f"{module}.{attribute} is not an AuditPlugin")
    return plugin


__all__ = ["AuditInputs", "AuditPlugin", "AuditSession", "CheckCycleError", "CheckSpec", "ChecksNamedBy", "Need",
           "ONLY_ENV", "Unmet", "load_plugin_attribute", "param"]
