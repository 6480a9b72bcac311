"""HumanEval+ / MBPP+ (EvalPlus): the audit's parameters, inputs and checks; `MBPP_AUDIT` is the same audit on MBPP+.

Replays EvalPlus on its release files: expected outputs from `prompt + canonical_solution` run in the sandbox,
EvalPlus's comparison rules and time limits, and its reduced variants. The check functions live in the package's
modules (`static`, `canonical_checks`, `contracts`, `original`, `variants_check`, `errata`); each adapter here
imports its module when the check runs, so importing this module stays light.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable

from audit_lib.benchmarks.humaneval_plus import titles
from audit_lib.benchmarks.humaneval_plus.data import (
    DATASETS,
    HUMANEVAL_ERRATA,
    HUMANEVAL_PLUS_V019,
    OPENAI_HUMANEVAL,
    parse_task_ids,
    plus_source,
)
from audit_lib.benchmarks.humaneval_plus.inputs import Inputs, load_inputs, source_key
from audit_lib.findings import Check
from audit_lib.plugin import AuditPlugin, CheckSpec, param

MBPP_NO_ORIGINAL_CANONICAL = ("MBPP+ ships only EvalPlus's canonical solutions (MbppPlus-OriginFmt `code` is the "
                              "same text); the original MBPP solutions are not in the registry")


def _positive_seconds(value: float) -> str | None:
    return None if value > 0 else "must be a positive number of seconds"


@dataclasses.dataclass(frozen=True)
class Params:
    """The notebook's parameters cell."""

    dataset: str = param("humaneval", '"humaneval" (HumanEval+ v0.1.10) or "mbpp" (MBPP+ v0.2.0)', choices=DATASETS)
    max_tasks: int = param(0, "0 means all tasks; N > 0 keeps the first N tasks (quick runs)", minimum=0)
    task_ids: str = param("", 'comma-separated task ids to audit (e.g. "HumanEval/32,HumanEval/116"); "" means all')
    executor: str = param("local", '"local", "dask-local" or "dask://HOST:PORT"')
    # evalplus/config.py DEFAULT_MIN_TIME_LIMIT (= replay.DEFAULT_MIN_TIME_LIMIT_S)
    min_time_limit: float = param(1.0, "EvalPlus floor for the per-input time limit, in seconds (its default)",
                                  rule=_positive_seconds)
    recompute_ground_truth: bool = param(False, "True ignores the cached expected outputs for the first run")


def load(params: Params) -> Inputs:
    """Fetch the dataset's files and select its tasks; an unknown id in `task_ids` raises ParameterError."""
    return load_inputs(params.dataset, max_tasks=params.max_tasks,  # type: ignore[arg-type]
                       task_ids=parse_task_ids(params.task_ids), executor=params.executor,
                       min_time_limit=params.min_time_limit, recompute_ground_truth=params.recompute_ground_truth)


def _task_view(inputs: Inputs, params: Params, task_id: str):  # -> TaskView; imported when asked (pandas)
    from audit_lib.benchmarks.humaneval_plus.tasks import task_view

    return task_view(inputs, params, task_id)


def _naming_the_selection(check: Check, inputs: Inputs) -> Check:
    """A check that found nothing to judge among the selected tasks names the selection as what is missing."""
    if check.status != "skipped" or check.meta.get("missing") or not inputs.selects_tasks:
        return check
    chosen = [f"param:{name}" for name, value in (("task_ids", inputs.task_ids), ("max_tasks", inputs.max_tasks))
              if value]
    return dataclasses.replace(check, meta={**check.meta, "missing": chosen})


def _ground_truth(inputs: Inputs, params: Params) -> Check:
    from audit_lib.benchmarks.humaneval_plus.canonical_checks import check_ground_truth
    from audit_lib.benchmarks.humaneval_plus.groundtruth import compute_ground_truth

    first = inputs.ground_truth  # from the cache unless `recompute_ground_truth`; the second run is always fresh
    second = compute_ground_truth(inputs.tasks, inputs.dataset, executor=params.executor, earlier=first)
    return check_ground_truth(inputs.tasks, inputs.dataset, first, second)


def _amplification(inputs: Inputs, params: Params) -> Check:
    from audit_lib.benchmarks.humaneval_plus.static import check_amplification

    return check_amplification(inputs.tasks, dataset=inputs.dataset)


def _duplicate_inputs(inputs: Inputs, params: Params) -> Check:
    from audit_lib.benchmarks.humaneval_plus.static import check_duplicate_inputs

    return check_duplicate_inputs(inputs.tasks)


def _contract_violations(inputs: Inputs, params: Params) -> Check:
    from audit_lib.benchmarks.humaneval_plus.contracts import check_contract_violations, run_contracts

    runs = run_contracts(inputs.tasks, executor=params.executor)
    return _naming_the_selection(check_contract_violations(inputs.tasks, runs), inputs)


def _original_canonical_vs_plus(inputs: Inputs, params: Params) -> Check:
    from audit_lib.benchmarks.humaneval_plus.original import check_original_canonical_vs_plus

    check = check_original_canonical_vs_plus(inputs.tasks, inputs.dataset, inputs.original_canonical_runs,
                                             inputs.ground_truth, inputs.original_canonical_timing,
                                             min_time_limit=params.min_time_limit)
    return _naming_the_selection(check, inputs)


def _variants(inputs: Inputs, params: Params) -> Check:
    """EvalPlus's reduced files against the loaded tasks; detection power from OpenAI's canonical runs."""
    from audit_lib.benchmarks.humaneval_plus.variants import reference_verdicts
    from audit_lib.benchmarks.humaneval_plus.variants_check import check_variants

    openai = source_key(OPENAI_HUMANEVAL)
    from audit_lib import timing

    verdicts, skip_reason, causes, speed_curve_for = None, "", None, None
    if inputs.dataset == "mbpp":
        skip_reason = MBPP_NO_ORIGINAL_CANONICAL
    elif openai in inputs.missing:
        skip_reason = f"OpenAI HumanEval unavailable: {inputs.missing[openai]}"
    elif any(variant.tasks is not None for variant in inputs.variants):  # else the check skips: no runs needed
        verdicts = reference_verdicts(inputs.tasks, inputs.dataset, inputs.original_canonical_runs,
                                      inputs.ground_truth)
        classification = inputs.original_canonical_timing
        causes = classification.causes()
        rule = timing.evalplus_limit_rule(params.min_time_limit)
        speed_curve_for = functools.partial(classification.speed_curve, rule)
    return check_variants(inputs.tasks, inputs.variants, verdicts,
                          full_name="HumanEval+" if inputs.dataset == "humaneval" else "MBPP+",
                          reference_name="OpenAI's original canonical solution", detection_skip_reason=skip_reason,
                          causes=causes, speed_curve_for=speed_curve_for)


def _original_tests_vs_canonical(inputs: Inputs, params: Params) -> Check:
    from audit_lib.benchmarks.humaneval_plus.original import check_original_tests_vs_canonical, original_test_jobs
    from audit_lib.benchmarks.humaneval_plus.replay import run_original_tests

    originals = inputs.originals if inputs.dataset == "humaneval" else None
    jobs = original_test_jobs(inputs.tasks, inputs.dataset, originals)
    results = run_original_tests(jobs, executor=params.executor)
    name = ("HumanEval's `check` tests" if inputs.dataset == "humaneval"
            else "MBPP+'s `assertion` field (MBPP's assert lines as EvalPlus ships them)")
    return _naming_the_selection(check_original_tests_vs_canonical(inputs.tasks, results, test_name=name, jobs=jobs),
                                 inputs)


def _version_diff(inputs: Inputs, params: Params) -> Check:
    from audit_lib.benchmarks.humaneval_plus.static import check_version_diff

    return check_version_diff(inputs.old_release_tasks, inputs.tasks)


def _errata_diff(inputs: Inputs, params: Params) -> Check:
    from audit_lib.benchmarks.humaneval_plus.errata import errata_diff

    return errata_diff(inputs.tasks, inputs.dataset, inputs.originals, inputs.errata, inputs.ground_truth,
                       min_time_limit=params.min_time_limit, executor=params.executor)


def _time_limit_sensitivity(inputs: Inputs, params: Params) -> Check:
    from audit_lib.benchmarks.humaneval_plus.canonical_checks import check_time_limit_sensitivity

    return check_time_limit_sensitivity(inputs.tasks, inputs.ground_truth, dataset=inputs.dataset,
                                        min_time_limit=params.min_time_limit)


def _pass_at_k(inputs: Inputs, params: Params) -> Check:
    from audit_lib.benchmarks.humaneval_plus.static import check_pass_at_k

    return check_pass_at_k()


RunCheck = Callable[[Inputs, Params], Check]


def _specs_for(dataset: str) -> tuple[CheckSpec[Inputs, Params], ...]:
    """The dataset's checks. MBPP+ has no original solutions, no second release and no errata to compare, so
    `original_canonical_vs_plus`, `version_diff` and `errata_diff` are not part of its audit."""
    plus = source_key(plus_source(dataset))  # type: ignore[arg-type]
    openai, old_release, errata = (source_key(s) for s in (OPENAI_HUMANEVAL, HUMANEVAL_PLUS_V019, HUMANEVAL_ERRATA))
    humaneval = dataset == "humaneval"
    table: tuple[tuple[str, str, RunCheck, tuple[str, ...], bool], ...] = (
        # id, title, run, needs, HumanEval+ only
        ("ground_truth", titles.GROUND_TRUTH_TITLE, _ground_truth, (plus,), False),
        ("amplification", titles.AMPLIFICATION_TITLE, _amplification, (plus,), False),
        ("duplicate_inputs", titles.DUPLICATES_TITLE, _duplicate_inputs, (plus,), False),
        ("contract_violations", titles.CONTRACT_TITLE, _contract_violations, (plus,), False),
        ("original_canonical_vs_plus", titles.ORIGINAL_CANONICAL_TITLE, _original_canonical_vs_plus,
         (plus, openai), True),
        ("variants", titles.VARIANTS_TITLE, _variants, (plus,), False),
        ("original_tests_vs_canonical", titles.ORIGINAL_TESTS_TITLE, _original_tests_vs_canonical,
         (plus, openai) if humaneval else (plus,), False),
        ("version_diff", titles.VERSION_DIFF_TITLE, _version_diff, (plus, old_release), True),
        ("errata_diff", titles.ERRATA_TITLE, _errata_diff, (plus, openai, errata), True),
        ("time_limit_sensitivity", titles.TIME_LIMIT_TITLE, _time_limit_sensitivity, (plus,), False),
        ("pass_at_k", titles.PASS_AT_K_TITLE, _pass_at_k, (), False),
    )
    return tuple(CheckSpec(check_id, title, run, needs) for check_id, title, run, needs, humaneval_only in table
                 if humaneval or not humaneval_only)


_SPECS: dict[str, tuple[CheckSpec[Inputs, Params], ...]] = {dataset: _specs_for(dataset) for dataset in DATASETS}


def check_specs(params: Params) -> tuple[CheckSpec[Inputs, Params], ...]:
    return _SPECS[params.dataset]


AUDIT: AuditPlugin[Inputs, Params] = AuditPlugin(
    name="humaneval_plus", title="HumanEval+ / MBPP+ (EvalPlus)", params=Params, load=load, checks=check_specs,
    task_view=_task_view)
MBPP_AUDIT: AuditPlugin[Inputs, Params] = AuditPlugin(
    name="mbpp_plus", title="MBPP+ (EvalPlus): the HumanEval+ audit notebook run on MBPP+", params=Params, load=load,
    checks=check_specs, notebook=AUDIT.notebook_path(), fixed_params={"dataset": "mbpp"}, task_view=_task_view)

__all__ = ["AUDIT", "MBPP_AUDIT", "Params", "check_specs", "load"]
