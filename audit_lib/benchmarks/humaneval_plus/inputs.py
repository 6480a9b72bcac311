"""What the HumanEval+ / MBPP+ checks read: the fetched files, the selected tasks, and the runs several checks share.

`load_inputs` fetches every file the dataset's audit registers and records the ones it cannot have in `missing`;
only the release file is parsed up front (to select the tasks). Everything expensive (the ground truth, OpenAI's
canonical runs, the other files' tasks) is a cached property, computed by whichever check asks first.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from audit_lib.benchmarks.humaneval_plus.data import (
    HUMANEVAL_ERRATA,
    HUMANEVAL_PLUS_MINI,
    HUMANEVAL_PLUS_RESULTS,
    HUMANEVAL_PLUS_NOEXTREME,
    HUMANEVAL_PLUS_V019,
    MBPP_PLUS_NOEXTREME,
    MBPP_PLUS_RESULTS,
    OPENAI_HUMANEVAL,
    Dataset,
    HumanEvalTask,
    LoadedPlus,
    PlusTask,
    plus_source,
    read_humaneval,
    read_plus,
    results_source,
)
from audit_lib.data import fetch
from audit_lib.errors import DataError
from audit_lib.findings import Result

if TYPE_CHECKING:
    from audit_lib.benchmarks.humaneval_plus.groundtruth import GroundTruth
    from audit_lib.benchmarks.humaneval_plus.runs import Split, SplitRun
    from audit_lib.benchmarks.humaneval_plus.timing_rerun import Classification
    from audit_lib.benchmarks.humaneval_plus.variants import VariantData
    from audit_lib.leaderboard.results import ModelResults

# EvalPlus's reduced variants of each dataset: (display name, source). MBPP+ has no -Mini release.
VARIANT_SOURCES: dict[str, tuple[tuple[str, tuple[str, str]], ...]] = {
    "humaneval": (("HumanEvalPlus-Mini", HUMANEVAL_PLUS_MINI), ("HumanEvalPlus-NoExtreme", HUMANEVAL_PLUS_NOEXTREME)),
    "mbpp": (("MbppPlus-NoExtreme", MBPP_PLUS_NOEXTREME),),
}
# Every file each dataset's audit reads besides its release file, in the order the provenance banner lists them.
OTHER_SOURCES: dict[str, tuple[tuple[str, str], ...]] = {
    "humaneval": (OPENAI_HUMANEVAL, HUMANEVAL_PLUS_MINI, HUMANEVAL_PLUS_NOEXTREME, HUMANEVAL_PLUS_V019,
                  HUMANEVAL_ERRATA, HUMANEVAL_PLUS_RESULTS),
    "mbpp": (MBPP_PLUS_NOEXTREME, MBPP_PLUS_RESULTS),
}


def source_key(source: tuple[str, str]) -> str:
    """`"<dataset>/<file>"`, the key `needs` and `meta.missing` use."""
    return f"{source[0]}/{source[1]}"


@dataclass(frozen=True, eq=False)
class Inputs:
    """One dataset's audit inputs; `plus` is None when the release file is missing (see `missing`)."""

    dataset: Dataset
    plus: LoadedPlus | None
    fetched: Mapping[str, fetch.FetchedFile]
    missing: Mapping[str, str]  # "<dataset>/<file>" -> why it is not there
    max_tasks: int = 0
    task_ids: tuple[str, ...] = ()
    executor: str = "local"
    min_time_limit: float = 1.0
    recompute_ground_truth: bool = False

    @property
    def tasks(self) -> tuple[PlusTask, ...]:
        return self.plus.tasks if self.plus is not None else ()

    @property
    def provenance(self) -> tuple[fetch.Provenance, ...]:
        return tuple(fetched.provenance for fetched in self.fetched.values())

    @property
    def plus_key(self) -> str:
        return source_key(plus_source(self.dataset))

    @property
    def selects_tasks(self) -> bool:
        return bool(self.max_tasks or self.task_ids)

    def schema_notes(self) -> tuple[dict[str, Any], ...]:
        """Rows of the release file read with a note (or why there are none to read)."""
        if self.plus is None:
            return ({"file": "(dataset unavailable)", "note": self.missing.get(self.plus_key, "")},)
        return tuple(dict(note) for note in self.plus.schema_notes)

    @functools.cached_property
    def originals(self) -> dict[str, HumanEvalTask]:
        """OpenAI HumanEval by task id."""
        return read_humaneval(self.fetched[source_key(OPENAI_HUMANEVAL)])

    @functools.cached_property
    def errata(self) -> dict[str, HumanEvalTask]:
        """The community errata of OpenAI HumanEval by task id."""
        return read_humaneval(self.fetched[source_key(HUMANEVAL_ERRATA)])

    @functools.cached_property
    def old_release_tasks(self) -> tuple[PlusTask, ...]:
        """HumanEval+ v0.1.9, the same tasks selected."""
        return read_plus(self.fetched[source_key(HUMANEVAL_PLUS_V019)], self.dataset, max_tasks=self.max_tasks,
                         task_ids=self.task_ids).tasks

    @functools.cached_property
    def variants(self) -> tuple[VariantData, ...]:
        """EvalPlus's reduced files, cut to the selected tasks (in any file order), or why each is unavailable."""
        from audit_lib.benchmarks.humaneval_plus.variants import VariantData

        wanted = {task.task_id for task in self.tasks}
        loaded: list[VariantData] = []
        for name, source in VARIANT_SOURCES[self.dataset]:
            key = source_key(source)
            if key not in self.fetched:
                loaded.append(VariantData(name, source[1], None, self.missing.get(key, ""), key=key))
                continue
            variant = read_plus(self.fetched[key], self.dataset)
            tasks = variant.tasks
            if self.selects_tasks:
                tasks = tuple(task for task in tasks if task.task_id in wanted)
            loaded.append(VariantData(name, source[1], tasks, schema_notes=variant.schema_notes, key=key))
        return tuple(loaded)

    @functools.cached_property
    def model_results(self) -> ModelResults:
        """The published models' per-task outcomes on this dataset (eval-arena), all tasks."""
        from audit_lib.leaderboard.results import read_model_results

        key = source_key(results_source(self.dataset))
        return read_model_results(self.fetched[key].path, label=key)

    @functools.cached_property
    def ground_truth(self) -> GroundTruth:
        """Expected outputs of the selected tasks: from the cache (unless `recompute_ground_truth`), else run now."""
        from audit_lib.benchmarks.humaneval_plus.groundtruth import load_or_compute_ground_truth

        if self.plus is None:
            raise DataError(f"{self.plus_key} is not available: {self.missing.get(self.plus_key, '')}")
        return load_or_compute_ground_truth(self.plus, recompute=self.recompute_ground_truth, executor=self.executor)

    @functools.cached_property
    def original_canonical_runs(self) -> dict[tuple[str, Split], SplitRun]:
        """OpenAI's canonical of every selected task, scored on its inputs as EvalPlus scores a sample.

        Base and plus inputs; read by `original_canonical_vs_plus` and by `variants`."""
        from audit_lib.benchmarks.humaneval_plus.replay import original_solutions, run_candidate

        return run_candidate(self.tasks, original_solutions(self.tasks, self.originals), self.dataset,
                             self.ground_truth, min_time_limit=self.min_time_limit, executor=self.executor)

    @functools.cached_property
    def original_canonical_timing(self) -> Classification:
        """OpenAI's canonical's failing tasks, deterministic vs timing: its timeouts re-run alone, on CPU time."""
        from audit_lib.benchmarks.humaneval_plus.replay import original_solutions
        from audit_lib.benchmarks.humaneval_plus.timing_rerun import confirm_timing

        return confirm_timing(self.tasks, original_solutions(self.tasks, self.originals), self.dataset,
                              self.ground_truth, self.original_canonical_runs, min_time_limit=self.min_time_limit)


def load_inputs(dataset: Dataset, *, max_tasks: int = 0, task_ids: tuple[str, ...] = (), executor: str = "local",
                min_time_limit: float = 1.0, recompute_ground_truth: bool = False) -> Inputs:
    """Fetch every file of the dataset's audit and select the tasks; a file that cannot be had goes to `missing`.

    An unknown id in `task_ids` raises ParameterError naming it.
    """
    fetched: dict[str, fetch.FetchedFile] = {}
    missing: dict[str, str] = {}
    for source in (plus_source(dataset), *OTHER_SOURCES[dataset]):
        result = fetch.try_fetch(*source)
        if isinstance(result, DataError):
            missing[source_key(source)] = str(result)
        else:
            fetched[source_key(source)] = result
    plus_key = source_key(plus_source(dataset))
    plus: LoadedPlus | None = None
    if plus_key in fetched:
        try:
            plus = read_plus(fetched[plus_key], dataset, max_tasks=max_tasks, task_ids=task_ids)
        except DataError as exc:  # verified bytes that do not parse: as unusable as absent ones
            missing[plus_key] = str(exc)
        else:
            if not plus.tasks:
                missing[plus_key], plus = f"{plus_key} holds no tasks", None
    return Inputs(dataset, plus, fetched, missing, max_tasks, task_ids, executor, min_time_limit,
                  recompute_ground_truth)


def naming_the_selection(result: Result, inputs: Inputs) -> Result:
    """A check that found nothing to judge among the selected tasks names the selection as what is missing."""
    if result.status != "skipped" or result.meta.get("missing") or not inputs.selects_tasks:
        return result
    chosen = [f"param:{name}" for name, value in (("task_ids", inputs.task_ids), ("max_tasks", inputs.max_tasks))
              if value]
    return dataclasses.replace(result, meta={**result.meta, "missing": chosen})


__all__ = ["Inputs", "OTHER_SOURCES", "VARIANT_SOURCES", "load_inputs", "naming_the_selection", "source_key"]
