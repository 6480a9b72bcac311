"""Load HumanEval+ / MBPP+ (and OpenAI HumanEval, the community errata) into frozen task records."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from audit_lib.data import fetch, readers
from audit_lib.errors import DataError, ParameterError, SchemaError

Dataset = Literal["humaneval", "mbpp"]
DATASETS: tuple[str, ...] = ("humaneval", "mbpp")
RELEASES: dict[str, str] = {"humaneval": "HumanEval+ v0.1.10", "mbpp": "MBPP+ v0.2.0"}  # the registry's files

HUMANEVAL_PLUS = ("humaneval_plus", "HumanEvalPlus.jsonl.gz")
HUMANEVAL_PLUS_V019 = ("humaneval_plus", "v0.1.9/HumanEvalPlus.jsonl.gz")
HUMANEVAL_PLUS_MINI = ("humaneval_plus", "HumanEvalPlus-Mini.jsonl.gz")
HUMANEVAL_PLUS_NOEXTREME = ("humaneval_plus", "HumanEvalPlus-NoExtreme.jsonl.gz")
MBPP_PLUS = ("humaneval_plus", "mbpp_plus/MbppPlus.jsonl.gz")
MBPP_PLUS_NOEXTREME = ("humaneval_plus", "mbpp_plus/MbppPlus-NoExtreme.jsonl.gz")
OPENAI_HUMANEVAL = ("humaneval", "HumanEval.jsonl.gz")
HUMANEVAL_ERRATA = ("humaneval", "community_errata/human-eval-enhanced-202307.jsonl.gz")
# eval-arena's per-task outcomes of the published models (the leaderboard `leaderboard_impact` audits)
HUMANEVAL_PLUS_RESULTS = ("model_results", "humaneval+.jsonl")
MBPP_PLUS_RESULTS = ("model_results", "mbpp+.jsonl")

PLUS_REQUIRED_FIELDS = ("task_id", "prompt", "entry_point", "canonical_solution", "contract", "base_input",
                        "plus_input", "atol")
HUMANEVAL_REQUIRED_FIELDS = ("task_id", "prompt", "entry_point", "canonical_solution", "test")


@dataclass(frozen=True)
class PlusTask:
    """One HumanEval+ or MBPP+ problem; inputs are positional-argument lists, deserialised like EvalPlus."""

    task_id: str
    prompt: str
    entry_point: str
    canonical_solution: str
    contract: str
    base_input: tuple[Any, ...]
    plus_input: tuple[Any, ...]
    atol: float
    original_test: str | None  # HumanEval's `check` source, or MBPP's original assert lines
    row: int

    @property
    def program(self) -> str:
        """What EvalPlus runs for expected outputs: prompt + canonical, without the contract."""
        return self.prompt + self.canonical_solution


@dataclass(frozen=True)
class HumanEvalTask:
    """One row of OpenAI HumanEval (or the community errata, same schema)."""

    task_id: str
    prompt: str
    entry_point: str
    canonical_solution: str
    test: str


@dataclass(frozen=True)
class LoadedPlus:
    """A loaded EvalPlus dataset with the provenance of the file it came from."""

    dataset: Dataset
    tasks: tuple[PlusTask, ...]
    provenance: fetch.Provenance
    path: str
    schema_notes: tuple[Mapping[str, Any], ...] = ()

    def by_id(self) -> dict[str, PlusTask]:
        return {task.task_id: task for task in self.tasks}


def plus_source(dataset: Dataset) -> tuple[str, str]:
    return HUMANEVAL_PLUS if dataset == "humaneval" else MBPP_PLUS


def results_source(dataset: Dataset) -> tuple[str, str]:
    """The published models' per-task outcomes on the dataset."""
    return HUMANEVAL_PLUS_RESULTS if dataset == "humaneval" else MBPP_PLUS_RESULTS


def load_plus(dataset: Dataset, *, source: tuple[str, str] | None = None, max_tasks: int = 0,
              task_ids: Sequence[str] = ()) -> LoadedPlus:
    """Fetch and parse an EvalPlus release file; `task_ids` keeps those tasks, `max_tasks` > 0 the first N."""
    return read_plus(fetch.fetch(*(source or plus_source(dataset))), dataset, max_tasks=max_tasks, task_ids=task_ids)


def read_plus(fetched: fetch.FetchedFile, dataset: Dataset, *, max_tasks: int = 0,
              task_ids: Sequence[str] = ()) -> LoadedPlus:
    """Parse an already fetched EvalPlus release file (see `load_plus`)."""
    rows = readers.read_jsonl(fetched.path, required=PLUS_REQUIRED_FIELDS)
    notes: list[dict[str, Any]] = []
    tasks = parse_plus_rows(rows, dataset=dataset, file=str(fetched.path), notes=notes)
    tasks = select_tasks(tasks, max_tasks=max_tasks, task_ids=task_ids, file=str(fetched.path))
    return LoadedPlus(dataset, tasks, fetched.provenance, str(fetched.path), tuple(notes))


def select_tasks(tasks: tuple[PlusTask, ...], *, max_tasks: int = 0, task_ids: Sequence[str] = (),
                 file: str = "") -> tuple[PlusTask, ...]:
    """The named tasks (in file order; an unknown id raises ParameterError naming it), then the first `max_tasks`."""
    if task_ids:
        refuse_unknown_task_ids(task_ids, [task.task_id for task in tasks], file=file or "the dataset")
        wanted = set(task_ids)
        tasks = tuple(task for task in tasks if task.task_id in wanted)
    return tasks[:max_tasks] if max_tasks else tasks


def refuse_unknown_task_ids(task_ids: Sequence[str], known: Sequence[str], *, file: str) -> None:
    """ParameterError naming every id of `task_ids` that is not in `known` (the file's ids, in file order)."""
    present = set(known)
    unknown = [task_id for task_id in task_ids if task_id not in present]
    if unknown:
        span = f"{len(known)} tasks, {known[0]} … {known[-1]}" if known else "no tasks"
        raise ParameterError(f"parameter 'task_ids': unknown task id(s) {', '.join(unknown)} (not in {file}: "
                             f"{span})", field="task_ids", value=list(unknown))


def local_task_ids(dataset: Dataset, *, mirror: str | os.PathLike[str] | None = None) -> tuple[str, ...] | None:
    """The release file's task ids, in file order, from a verified local copy; None without one.

    The copy comes from the cache or the mirror, never a download; without one the audit's `load` decides."""
    try:
        fetched = fetch.fetch(*plus_source(dataset), mirror=mirror, offline=True)
        return tuple(str(row["task_id"]) for row in readers.iter_jsonl(fetched.path, required=("task_id",)))
    except DataError:
        return None


def parse_task_ids(raw: str) -> tuple[str, ...]:
    """`"HumanEval/32, HumanEval/116"` -> the ids, in order, without blanks or repeats."""
    return tuple(dict.fromkeys(part.strip() for part in raw.split(",") if part.strip()))


def parse_plus_rows(rows: Sequence[Mapping[str, Any]], *, dataset: Dataset, file: str,
                    notes: list[dict[str, Any]] | None = None) -> tuple[PlusTask, ...]:
    """Turn raw rows into tasks; a field of the wrong type raises SchemaError naming file, row and field.

    An input field holding `{}` (MBPP+ v0.2.0 Mbpp/793 `plus_input`) iterates as zero inputs in EvalPlus; it is
    read the same way and recorded in `notes`. The original-test field (`test` / `assertion`) is optional
    (HumanEvalPlus-Mini has no `test`): rows without it get `original_test=None` and one note says how many.
    """
    tasks: list[PlusTask] = []
    original_field = "test" if dataset == "humaneval" else "assertion"
    without_original: list[tuple[str, int]] = []
    for row_number, row in enumerate(rows, start=1):
        for name in ("task_id", "prompt", "entry_point", "canonical_solution", "contract"):
            _require_type(row, name, str, file=file, row=row_number)
        row = dict(row)
        for name in ("base_input", "plus_input"):
            if row[name] == {}:
                row[name] = []
                if notes is not None:
                    notes.append({"task_id": row["task_id"], "row": row_number, "field": name,
                                  "note": "empty dict {} instead of a list: read as zero inputs, as EvalPlus does"})
            _require_type(row, name, list, file=file, row=row_number)
            for index, inputs in enumerate(row[name]):
                if not isinstance(inputs, (list, tuple)):
                    raise SchemaError(f"{file}, row {row_number}: field {name!r} item {index} is "
                                      f"{type(inputs).__name__}, not a list of arguments",
                                      file=file, row=row_number, field=name)
        _require_type(row, "atol", (int, float), file=file, row=row_number)
        task_id = row["task_id"]
        base, plus = row["base_input"], row["plus_input"]
        if dataset == "mbpp":
            base, plus = mbpp_deserialize_inputs(task_id, base), mbpp_deserialize_inputs(task_id, plus)
        if original_field not in row:
            without_original.append((task_id, row_number))
        original = row.get(original_field)
        tasks.append(PlusTask(task_id, row["prompt"], row["entry_point"], row["canonical_solution"], row["contract"],
                              tuple(base), tuple(plus), float(row["atol"]), original, row_number))
    if without_original and notes is not None:
        first_id, first_row = without_original[0]
        notes.append({"task_id": first_id, "row": first_row, "field": original_field,
                      "note": f"field absent in {len(without_original)} of {len(tasks)} rows (first shown): read as "
                              "no original test; checks that need it skip those tasks"})
    return tuple(tasks)


def load_humaneval(source: tuple[str, str] = OPENAI_HUMANEVAL) -> tuple[dict[str, HumanEvalTask], fetch.Provenance]:
    """OpenAI HumanEval (or the errata file) keyed by task id."""
    fetched = fetch.fetch(*source)
    return read_humaneval(fetched), fetched.provenance


def read_humaneval(fetched: fetch.FetchedFile) -> dict[str, HumanEvalTask]:
    """Parse an already fetched OpenAI HumanEval file (or the errata file, same schema) keyed by task id."""
    rows = readers.read_jsonl(fetched.path, required=HUMANEVAL_REQUIRED_FIELDS)
    return {row["task_id"]: HumanEvalTask(row["task_id"], row["prompt"], row["entry_point"],
                                          row["canonical_solution"], row["test"]) for row in rows}


def _require_type(record: Mapping[str, Any], name: str, kind: type | tuple[type, ...], *, file: str,
                  row: int) -> None:
    value = record[name]
    if not isinstance(value, kind) or isinstance(value, bool):
        expected = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise SchemaError(f"{file}, row {row}: field {name!r} is {type(value).__name__}, expected {expected}",
                          file=file, row=row, field=name)


# MBPP+ stores tuples, sets and complex numbers as JSON lists/strings; EvalPlus restores them per task
# (`evalplus/data/mbpp.py::mbpp_deserialize_inputs`). The groups below name the shape of each task's arguments.
_TUPLE_EACH_ARG = frozenset({2, 116, 132, 143, 222, 261, 273, 394, 399, 421, 424, 429, 470, 560, 579, 596, 616,
                             630, 726, 740, 744, 809})
_TUPLE_ITEMS_OF_EACH_ARG = frozenset({63, 64, 70, 94, 120, 237, 272, 299, 400, 409, 417, 438, 473, 614, 780})
_TUPLE_ITEMS_OF_FIRST_ARG = frozenset({75, 413, 444, 753})
_TUPLE_SECOND_ARG = frozenset({106, 750})
_TUPLE_FIRST_ARG = frozenset({250, 405, 446, 617, 720, 763, 808})
_TUPLE_NESTED_THEN_EACH_ARG = frozenset({259, 401, 445})
_ALL_LISTS_TO_TUPLES = frozenset({580, 615, 791})


def mbpp_deserialize_inputs(task_id: str, inputs: Sequence[Any]) -> list[Any]:
    """Restore the argument types EvalPlus's MBPP+ loader restores (same groups, same quirks)."""
    number = int(str(task_id).split("/")[-1])
    if number in _TUPLE_EACH_ARG:
        return [[tuple(arg) for arg in inp] for inp in inputs]
    if number in _TUPLE_ITEMS_OF_EACH_ARG:
        return [[[tuple(item) for item in arg] for arg in inp] for inp in inputs]
    if number in _TUPLE_ITEMS_OF_FIRST_ARG:
        return [[[tuple(item) for item in inp[0]], inp[1]] for inp in inputs]
    if number in _TUPLE_SECOND_ARG:
        return [[inp[0], tuple(inp[1])] for inp in inputs]
    if number == 115:
        # EvalPlus turns an empty list into `{}`, an empty dict, not an empty set: kept as upstream does.
        return [[[set(item) if isinstance(item, list) and item else {} for item in inp[0]]] for inp in inputs]
    if number == 124:
        return [(float(inp[0]), complex(inp[1])) for inp in inputs]
    if number in _TUPLE_FIRST_ARG:
        return [[tuple(inp[0]), inp[1]] for inp in inputs]
    if number in _TUPLE_NESTED_THEN_EACH_ARG:
        return [[tuple(tuple(item) for item in arg) for arg in inp] for inp in inputs]
    if number == 278:
        return [[tuple(tuple(item) if isinstance(item, list) else item for item in inp[0])] for inp in inputs]
    if number == 307:
        return [[tuple(inp[0]), inp[1], inp[2]] for inp in inputs]
    if number == 722:
        return [[{key: tuple(value) for key, value in inp[0].items()}, *inp[1:]] for inp in inputs]
    if number == 252:
        return [[complex(inp[0])] for inp in inputs]
    if number in _ALL_LISTS_TO_TUPLES:
        return [_lists_to_tuples(inp) for inp in inputs]
    return list(inputs)


def _lists_to_tuples(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_lists_to_tuples(item) for item in value)
    return value


def task_sort_key(task_id: str) -> tuple[int, str]:
    """Tasks in numeric order (`HumanEval/2` before `HumanEval/10`); an id without a number sorts last."""
    tail = task_id.rsplit("/", 1)[-1]
    return (int(tail), task_id) if tail.isdigit() else (1 << 30, task_id)

__all__ = ["DATASETS", "HUMANEVAL_ERRATA", "HUMANEVAL_PLUS", "HUMANEVAL_PLUS_MINI", "HUMANEVAL_PLUS_NOEXTREME",
           "HUMANEVAL_PLUS_V019", "HumanEvalTask", "LoadedPlus", "MBPP_PLUS", "MBPP_PLUS_NOEXTREME", "OPENAI_HUMANEVAL",
           "PlusTask", "load_humaneval", "load_plus", "mbpp_deserialize_inputs", "parse_plus_rows", "parse_task_ids",
           "plus_source", "read_humaneval", "read_plus", "select_tasks", "task_sort_key"]
