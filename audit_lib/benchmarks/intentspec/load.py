"""Load every IntentSpec input through `fetch`; a file that cannot be fetched is recorded in `unavailable`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from audit_lib.benchmarks.intentspec.data import (
    CANONICAL_FIELDS,
    SPEC_PAIR_FIELDS,
    Canonical,
    Generation,
    PublishedRun,
    SpecPair,
    canonicals_from_records,
    generations_from_records,
    published_run_from_json,
    spec_pairs_from_records,
    task_id_of_generation_file,
)
from audit_lib.data import fetch, readers, sources
from audit_lib.errors import DataError

DATASET = "intentspec"
SPEC_PAIRS_FILE = "spec_pairs.jsonl"
CANONICALS_FILE = "canonicals.jsonl"
GENERATIONS_PREFIX = "generations/"
RESULTS_PREFIX = "results/"
OPENAI_HUMANEVAL = ("humaneval", "HumanEval.jsonl.gz")
HUMANEVAL_PLUS = ("humaneval_plus", "HumanEvalPlus.jsonl.gz")
REFERENCE_FIELDS = ("task_id", "prompt", "canonical_solution", "entry_point")
SPEC_PAIRS_KEY = f"{DATASET}/{SPEC_PAIRS_FILE}"
CANONICALS_KEY = f"{DATASET}/{CANONICALS_FILE}"
GENERATIONS_KEY_PREFIX = f"{DATASET}/{GENERATIONS_PREFIX}"
RESULTS_KEY_PREFIX = f"{DATASET}/{RESULTS_PREFIX}"
REFERENCE_KEYS = {"openai_humaneval": "/".join(OPENAI_HUMANEVAL), "humaneval_plus": "/".join(HUMANEVAL_PLUS)}


@dataclass(frozen=True)
class IntentSpecData:
    """All inputs of the audit.

    `selected` are the tasks executed (all, or the first `max_tasks` spec rows); a file in `unavailable` contributes no
    rows."""

    specs: tuple[SpecPair, ...]
    canonicals: tuple[Canonical, ...]
    selected: tuple[str, ...]
    generations: tuple[Generation, ...]
    published: tuple[PublishedRun, ...]
    references: Mapping[str, Mapping[str, Mapping[str, Any]]]  # source -> task_id -> HumanEval-format row
    provenance: tuple[Any, ...]
    unavailable: Mapping[str, str] = field(default_factory=dict)  # "dataset/file" -> why it is missing

    @property
    def specs_by_task(self) -> dict[str, SpecPair]:
        return {spec.task_id: spec for spec in self.specs}

    @property
    def canonicals_by_task(self) -> dict[str, Canonical]:
        return {canonical.task_id: canonical for canonical in self.canonicals}

    @property
    def selected_specs(self) -> list[SpecPair]:
        chosen = set(self.selected)
        return [spec for spec in self.specs if spec.task_id in chosen]

    @property
    def all_tasks_selected(self) -> bool:
        return len(self.selected) == len({spec.task_id for spec in self.specs})

    def unavailable_under(self, prefix: str) -> dict[str, str]:
        return {key: why for key, why in self.unavailable.items() if key.startswith(prefix)}


def load_intentspec(max_tasks: int = 0, *, mirror: str | None = None) -> IntentSpecData:
    """Every input; a missing or rejected file (spec pairs and canonicals included) is named in `unavailable`."""
    provenance: list[Any] = []
    unavailable: dict[str, str] = {}

    specs: tuple[SpecPair, ...] = ()
    specs_file = _optional(DATASET, SPEC_PAIRS_FILE, mirror, unavailable)
    if specs_file is not None:
        provenance.append(specs_file.provenance)
        specs = spec_pairs_from_records(readers.read_jsonl(specs_file.path, required=SPEC_PAIR_FIELDS),
                                        file=SPEC_PAIRS_KEY)
    canonicals: tuple[Canonical, ...] = ()
    canonicals_file = _optional(DATASET, CANONICALS_FILE, mirror, unavailable)
    if canonicals_file is not None:
        provenance.append(canonicals_file.provenance)
        canonicals = canonicals_from_records(readers.read_jsonl(canonicals_file.path, required=CANONICAL_FIELDS),
                                             file=CANONICALS_KEY)
    task_order = list(dict.fromkeys(spec.task_id for spec in specs))
    selected = tuple(task_order[:max_tasks] if max_tasks else task_order)

    generations: list[Generation] = []
    for source in sources.files_of(DATASET, GENERATIONS_PREFIX):
        if task_id_of_generation_file(source.file)[1] not in selected:
            continue
        fetched = _optional(source.dataset, source.file, mirror, unavailable)
        if fetched is not None:
            provenance.append(fetched.provenance)
            generations += generations_from_records(readers.read_jsonl(fetched.path, required=("solution",)),
                                                    file=source.file)

    published: list[PublishedRun] = []
    for source in sources.files_of(DATASET, RESULTS_PREFIX):
        fetched = _optional(source.dataset, source.file, mirror, unavailable)
        if fetched is not None:
            provenance.append(fetched.provenance)
            published.append(published_run_from_json(readers.read_json(fetched.path), file=source.file))

    references: dict[str, dict[str, Mapping[str, Any]]] = {}
    for label, (dataset, file) in (("openai_humaneval", OPENAI_HUMANEVAL), ("humaneval_plus", HUMANEVAL_PLUS)):
        fetched = _optional(dataset, file, mirror, unavailable)
        if fetched is not None:
            provenance.append(fetched.provenance)
            rows = readers.read_jsonl(fetched.path, required=REFERENCE_FIELDS)
            references[label] = {str(row["task_id"]): row for row in rows}

    return IntentSpecData(specs=specs, canonicals=canonicals, selected=selected, generations=tuple(generations),
                          published=tuple(published), references=references, provenance=tuple(provenance),
                          unavailable=unavailable)


def missing_under(unavailable: Mapping[str, str], prefix: str) -> list[str]:
    """The unavailable files under `prefix` (`dataset/folder/`), else every file registered there."""
    keys = sorted(key for key in unavailable if key.startswith(prefix))
    if keys:
        return keys
    dataset, _, folder = prefix.partition("/")
    return [source.key for source in sources.files_of(dataset, folder)]


def _optional(dataset: str, file: str, mirror: str | None, unavailable: dict[str, str]) -> Any:
    outcome = fetch.try_fetch(dataset, file, mirror=mirror)
    if isinstance(outcome, DataError):
        unavailable[f"{dataset}/{file}"] = str(outcome)
        return None
    return outcome
