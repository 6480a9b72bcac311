"""Load every IntentSpec input through `fetch`: specs and canonicals (required), the rest when present."""

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
from audit_lib.errors import DataError, DataUnavailableError

DATASET = "intentspec"
SPEC_PAIRS_FILE = "spec_pairs.jsonl"
CANONICALS_FILE = "canonicals.jsonl"
GENERATIONS_PREFIX = "generations/"
RESULTS_PREFIX = "results/"
OPENAI_HUMANEVAL = ("humaneval", "HumanEval.jsonl.gz")
HUMANEVAL_PLUS = ("humaneval_plus", "HumanEvalPlus.jsonl.gz")
REFERENCE_FIELDS = ("task_id", "prompt", "canonical_solution", "entry_point")


@dataclass(frozen=True)
class IntentSpecData:
    """All inputs of the audit. `selected` are the tasks executed (all, or the first `max_tasks` spec rows)."""

    specs: tuple[SpecPair, ...]
    canonicals: tuple[Canonical, ...]
    selected: tuple[str, ...]
    generations: tuple[Generation, ...]
    published: tuple[PublishedRun, ...]
    references: Mapping[str, Mapping[str, Mapping[str, Any]]]  # source -> task_id -> HumanEval-format row
    provenance: tuple[Any, ...]
    unavailable: Mapping[str, str] = field(default_factory=dict)  # "dataset/file" -> why it is missing
    missing_required: str | None = None  # set when spec_pairs or canonicals is absent: every check is skipped

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
    """Specs and canonicals are required: without them the data is empty and `missing_required` says why."""
    provenance: list[Any] = []
    unavailable: dict[str, str] = {}

    try:
        specs_file = fetch.fetch(DATASET, SPEC_PAIRS_FILE, mirror=mirror)
        canonicals_file = fetch.fetch(DATASET, CANONICALS_FILE, mirror=mirror)
    except DataUnavailableError as exc:
        return IntentSpecData(specs=(), canonicals=(), selected=(), generations=(), published=(), references={},
                              provenance=(), unavailable={str(exc.fields.get("file")): str(exc)},
                              missing_required=str(exc))
    provenance += [specs_file.provenance, canonicals_file.provenance]
    specs = spec_pairs_from_records(readers.read_jsonl(specs_file.path, required=SPEC_PAIR_FIELDS),
                                    file=f"{DATASET}/{SPEC_PAIRS_FILE}")
    canonicals = canonicals_from_records(readers.read_jsonl(canonicals_file.path, required=CANONICAL_FIELDS),
                                         file=f"{DATASET}/{CANONICALS_FILE}")
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


def _optional(dataset: str, file: str, mirror: str | None, unavailable: dict[str, str]) -> Any:
    outcome = fetch.try_fetch(dataset, file, mirror=mirror)
    if isinstance(outcome, DataError):
        unavailable[f"{dataset}/{file}"] = str(outcome)
        return None
    return outcome
