"""IntentSpec data: typed rows for spec pairs, canonicals, cached generations and published results."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from audit_lib.errors import SchemaError

SPEC_PAIR_FIELDS = ("task_id", "spec_type", "ambiguous_prompt", "gold_prompt", "constraints",
                    "stated_test_ids", "hidden_test_ids")
CONSTRAINT_FIELDS = ("id", "description", "test_code")
CANONICAL_FIELDS = ("task_id", "entry_point", "prompt", "canonical_solution", "full_source")
RESULT_FIELDS = ("model", "n_solutions_per_spec", "overall_ivr", "ivr_by_type", "per_task")
OUTCOME_FIELDS = ("passes_stated", "passed_hidden", "failed_hidden")
GENERATION_FILE = re.compile(r"^generations/(?P<model>.+)__(?P<task>HumanEval_\d+)\.jsonl$")


@dataclass(frozen=True)
class Constraint:
    """One atomic executable constraint of a task."""

    id: str
    description: str
    test_code: str


@dataclass(frozen=True)
class SpecPair:
    """One `spec_pairs.jsonl` row; `row` is its 1-based position in the file."""

    task_id: str
    spec_type: str
    ambiguous_prompt: str
    gold_prompt: str
    constraints: tuple[Constraint, ...]
    stated_test_ids: tuple[str, ...]
    hidden_test_ids: tuple[str, ...]
    row: int

    def constraint_map(self) -> dict[str, Constraint]:
        """Constraints by id; with duplicate ids the last one wins, as in the upstream harness."""
        return {constraint.id: constraint for constraint in self.constraints}


@dataclass(frozen=True)
class Canonical:
    """One `canonicals.jsonl` row."""

    task_id: str
    entry_point: str
    prompt: str
    canonical_solution: str
    full_source: str
    row: int


@dataclass(frozen=True)
class Generation:
    """One cached model sample: `sample` is its 0-based line index in `<model>__HumanEval_<n>.jsonl`."""

    model_slug: str
    task_id: str
    sample: int
    solution: str
    file: str


@dataclass(frozen=True)
class PublishedOutcome:
    """One solution's outcome as `results/experiment1*.json` records it."""

    passes_stated: bool
    passed_hidden: tuple[str, ...]
    failed_hidden: tuple[str, ...]


@dataclass(frozen=True)
class PublishedRun:
    """A published results file: the model, its overall IVR and every per-solution outcome."""

    file: str
    model: str
    n_solutions_per_spec: int
    overall_ivr: float
    ivr_by_type: Mapping[str, float]
    per_task: Mapping[str, tuple[PublishedOutcome, ...]]

    @property
    def model_slug(self) -> str:
        """The model's name as generation file names spell it (`gpt-4.1` -> `gpt-4_1`)."""
        return model_slug(self.model)


def model_slug(model: str) -> str:
    return model.replace(".", "_")


def task_id_of_generation_file(file: str) -> tuple[str, str]:
    """`generations/gpt-4_1__HumanEval_42.jsonl` -> (`gpt-4_1`, `HumanEval/42`)."""
    match = GENERATION_FILE.match(file)
    if match is None:
        raise SchemaError(f"{file}: generation file name is not generations/<model>__HumanEval_<n>.jsonl",
                          file=file, field="name")
    return match["model"], match["task"].replace("_", "/")


def _field(record: Mapping[str, Any], name: str, kind: type | tuple[type, ...], *, file: str, row: int,
           where: str = "") -> Any:
    if name not in record:
        raise SchemaError(f"{file}: row {row}: missing field {where}{name!r}", file=file, row=row,
                          field=f"{where}{name}")
    value = record[name]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        expected = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise SchemaError(f"{file}: row {row}: field {where}{name!r} is {type(value).__name__}, expected {expected}",
                          file=file, row=row, field=f"{where}{name}")
    return value


def _string_list(record: Mapping[str, Any], name: str, *, file: str, row: int, where: str = "") -> tuple[str, ...]:
    values = _field(record, name, list, file=file, row=row, where=where)
    for position, value in enumerate(values):
        if not isinstance(value, str):
            raise SchemaError(f"{file}: row {row}: {where}{name}[{position}] is {type(value).__name__}, "
                              "expected str", file=file, row=row, field=f"{where}{name}[{position}]")
    return tuple(values)


def spec_pairs_from_records(records: Sequence[Mapping[str, Any]], *, file: str) -> tuple[SpecPair, ...]:
    """Typed spec pairs; a missing field or wrong type raises `SchemaError` naming file, row and field."""
    pairs: list[SpecPair] = []
    for row, record in enumerate(records, start=1):
        raw_constraints = _field(record, "constraints", list, file=file, row=row)
        constraints = []
        for position, raw in enumerate(raw_constraints):
            where = f"constraints[{position}]."
            if not isinstance(raw, Mapping):
                raise SchemaError(f"{file}: row {row}: constraints[{position}] is {type(raw).__name__}, "
                                  "expected object", file=file, row=row, field=f"constraints[{position}]")
            constraints.append(Constraint(*(_field(raw, name, str, file=file, row=row, where=where)
                                            for name in CONSTRAINT_FIELDS)))
        pairs.append(SpecPair(
            task_id=_field(record, "task_id", str, file=file, row=row),
            spec_type=_field(record, "spec_type", str, file=file, row=row),
            ambiguous_prompt=_field(record, "ambiguous_prompt", str, file=file, row=row),
            gold_prompt=_field(record, "gold_prompt", str, file=file, row=row),
            constraints=tuple(constraints),
            stated_test_ids=_string_list(record, "stated_test_ids", file=file, row=row),
            hidden_test_ids=_string_list(record, "hidden_test_ids", file=file, row=row),
            row=row,
        ))
    return tuple(pairs)


def canonicals_from_records(records: Sequence[Mapping[str, Any]], *, file: str) -> tuple[Canonical, ...]:
    """Typed canonicals; a missing field or wrong type raises `SchemaError` naming file, row and field."""
    return tuple(Canonical(*(_field(record, name, str, file=file, row=row) for name in CANONICAL_FIELDS), row=row)
                 for row, record in enumerate(records, start=1))


def generations_from_records(records: Sequence[Mapping[str, Any]], *, file: str) -> tuple[Generation, ...]:
    """The samples of one generation file, in file order."""
    slug, task_id = task_id_of_generation_file(file)
    return tuple(Generation(slug, task_id, row - 1, _field(record, "solution", str, file=file, row=row), file)
                 for row, record in enumerate(records, start=1))


def published_run_from_json(payload: Any, *, file: str) -> PublishedRun:
    """Parse `results/experiment1*.json`; any structural surprise raises `SchemaError` naming the field."""
    if not isinstance(payload, Mapping):
        raise SchemaError(f"{file}: top level is {type(payload).__name__}, expected object", file=file, field="")
    for name in RESULT_FIELDS:
        if name not in payload:
            raise SchemaError(f"{file}: missing field {name!r}", file=file, field=name)
    per_task_raw = payload["per_task"]
    if not isinstance(per_task_raw, Mapping):
        raise SchemaError(f"{file}: per_task is not an object", file=file, field="per_task")
    per_task: dict[str, tuple[PublishedOutcome, ...]] = {}
    for task_id, outcomes in per_task_raw.items():
        if not isinstance(outcomes, list):
            raise SchemaError(f"{file}: per_task[{task_id!r}] is not a list", file=file, field=f"per_task.{task_id}")
        parsed = []
        for position, outcome in enumerate(outcomes):
            where = f"per_task[{task_id!r}][{position}]."
            if not isinstance(outcome, Mapping):
                raise SchemaError(f"{file}: {where[:-1]} is not an object", file=file, row=position + 1,
                                  field=f"per_task.{task_id}")
            parsed.append(PublishedOutcome(
                passes_stated=_field(outcome, "passes_stated", bool, file=file, row=position + 1, where=where),
                passed_hidden=_string_list(outcome, "passed_hidden", file=file, row=position + 1, where=where),
                failed_hidden=_string_list(outcome, "failed_hidden", file=file, row=position + 1, where=where),
            ))
        per_task[task_id] = tuple(parsed)
    overall = payload["overall_ivr"]
    if not isinstance(overall, (int, float)) or isinstance(overall, bool):
        raise SchemaError(f"{file}: overall_ivr is {type(overall).__name__}, expected number", file=file,
                          field="overall_ivr")
    return PublishedRun(file=file, model=str(payload["model"]),
                        n_solutions_per_spec=int(payload["n_solutions_per_spec"]),
                        overall_ivr=float(overall), ivr_by_type=dict(payload["ivr_by_type"]), per_task=per_task)


def read_records(path: Path, required: Sequence[str]) -> list[dict[str, Any]]:
    """JSON lines through the shared reader (malformed line -> `CorruptFileError` naming file and line)."""
    from audit_lib.data import readers

    return readers.read_jsonl(path, required=tuple(required))
