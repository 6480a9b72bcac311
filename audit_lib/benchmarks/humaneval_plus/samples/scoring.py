"""Which release and harness score the samples, and the verdicts: the one entry point the check calls.

`evalplus` scores on HumanEval+ (`version` picks v0.1.10, the audited release, or v0.1.9, which published results
such as the mirror's phi-1 and CodeT5+ files were scored on) or on MBPP+; `human-eval` scores on OpenAI's HumanEval
with its original `check` tests. Tasks of the release without samples are not covered (never failures); samples of
tasks outside the audit's task selection are not scored.
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from audit_lib.benchmarks.humaneval_plus.data import HUMANEVAL_PLUS_V019, OPENAI_HUMANEVAL, PlusTask, read_plus
from audit_lib.benchmarks.humaneval_plus.samples.sample_files import (
    SampleSet,
    check_known_tasks,
    refuse_for_harness,
)
from audit_lib.benchmarks.humaneval_plus.samples.verdicts import SampleVerdict
from audit_lib.errors import DataError

if TYPE_CHECKING:
    from audit_lib.benchmarks.humaneval_plus.inputs import Inputs

AUDITED = ""  # `version` default: the release the audit reads
RELEASE_NAMES = {"humaneval": "HumanEval+", "mbpp": "MBPP+"}
DEFAULT_VERSION = {"humaneval": "v0.1.10", "mbpp": "v0.2.0"}
OLD_VERSIONS = {("humaneval", "v0.1.9"): HUMANEVAL_PLUS_V019}


@dataclass(frozen=True)
class ScoredSamples:
    """The verdicts and what they were scored on."""

    harness: str
    benchmark: str  # "HumanEval+ v0.1.9", "MBPP+ v0.2.0", "HumanEval"
    release_md5: str | None  # md5 of the decompressed release file (how evalplus names what it scored)
    verdicts: tuple[SampleVerdict, ...]
    release_tasks: tuple[str, ...]  # every task of the release within the audit's selection
    outside_selection: tuple[str, ...]  # tasks with samples that the audit's task selection leaves out
    prompts: Mapping[str, str]
    texts: Mapping[tuple[str, int], str]  # what the harness reads for each sample (program, or completion)

    @property
    def covered(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(v.task_id for v in self.verdicts))

    @property
    def not_covered(self) -> tuple[str, ...]:
        covered = set(self.covered)
        return tuple(task for task in self.release_tasks if task not in covered)


def score_samples(inputs: Inputs, samples: SampleSet, *, harness: str, version: str, min_time_limit: float,
                  executor: Any = None) -> ScoredSamples:
    """Score every sample of a selected task with the chosen harness and release.

    an unknown task id raises a SamplesFileError naming its line.
    """
    refuse_for_harness(samples, harness)
    if harness == "human-eval":
        return _score_human_eval(inputs, samples, executor=executor)
    return _score_evalplus(inputs, samples, version=version, min_time_limit=min_time_limit, executor=executor)


def _selection(inputs: Inputs, all_ids: Sequence[str], samples: SampleSet, release: str) -> tuple[list[str], list[str]]:
    """(selected task ids of the release, tasks with samples outside the selection); unknown ids refused."""
    check_known_tasks(samples, all_ids, release=release)
    selected = {task.task_id for task in inputs.tasks}
    chosen = [task_id for task_id in all_ids if task_id in selected]
    outside = [task_id for task_id in samples.task_ids if task_id not in selected]
    return chosen, outside


def _score_evalplus(inputs: Inputs, samples: SampleSet, *, version: str, min_time_limit: float,
                    executor: Any) -> ScoredSamples:
    from audit_lib.benchmarks.humaneval_plus.groundtruth import load_or_compute_ground_truth
    from audit_lib.benchmarks.humaneval_plus.samples.evalplus_scoring import score_evalplus, solution_of

    dataset = inputs.dataset
    name = version or DEFAULT_VERSION[dataset]
    source = OLD_VERSIONS.get((dataset, version))
    key = inputs.plus_key if source is None else f"{source[0]}/{source[1]}"
    if key not in inputs.fetched:
        raise DataError(f"{RELEASE_NAMES[dataset]} {name} ({key}) is not available: {inputs.missing.get(key, '')}")
    if source is None:
        assert inputs.plus is not None
        loaded = inputs.plus
        all_ids = [task.task_id for task in read_plus(inputs.fetched[key], dataset).tasks] \
            if inputs.selects_tasks else [task.task_id for task in loaded.tasks]
    else:
        loaded = read_plus(inputs.fetched[key], dataset)
        all_ids = [task.task_id for task in loaded.tasks]
    benchmark = f"{RELEASE_NAMES[dataset]} {name}"
    chosen, outside = _selection(inputs, all_ids, samples, benchmark)
    wanted = set(chosen) & set(samples.task_ids)
    tasks: tuple[PlusTask, ...] = tuple(task for task in loaded.tasks if task.task_id in wanted)
    gt = load_or_compute_ground_truth(dataclasses.replace(loaded, tasks=tasks), executor=executor)
    verdicts = score_evalplus(tasks, dataset, gt, samples, min_time_limit=min_time_limit, executor=executor)
    by_id = {task.task_id: task for task in tasks}
    texts = {(s.task_id, s.index): solution_of(s, by_id[s.task_id]) for s in samples.samples if s.task_id in by_id}
    return ScoredSamples("evalplus", benchmark, release_md5(inputs.fetched[key].path), tuple(verdicts),
                         tuple(chosen), tuple(outside), {t.task_id: t.prompt for t in tasks}, texts)


def _score_human_eval(inputs: Inputs, samples: SampleSet, *, executor: Any) -> ScoredSamples:
    from audit_lib.benchmarks.humaneval_plus.samples.humaneval_scoring import score_human_eval

    key = f"{OPENAI_HUMANEVAL[0]}/{OPENAI_HUMANEVAL[1]}"
    if inputs.dataset != "humaneval":
        raise DataError("harness 'human-eval' scores OpenAI HumanEval's tests; the MBPP+ audit has none")
    if key not in inputs.fetched:
        raise DataError(f"OpenAI HumanEval ({key}) is not available: {inputs.missing.get(key, '')}")
    problems = inputs.originals
    chosen, outside = _selection(inputs, list(problems), samples, "OpenAI HumanEval")
    wanted = set(chosen)
    kept = {task_id: problem for task_id, problem in problems.items() if task_id in wanted}
    verdicts = score_human_eval(kept, samples, executor=executor)
    texts = {(s.task_id, s.index): s.text for s in samples.samples if s.task_id in kept}
    return ScoredSamples("human-eval", "HumanEval", None, tuple(verdicts), tuple(chosen), tuple(outside),
                         {task_id: problem.prompt for task_id, problem in kept.items()}, texts)


def release_md5(path: Any) -> str:
    """md5 of the release file's decompressed bytes: the `hash` evalplus writes into its eval_results.json."""
    with open(path, "rb") as handle:
        raw = handle.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return hashlib.md5(raw).hexdigest()


__all__ = ["AUDITED", "DEFAULT_VERSION", "RELEASE_NAMES", "ScoredSamples", "release_md5", "score_samples"]
