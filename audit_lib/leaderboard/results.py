"""Per-task outcomes of published models (eval-arena's layout) as a models x tasks matrix.

One JSON object per line: `benchmark_id`, `model`, `example_id`, `pass1` (0/1 for HumanEval+/MBPP+, a fraction in
[0, 1] where a task was sampled several times). A malformed line, a missing or mistyped field, a value outside [0, 1],
a second row for the same (model, task) or a model without a row for some task is refused with the file, line and
field named.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from audit_lib.data import readers
from audit_lib.errors import DataError, SchemaError

RESULT_FIELDS = ("benchmark_id", "model", "example_id", "pass1")
_NUMBER_IN_ID = re.compile(r"(\d+)")


@dataclass(frozen=True, eq=False)
class ModelResults:
    """Outcomes of `models` (rows) on `tasks` (columns): `outcomes[i, j]` is model i's pass@1 on task j."""

    benchmark: str
    models: tuple[str, ...]
    tasks: tuple[str, ...]
    outcomes: np.ndarray
    file: str = ""

    def __post_init__(self) -> None:
        if self.outcomes.shape != (len(self.models), len(self.tasks)):
            raise ValueError(f"outcomes shape {self.outcomes.shape} does not match {len(self.models)} models x "
                             f"{len(self.tasks)} tasks")

    def pass_at_1(self, keep: Sequence[bool] | np.ndarray | None = None) -> np.ndarray:
        """Each model's mean over the tasks (or over the tasks `keep` marks)."""
        columns = self.outcomes if keep is None else self.outcomes[:, np.asarray(keep, dtype=bool)]
        if columns.shape[1] == 0:
            raise ValueError("no task left to score")
        return columns.mean(axis=1)

    def solve_rate(self) -> np.ndarray:
        """Each task's mean over the models."""
        return self.outcomes.mean(axis=0)

    def restricted_to(self, tasks: Iterable[str]) -> ModelResults:
        """The same models on the given tasks only (in this matrix's task order)."""
        wanted = set(tasks)
        columns = [j for j, task in enumerate(self.tasks) if task in wanted]
        return ModelResults(self.benchmark, self.models, tuple(self.tasks[j] for j in columns),
                            self.outcomes[:, columns], self.file)


def task_order_key(task_id: str) -> tuple[str, int, str]:
    """`HumanEval/10` after `HumanEval/9`: the prefix, then the number in the id."""
    match = _NUMBER_IN_ID.search(task_id)
    return (task_id[:match.start()] if match else task_id, int(match.group(1)) if match else -1, task_id)


def results_from_rows(rows: Sequence[Mapping[str, Any]], *, file: str, first_line: int = 1,
                      line_numbers: Sequence[int] | None = None) -> ModelResults:
    """Validate eval-arena rows and build the matrix; `line_numbers[i]` is row i's line in `file` (for errors)."""
    lines = list(line_numbers) if line_numbers is not None else list(range(first_line, first_line + len(rows)))
    if not rows:
        raise SchemaError(f"{file}: no result rows", file=file, row=None, field=None)
    seen: dict[tuple[str, str], int] = {}
    benchmarks: dict[str, int] = {}
    for row, line in zip(rows, lines):
        for name in RESULT_FIELDS:
            if name not in row:
                raise SchemaError(f"{file}, line {line}: missing field {name!r}", file=file, row=line, field=name)
        for name in ("benchmark_id", "model", "example_id"):
            if not isinstance(row[name], str) or not row[name]:
                raise SchemaError(f"{file}, line {line}: field {name!r} must be a non-empty string, got "
                                  f"{row[name]!r}", file=file, row=line, field=name)
        value = row["pass1"]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value) or not 0 <= value <= 1:
            raise SchemaError(f"{file}, line {line}: field 'pass1' must be a number in [0, 1], got {value!r}",
                              file=file, row=line, field="pass1")
        key = (row["model"], row["example_id"])
        if key in seen:
            raise SchemaError(f"{file}, line {line}: a second row for model {key[0]!r} on {key[1]!r} (first on "
                              f"line {seen[key]})", file=file, row=line, field="example_id")
        seen[key] = line
        benchmarks.setdefault(row["benchmark_id"], line)
    if len(benchmarks) > 1:
        (first, _), (second, line) = list(benchmarks.items())[:2]
        raise SchemaError(f"{file}, line {line}: benchmark_id {second!r} differs from {first!r}; one benchmark per "
                          "file", file=file, row=line, field="benchmark_id")
    models = tuple(sorted({model for model, _ in seen}))
    tasks = tuple(sorted({task for _, task in seen}, key=task_order_key))
    model_index = {model: i for i, model in enumerate(models)}
    task_index = {task: j for j, task in enumerate(tasks)}
    outcomes = np.full((len(models), len(tasks)), np.nan)
    for row in rows:
        outcomes[model_index[row["model"]], task_index[row["example_id"]]] = float(row["pass1"])
    gaps = np.argwhere(np.isnan(outcomes))
    if len(gaps):
        model, task = models[gaps[0][0]], tasks[gaps[0][1]]
        missing_for_model = int(np.isnan(outcomes[gaps[0][0]]).sum())
        raise SchemaError(f"{file}: model {model!r} has no row for {task!r} ({missing_for_model} task(s) missing for "
                          f"it, {len(gaps)} in all); every model needs one row per task", file=file, row=None,
                          field="example_id")
    return ModelResults(next(iter(benchmarks)), models, tasks, outcomes, file)


def read_model_results(path: str | os.PathLike[str], *, label: str | None = None) -> ModelResults:
    """Read one eval-arena file; errors name `label` (e.g. `model_results/humaneval+.jsonl`) or the path."""
    name = label or os.fspath(path)
    try:
        rows = readers.read_jsonl(path)
    except DataError as exc:  # a malformed line: the same error, naming the file as the caller knows it
        raise type(exc)(exc.message.replace(os.fspath(path), name), **{**exc.fields, "file": name}) from exc
    # iter_jsonl skips blank lines; recount them so the line numbers in our errors are the file's own
    with readers.open_text(path) as handle:
        lines = [number for number, text in enumerate(handle, start=1) if text.strip()]
    return results_from_rows(rows, file=name, line_numbers=lines)


__all__ = ["ModelResults", "RESULT_FIELDS", "read_model_results", "results_from_rows", "task_order_key"]
